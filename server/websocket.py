"""A client's WebSocket as the server runs it: the opening handshake (wsproto's), then frames
read and written by the server itself (``server.wsframes``), through Trio's public API.

Why not trio-websocket here: each of its connections kept a reader task that parsed every
frame with wsproto and handed each message over a channel to the server's read loop, and every
update went through its locked ``send_message``. Under load that was about a fifth of the event
loop's time per action; reading here costs one task step per message (docs/PERFORMANCE.md,
"Owning the WebSocket"). The clients keep trio-websocket.

One object orders everything written to a connection: a frame goes straight onto a plain
socket with one ``write(2)`` (:meth:`WebSocket.write`) only while nothing else is being sent and
no earlier bytes are owed; otherwise the caller's writer task sends it in turn
(:meth:`WebSocket.send`). A write the kernel takes only in part leaves the rest owed, sent before
anything later, so frames never interleave. Over TLS every frame goes the second way.

Every frame a client sends is counted, pings and fragments too, against the connection's
frame budget (``frame_rate`` a second, ``frame_burst`` saved up): over it, the connection is not
read again until it is within it, so TCP pushes the client back and the server does no work for
it. A read may hold thousands of tiny frames: at most a burst of them is parsed before the wait.
A client that sends anything after its upgrade request before the server's reply (RFC 6455
section 4.1 forbids it) is cut off before it is a WebSocket.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import re
from collections import deque
from collections.abc import Callable
from typing import Literal

import trio
from wsproto import ConnectionType
from wsproto.events import AcceptConnection, RejectConnection, Request
from wsproto.handshake import H11Handshake
from wsproto.utilities import RemoteProtocolError

from conjure.server.gate import Bucket
from conjure.server.wsframes import (
    CLOSE_ABNORMAL,
    PING_FRAME,
    PONG,
    Close,
    FrameReader,
    Ping,
    TooManyFragments,
    Violation,
    close_frame,
    frame,
)

#: The longest upgrade request read (as h11's own limit): a longer one is refused.
MAX_REQUEST = 16 * 1024
#: Where an upgrade request ends, as h11 finds it: a blank line, with or without its carriage
#: return.
_END_OF_REQUEST = re.compile(rb"\n\r?\n")
#: Bytes read from the socket at once: the largest message and its header fit.
_READ = 65536 + 14
#: Reads of a connection a second, and saved up, before it waits to read again. Why: frames
#: are metered, bytes were not, and a client sending one byte per TCP segment (the payload
#: of a frame that never ends, an upgrade request that never ends) woke the server 30,000
#: times a second from one address (found by review). While a read waits, the kernel gathers
#: what comes, and the next read takes it all; a player sends a few frames a second.
READ_RATE = 200.0
READ_BURST = 200.0
#: An upgrade request comes in a read or two: after this many, each read waits
#: ``REQUEST_READ_WAIT`` seconds first, and one that takes more than ``MAX_REQUEST_READS``
#: reads is dropped.
REQUEST_READS_FREE = 4
REQUEST_READ_WAIT = 0.05
MAX_REQUEST_READS = 64
#: Header lines an upgrade request may hold: a 16 KB request of 4,000 empty headers took the
#: HTTP parser 9.5 ms (20 times a real one), on the event loop (found by review).
MAX_HEADER_LINES = 64

Abuse = Literal["frames", "fragments"]


class Closed(Exception):
    """The WebSocket is closed: the code and reason of the Close frame that ended it
    (``CLOSE_ABNORMAL``, 1006: the stream ended without one)."""

    def __init__(self, code: int, reason: str = "") -> None:
        super().__init__(f"{code} {reason}".strip())
        self.code = code
        self.reason = reason


class WebSocket:
    """One client's WebSocket after its opening handshake."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        *,
        max_message: int,
        frame_rate: float,
        frame_burst: float,
    ) -> None:
        self.stream = stream
        #: The socket's descriptor for direct writes (-1 over TLS: the bytes are not frames).
        self._fd = stream.socket.fileno() if isinstance(stream, trio.SocketStream) else -1
        self._reader = FrameReader(max_message)
        self._ready: deque[str | bytes] = deque()
        self._violation: Violation | None = None
        self._lock = trio.StrictFIFOLock()  #: held while bytes are sent through the stream
        self._owed: bytes | memoryview = b""
        self._bucket = Bucket(frame_rate, frame_burst, trio.current_time())
        self._reads = Bucket(READ_RATE, READ_BURST, trio.current_time())
        #: Frames parsed at most before the budget is spent on them (a read may hold thousands).
        self._batch = max(1, int(frame_burst))
        #: Told of each abuse (the server logs it, and closes the connection on "fragments").
        self.report: Callable[[Abuse], None] | None = None
        #: The close handshake is over, or the stream broke: (code, reason). Nothing more is
        #: read or written.
        self.closed: tuple[int, str] | None = None
        #: The server has sent its Close frame: no frame may follow it (RFC 6455 5.5.1).
        self.close_sent = False
        self._peer_closed = trio.Event()
        #: When the client's last frame began to arrive (Trio clock): a Pong, a message, any
        #: frame shows that the client is there (``server.heartbeat``).
        self.heard_at = trio.current_time()
        #: Frames read; times reading waited for the frame budget; frames written whole, and
        #: taken by the kernel only in part (for tests and benches).
        self.held = 0
        self.whole = 0
        self.partial = 0

    @property
    def violation_next(self) -> bool:
        """The next receive ends the connection for a violation (messages before it taken)."""
        return self._violation is not None and not self._ready

    @property
    def direct(self) -> bool:
        """Frames can go straight onto the socket (a plain TCP connection)."""
        return self._fd >= 0

    @property
    def frames(self) -> int:
        return self._reader.frames

    # ------------------------------------------------------------------ reading

    async def receive(self) -> str | bytes:
        """The client's next message (text as str); pings are answered on the way.

        Raises :class:`Closed` once the client's Close frame has come (after the messages
        sent before it), the stream has ended, or the client broke the protocol.
        """
        ready = self._ready
        if ready:  # a message of an earlier read: let the other tasks run between two of them
            await trio.lowlevel.checkpoint()
        while not ready:
            if self.closed is not None:
                raise Closed(*self.closed)
            if self._violation is not None:  # once the messages before it were all taken
                violation, self._violation = self._violation, None
                await self._violated(violation)
                continue
            if self._reader.more:
                data = b""  # frames of the last read are still buffered: no read until they are
            else:
                data = await self._read()
                if not data:
                    self._ended(CLOSE_ABNORMAL, "")
                    continue
            found, began, violation = self._reader.feed(data, self._batch)
            if began:
                await self._spend(began)
            for item in found:
                if isinstance(item, (str, bytes)):
                    ready.append(item)
                elif isinstance(item, Ping):
                    await self._control(frame(PONG, item.payload))
                elif isinstance(item, Close):
                    await self._answer_close(item)  # nothing after it is read
                    violation = None
                    break
                # a Pong only shows the client is there (``heard_at``)
            # A violation ends the connection once the messages read before it are handled
            # (they were lost when one came in the same read as them).
            self._violation = violation
        return ready.popleft()

    async def _read(self) -> bytes | bytearray:
        """The client's next bytes (empty: its stream has ended).

        Over plain TCP: wait until the socket is readable, then one ``read(2)``. (Trio's
        ``receive_some`` reads first and waits when that fails, which is the usual case here,
        between two of a player's actions: a system call and some layers more per message.)
        """
        wait = self._reads.spend(trio.current_time(), 1)
        if wait:
            await trio.sleep(wait)
        fd = self._fd
        if fd < 0:
            try:
                return await self.stream.receive_some(_READ)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return b""
        while True:
            try:
                await trio.lowlevel.wait_readable(fd)
                return os.read(fd, _READ)
            except BlockingIOError:
                continue
            except (OSError, trio.ClosedResourceError):  # reset, or closed under us
                return b""

    async def _spend(self, frames: int) -> None:
        self.heard_at = now = trio.current_time()
        wait = self._bucket.spend(now, frames)
        if wait:
            self.held += 1
            if self.report is not None:
                self.report("frames")
            await trio.sleep(wait)

    async def _answer_close(self, close: Close) -> None:
        """The client closes: answer with its code (RFC 6455 5.5.1), and read no more."""
        self._peer_closed.set()
        if not self.close_sent:
            await self._send_close(close.code, close.reason)
        self._ended(close.code or 1005, close.reason)

    async def _violated(self, violation: Violation) -> None:
        if isinstance(violation, TooManyFragments) and self.report is not None:
            self.report("fragments")  # the server says why, then closes
            await trio.sleep_forever()  # nothing more of it is read
        if not self.close_sent:
            with trio.move_on_after(1.0):
                await self._send_close(violation.code, violation.reason)
        self._ended(violation.code, violation.reason)

    def _ended(self, code: int, reason: str) -> None:
        if self.closed is None:
            self.closed = (code, reason)
        self._peer_closed.set()

    # ------------------------------------------------------------------ writing

    @property
    def owed(self) -> bool:
        """Part of a frame is still to be sent: :meth:`flush` sends it."""
        return bool(self._owed)

    def write(self, data: bytes) -> bool:
        """Put the whole frame ``data`` on the socket now if it is free. ``False``: it was not
        (sending, owing, over TLS, closing or closed): send it with :meth:`send` in turn.

        ``True`` means the frame is the socket's: written whole, or in part with the rest owed
        (the caller's writer task must then :meth:`flush`).
        """
        if self._owed or self.close_sent or self.closed is not None or self._lock.locked():
            return False
        fd = self._fd
        if fd < 0:
            return False
        try:
            n = os.write(fd, data)
        except OSError:  # full (BlockingIOError), or the peer is gone: the ordinary path decides
            return False
        if n < len(data):
            self._owed = memoryview(data)[n:]
            self.partial += 1
        else:
            self.whole += 1
        return True

    async def send(self, data: bytes) -> None:
        """Send the frame ``data`` after everything before it; nothing once the server's Close
        is sent. Raises ``trio.BrokenResourceError`` when the peer is gone."""
        async with self._lock:
            if self.close_sent:
                return
            await self._pay()
            await self._send_all(data)

    async def flush(self) -> None:
        """Send the owed bytes, waiting for the socket if it has to."""
        async with self._lock:
            await self._pay()

    async def _control(self, data: bytes) -> None:
        """A control frame of the server's own (a Pong): at once if the socket is free, and
        finished here if the kernel took only part of it (no writer task is told of it)."""
        try:
            if self.write(data):
                if self._owed:
                    await self.flush()
            elif not self.close_sent and self.closed is None:
                await self.send(data)
        except trio.BrokenResourceError:
            self._ended(CLOSE_ABNORMAL, "")

    async def _send_close(self, code: int | None, reason: str) -> None:
        async with self._lock:
            if self.close_sent:
                return
            self.close_sent = True
            try:
                await self._pay()
                await self._send_all(close_frame(code, reason))
            except trio.BrokenResourceError:
                self._ended(CLOSE_ABNORMAL, "")

    async def _pay(self) -> None:
        # Owed bytes are dropped only as the kernel takes them, so a send cancelled half-way
        # leaves the rest owed (and a Close frame sent later still lands after a whole frame).
        while self._owed:
            try:
                n = os.write(self._fd, self._owed)
            except BlockingIOError:
                n = 0
            except OSError as exc:
                raise trio.BrokenResourceError(f"socket write failed: {exc}") from exc
            self._owed = self._owed[n:]
            if self._owed:
                await trio.lowlevel.wait_writable(self._fd)

    async def _send_all(self, data: bytes) -> None:
        if self._fd < 0:
            try:
                await self.stream.send_all(data)
            except trio.ClosedResourceError as exc:
                raise trio.BrokenResourceError(str(exc)) from exc
            return
        self._owed = memoryview(data)
        await self._pay()

    # ------------------------------------------------------------------ closing

    async def aclose(self, code: int, reason: str) -> None:
        """The server closes: its Close frame, after everything sent before it. The client's
        answer is read as any frame (:meth:`receive`, or :meth:`drain` when nobody reads)."""
        await self._send_close(code, reason)

    async def wait_peer_closed(self) -> None:
        """Until the client's Close frame has come, or its stream has ended."""
        await self._peer_closed.wait()

    async def drain(self) -> None:
        """Read and drop what the client still sends, until its Close frame or the end.

        Within the frame budget, as :meth:`receive`: a client over it is not waited for (else
        one that sends without pause here has the event loop parse its frames for as long as
        the caller waits)."""
        reader = self._reader
        while not self._peer_closed.is_set():
            if reader.more:
                data = b""
            else:
                data = await self._read()
                if not data:
                    self._peer_closed.set()
                    return
            found, began, violation = reader.feed(data, self._batch)
            if violation is not None or any(isinstance(x, Close) for x in found):
                self._peer_closed.set()
            elif began and self._bucket.spend(trio.current_time(), began):
                return  # over its budget: its Close is not waited for


# ---------------------------------------------------------------------- the opening handshake


class Handshake:
    """A client's upgrade request, read and found valid: :meth:`accept` makes the WebSocket."""

    def __init__(self, stream: trio.abc.Stream, handshake: H11Handshake, request: Request) -> None:
        self.stream = stream
        self._handshake = handshake
        self.request = request

    async def accept(self, *, max_message: int, frame_rate: float, frame_burst: float) -> WebSocket:
        """Send the ``101`` reply (no subprotocol, no extension): the client's WebSocket."""
        await self.stream.send_all(self._handshake.send(AcceptConnection()))
        return WebSocket(
            self.stream, max_message=max_message, frame_rate=frame_rate, frame_burst=frame_burst
        )


async def read_request(stream: trio.abc.Stream) -> Handshake | None:
    """Read a client's opening handshake. ``None``: there is none to answer (the stream ended,
    a bad or over-long request, refused with its HTTP status where one is due; or bytes sent
    after the request, before any reply: cut off)."""
    seen = bytearray()  # (bytes added to bytes copied the whole request at every read)
    reads = 0
    while True:
        reads += 1
        if reads > MAX_REQUEST_READS:
            return None  # dripped a byte or two at a time: no client of ours sends so
        if reads > REQUEST_READS_FREE:
            await trio.sleep(REQUEST_READ_WAIT)
        try:
            data = await stream.receive_some(MAX_REQUEST + 1 - len(seen))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return None
        if not data:
            return None
        start = max(0, len(seen) - 2)  # the blank line may straddle two reads
        seen += data
        end = _END_OF_REQUEST.search(seen, start)
        if end is not None:
            if end.end() < len(seen):
                return None  # early data: RFC 6455 4.1; no WebSocket is made of it
            break
        if len(seen) > MAX_REQUEST:
            break  # the HTTP parser refuses it below
    request_bytes = bytes(seen)
    if len(seen) <= MAX_REQUEST and (status := _request_problem(request_bytes)) is not None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            with trio.move_on_after(1.0):
                await stream.send_all(_refusal(status))
        return None
    handshake = H11Handshake(ConnectionType.SERVER)
    try:
        handshake.receive_data(request_bytes)
        request = next((e for e in handshake.events() if isinstance(e, Request)), None)
    except (RemoteProtocolError, UnicodeError) as exc:
        # wsproto decodes some headers itself (the host as IDNA, comma lists as ASCII) and lets
        # a UnicodeError out: a bad request all the same, not the server's failure to log.
        hint = exc.event_hint if isinstance(exc, RemoteProtocolError) else RejectConnection()
        if isinstance(hint, RejectConnection):
            try:
                with trio.move_on_after(1.0):
                    await stream.send_all(handshake.send(hint))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
        return None
    if request is None:
        return None
    return Handshake(stream, handshake, request)


_STATUS_TEXT = {400: "Bad Request", 431: "Request Header Fields Too Large"}
_VERSION = re.compile(rb"HTTP/[0-9]\.[0-9]")


def _refusal(status: int) -> bytes:
    return (
        f"HTTP/1.1 {status} {_STATUS_TEXT[status]}\r\ncontent-length: 0\r\n"
        "connection: close\r\n\r\n"
    ).encode()


def _request_problem(request: bytes) -> int | None:
    """The HTTP status that refuses an upgrade request before it is parsed, or None.

    What RFC 6455 4.1-4.2.1 asks of one that the HTTP parser lets through (found by review: a
    key of three letters, a body, folded header lines, an absolute URI were all upgraded), and
    no more header lines than ``MAX_HEADER_LINES`` (each costs the parser time on the event
    loop).
    """
    head = request.lstrip(b"\r\n")
    # (the blank line that ends it, and what follows it, left out; a bare LF ends a line too,
    # as RFC 9112 2.2 lets a server take it)
    lines = [line.removesuffix(b"\r") for line in head.split(b"\n")[:-2]]
    if not lines:
        return 400  # blank lines alone
    if len(lines) - 1 > MAX_HEADER_LINES:
        return 431
    method, _, rest = lines[0].partition(b" ")
    target, _, version = rest.rpartition(b" ")
    # (RFC 6455 4.1: GET, HTTP/1.1 or higher; the target is a path, not an absolute URI)
    if method != b"GET" or not _VERSION.fullmatch(version) or version < b"HTTP/1.1":
        return 400
    if not target.startswith(b"/"):
        return 400
    key = b""
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):
            return 400  # a folded line (obsolete, RFC 9112 5.2)
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name in (b"content-length", b"transfer-encoding") and value.strip() not in (b"0", b""):
            return 400  # an upgrade request has no body
        if name == b"sec-websocket-key":
            key = value.strip()
    try:
        if len(base64.b64decode(key, validate=True)) != 16:
            return 400
    except (binascii.Error, ValueError):
        return 400
    return None


__all__ = ["PING_FRAME", "Closed", "Handshake", "WebSocket", "read_request"]
