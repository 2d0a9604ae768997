"""WebSocket frames as the server reads and writes them (RFC 6455 section 5): pure, no I/O.

Why the server frames its own: reading through trio-websocket cost a task of its own per
connection, wsproto's parser and a channel hop for every message, about a fifth of the event
loop's time per action under load (docs/PERFORMANCE.md, "Owning the WebSocket"). The handshake
stays wsproto's (``server.websocket``); what follows it is small, fixed and written here once.

:class:`FrameReader` takes a client's bytes as they come, cut anywhere, and gives whole
messages and control frames. Every rule of the RFC a client can break ends the connection with
the close code the RFC names (a :class:`Violation`): an unmasked frame, reserved bits (no
extension is negotiated), an unknown opcode, a fragmented or long control frame, a continuation
with no message under way, a new message inside another, a length in more bytes than it needs,
text that is not UTF-8 (1007), a message over the size limit (1009, seen at the header, before
its payload is read); and the server's own rule, at most :data:`MAX_FRAGMENTS` frames a message.
"""

from __future__ import annotations

from dataclasses import dataclass

CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
_DATA = (CONTINUATION, TEXT, BINARY)
_CONTROL = (CLOSE, PING, PONG)

#: Close codes (RFC 6455 section 7.4.1) the frame layer uses.
CLOSE_PROTOCOL = 1002
CLOSE_INVALID_DATA = 1007
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
#: No Close frame was received (never sent on the wire).
CLOSE_ABNORMAL = 1006

#: The most frames one message may be sent in. A client sends a message as one frame; a library
#: that fragments does so in pieces of kilobytes, and a message is at most 64 KiB.
MAX_FRAGMENTS = 256
#: A Ping frame with no payload: the client's library answers it with a Pong.
PING_FRAME = b"\x89\x00"


class Violation(Exception):
    """The client broke a rule: the connection is failed with ``code`` (and ``reason``)."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class TooManyFragments(Violation):
    """A message in more than :data:`MAX_FRAGMENTS` frames: a rule of this server, said to the
    client in words (``bye``) before the close."""

    def __init__(self) -> None:
        super().__init__(CLOSE_POLICY, f"a message may be sent in at most {MAX_FRAGMENTS} frames")


@dataclass(frozen=True, slots=True)
class Ping:
    payload: bytes


@dataclass(frozen=True, slots=True)
class Pong:
    payload: bytes


@dataclass(frozen=True, slots=True)
class Close:
    """The client's Close frame: its code (None: it gave none) and reason."""

    code: int | None
    reason: str


#: What a client's bytes hold: a whole text message (str), a whole binary one (bytes), or a
#: control frame.
Incoming = str | bytes | Ping | Pong | Close


def _valid_close_code(code: int) -> bool:
    """Codes a peer may send (RFC 6455 section 7.4; 1004-1006 and 1015 never go on the wire)."""
    return (1000 <= code <= 1014 and code not in (1004, 1005, 1006)) or 3000 <= code <= 4999


def unmask(data: bytes | bytearray | memoryview, mask: bytes) -> bytes:
    """``data`` XOR the repeated 4-byte ``mask``, as one big-integer operation."""
    n = len(data)
    if not n:
        return b""
    key = int.from_bytes((mask * (n // 4 + 1))[:n], "little")
    return (int.from_bytes(data, "little") ^ key).to_bytes(n, "little")


class FrameReader:
    """A client's frames, from its bytes cut anywhere (pure: no I/O, no clock)."""

    __slots__ = (
        "_buf",
        "_head",
        "_max",
        "_message",
        "_parts",
        "_size",
        "fragments",
        "frames",
        "more",
    )

    def __init__(self, max_message: int) -> None:
        self._buf = bytearray()
        self._max = max_message
        #: The frame whose payload is awaited: (first byte, payload length, mask).
        self._head: tuple[int, int, bytes] | None = None
        #: The message under way: its opcode (0: none), its payloads so far, their size.
        self._message = 0
        self._parts: list[bytes] = []
        self._size = 0
        #: Frames of the message under way (0: none).
        self.fragments = 0
        #: Frames whose header has been read, in all.
        self.frames = 0
        #: The last :meth:`feed` stopped at its ``limit``: frames are buffered unread.
        self.more = False

    def feed(
        self, data: bytes | bytearray, limit: int | None = None
    ) -> tuple[list[Incoming], int, Violation | None]:
        """What ``data`` completes, in order; how many frames began in it (headers read); and
        the rule it breaks, if one (nothing after that is read: the connection ends).

        ``limit``: begin at most that many frames, and keep the rest buffered (:attr:`more`;
        ``feed(b"", limit)`` goes on). Why: one read of 64 KiB holds some 10,000 empty frames,
        each an object once parsed; a caller that spends a frame budget parses no more than it
        allows before it waits.
        """
        buf = self._buf
        buf += data
        out: list[Incoming] = []
        pos, n, began = 0, len(buf), 0
        self.more = False
        try:
            while True:
                head = self._head
                if head is None:
                    if n - pos < 2:
                        break
                    if limit is not None and began >= limit:
                        self.more = True
                        break
                    b0, b1 = buf[pos], buf[pos + 1]
                    if b0 & 0x70:
                        raise Violation(CLOSE_PROTOCOL, "reserved bits set (no extension agreed)")
                    if not b1 & 0x80:
                        raise Violation(CLOSE_PROTOCOL, "a client's frames must be masked")
                    length = b1 & 0x7F
                    size = 2
                    if length == 126:
                        size = 4
                    elif length == 127:
                        size = 10
                    if n - pos < size + 4:
                        break
                    if size == 4:
                        length = int.from_bytes(buf[pos + 2 : pos + 4], "big")
                        if length < 126:
                            raise Violation(CLOSE_PROTOCOL, "a length in more bytes than it needs")
                    elif size == 10:
                        length = int.from_bytes(buf[pos + 2 : pos + 10], "big")
                        if length < 65536 or length >> 63:
                            raise Violation(CLOSE_PROTOCOL, "a bad 64-bit length")
                    began += 1
                    self.frames += 1
                    self._check(b0, length)
                    mask = bytes(buf[pos + size : pos + size + 4])
                    pos += size + 4
                    head = self._head = (b0, length, mask)
                b0, length, mask = head
                if n - pos < length:
                    break
                payload = unmask(memoryview(buf)[pos : pos + length], mask)
                pos += length
                self._head = None
                found = self._complete(b0, payload)
                if found is not None:
                    out.append(found)
        except Violation as exc:
            buf.clear()
            self._head = None
            self.more = False
            return out, began, exc
        del buf[:pos]
        return out, began, None

    def _check(self, b0: int, length: int) -> None:
        """The rules the rest of a frame's header can break; counts a message's fragments."""
        opcode = b0 & 0x0F
        if opcode in _CONTROL:
            if not b0 & 0x80:
                raise Violation(CLOSE_PROTOCOL, "a fragmented control frame")
            if length > 125:
                raise Violation(CLOSE_PROTOCOL, "a control frame over 125 bytes")
            return
        if opcode not in _DATA:
            raise Violation(CLOSE_PROTOCOL, f"unknown opcode {opcode}")
        if opcode == CONTINUATION:
            if not self._message:
                raise Violation(CLOSE_PROTOCOL, "a continuation with no message under way")
            self.fragments += 1
        else:
            if self._message:
                raise Violation(CLOSE_PROTOCOL, "a new message before the last one ended")
            self._message, self.fragments, self._size = opcode, 1, 0
        if self.fragments > MAX_FRAGMENTS:
            raise TooManyFragments()
        self._size += length
        if self._size > self._max:
            raise Violation(CLOSE_TOO_BIG, f"a message over {self._max} bytes")

    def _complete(self, b0: int, payload: bytes) -> Incoming | None:
        """A frame read whole: the message or control frame it completes, if any."""
        opcode = b0 & 0x0F
        if opcode == PING:
            return Ping(payload)
        if opcode == PONG:
            return Pong(payload)
        if opcode == CLOSE:
            return _close(payload)
        if not b0 & 0x80:  # a fragment: more to come
            self._parts.append(payload)
            return None
        if self._parts:
            self._parts.append(payload)
            payload = b"".join(self._parts)
            self._parts = []
        kind, self._message, self.fragments = self._message, 0, 0
        if kind == BINARY:
            return payload
        try:
            return payload.decode("utf-8")
        except UnicodeDecodeError:
            raise Violation(CLOSE_INVALID_DATA, "a text message that is not UTF-8") from None


def _close(payload: bytes) -> Close:
    if not payload:
        return Close(None, "")
    if len(payload) == 1:
        raise Violation(CLOSE_PROTOCOL, "a Close frame of one byte")
    code = int.from_bytes(payload[:2], "big")
    if not _valid_close_code(code):
        raise Violation(CLOSE_PROTOCOL, f"close code {code} is not one a peer may send")
    try:
        return Close(code, payload[2:].decode("utf-8"))
    except UnicodeDecodeError:
        raise Violation(CLOSE_INVALID_DATA, "a close reason that is not UTF-8") from None


# ---------------------------------------------------------------------- what the server sends


def frame(opcode: int, payload: bytes | bytearray | memoryview) -> bytes:
    """A whole frame as a server sends it: FIN set, unmasked (RFC 6455 section 5.2)."""
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, n))
    elif n < 65536:
        head = bytes((0x80 | opcode, 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 127)) + n.to_bytes(8, "big")
    return head + payload


def text_frame(payload: bytes | bytearray | memoryview) -> bytes:
    """A whole text frame holding ``payload`` (UTF-8 already)."""
    return frame(TEXT, payload)


def close_frame(code: int | None, reason: str = "") -> bytes:
    """A Close frame; its reason is cut to fit the 125 bytes a control frame may hold."""
    if code is None:
        return frame(CLOSE, b"")
    data = reason.encode("utf-8")
    if len(data) > 123:
        data = data[:120].decode("utf-8", "ignore").encode("utf-8") + b"..."
    return frame(CLOSE, code.to_bytes(2, "big") + data)
