"""The running server: the WebSocket listener, the rooms, and each connection's handler.

In-process use (tests, demos, bots)::

    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve, ServerConfig(replays=path))
        ...  # server.url is ws://127.0.0.1:PORT
        await server.aclose()  # or cancel the nursery

A connection handler contains every failure of its own: an exception escaping one would take the
whole trio-websocket server down with it.
"""

from __future__ import annotations

import contextlib
import traceback
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import trio
from trio_websocket import ConnectionClosed, WebSocketRequest, serve_websocket

from protocol import messages as m
from protocol.messages import MAX_FRAME_BYTES, PROTOCOL_VERSION, client_decoder
from server.config import ServerConfig
from server.connection import CLOSE_GOING_AWAY, CLOSE_POLICY, Connection, TokenBucket
from server.lobby import RoomError, new_room_code
from server.netinfo import url_host
from server.recovery import LoadReport, load_replays
from server.room import Detached, Request, Room, Stop, msg_tag

SERVER_NAME = "conjure-server/0.1"
SHUTDOWN_BYE = "the server is shutting down; reconnect with your token when it is back"


class GameServer:
    """Rooms by code, live connections, and the listener. Build with :func:`serve`."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.rooms: dict[str, Room] = {}
        self.connections: set[Connection] = set()
        self.port: int = 0
        self.report = LoadReport()
        self._rooms_nursery: trio.Nursery | None = None
        self._stopping = trio.Event()
        self._stopped = trio.Event()

    @property
    def url(self) -> str:
        scheme = "wss" if self.config.ssl_context is not None else "ws"
        return f"{scheme}://{url_host(self.config.host)}:{self.port}"

    @property
    def replays(self) -> Path:
        return self.config.replays

    def shutdown(self) -> None:
        """Begin a clean stop: no new connections, rooms finish what they hold, clients get Bye."""
        self._stopping.set()

    async def aclose(self) -> None:
        self.shutdown()
        await self._stopped.wait()

    async def wait_stopped(self) -> None:
        await self._stopped.wait()

    # ------------------------------------------------------------------ lifetime

    async def run(self, *, task_status: trio.TaskStatus[GameServer] = trio.TASK_STATUS_IGNORED):
        cfg = self.config
        cfg.replays.mkdir(parents=True, exist_ok=True)
        self.report = await trio.to_thread.run_sync(load_replays, cfg.replays, cfg.say)
        # Word comparison loads its data on first use (~0.7 s): do it now, off the event loop,
        # rather than stalling every room at the first round's publication.
        await trio.to_thread.run_sync(warm_up_words)
        try:
            async with trio.open_nursery() as conns:
                async with trio.open_nursery() as rooms:
                    self._rooms_nursery = rooms
                    for resumed in self.report.resumed:
                        self._resume_room(resumed)
                    async with trio.open_nursery() as listener:
                        ws_server = await listener.start(
                            partial(
                                serve_websocket,
                                self._handle,
                                cfg.host,
                                cfg.port,
                                cfg.ssl_context,
                                handler_nursery=conns,
                                message_queue_size=4,
                                max_message_size=MAX_FRAME_BYTES,
                                connect_timeout=10,
                                disconnect_timeout=2,
                            )
                        )
                        self.port = ws_server.port
                        task_status.started(self)
                        await self._stopping.wait()
                        listener.cancel_scope.cancel()
                    # Rooms handle what is queued, close their logs and say goodbye.
                    for room in list(self.rooms.values()):
                        room.submit(Stop(SHUTDOWN_BYE))
                    rooms.cancel_scope.deadline = trio.current_time() + cfg.shutdown_grace
                for conn in list(self.connections):
                    conn.close(SHUTDOWN_BYE, CLOSE_GOING_AWAY)
                conns.cancel_scope.deadline = trio.current_time() + cfg.shutdown_grace
        finally:
            for room in self.report.resumed:  # writers of rooms that never ran
                room.writer.close()
            self._stopped.set()

    def _resume_room(self, resumed: Any) -> None:
        code = resumed.game.room
        if code in self.rooms:
            self.config.say(
                f"refused {resumed.path}: room {code} is already taken by another unfinished game"
            )
            resumed.writer.close()
            return
        room = Room(
            code,
            self.config,
            self._room_closed,
            game=resumed.game,
            writer=resumed.writer,
            receipt=resumed.receipt,
            results_=resumed.results,
        )
        self.rooms[code] = room
        assert self._rooms_nursery is not None
        self._rooms_nursery.start_soon(room.run)

    def _new_room(self) -> Room:
        if self._stopping.is_set():
            raise RoomError("shutting_down", "The server is shutting down.")
        if len(self.rooms) >= self.config.max_rooms:
            raise RoomError("server_full", "This server has too many rooms open; try later.")
        code = new_room_code(self.rooms)
        room = Room(code, self.config, self._room_closed)
        self.rooms[code] = room
        assert self._rooms_nursery is not None
        self._rooms_nursery.start_soon(room.run)
        return room

    def _room_closed(self, room: Room) -> None:
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]

    # ------------------------------------------------------------------ connections

    async def _handle(self, request: WebSocketRequest) -> None:
        """One connection, start to end; contains every exception of its own."""
        try:
            ws = await request.accept()
        except Exception:
            return
        remote = getattr(ws.remote, "address", "")
        conn = Connection(ws, self.config.outbound_queue, str(remote))
        self.connections.add(conn)
        try:
            with conn.scope:
                async with trio.open_nursery() as tasks:
                    tasks.start_soon(conn.write_loop)
                    tasks.start_soon(
                        conn.heartbeat_loop,
                        self.config.heartbeat_interval,
                        self.config.heartbeat_timeout,
                    )
                    await self._read_loop(conn)
                    if conn.closing is None:
                        tasks.cancel_scope.cancel()
                    # else the writer says Bye and closes (bounded by the scope's deadline)
        except BaseException as exc:
            self._contain(exc, conn)
        finally:
            conn.mark_closed()  # before looking at conn.room: a room never seats a closed one
            self.connections.discard(conn)
            if conn.room is not None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    conn.room.submit(Detached(conn))
            await conn.final_close()

    def _contain(self, exc: BaseException, conn: Connection) -> None:
        """Swallow this connection's failures; let cancellation (and only it) through."""
        if isinstance(exc, trio.Cancelled):
            raise exc
        if isinstance(exc, BaseExceptionGroup):
            cancelled, rest = exc.split(trio.Cancelled)
            if rest is not None:
                self._report(rest, conn)
            if cancelled is not None:
                raise cancelled
            return
        if isinstance(exc, Exception):
            self._report(exc, conn)
            return
        raise exc

    def _report(self, exc: BaseException, conn: Connection) -> None:
        ordinary = (ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError)
        if isinstance(exc, BaseExceptionGroup):
            _, rest = exc.split(ordinary)
            if rest is None:
                return
            exc = rest
        elif isinstance(exc, ordinary):
            return
        text = "".join(traceback.format_exception(exc))
        self.config.say(f"connection {conn!r}: unexpected error\n{text}")

    async def _read_loop(self, conn: Connection) -> None:
        bucket = TokenBucket(self.config.rate, self.config.burst)
        while conn.closing is None:
            try:
                raw = await conn.ws.get_message()
            except ConnectionClosed:
                return
            conn.heard_at = trio.current_time()
            if not bucket.take():
                conn.close(
                    f"too many messages: at most {self.config.rate:g} a second", CLOSE_POLICY
                )
                return
            try:
                await self._on_frame(conn, raw)
            except RoomError as e:
                conn.send(m.Error(code=e.code, message=e.message))
            except Exception:  # one bad message must not end the connection, let alone the server
                self.config.say(
                    f"connection {conn!r}: error handling a message\n{traceback.format_exc()}"
                )
                conn.send(m.Error(code="internal", message="The server failed on that message."))

    async def _on_frame(self, conn: Connection, raw: str | bytes) -> None:
        if isinstance(raw, bytes):
            conn.send(m.Error(code="binary_frame", message="Send JSON in text frames."))
            return
        try:
            msg = client_decoder.decode(raw)
        except msgspec.ValidationError as exc:
            conn.send(m.Error(code="invalid_message", message=_readable(exc), ref=_peek_type(raw)))
            return
        except msgspec.DecodeError as exc:
            conn.send(m.Error(code="malformed", message=f"Not valid JSON: {exc}"))
            return
        except RecursionError:
            conn.send(m.Error(code="invalid_message", message="The message is nested too deeply."))
            return
        ref = msg_tag(msg)
        if not conn.greeted:
            if not isinstance(msg, m.Hello):
                conn.send(
                    m.Error(
                        code="hello_required",
                        message=f'Say hello first: {{"type": "hello", "protocol": '
                        f"{PROTOCOL_VERSION}}}.",
                        ref=ref,
                    )
                )
                return
            if msg.protocol != PROTOCOL_VERSION:
                conn.send(
                    m.Error(
                        code="protocol_version",
                        message=f"This server speaks protocol {PROTOCOL_VERSION}, not "
                        f"{msg.protocol}: use a matching version of the client.",
                        ref=ref,
                    )
                )
                conn.close(f"protocol version {msg.protocol} is not supported", CLOSE_POLICY)
                return
            conn.greeted = True
            conn.send(m.Welcome(protocol=PROTOCOL_VERSION, server=SERVER_NAME))
            return
        try:
            room = self._route(conn, msg)
        except RoomError as e:
            conn.send(m.Error(code=e.code, message=e.message, ref=ref))
            return
        req = Request(conn, msg)
        try:
            room.submit(req)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            conn.send(m.Error(code="room_closed", message="This room has closed.", ref=ref))
            return
        await req.done.wait()

    def _route(self, conn: Connection, msg: m.ClientMsg) -> Room:
        """The room a message goes to, or a RoomError."""
        match msg:
            case m.Hello():
                raise RoomError("already_greeted", "Hello was already said on this connection.")
            case m.CreateRoom():
                if conn.room is not None:
                    raise RoomError("already_in_room", "Leave your room first.")
                return self._new_room()
            case m.JoinRoom() | m.ResumeSeat() | m.Watch():
                code = msg.room.upper()
                if conn.room is not None and conn.room.code != code:
                    raise RoomError("already_in_room", "Leave your room first.")
                room = self.rooms.get(code)
                if room is None:
                    raise RoomError("unknown_room", f"There is no room {code} on this server.")
                return room
        if conn.room is None:
            raise RoomError("not_in_room", "Create, join or watch a room first.")
        return conn.room


def _peek_type(raw: str) -> str | None:
    """The ``type`` of a frame that failed validation, for the error's ``ref``."""
    try:
        obj = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):  # deep nesting is refused, not a crash
        return None
    t = obj.get("type") if isinstance(obj, dict) else None
    return t[:40] if isinstance(t, str) else None


async def serve(
    config: ServerConfig | Path | str,
    *,
    task_status: trio.TaskStatus[GameServer] = trio.TASK_STATUS_IGNORED,
    **options: Any,
) -> None:
    """Run a server until cancelled or ``shutdown()``; ``nursery.start`` gives the GameServer.

    ``config`` is a ServerConfig or just the replays directory; ``options`` override its fields
    (``host``, ``port``, ``host_grace``, ``limit_scale``, ``say`` ...).
    """
    if not isinstance(config, ServerConfig):
        config = ServerConfig(replays=Path(config))
    if options:
        config = replace(config, **options)
    await GameServer(config).run(task_status=task_status)


__all__ = ["GameServer", "ServerConfig", "serve"]


def _readable(exc: msgspec.ValidationError) -> str:
    """msgspec's sentence, minus the regular expression nobody should have to read."""
    text = str(exc)
    if "matching regex" in text:
        where = text.rsplit(" - at ", 1)[-1] if " - at " in text else "the message"
        return f"Text with control or formatting characters, or in the wrong shape - at {where}"
    return text


def warm_up_words() -> None:
    from protocol.words import contains_written, same_word

    same_word("rockets", "rocket")
    contains_written("fire trucks", "truck")
