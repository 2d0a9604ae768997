"""Put a text frame straight onto a client's socket when nothing else is being sent.

Why: every update goes to six players, and ``WebSocketConnection.send_message`` costs a lock, two
scheduler checkpoints and a wake-up of the connection's writer task per frame. Most of the time
the socket's send buffer has room, so the frame can be framed and written at once, from the room
task, with one ``write(2)``: under load this halved the paced p99 (docs/PERFORMANCE.md).

It takes nothing from trio-websocket but its public API. The server accepts each TCP socket
itself, so the stream trio-websocket writes to is ours: a :class:`FrameStream` around the
socket, handed to ``wrap_server_stream``. Every byte the library sends (pings, pongs, close
frames, ``send_message``) passes through :meth:`FrameStream.send_all`, and the frames of
:meth:`FrameStream.write` are framed here (RFC 6455, section 5.2: a server's frames are unmasked,
and trio-websocket negotiates no extension), so one object orders both:

* A frame is written directly only while the library is not sending and no earlier frame is
  owed, so frames keep their order with the library's own.
* A write the kernel takes only in part leaves the rest *owed*: whatever the library sends next
  goes out after the owed bytes, and the connection's writer task flushes them
  (:meth:`FrameStream.flush`) as soon as it runs.
* Once the library has sent a Close frame, or the connection has closed, no data frame follows.

TLS connections use ``send_message`` as before (the bytes on the socket are not frames).
"""

from __future__ import annotations

import os
import struct

import trio

from conjure.server.framemeter import CLOSE_FIRST_BYTE, FrameMeter

#: A text frame's first byte (RFC 6455 section 5.2), FIN set. (A close frame's is
#: ``CLOSE_FIRST_BYTE``: control frames are never fragmented; the HTTP handshake that goes
#: first starts with "H", 0x48.)
_TEXT = 0x81
#: A Ping frame with no payload: the client's library answers it with a Pong, and any frame it
#: sends counts as a sign of life (``server.heartbeat``).
PING = b"\x89\x00"


def text_frame(text: str) -> bytes:
    """A whole, unmasked text frame (what a server sends)."""
    payload = text.encode("utf-8")
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", _TEXT, n)
    elif n < 2**16:
        head = struct.pack("!BBH", _TEXT, 126, n)
    else:
        head = struct.pack("!BBQ", _TEXT, 127, n)
    return head + payload


class FrameStream(trio.abc.HalfCloseableStream):
    """A TCP stream that trio-websocket and the room's direct frames share, in one order."""

    def __init__(self, stream: trio.SocketStream, meter: FrameMeter | None = None) -> None:
        self.stream = stream
        #: Every frame the client sends is counted as it is read (server.framemeter).
        self.meter = meter
        self.socket = stream.socket
        self._lock = trio.StrictFIFOLock()  # held while anything is being sent
        self._owed = b""
        #: The library has sent its Close frame: a data frame may not follow it.
        self.closing = False
        #: Frames written whole, and frames the kernel took only in part (for tests and benches).
        self.whole = 0
        self.partial = 0

    # ---------------------------------------------------------------- the library's side

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self.meter is not None:
            self.meter.counter.sent(data)
        async with self._lock:
            if bytes(data[:1]) == CLOSE_FIRST_BYTE:
                self.closing = True
            await self._pay()
            await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        try:
            data = await self.stream.receive_some(max_bytes)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            if self.meter is not None:
                self.meter.gone()
            raise
        if self.meter is not None:
            if not data:
                self.meter.gone()
            await self.meter.received(data)
        return data

    async def send_eof(self) -> None:
        await self.stream.send_eof()

    async def aclose(self) -> None:
        if self.meter is not None:  # the library gave up on the stream (a bad request, say)
            self.meter.gone()
        await self.stream.aclose()

    # ---------------------------------------------------------------- the room's side

    @property
    def owed(self) -> bool:
        """Part of a frame is still to be written; :meth:`flush` writes it."""
        return bool(self._owed)

    def write(self, text: str) -> bool:
        """Send ``text`` now if the socket is free; ``False`` means "queue it as usual".

        ``True`` means the frame is the socket's: written whole, or partly with the rest owed
        (the caller must then let the writer task :meth:`flush`).
        """
        return self.write_frame(text_frame(text))

    def write_frame(self, data: bytes) -> bool:
        """:meth:`write` for a frame already framed (a whole text frame, or :data:`PING`)."""
        if self._owed or self._lock.locked() or self.closing:
            return False
        fd = self.socket.fileno()
        if fd < 0:
            return False
        try:
            n = os.write(fd, data)
        except BlockingIOError:
            return False
        except OSError:  # the peer is gone: the ordinary path meets the same error and closes
            return False
        if n < len(data):
            self._owed = data[n:]
            self.partial += 1
        else:
            self.whole += 1
        return True

    async def send_frame(self, data: bytes) -> None:
        """Send a frame of the server's own after everything before it (the writer task's
        way, when :meth:`write_frame` could not); nothing once the library has sent its Close."""
        async with self._lock:
            if self.closing:
                return
            await self._pay()
            await self.stream.send_all(data)

    async def flush(self) -> None:
        """Write the owed bytes, waiting for the socket if it has to."""
        async with self._lock:
            await self._pay()

    async def _pay(self) -> None:
        # Owed bytes are dropped only as the kernel takes them, so a send cancelled half-way
        # leaves the rest owed (and a later close frame still lands after a whole frame).
        while self._owed:
            try:
                n = await self.socket.send(self._owed)
            except OSError as exc:
                raise trio.BrokenResourceError(f"socket send failed: {exc}") from exc
            self._owed = self._owed[n:]
