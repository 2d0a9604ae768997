"""The baseline: a bare trio-websocket broadcast server (no rules, no log, no views).

    python bench/loadlib/baseline_server.py [--host 127.0.0.1] [--port 0]

prints ``listening on ws://HOST:PORT``. A connection's first frame names its room:
``{"room": "r1", "seat": 3}``; every join is broadcast to the room as
``{"seq": 0, "members": N}``. Every later frame is an "action": the server numbers it (``seq``, per
room) and sends ``{"seq": Q, "a": <the action as received>, "pad": "..."}``, about 1 KB, to every
member of the room, the sender included, one ``send_message`` after another. That is all: the
cheapest correct room broadcast trio-websocket can do, to compare the real server against.
SIGTERM / SIGINT stop it.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from collections.abc import Awaitable, Callable
from functools import partial

import msgspec
import trio
from trio_websocket import ConnectionClosed, WebSocketRequest, serve_websocket

UPDATE_BYTES = 1024
HEAD = '{"seq":%d,"a":%s,"pad":"'
# Pad so that a typical frame (seq of 4 digits, a ~40-byte action) is about UPDATE_BYTES long.
PAD = "x" * (UPDATE_BYTES - len(HEAD % (1000, '{"seat":0,"n":10,"act":"commit"}')) - 2)


class Join(msgspec.Struct):
    room: str
    seat: int


class BaseRoom:
    __slots__ = ("members", "seq")

    def __init__(self) -> None:
        self.members: list = []
        self.seq = 0


join_decoder = msgspec.json.Decoder(Join)


async def _broadcast(room: BaseRoom, frame: str) -> None:
    for ws in list(room.members):
        with contextlib.suppress(ConnectionClosed, trio.BrokenResourceError):
            await ws.send_message(frame)


async def handler(rooms: dict[str, BaseRoom], request: WebSocketRequest) -> None:
    try:
        ws = await request.accept()
    except Exception:
        return
    room = None
    member = ws
    try:
        join = join_decoder.decode(await ws.get_message())
        room = rooms.get(join.room)
        if room is None:
            room = rooms[join.room] = BaseRoom()
        room.members.append(member)
        await _broadcast(room, f'{{"seq":0,"members":{len(room.members)}}}')
        while True:
            raw = await ws.get_message()
            room.seq += 1
            await _broadcast(room, HEAD % (room.seq, raw) + PAD + '"}')
    except (ConnectionClosed, msgspec.DecodeError, trio.BrokenResourceError):
        pass
    finally:
        if room is not None:
            with contextlib.suppress(ValueError):
                room.members.remove(member)
            if not room.members:
                rooms.pop(join.room, None)


async def serve_until_signalled(
    host: str, listen: Callable[[trio.Nursery], Awaitable[int]]
) -> None:
    """Start listening (``listen`` returns the port bound), say where, serve until SIGTERM/SIGINT.

    Shared with framed_server.py, which is the same broadcast with its own framing.
    """
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            port = await listen(nursery)
            print(f"listening on ws://{host}:{port}", flush=True)
            async for _ in signals:
                break
            nursery.cancel_scope.cancel()


async def tcp_port(nursery: trio.Nursery, handler: Callable, host: str, port: int) -> int:
    """Serve ``handler`` on plain TCP streams; the port bound."""
    listeners = await nursery.start(partial(trio.serve_tcp, handler, port, host=host))
    return listeners[0].socket.getsockname()[1]


async def main(host: str, port: int) -> None:
    rooms: dict[str, BaseRoom] = {}

    async def listen(nursery: trio.Nursery) -> int:
        server = await nursery.start(
            partial(serve_websocket, partial(handler, rooms), host, port, None)
        )
        return server.port

    await serve_until_signalled(host, listen)


def arguments(description: str, *extra: str) -> argparse.Namespace:
    """``--host`` and ``--port``, and each flag of ``extra`` (see the module docstring)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    for flag in extra:
        p.add_argument(flag, action="store_true", help="see the module docstring")
    return p.parse_args()


if __name__ == "__main__":
    a = arguments(__doc__.splitlines()[0])
    trio.run(main, a.host, a.port)
    sys.exit(0)
