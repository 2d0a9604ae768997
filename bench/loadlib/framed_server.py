"""The trio baseline with its WebSocket framing owned: the same broadcast, no trio-websocket.

    python bench/loadlib/framed_server.py [--host 127.0.0.1] [--port 0]

Speaks ``baseline_server.py``'s protocol, message for message (tests/test_bench_node.py checks
it); where a client breaks RFC 6455 it drops the connection without a Close frame.
Why it exists: to measure what trio-websocket itself costs per action, so that the benchmark can
say how much of Conjure's CPU is the library's and how much a server that framed its own
messages would save (docs/PERFORMANCE.md). Each connection is one Trio task that reads the
socket, parses and unmasks the client's frames itself (RFC 6455 section 5) and answers pings and
closes; an update is framed once and written to each member's socket with one ``write(2)``. A
write the kernel takes only in part leaves the rest owed, and the connection's writer task sends
it before anything later, so frames keep their order. Trio's public API, the standard library and
the Conjure server's own frame builder and unmasking (``conjure.server.wsframes``, so that both
pay the same for them). SIGTERM / SIGINT stop it.

``--durable`` (the benchmark's ``durable`` target): the same broadcast, except that each action
is first appended to its room's own log file and made durable through the Conjure server's own
group commit (``conjure.server.groupsync``: the worker threads, ``pwritev2(RWF_DSYNC)`` or a
shared ``syncfs``), and told to the room only then, as Conjure tells an action only once it is
durable. No rules, no views, no hash chain: the floor under any server that keeps the brief's
promise on this machine's disk. The logs go to a temporary folder, removed at exit.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import itertools
import os
import shutil
import sys
import tempfile
from functools import partial

import msgspec
import trio
from baseline_server import HEAD, PAD, arguments, join_decoder, serve_until_signalled, tcp_port

from conjure.server.fssync import shared_sync_device
from conjure.server.groupsync import group_sync
from conjure.server.wsframes import frame, unmask

#: RFC 6455 section 1.3: appended to the client's key to make the accept token.
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_HEADERS = 16 * 1024
MAX_MESSAGE = 1024 * 1024
#: Bytes a connection may owe before it counts as not reading and is dropped.
MAX_OWED = 4 * 1024 * 1024
_CONTINUATION, _TEXT, _CLOSE, _PING, _PONG = 0x0, 0x1, 0x8, 0x9, 0xA


class Closed(Exception):
    """The client broke a rule of the protocol (or sent no opening handshake): drop it."""


def accept_response(request: bytes) -> bytes:
    """The 101 answer to an opening handshake (RFC 6455 section 4.2.2); Closed if it is not one."""
    lines = request.split(b"\r\n")
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    key = headers.get(b"sec-websocket-key")
    upgrade = headers.get(b"upgrade", b"").lower() == b"websocket"
    if not lines[0].startswith(b"GET ") or key is None or not upgrade:
        raise Closed("not a WebSocket opening handshake")
    token = base64.b64encode(hashlib.sha1(key + _GUID).digest())
    return (
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: " + token + b"\r\n\r\n"
    )


class Conn:
    """One client's socket: frames written at once, or owed to the writer task in order."""

    __slots__ = ("closed", "fd", "key", "owed", "room", "scope", "stream", "wake")

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.fd = stream.socket.fileno()
        self.owed = bytearray()
        self.wake = trio.Event()
        self.closed = False
        self.room: Room | None = None
        self.key = ""
        #: The connection's nursery: cancelled to end it (a write failed, the client stopped reading).
        self.scope: trio.CancelScope | None = None

    def send(self, data: bytes) -> None:
        if self.closed:
            return
        if not self.owed:
            try:
                data = data[os.write(self.fd, data) :]
            except BlockingIOError:
                pass
            except OSError:
                self.end()
                return
            if not data:
                return  # the usual case: nothing owed, the writer task is not woken
        self.owed += data
        if len(self.owed) > MAX_OWED:
            self.end()  # not reading
            return
        self.wake.set()

    def end(self) -> None:
        self.closed = True
        if self.scope is not None:
            self.scope.cancel()

    async def _pay(self) -> None:
        while self.owed:
            await trio.lowlevel.wait_writable(self.fd)
            try:
                del self.owed[: os.write(self.fd, self.owed)]
            except BlockingIOError:
                continue

    async def writer(self) -> None:
        """Send what is owed, as the socket takes it; ends the connection when it cannot."""
        while True:
            await self.wake.wait()
            self.wake = trio.Event()
            try:
                await self._pay()
            except OSError:
                self.end()
                return

    async def drain(self) -> None:
        """At the end, give what is still owed (a Close frame, say) a second to go out."""
        self.closed = True
        with trio.move_on_after(1.0), contextlib.suppress(OSError):
            await self._pay()


class Room:
    __slots__ = ("device", "fd", "lock", "members", "seq")

    def __init__(self) -> None:
        self.members: list[Conn] = []
        self.seq = 0
        #: ``--durable``: the room's log (opened at its first action), its device for a shared
        #: ``syncfs``, and a lock that keeps one append of it in flight (its actions in order).
        self.fd = -1
        self.device: int | None = None
        self.lock = trio.Lock()


#: ``--durable``: the folder of the rooms' logs (None: actions are not logged).
LOGS: str | None = None


_log_names = itertools.count()


async def make_durable(room: Room, line: bytes) -> None:
    """Append ``line`` to the room's log and return once it is durable (``--durable``)."""
    assert LOGS is not None
    if room.fd < 0:
        room.fd = os.open(
            os.path.join(LOGS, f"{next(_log_names)}.log"),
            os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC,
            0o600,
        )
        room.device = shared_sync_device(os.fstat(room.fd).st_dev)
    try:
        room.lock.acquire_nowait()  # no scheduling round trip while it is free (most often)
    except trio.WouldBlock:
        await room.lock.acquire()
    try:
        await group_sync().append(room.fd, line, room.device)
    finally:
        room.lock.release()


async def close_log(room: Room) -> None:
    """A room nobody is in any more closes its log, once no append of it is in flight (one
    descriptor a room was kept for the life of the process)."""
    if room.fd >= 0:
        async with room.lock:
            os.close(room.fd)
            room.fd = -1


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
    payload = unmask(bytes(buf[pos + 4 : end]), bytes(buf[pos : pos + 4]))
    del buf[:end]
    return b0 & 0x0F, bool(b0 & 0x80), payload


async def on_message(rooms: dict[str, Room], conn: Conn, text: str) -> None:
    """A whole text message: the first names the room, every later one is an action."""
    room = conn.room
    if room is None:
        join = join_decoder.decode(text)
        conn.key = join.room
        room = conn.room = rooms.setdefault(join.room, Room())
        room.members.append(conn)
        broadcast(room, frame(_TEXT, b'{"seq":0,"members":%d}' % len(room.members)))
    else:
        room.seq += 1
        seq = room.seq
        if LOGS is not None:
            await make_durable(room, b'{"seq":%d,"a":%s}\n' % (seq, text.encode()))
        broadcast(room, frame(_TEXT, (HEAD % (seq, text) + PAD + '"}').encode()))


async def serve_frames(rooms: dict[str, Room], conn: Conn, buf: bytearray) -> None:
    """Read and answer the client's frames until it closes (Closed: it broke the protocol)."""
    parts: list[bytes] = []
    size = 0
    while True:
        while (got := parse(buf)) is not None:
            opcode, fin, payload = got
            if opcode & 0x8:  # a control frame: whole, and short (RFC 6455 section 5.5)
                if not fin or len(payload) > 125:
                    raise Closed("a fragmented or long control frame")
                if opcode == _PING:
                    conn.send(frame(_PONG, payload))
                elif opcode == _CLOSE:
                    conn.send(frame(_CLOSE, payload))
                    return
                elif opcode != _PONG:
                    raise Closed("an unknown control opcode")
                continue
            if opcode != (_CONTINUATION if parts else _TEXT):
                raise Closed("a binary frame, an unknown opcode, or fragments out of order")
            size += len(payload)
            if size > MAX_MESSAGE:
                raise Closed("message too large")
            parts.append(payload)
            if fin:
                await on_message(rooms, conn, b"".join(parts).decode())
                parts, size = [], 0
        chunk = await conn.stream.receive_some(65536)
        if not chunk:
            return
        buf += chunk


#: What ends one connection, and only that one.
_ENDS = (Closed, UnicodeDecodeError, msgspec.DecodeError, trio.BrokenResourceError)


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
        try:
            answer = accept_response(head)
        except Closed:
            await stream.send_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        await stream.send_all(answer)
        conn = Conn(stream)
        async with trio.open_nursery() as nursery:
            conn.scope = nursery.cancel_scope
            nursery.start_soon(conn.writer)
            with contextlib.suppress(*_ENDS):
                await serve_frames(rooms, conn, bytearray(rest))
            await conn.drain()
            nursery.cancel_scope.cancel()
    except _ENDS:
        pass
    finally:
        if conn is not None and conn.room is not None:
            if conn in conn.room.members:
                conn.room.members.remove(conn)
            if not conn.room.members:
                if rooms.get(conn.key) is conn.room:  # (not a newer room of the same key)
                    del rooms[conn.key]
                with trio.CancelScope(shield=True):
                    await close_log(conn.room)
        await trio.aclose_forcefully(stream)


async def main(host: str, port: int) -> None:
    rooms: dict[str, Room] = {}
    await serve_until_signalled(
        host, lambda nursery: tcp_port(nursery, partial(handler, rooms), host, port)
    )


if __name__ == "__main__":
    a = arguments(__doc__.splitlines()[0], "--durable")
    if a.durable:
        LOGS = tempfile.mkdtemp(prefix="conjure-bench-durable-")
        print(f"durable logs in {LOGS}", flush=True)
    try:
        trio.run(main, a.host, a.port)
    finally:
        if LOGS is not None:
            shutil.rmtree(LOGS, ignore_errors=True)
    sys.exit(0)
