"""The trio baseline with its WebSocket framing owned: the same broadcast, no trio-websocket.

    python bench/loadlib/framed_server.py [--host 127.0.0.1] [--port 0]

Speaks ``baseline_server.py``'s protocol frame for frame (tests/test_bench_node.py checks it).
Why it exists: to measure what trio-websocket itself costs per action, so that the benchmark can
say how much of Conjure's CPU is the library's and how much a server that framed its own
messages would save (docs/PERFORMANCE.md). Each connection is one Trio task that reads the
socket, parses and unmasks the client's frames itself (RFC 6455 section 5) and answers pings and
closes; an update is framed once and written to each member's socket with one ``write(2)``. A
write the kernel takes only in part leaves the rest owed, and the connection's writer task sends
it before anything later, so frames keep their order. Trio's public API and the standard library
only. SIGTERM / SIGINT stop it.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import signal
import sys
from functools import partial

import msgspec
import trio

UPDATE_BYTES = 1024
_HEAD = '{"seq":%d,"a":%s,"pad":"'
# Pad so that a typical frame (seq of 4 digits, a ~40-byte action) is about UPDATE_BYTES long.
PAD = "x" * (UPDATE_BYTES - len(_HEAD % (1000, '{"seat":0,"n":10,"act":"commit"}')) - 2)
#: RFC 6455 section 1.3: appended to the client's key to make the accept token.
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_HEADERS = 16 * 1024
MAX_MESSAGE = 1024 * 1024
#: Bytes a connection may owe before it counts as not reading and is dropped.
MAX_OWED = 4 * 1024 * 1024
_TEXT, _CLOSE, _PING, _PONG = 0x1, 0x8, 0x9, 0xA


class Join(msgspec.Struct):
    room: str
    seat: int


_join = msgspec.json.Decoder(Join)


class Closed(Exception):
    """The connection is over: the peer closed, broke a rule of the protocol, or stopped reading."""


def frame(opcode: int, payload: bytes) -> bytes:
    """A server frame: FIN set, unmasked (RFC 6455 section 5.2)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, n))
    elif n < 65536:
        head = bytes((0x80 | opcode, 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 127)) + n.to_bytes(8, "big")
    return head + payload


def unmask(mask: bytes, data: bytes) -> bytes:
    """XOR ``data`` with the repeated 4-byte ``mask``, as one big-integer operation."""
    n = len(data)
    key = int.from_bytes((mask * (n // 4 + 1))[:n], "little")
    return (int.from_bytes(data, "little") ^ key).to_bytes(n, "little")


def accept_response(request: bytes) -> bytes:
    """The 101 answer to an opening handshake (RFC 6455 section 4.2.2); Closed if it is not one."""
    lines = request.split(b"\r\n")
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    key = headers.get(b"sec-websocket-key")
    if not lines[0].startswith(b"GET ") or key is None:
        raise Closed("not a WebSocket opening handshake")
    token = base64.b64encode(hashlib.sha1(key + _GUID).digest())
    return (
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: " + token + b"\r\n\r\n"
    )


class Conn:
    """One client's socket: frames written at once, or owed to the writer task in order."""

    __slots__ = ("closed", "fd", "key", "owed", "room", "stream", "wake")

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.fd = stream.socket.fileno()
        self.owed = bytearray()
        self.wake = trio.Event()
        self.closed = False
        self.room: Room | None = None
        self.key = ""

    def send(self, data: bytes) -> None:
        if self.closed:
            return
        if not self.owed:
            try:
                data = data[os.write(self.fd, data) :]
            except BlockingIOError:
                pass
            except OSError:
                self.closed = True
            if not data or self.closed:
                self.wake.set()
                return
        self.owed += data
        if len(self.owed) > MAX_OWED:
            self.closed = True  # not reading: the writer task ends the connection
        self.wake.set()

    async def writer(self, scope: trio.CancelScope) -> None:
        """Send what is owed, as the socket takes it; ends the connection when it cannot."""
        while not self.closed:
            await self.wake.wait()
            self.wake = trio.Event()
            while self.owed and not self.closed:
                await trio.lowlevel.wait_writable(self.fd)
                try:
                    del self.owed[: os.write(self.fd, self.owed)]
                except BlockingIOError:
                    continue
                except OSError:
                    self.closed = True
        scope.cancel()


class Room:
    __slots__ = ("members", "seq")

    def __init__(self) -> None:
        self.members: list[Conn] = []
        self.seq = 0


def broadcast(room: Room, data: bytes) -> None:
    for conn in list(room.members):
        conn.send(data)


def parse(buf: bytearray) -> tuple[int, bool, bytes] | None:
    """Take one whole frame off the front of ``buf``: (opcode, fin, payload), or None for more."""
    if len(buf) < 2:
        return None
    b0, b1 = buf[0], buf[1]
    if b0 & 0x70 or not b1 & 0x80:
        raise Closed("reserved bits set, or an unmasked client frame")
    n, pos = b1 & 0x7F, 2
    if n == 126:
        if len(buf) < 4:
            return None
        n, pos = int.from_bytes(buf[2:4], "big"), 4
    elif n == 127:
        if len(buf) < 10:
            return None
        n, pos = int.from_bytes(buf[2:10], "big"), 10
    if n > MAX_MESSAGE:
        raise Closed("frame too large")
    end = pos + 4 + n
    if len(buf) < end:
        return None
    payload = unmask(bytes(buf[pos : pos + 4]), bytes(buf[pos + 4 : end]))
    del buf[:end]
    return b0 & 0x0F, bool(b0 & 0x80), payload


def on_message(rooms: dict[str, Room], conn: Conn, text: str) -> None:
    """A whole text message: the first names the room, every later one is an action."""
    room = conn.room
    if room is None:
        join = _join.decode(text)
        conn.key = join.room
        room = conn.room = rooms.setdefault(join.room, Room())
        room.members.append(conn)
        broadcast(room, frame(_TEXT, b'{"seq":0,"members":%d}' % len(room.members)))
    else:
        room.seq += 1
        broadcast(room, frame(_TEXT, (_HEAD % (room.seq, text) + PAD + '"}').encode()))


async def serve_frames(rooms: dict[str, Room], conn: Conn, buf: bytearray) -> None:
    """Read and answer the client's frames until it closes (Closed: it broke the protocol)."""
    parts: list[bytes] = []
    while True:
        while (got := parse(buf)) is not None:
            opcode, fin, payload = got
            if opcode == _PING:
                conn.send(frame(_PONG, payload))
            elif opcode == _CLOSE:
                conn.send(frame(_CLOSE, payload[:2]))
                return
            elif opcode != _PONG:
                parts.append(payload)
                if sum(map(len, parts)) > MAX_MESSAGE:
                    raise Closed("message too large")
                if fin:
                    on_message(rooms, conn, b"".join(parts).decode())
                    parts = []
        chunk = await conn.stream.receive_some(65536)
        if not chunk:
            return
        buf += chunk


async def handler(rooms: dict[str, Room], stream: trio.SocketStream) -> None:
    conn: Conn | None = None
    try:
        buf = bytearray()
        while b"\r\n\r\n" not in buf:
            chunk = await stream.receive_some(65536)
            if not chunk or len(buf) > MAX_HEADERS:
                return
            buf += chunk
        head, _sep, rest = bytes(buf).partition(b"\r\n\r\n")
        await stream.send_all(accept_response(head))
        conn = Conn(stream)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(conn.writer, nursery.cancel_scope)
            try:
                await serve_frames(rooms, conn, bytearray(rest))
            finally:
                conn.closed = True
                conn.wake.set()
    except (Closed, UnicodeDecodeError, msgspec.DecodeError, trio.BrokenResourceError):
        pass
    finally:
        room = conn.room if conn is not None else None
        if room is not None:
            if conn in room.members:
                room.members.remove(conn)
            if not room.members and conn is not None:
                rooms.pop(conn.key, None)
        await trio.aclose_forcefully(stream)


async def main(host: str, port: int) -> None:
    rooms: dict[str, Room] = {}
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(
                partial(trio.serve_tcp, partial(handler, rooms), port, host=host)
            )
            bound = listeners[0].socket.getsockname()[1]
            print(f"listening on ws://{host}:{bound}", flush=True)
            async for _ in signals:
                break
            nursery.cancel_scope.cancel()


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    a = p.parse_args()
    trio.run(main, a.host, a.port)
    sys.exit(0)
