"""The running server: the listener, the rooms, and each connection's handler.

In-process use (tests, demos, bots)::

    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve, ServerConfig(replays=path))
        ...  # server.url is ws://127.0.0.1:PORT
        await server.aclose()  # or cancel the nursery

One connection's failure is that connection's alone: the server owns the accept loop
(``server.listener``) and runs each accepted socket, its TLS and WebSocket handshakes and its
frames (``server.websocket``), in a task that contains every exception of its own, to the last
close frame. Who may connect, send and create rooms is counted per source address (``server.gate``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import re
import traceback
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import trio

from conjure.protocol import messages as m
from conjure.protocol.errors import Refusal
from conjure.protocol.messages import MAX_FRAME_BYTES, PROTOCOL_VERSION, client_decoder
from conjure.protocol.patch import FEATURE as PATCHES
from conjure.server import fdbudget, heartbeat
from conjure.server.config import ServerConfig
from conjure.server.connection import (
    CLOSE_GOING_AWAY,
    CLOSE_POLICY,
    CLOSE_TRY_LATER,
    Connection,
    frame_of,
)
from conjure.server.gate import AddressBook, Bucket
from conjure.server.gctuning import note_tls_closed
from conjure.server.listener import Admitted, GuardedListener
from conjure.server.lobby import clean_name, clean_settings, new_room_code
from conjure.server.netinfo import url_host
from conjure.server.recovery import LoadReport, Resumed, load_replays
from conjure.server.room import Detached, Request, Room, Stop, msg_tag
from conjure.server.roomio import DiskLogStore, Viewer
from conjure.server.websocket import Abuse, Closed, Handshake, read_request
from conjure.server.wsframes import MAX_FRAGMENTS

SERVER_NAME = "conjure-server/0.1"
#: Words for players: "token" meant nothing to a newcomer who read it (the client comes back with
#: its seat by itself).
SHUTDOWN_BYE = (
    "the server is shutting down; your game is saved and goes on when it is back (its clock keeps"
    " running meanwhile)"
)
#: To a connection in no room: it has no game to be told of.
SHUTDOWN_BYE_NO_ROOM = "the server is shutting down"
log = logging.getLogger("conjure.server")

#: Messages whose outcome decides where this connection's next message goes (its room): the
#: next one is read only once the room has handled it. Any other message is queued for the room
#: and the next one read at once, up to ``MAX_UNANSWERED`` of them not yet handled.
_ROUTING = (m.CreateRoom, m.JoinRoom, m.ResumeSeat, m.Watch, m.Leave)
MAX_UNANSWERED = 4

#: Refusals at the door close the connection with these codes after the error.
_DOOR_CLOSE = {
    "too_many_connections": CLOSE_POLICY,
    "connection_rate": CLOSE_TRY_LATER,
    "server_busy": CLOSE_TRY_LATER,
}


class GameServer:
    """Rooms by code, live connections, and the listener. Build with :func:`serve`."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        #: Where every room keeps its game's log.
        self.store = DiskLogStore(config.replays, config.min_free_mb << 20)
        self.rooms: dict[str, Room] = {}
        #: Room codes a new room may not take: those of unfinished logs (``LoadReport``).
        self.held_rooms: set[str] = set()
        self.connections: set[Connection] = set()
        self.port: int = 0
        self.report = LoadReport()
        self.book = AddressBook(config)
        self.budget: fdbudget.Budget | None = None
        self.listeners: list[GuardedListener] = []
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

    def _fit_budget(self) -> None:
        """Raise the open-file limit and keep the caps within it (see server.fdbudget)."""
        cfg = self.config
        budget = fdbudget.plan(cfg.max_connections, cfg.max_rooms)
        self.budget = budget
        if budget.clipped:
            log.warning(
                "open-file limit %d: at most %d connections and %d rooms (configured %d and %d)",
                budget.limit,
                budget.connections,
                budget.rooms,
                cfg.max_connections,
                cfg.max_rooms,
            )
            self.config = replace(cfg, max_connections=budget.connections, max_rooms=budget.rooms)
            self.book.config = self.config

    async def run(self, *, task_status: trio.TaskStatus[GameServer] = trio.TASK_STATUS_IGNORED):
        self._fit_budget()
        cfg = self.config
        cfg.replays.mkdir(parents=True, exist_ok=True)
        self.report = await trio.to_thread.run_sync(load_replays, cfg.replays, cfg.say)
        # (a resumed room's code is its own while it lives, and held again if it fails)
        self.held_rooms |= self.report.held_rooms - {r.game.setup.room for r in self.report.resumed}
        # Word comparison loads its data on first use (~0.7 s): do it now, off the event loop,
        # rather than stalling every room at the first round's publication.
        await trio.to_thread.run_sync(warm_up_words)
        try:
            async with trio.open_nursery() as conns:
                async with trio.open_nursery() as rooms:
                    self._rooms_nursery = rooms
                    for resumed in list(self.report.resumed):
                        self._resume_room(resumed)
                    tcp = await trio.open_tcp_listeners(cfg.port, host=cfg.host)
                    self.listeners = [GuardedListener(t, self.book) for t in tcp]
                    self.port = self.listeners[0].port
                    async with trio.open_nursery() as listener:
                        await listener.start(
                            partial(
                                trio.serve_listeners,
                                self._serve_stream,
                                self.listeners,
                                handler_nursery=conns,
                            )
                        )
                        # Pings for every connection: ends, as listening does, when stopping.
                        listener.start_soon(
                            heartbeat.keep,
                            lambda: list(self.connections),
                            cfg.heartbeat_interval,
                            cfg.heartbeat_timeout,
                        )
                        # (debug: ``conjure serve`` prints it in its banner, for people and scripts)
                        log.debug("listening on %s", self.url)
                        task_status.started(self)
                        await self._stopping.wait()
                        listener.cancel_scope.cancel()
                    # Rooms handle what is queued, close their logs and say goodbye.
                    for room in list(self.rooms.values()):
                        room.submit(Stop(SHUTDOWN_BYE))
                    rooms.cancel_scope.deadline = trio.current_time() + cfg.shutdown_grace
                for conn in list(self.connections):
                    conn.close(SHUTDOWN_BYE_NO_ROOM, CLOSE_GOING_AWAY)
                conns.cancel_scope.deadline = trio.current_time() + cfg.shutdown_grace
        finally:
            for resumed in self.report.resumed:  # writers of rooms that never ran (closing twice
                resumed.writer.close()  # is harmless)
            self._stopped.set()

    def _resume_room(self, resumed: Resumed) -> None:
        code = resumed.game.setup.room
        if code in self.rooms:
            line = (
                f"refused {resumed.path}: room {code} is already taken by another unfinished game"
            )
            self.config.say(line)
            self.report.resumed.remove(resumed)  # the banner's counts stay true
            self.report.refused.append(line)
            resumed.writer.close()
            return
        self._open_room(code, resumed=resumed)
        log.info("room %s: resumed game %s from its log", code, resumed.game.setup.game_id)

    def _new_room(self, conn: Connection, msg: m.CreateRoom) -> Room:
        if self._stopping.is_set():
            raise Refusal("shutting_down", "The server is shutting down.")
        if len(self.rooms) >= self.config.max_rooms:
            raise self.book.refuse(
                conn.remote, "server_full", "This server has too many rooms open; try later."
            )
        self.book.check_create_room(conn.remote)
        # What the new room would refuse is refused here: a refused create makes no room, so it
        # counts against nobody's room rate and logs no room.
        clean_name(msg.name)
        clean_settings(msg.settings)
        code = new_room_code(self.held_rooms.union(self.rooms))
        room = self._open_room(code, creator=conn.remote)
        self.book.room_created(conn.remote)
        log.info("room %s: created by %s", code, conn.remote)
        return room

    def _open_room(
        self, code: str, *, creator: str | None = None, resumed: Resumed | None = None
    ) -> Room:
        """A room of this server under ``code``, running: new (made by ``creator``) or
        ``resumed`` from its log."""
        room = Room(
            code,
            self.config,
            self._room_closed,
            store=self.store,
            creator=creator,
            on_wrong_password=self._wrong_password,
            on_whole_views=self._whole_views,
            game=resumed.game if resumed else None,
            writer=resumed.writer if resumed else None,
            receipt=resumed.receipt if resumed else None,
            results_=resumed.results if resumed else None,
            told=resumed.talk if resumed else (),
        )
        self.rooms[code] = room
        assert self._rooms_nursery is not None
        self._rooms_nursery.start_soon(room.run)
        return room

    def _room_closed(self, room: Room) -> None:
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]
            if room.game is not None and not room.game.over:
                # Its log is unfinished (a room that failed): its code is not given again, or
                # the next start would find two unfinished logs of one room and resume neither.
                self.held_rooms.add(room.code)
            if room.creator is not None:
                self.book.room_closed(room.creator)
            log.info("room %s: closed (%s)", room.code, room.end_reason or "empty")

    # ------------------------------------------------------------------ connections

    async def _serve_stream(self, stream: trio.SocketStream) -> None:
        """One accepted socket, start to end: handshakes, the handler, the close. Never raises."""
        cfg = self.config
        # The peer as the listener saw it at accept: one that reset since has no address any
        # more (getpeername fails), yet its handshake was counted and is let go below.
        admitted = self._admitted(stream)
        try:
            try:
                if admitted is None:  # not a stream a guarded listener admitted: not served
                    return
                handshake: Handshake | None = None
                with trio.move_on_after(cfg.handshake_timeout):
                    transport: trio.abc.Stream = stream
                    if cfg.ssl_context is not None:
                        tls = trio.SSLStream(
                            stream, cfg.ssl_context, server_side=True, https_compatible=True
                        )
                        await tls.do_handshake()
                        transport = tls
                    handshake = await read_request(transport)
                if handshake is not None:
                    await self._handle(handshake, admitted)
            finally:
                if admitted is not None:  # a handshake that never reached the handler ends here
                    self.book.handshake_over(admitted.host, admitted.ticket)
                with trio.CancelScope(shield=True):
                    await trio.aclose_forcefully(stream)
                if cfg.ssl_context is not None:
                    note_tls_closed()  # (a cycle for the collector: server.gctuning)
        except BaseException as exc:
            self._contain(exc, None)

    def _admitted(self, stream: trio.SocketStream) -> Admitted | None:
        for listener in self.listeners:
            admitted = listener.admitted(stream)
            if admitted is not None:
                return admitted
        return None

    async def _handle(self, handshake: Handshake, admitted: Admitted) -> None:
        """One upgrade request: admission, the ``101``, then the read loop until it ends."""
        host = admitted.host
        cfg = self.config
        refusal = self.book.connect(host, admitted.ticket)
        try:
            try:
                ws = await handshake.accept(
                    max_message=MAX_FRAME_BYTES,
                    frame_rate=cfg.frame_rate,
                    frame_burst=cfg.frame_burst,
                )
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            conn = Connection(
                ws,
                cfg.outbound_queue,
                host,
                beat=random.uniform(0.75, 1.25),
                queue_bytes=cfg.outbound_bytes,
            )
            ws.report = partial(self._frame_abuse, conn)
            try:
                if refusal is not None or self._stopping.is_set():
                    await self._turn_away(conn, refusal)
                    return
                await self._serve_admitted(conn)
            finally:
                # The report holds the connection, which holds it: a cycle, that reference
                # counting alone cannot free, and the clock's young collections never look at
                # a connection that lived long (docs/PERFORMANCE.md).
                ws.report = None
        finally:
            self.book.disconnect(host)

    async def _serve_admitted(self, conn: Connection) -> None:
        self.connections.add(conn)
        try:
            await self._serve_connection(conn)
        finally:
            conn.mark_closed()  # before looking at conn.room: a room never seats a closed one
            self.connections.discard(conn)
            if conn.room is not None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    conn.room.submit(Detached(conn))
            await conn.final_close()

    def _frame_abuse(self, conn: Connection, kind: Abuse) -> None:
        """The frame meter held a connection back, or found a message of too many frames."""
        if kind == "frames":
            self.book.note(conn.remote, "frame_rate", "one connection over its frame rate")
            return
        self.book.note(conn.remote, "fragments", "a message sent in too many frames")
        # A short grace: nothing more of it is read, so its answer to the Close never comes.
        conn.close(f"a message may be sent in at most {MAX_FRAGMENTS} frames", CLOSE_POLICY, 0.5)

    async def _turn_away(self, conn: Connection, refusal: Refusal | None) -> None:
        """Say why, then close: a refused visitor learns the code and costs little."""
        if refusal is None:
            refusal = Refusal("shutting_down", "The server is shutting down.")
        code = _DOOR_CLOSE.get(refusal.code, CLOSE_GOING_AWAY)
        with trio.move_on_after(2.0):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await conn.ws.send(frame_of(m.error(code=refusal.code, message=refusal.message)))
        conn.abort(code, refusal.message)
        await conn.final_close()

    async def _serve_connection(self, conn: Connection) -> None:
        try:
            with conn.scope:
                async with trio.open_nursery() as tasks:
                    tasks.start_soon(conn.write_loop)
                    tasks.start_soon(self._watchdog, conn)
                    await self._read_loop(conn)
                    if conn.closing is None:
                        tasks.cancel_scope.cancel()
                    # else the writer says Bye and closes (bounded by the scope's deadline)
        except BaseException as exc:
            self._contain(exc, conn)

    async def _watchdog(self, conn: Connection) -> None:
        """Close a connection that never says hello, or that stays in no room for too long."""
        cfg = self.config
        await trio.sleep(cfg.hello_timeout)
        if not conn.greeted:
            conn.send(
                m.error(
                    code="hello_timeout",
                    message=f"No hello within {cfg.hello_timeout:g} s: closing.",
                )
            )
            conn.close("no hello", CLOSE_POLICY)
            return
        step = max(0.05, cfg.roomless_timeout / 4)
        roomless = 0.0
        while True:
            await trio.sleep(step)
            roomless = 0.0 if conn.room is not None else roomless + step
            if roomless >= cfg.roomless_timeout:
                conn.send(
                    m.error(
                        code="roomless_timeout",
                        message=f"No room created, joined or watched for "
                        f"{cfg.roomless_timeout:g} s: closing.",
                    )
                )
                conn.close("idle without a room", CLOSE_POLICY)
                return

    def _contain(self, exc: BaseException, conn: Connection | None) -> None:
        """Swallow this connection's failures (errors); let the rest through: cancellation, and
        a KeyboardInterrupt or SystemExit that reached this connection's task (Trio raises
        Ctrl-C in whichever task runs), which a server told to stop must not take for a
        connection's failure."""
        if isinstance(exc, BaseExceptionGroup):
            errors, passing = exc.split(Exception)
            if errors is not None:
                self._report(errors, conn)
            if passing is not None:
                raise passing
            return
        if isinstance(exc, Exception):
            self._report(exc, conn)
            return
        raise exc

    def _report(self, exc: BaseException, conn: Connection | None) -> None:
        ordinary = (Closed, trio.BrokenResourceError, trio.ClosedResourceError, OSError)

        def expected(e: BaseException) -> bool:
            return isinstance(e, ordinary)

        if isinstance(exc, BaseExceptionGroup):
            _, rest = exc.split(expected)
            if rest is None:
                return
            exc = rest
        elif expected(exc):
            return
        text = "".join(traceback.format_exception(exc))
        log.error("connection %r: unexpected error\n%s", conn, text)

    async def _reply(self, conn: Connection, msg: m.ServerMsg) -> None:
        """Answer a message here, at the door: once the room has handled every earlier message
        of this connection, so that answers come in the order of the messages."""
        await conn.settle()
        conn.send(msg)

    async def _read_loop(self, conn: Connection) -> None:
        cfg = self.config
        bucket = Bucket(cfg.rate, cfg.burst, trio.current_time())
        book = self.book
        while True:
            if conn.ws.violation_next:
                await conn.settle()  # the room answers what came before it first
            try:
                raw = await conn.ws.receive()
            except Closed:
                # What was sent before the close is still handled: the connection counts as
                # open (and its requests as its own) until the room is done with them.
                await conn.settle()
                return
            if conn.closing is not None:
                continue  # closing: read on only to meet the client's Close
            now = trio.current_time()
            if bucket.take(now):
                book.note(conn.remote, "flood", "one connection over its message rate")
                # What came within the rate is handled and answered first, then the goodbye.
                await conn.settle()
                conn.close(f"too many messages: at most {cfg.rate:g} a second", CLOSE_POLICY)
                continue  # read on only to meet the client's Close
            wait = book.message_wait(conn.remote)
            if wait:
                # The address's connections together are over their rate: this message is refused,
                # and this connection is not read again until the address has room (TCP pushes back).
                refusal = book.refuse(
                    conn.remote,
                    "rate_limited",
                    f"Too many messages from your address (at most {cfg.address_rate:g} a second "
                    "over all its connections); that message was dropped.",
                )
                await self._reply(
                    conn, m.error(code=refusal.code, message=refusal.message, ref=_peek_type(raw))
                )
                await trio.sleep(wait)
                continue
            try:
                await self._on_frame(conn, raw)
            except Refusal as e:
                await self._reply(conn, m.error(code=e.code, message=e.message))
            except Exception:  # one bad message must not end the connection, let alone the server
                log.error(
                    "connection %r: error handling a message\n%s", conn, traceback.format_exc()
                )
                await self._reply(
                    conn, m.error(code="internal", message="The server failed on that message.")
                )

    async def _on_frame(self, conn: Connection, raw: str | bytes) -> None:
        if isinstance(raw, bytes):
            await self._reply(
                conn, m.error(code="binary_frame", message="Send JSON in text frames.")
            )
            return
        try:
            msg = client_decoder.decode(raw)
        except msgspec.ValidationError as exc:
            await self._reply(
                conn,
                m.error(code="invalid_message", message=_readable(exc, raw), ref=_peek_type(raw)),
            )
            return
        except msgspec.DecodeError as exc:
            await self._reply(conn, m.error(code="malformed", message=_malformed(raw, exc)))
            return
        except RecursionError:
            await self._reply(
                conn, m.error(code="invalid_message", message="The message is nested too deeply.")
            )
            return
        ref = msg_tag(msg)
        if not conn.greeted:
            if not isinstance(msg, m.Hello):
                await self._reply(
                    conn,
                    m.error(
                        code="hello_required",
                        message=f'Say hello first: {{"type": "hello", "protocol": '
                        f"{PROTOCOL_VERSION}}}.",
                        ref=ref,
                    ),
                )
                return
            if msg.protocol != PROTOCOL_VERSION:
                await self._reply(
                    conn,
                    m.error(
                        code="protocol_version",
                        message=f"This server speaks protocol {PROTOCOL_VERSION}, not "
                        f"{msg.protocol}: use a matching version of the client.",
                        ref=ref,
                    ),
                )
                conn.close(f"protocol version {msg.protocol} is not supported", CLOSE_POLICY)
                return
            conn.greeted = True
            used = [f for f in (PATCHES, m.COMPUTER) if f in msg.features]  # the ones it knows
            conn.patches, conn.computer = PATCHES in used, m.COMPUTER in used
            conn.send(m.Welcome(protocol=PROTOCOL_VERSION, server=SERVER_NAME, features=used))
            return
        try:
            room = self._route(conn, msg)
        except Refusal as e:
            await self._reply(conn, m.error(code=e.code, message=e.message, ref=ref))
            return
        unanswered = conn.unanswered
        while unanswered and unanswered[0].is_set():
            unanswered.popleft()
        if len(unanswered) >= MAX_UNANSWERED:  # the room is slow (its disk): stop reading
            await unanswered[0].wait()
        req = Request(conn, msg)
        try:
            room.submit(req)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await self._reply(
                conn, m.error(code="room_closed", message="This room has closed.", ref=ref)
            )
            return
        if isinstance(msg, _ROUTING):
            await req.done.wait()
        else:
            unanswered.append(req.done)

    def _wrong_password(self, conn: Viewer) -> None:
        """A room's answer to a wrong password: it costs the sender's address a guess."""
        if isinstance(conn, Connection):
            self.book.wrong_guess(conn.remote, "wrong_password")

    def _whole_views(self, conn: Viewer, n: int) -> None:
        """A room's lobby change about to send ``n`` whole views: they spend the sender's
        address's budget of whole views, or the change is refused (``ServerBook``)."""
        if isinstance(conn, Connection):
            self.book.check_view_request(conn.remote, "lobby changes", n)

    def _route(self, conn: Connection, msg: m.ClientMsg) -> Room:
        """The room a message goes to, or a Refusal."""
        again = isinstance(msg, m.Resync) or (
            isinstance(msg, m.ResumeSeat) and conn.room is not None
        )
        room = self._room_for(conn, msg)
        if again:
            # A whole view asked for again (a reconnecting client's resume is not: it comes on
            # a new connection, in no room yet). Taken once the request is known to go to a
            # room: a refused one spent the address's views (found by review).
            self.book.check_view_request(conn.remote)
        return room

    def _room_for(self, conn: Connection, msg: m.ClientMsg) -> Room:
        match msg:
            case m.Hello():
                raise Refusal("already_greeted", "Hello was already said on this connection.")
            case m.CreateRoom():
                if conn.room is not None:
                    raise Refusal("already_in_room", "Leave your room first.")
                return self._new_room(conn, msg)
            case m.JoinRoom() | m.ResumeSeat() | m.Watch():
                code = msg.room.upper()
                if conn.room is not None and conn.room.code != code:
                    raise Refusal("already_in_room", "Leave your room first.")
                self.book.check_guess(conn.remote)
                room = self.rooms.get(code)
                if room is None:
                    self.book.wrong_guess(conn.remote, "unknown_room")
                    raise Refusal("unknown_room", f"There is no room {code} on this server.")
                return room
        if conn.room is None:
            raise Refusal("not_in_room", "Create, join or watch a room first.")
        return conn.room


#: A ``\\uXXXX`` escape of a UTF-16 surrogate (a lone one is no character).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


#: The longest frame whose refusal is explained beyond the decoder's own sentence (a key given
#: twice, a lone surrogate). Why: the decoder refuses a frame at its first fault, in about a
#: microsecond, and an explanation that parses the whole frame in Python took 3.5 ms for 64 KB of
#: small objects: refusals sent within the message rate from a few addresses held the event loop
#: (found by an attacker's review). Mistakes worth explaining are made in short messages.
EXPLAINED_MAX = 2048


def _malformed(raw: str, exc: msgspec.DecodeError) -> str:
    """The sentence for a frame that is not JSON. Why: of an escaped lone surrogate, which the
    decoder refuses as it must (no character to make of it), it says "Input data was
    truncated" (found by review); that is said in its own words."""
    if len(raw) <= EXPLAINED_MAX and _SURROGATE_ESCAPE.search(raw):
        try:
            json.loads(raw)  # JSON to the letter of RFC 8259, which lets such escapes through
        except (ValueError, RecursionError):
            pass
        else:
            return (
                "Not valid JSON text: a \\u escape names a lone UTF-16 surrogate (D800-DFFF "
                "without its pair), which is no character"
            )
    return f"Not valid JSON: {exc}"


class _Typed(msgspec.Struct):
    """Only the ``type`` of a message: the decoder skips the rest without making objects of it
    (the whole of a 64 KB frame of small objects, decoded, took 0.55 ms; this, 0.15 ms), and a
    ``type`` that is no string is refused at its first byte (one of 64 KB of nested lists was
    decoded whole: found by review)."""

    type: str | None = None


_peek_decoder = msgspec.json.Decoder(_Typed)


def _peek_type(raw: str | bytes) -> str | None:
    """The ``type`` of a frame that failed validation, for the error's ``ref``."""
    try:
        t = _peek_decoder.decode(raw).type
    except (msgspec.DecodeError, RecursionError):  # deep nesting is refused, not a crash
        return None
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


def _readable(exc: msgspec.ValidationError, raw: str = "") -> str:
    """msgspec's sentence, minus the regular expression nobody should have to read; or, for a
    message that names a key twice, that (a second "type" was refused as "Invalid value
    'resync'", a type there is: found by review). Looked for on this path alone, in a frame of
    at most ``EXPLAINED_MAX`` characters."""
    twice = _key_twice(raw) if len(raw) <= EXPLAINED_MAX else None
    if twice is not None:
        return f"The key {twice!r} appears twice in one object: give each key once."
    text = str(exc)
    if "matching regex" in text:
        where = text.rsplit(" - at ", 1)[-1] if " - at " in text else "the message"
        return f"Text with control or formatting characters, or in the wrong shape - at {where}"
    return text


def _key_twice(raw: str) -> str | None:
    """The first key an object of ``raw`` (JSON) gives twice, if any."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen and not found:
                found.append(key)
            seen.add(key)
        return dict(items)

    try:
        json.loads(raw, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None
    return found[0] if found else None


def warm_up_words() -> None:
    """Load word and name data now, rather than on a room's first use of it."""
    from conjure.protocol import lemmas, names
    from conjure.protocol.words import contains_written, same_word

    same_word("rockets", "rocket")
    contains_written("fire trucks", "truck")
    lemmas.warm_up()  # lemminflect too, for the words the table lacks
    names.warm_up()
