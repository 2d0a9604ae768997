"""Every WebSocket frame a client sends counts, not only the messages it completes.

Why: the message rate limit (``ServerConfig.rate``) sees whole messages only, and a client can send
frames that never make one. Zero-length continuation fragments (6 bytes each on the wire) never
finish a message and never reach its size limit, yet trio-websocket keeps every one of them; and
it answers every ping. A single connection doing either kept a core busy and, with fragments,
grew the server's memory without end while the message limit saw nothing. So the bytes a client
sends are read through a :class:`FrameMeter`, which finds the frame headers in them (RFC 6455
section 5.2; it skips the payloads, and decodes, unmasks or keeps nothing):

* every frame, pings and pongs included, takes a token of the connection's frame budget
  (``frame_rate`` a second, ``frame_burst`` saved up): over it, the connection is not read again
  until it is within it, so TCP pushes the client back and the server does no work for it;
* a message of more than :data:`MAX_FRAGMENTS` frames is abuse: the connection is told why and
  closed (1008), and nothing more of it is read;
* counting starts where the library's parsing does: the upgrade request ends at a blank line
  (with or without its carriage return, as h11 reads it), and frames begin with the server's
  reply. A client that sends anything in between is cut off before it is a WebSocket: RFC 6455
  section 4.1 forbids it, and the library drops those bytes unread, so they could otherwise
  announce a frame of 2**62 bytes to the counter and hide every later one.

It sits under trio-websocket, in the stream the server hands it (``server.directsend``
``FrameStream`` for plain sockets, :class:`MeteredStream` over TLS), through public APIs only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

import trio

from conjure.server.gate import Bucket

#: The most frames one message may be sent in. A client sends a message as one frame; a library
#: that fragments does so in pieces of kilobytes, and a message is at most 64 KiB.
MAX_FRAGMENTS = 256
#: Where the HTTP upgrade request ends, as h11 (trio-websocket's HTTP parser) finds it: a blank
#: line, with or without its carriage return.
_END_OF_REQUEST = re.compile(rb"\n\r?\n")
#: How the server's reply that accepts the upgrade begins.
_ACCEPTED = b"HTTP/1.1 101"
_CONTINUATION = 0x0
_FIRST_CONTROL = 0x8
#: A Close frame's first byte, as a server sends it (FIN set, opcode 8): once the library has
#: sent it, no frame of the server's own may follow (RFC 6455 section 5.5.1).
CLOSE_FIRST_BYTE = b"\x88"

Abuse = Literal["frames", "fragments"]


class EarlyData(Exception):
    """A client sent more than its upgrade request before the server had answered it."""


class FrameCounter:
    """Finds frame headers in a client's byte stream, chunk by chunk (pure: no I/O, no clock)."""

    def __init__(self) -> None:
        self._in_request = True  #: still reading the HTTP upgrade request
        self._tail = b""  #: the request's last bytes so far (its end may straddle two chunks)
        #: The server has sent the reply that accepts the upgrade (``sent``): a client may
        #: send frames only from then on (RFC 6455 section 4.1), and the library reads them only
        #: from then on (what comes before is dropped): so the counter starts there too.
        self.replied = False
        self._head = bytearray()  #: a frame header cut by the end of a chunk
        self._skip = 0  #: payload bytes of the current frame still to pass over
        #: Frames of the message being sent so far (0: none under way).
        self.fragments = 0

    def sent(self, data: bytes | bytearray | memoryview) -> None:
        """The server sends ``data``: frames count from its reply accepting the upgrade on."""
        if not self.replied and bytes(data[: len(_ACCEPTED)]) == _ACCEPTED:
            self.replied = True

    def feed(self, data: bytes | bytearray | memoryview) -> tuple[int, bool]:
        """Frames that start in ``data``, and whether a message now has too many fragments.

        Raises ``EarlyData`` for bytes after the upgrade request that came before the reply.
        """
        view = memoryview(data)
        pos, n, frames = 0, len(view), 0
        if self._in_request:
            seen = self._tail + bytes(view)
            end = _END_OF_REQUEST.search(seen)
            if end is None:
                self._tail = seen[-2:]
                return 0, False
            self._in_request = False
            pos = end.end() - len(self._tail)
            self._tail = b""
        if not self.replied and pos < n:
            raise EarlyData("data after the upgrade request, before the server's reply")
        too_many = False
        while pos < n:
            if self._skip:
                step = min(self._skip, n - pos)
                self._skip -= step
                pos += step
                continue
            head = self._head
            if not head and n - pos >= 2:
                b0, b1 = view[pos], view[pos + 1]
            else:
                head.append(view[pos])
                pos += 1
                if len(head) < 2:
                    continue
                b0, b1 = head[0], head[1]
            size = b1 & 0x7F
            length = 2 + (2 if size == 126 else 8 if size == 127 else 0) + (4 if b1 & 0x80 else 0)
            if head:
                take = min(length - len(head), n - pos)
                head += view[pos : pos + take]
                pos += take
                if len(head) < length:
                    continue
                header = bytes(head)
                head.clear()
            else:
                if n - pos < length:
                    head += view[pos:]
                    pos = n
                    continue
                header = bytes(view[pos : pos + length])
                pos += length
            if size == 126:
                size = int.from_bytes(header[2:4], "big")
            elif size == 127:
                size = int.from_bytes(header[2:10], "big")
            self._skip = size
            frames += 1
            opcode, fin = b0 & 0x0F, b0 & 0x80
            if opcode < _FIRST_CONTROL:  # control frames may come between a message's frames
                self.fragments = 1 if opcode != _CONTINUATION else self.fragments + 1
                if self.fragments > MAX_FRAGMENTS:
                    too_many = True
                if fin:
                    self.fragments = 0
        return frames, too_many


class FrameMeter:
    """A connection's frame budget, applied as its bytes are read (see the module's docstring)."""

    def __init__(self, rate: float, burst: float) -> None:
        self.counter = FrameCounter()
        self._bucket = Bucket(rate, burst, trio.current_time())
        #: Told of each abuse (the server logs it, and closes the connection on "fragments");
        #: None until the connection is set up, and then abuse ends the stream at once.
        self.report: Callable[[Abuse], None] | None = None
        #: Ends the handshake at once (the library may otherwise wait out its timeout).
        self.cut: Callable[[], None] | None = None
        #: Frames read, and times reading was held back for the budget (for tests and benches).
        self.frames = 0
        self.held = 0
        #: When the last frame began to arrive (Trio clock): a Pong, a message, any frame at all
        #: shows that the client is there (``server.heartbeat``).
        self.heard_at = trio.current_time()

    def gone(self) -> None:
        """The peer closed or reset the stream, or the library closed it (a bad request): a
        handshake still under way ends now.

        Why: trio-websocket's ``wrap_server_stream`` waits for a request its reader will never
        deliver once the stream has ended, so a visitor who connected and reset held a
        handshake's place for the whole handshake timeout: some fifty addresses doing so in
        waves kept everyone else out without holding a socket (an attacker's run).
        """
        if self.cut is not None:
            self.cut()

    async def received(self, data: bytes | bytearray | memoryview) -> None:
        """Account for ``data`` just read: returns once the connection may be read again."""
        try:
            frames, too_many = self.counter.feed(data)
        except EarlyData as exc:  # no WebSocket yet to say why on: the stream ends
            if self.cut is not None:
                self.cut()
            raise trio.BrokenResourceError(str(exc)) from None
        if too_many:
            if self.report is None:
                raise trio.BrokenResourceError("a message of too many fragments")
            self.report("fragments")
            await trio.sleep_forever()  # the close under way ends the connection
        if not frames:
            return
        self.frames += frames
        self.heard_at = now = trio.current_time()
        wait = self._bucket.spend(now, frames)
        if wait:
            self.held += 1
            if self.report is not None:
                self.report("frames")
            await trio.sleep(wait)


class MeteredStream(trio.abc.Stream):
    """A stream whose reads go through a :class:`FrameMeter` (the TLS connections' stream).

    The server sends frames of its own through it too (:meth:`send_frame`, the heartbeat's
    pings), in one order with the library's: each send holds the stream's lock.
    """

    def __init__(self, stream: trio.abc.Stream, meter: FrameMeter) -> None:
        self.stream = stream
        self.meter = meter
        self._lock = trio.StrictFIFOLock()
        #: The library has sent its Close frame: no frame of ours may follow it.
        self.closing = False

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        try:
            data = await self.stream.receive_some(max_bytes)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.meter.gone()
            raise
        if not data:
            self.meter.gone()
        await self.meter.received(data)
        return data

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.meter.counter.sent(data)
        async with self._lock:
            if bytes(data[:1]) == CLOSE_FIRST_BYTE:
                self.closing = True
            await self.stream.send_all(data)

    async def send_frame(self, data: bytes) -> None:
        """Send a whole frame of the server's own, unless the library has sent its Close."""
        async with self._lock:
            if not self.closing:
                await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        self.meter.gone()  # the library gave up on the stream (a bad request, say)
        await self.stream.aclose()
