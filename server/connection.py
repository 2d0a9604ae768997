"""One client connection: its bounded outbound queue and writer, and its pings (``ping``; when to
ping is ``server.heartbeat``'s, for every connection at once).

The room never awaits a client: it hands encoded messages to :meth:`Connection.send`, which
writes them to the socket at once when the socket has room (:mod:`server.directsend`) and
otherwise queues them. Each connection's own writer task drains its queue; a client that stops
reading fills it and is dropped, so it can never slow the room or anyone else.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import trio
from trio_websocket import ConnectionClosed, WebSocketConnection

from conjure.protocol.messages import Bye, ServerMsg, encoder
from conjure.server import directsend

if TYPE_CHECKING:
    from conjure.server.framemeter import FrameMeter
    from conjure.server.patching import Sent
    from conjure.server.room import Request, Room

# WebSocket close codes used here.
CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
CLOSE_PROTOCOL = 1002
CLOSE_POLICY = 1008
CLOSE_TRY_LATER = 1013

_ids = itertools.count(1)


def encode(msg: ServerMsg) -> str:
    """The text frame for a message."""
    return encoder.encode(msg).decode("utf-8")


@dataclass(frozen=True)
class _Close:
    code: int
    reason: str


class _Ping:
    """A ping the writer task sends (the socket was busy when the heartbeat asked for it)."""


_PING = _Ping()


class OwnFrames(Protocol):
    """The stream under the library that sends frames of the server's own in one order with the
    library's (``directsend.FrameStream``, ``framemeter.MeteredStream``)."""

    async def send_frame(self, data: bytes) -> None: ...


class Connection:
    """A client's socket as the server sees it; membership fields are set by the room task."""

    def __init__(
        self,
        ws: WebSocketConnection,
        queue_size: int,
        remote: str = "",
        *,
        stream: OwnFrames | None = None,
        meter: FrameMeter | None = None,
        beat: float = 1.0,
    ) -> None:
        self.ws = ws
        self.id = next(_ids)
        self.remote = remote
        # A deque and a parking lot rather than a memory channel: the writer drains several
        # queued frames without a scheduler round trip per frame (see ``write_loop``).
        self._queue: deque[str | _Close | _Ping] = deque()
        self._queue_size = queue_size
        self._writer = trio.lowlevel.ParkingLot()
        self._sending = False
        self.scope = trio.CancelScope()
        self.greeted = False
        self._opened_at = trio.current_time()
        #: Reads every frame the client sends (None in tests that build a bare connection).
        self.meter = meter
        #: Where pings go: the stream under ``ws`` (None: this connection sends none).
        self.stream = stream
        #: When the heartbeat last pinged and has heard nothing since (Trio clock), or None.
        self.pinged_at: float | None = None
        #: This connection's share of the ping interval (0.75-1.25, drawn by the server): so
        #: that connections opened together do not all go quiet, and get pinged, in lockstep.
        self.beat = beat
        self.closing: _Close | None = None
        #: The stream under ``ws`` when it is a FrameStream (not over TLS): it writes frames
        #: without the writer task while nothing is queued.
        self.direct = stream if isinstance(stream, directsend.FrameStream) else None
        #: A write failed (the peer is gone): nothing more is sent, the read side ends alone.
        self.unwritable = False
        #: The client's hello asked for patches (protocol.patch).
        self.patches = False
        # Set only by the room task that holds this connection:
        self.room: Room | None = None
        self.player_id: str | None = None
        self.spectator = False
        self.sent: Sent | None = None
        self.earlier_due = False
        #: Requests queued for the room and perhaps not yet handled, oldest first (service.py).
        self.unanswered: deque[Request] = deque()

    def __repr__(self) -> str:
        return f"<Connection #{self.id} {self.remote} player={self.player_id}>"

    @property
    def open(self) -> bool:
        return self.closing is None

    @property
    def heard_at(self) -> float:
        """When the client's last frame arrived (Trio clock): a message, a Pong, any frame."""
        return self.meter.heard_at if self.meter is not None else self._opened_at

    def ping(self) -> bool:
        """Send the client a Ping: written now if the socket is free, else by the writer task.

        Its Pong, as any frame, is read by the meter (``heard_at``). False: nothing will be
        sent (closed by either side, a full queue, or no stream for pings).
        """
        if self.closing is not None or self.unwritable or self.ws.closed is not None:
            return False
        direct = self.direct
        if (
            direct is not None
            and not self._queue
            and not self._sending
            and direct.write_frame(directsend.PING)
        ):
            if direct.owed:
                self._writer.unpark()
            return True
        if self.stream is None or len(self._queue) >= self._queue_size:
            return False  # a client that does not read is dropped by its next update, or unheard
        self._queue.append(_PING)
        self._writer.unpark()
        return True

    def send(self, msg: ServerMsg) -> None:
        self.send_text(encode(msg))

    def send_text(self, text: str) -> None:
        """Send or queue a frame without waiting; a full queue drops the connection."""
        if self.closing is not None or self.unwritable or self.ws.closed is not None:
            return  # closed by either side (a peer's FIN included): nothing more is written
        direct = self.direct
        # Queued frames go first, and so does a frame the writer has popped and is sending.
        if direct is not None and not self._queue and not self._sending and direct.write(text):
            if direct.owed:
                self._writer.unpark()
            return
        if len(self._queue) >= self._queue_size:
            self.abort(CLOSE_POLICY, "too slow: your updates were not being read")
            return
        self._queue.append(text)
        self._writer.unpark()

    def close(self, reason: str, code: int = CLOSE_NORMAL, grace: float = 5.0) -> None:
        """Say ``Bye(reason)``, then close; gives up after ``grace`` seconds."""
        if self.closing is not None:
            return
        if len(self._queue) + 2 > self._queue_size:
            self.abort(code, reason)
            return
        self._queue.append(encode(Bye(reason=reason)))
        self._queue.append(_Close(code, reason))
        self._writer.unpark()
        self.closing = _Close(code, reason)
        self.scope.deadline = min(self.scope.deadline, trio.current_time() + grace)

    def abort(self, code: int, reason: str) -> None:
        """Close now, without a goodbye (the queue is full or the peer is gone)."""
        if self.closing is None:
            self.closing = _Close(code, reason)
        self.scope.cancel()

    async def write_loop(self) -> None:
        """Drain the queue onto the socket; a ``_Close`` ends the connection.

        A peer that is gone for writing ends only this loop: what the connection read before
        the peer went is still handled (the read loop waits for the room), its answers dropped.
        """
        try:
            await self._drain()
        except (ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError):
            self.unwritable = True
            self._queue.clear()
            if self.closing is not None:  # a goodbye that cannot be said: close now
                self.scope.cancel()

    async def _drain(self) -> None:
        queue = self._queue
        direct = self.direct
        while True:
            if direct is not None and direct.owed:
                await direct.flush()
                continue
            if not queue:
                await self._writer.park()
                continue
            item = queue.popleft()
            if isinstance(item, _Ping):
                assert self.stream is not None  # queued only with a stream to send it on
                self._sending = True
                try:
                    await self.stream.send_frame(directsend.PING)
                finally:
                    self._sending = False
                continue
            if isinstance(item, _Close):
                await self.ws.aclose(item.code, _short(item.reason))
                self.scope.cancel()
                return
            self._sending = True  # until the frame is written: nothing may overtake it
            try:
                await self.ws.send_message(item)
            finally:
                self._sending = False

    async def settle(self) -> None:
        """Wait until the room has handled every request of this connection queued for it."""
        for req in list(self.unanswered):
            await req.done.wait()
        self.unanswered.clear()

    def mark_closed(self) -> None:
        """The handler is ending: from now on nothing is queued and no room may seat it."""
        if self.closing is None:
            self.closing = _Close(CLOSE_NORMAL, "")

    async def final_close(self) -> None:
        """Close the socket for good (shielded, bounded): called once the handler ends."""
        self.mark_closed()
        assert self.closing is not None
        with trio.CancelScope(shield=True), trio.move_on_after(1.0):
            await self.ws.aclose(self.closing.code, _short(self.closing.reason) or None)


def _short(reason: str) -> str:
    """A close frame's reason holds at most 123 bytes of UTF-8."""
    data = reason.encode("utf-8")
    if len(data) <= 120:
        return reason
    return data[:117].decode("utf-8", "ignore") + "..."
