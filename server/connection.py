"""One client connection: its bounded outbound queue and writer, and its pings (``ping``; when to
ping is ``server.heartbeat``'s, for every connection at once).

The room never awaits a client: it hands whole frames to :meth:`Connection.send_frame`, which
writes them to the socket at once when the socket has room (``server.websocket``) and
otherwise queues them. Each connection's own writer task drains its queue; a client that stops
reading fills it and is dropped, so it can never slow the room or anyone else.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from conjure.protocol.messages import Bye, ServerMsg, encoder
from conjure.server.websocket import Closed, WebSocket
from conjure.server.wsframes import PING_FRAME, text_frame

if TYPE_CHECKING:
    from conjure.server.patching import Sent
    from conjure.server.room import Room

# WebSocket close codes used here.
CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
CLOSE_PROTOCOL = 1002
CLOSE_POLICY = 1008
CLOSE_TRY_LATER = 1013

_ids = itertools.count(1)


def frame_of(msg: ServerMsg) -> bytes:
    """The text frame that carries a message."""
    return text_frame(encoder.encode(msg))


@dataclass(frozen=True)
class _Close:
    code: int
    reason: str


class Connection:
    """A client's socket as the server sees it; membership fields are set by the room task."""

    def __init__(
        self,
        ws: WebSocket,
        queue_size: int,
        remote: str = "",
        *,
        beat: float = 1.0,
        queue_bytes: int = 512 << 10,
    ) -> None:
        self.ws = ws
        self.id = next(_ids)
        self.remote = remote
        # A deque and a parking lot rather than a memory channel: the writer drains several
        # queued frames without a scheduler round trip per frame (see ``write_loop``).
        self._queue: deque[bytes | _Close] = deque()
        self._queue_size = queue_size
        #: Bytes of frames queued, and the most that may be: a count of frames alone let a
        #: client that stops reading hold 64 whole views (3.4 MB each connection with a big
        #: deck, gigabytes over a few addresses; found by review).
        self._queued = 0
        self._queue_bytes = queue_bytes
        self._writer = trio.lowlevel.ParkingLot()
        self._sending = False
        self.scope = trio.CancelScope()
        self.greeted = False
        #: When the heartbeat last pinged and has heard nothing since (Trio clock), or None.
        self.pinged_at: float | None = None
        #: This connection's share of the ping interval (0.75-1.25, drawn by the server): so
        #: that connections opened together do not all go quiet, and get pinged, in lockstep.
        self.beat = beat
        self.closing: _Close | None = None
        #: A write failed (the peer is gone): nothing more is sent, the read side ends alone.
        self.unwritable = False
        #: The client's hello asked for patches (protocol.patch).
        self.patches = False
        #: The client's hello said a program plays through it (``messages.COMPUTER``).
        self.computer = False
        # Set only by the room task that holds this connection:
        self.room: Room | None = None
        self.player_id: str | None = None
        self.spectator = False
        self.sent: Sent | None = None
        self.earlier_due = False
        #: When each request queued for the room and perhaps not yet handled is done, oldest
        #: first (service.py). Not the requests: each names its connection, a cycle that kept
        #: every connection that ended with one queued alive until a full collection (review).
        self.unanswered: deque[trio.Event] = deque()

    def __repr__(self) -> str:
        return f"<Connection #{self.id} {self.remote} player={self.player_id}>"

    @property
    def open(self) -> bool:
        return self.closing is None

    @property
    def heard_at(self) -> float:
        """When the client's last frame arrived (Trio clock): a message, a Pong, any frame."""
        return self.ws.heard_at

    def _writable(self) -> bool:
        ws = self.ws
        return (
            self.closing is None and not self.unwritable and ws.closed is None and not ws.close_sent
        )

    def ping(self) -> bool:
        """Send the client a Ping: written now if the socket is free, else by the writer task.

        Its Pong, as any frame, is read by the connection (``heard_at``). False: nothing will
        be sent (closed by either side, or a full queue).
        """
        if not self._writable():
            return False
        if not self._queue and not self._sending and self.ws.write(PING_FRAME):
            if self.ws.owed:
                self._writer.unpark()
            return True
        if self._full(len(PING_FRAME)):
            return False  # a client that does not read is dropped by its next update, or unheard
        self._queue.append(PING_FRAME)
        self._queued += len(PING_FRAME)
        self._writer.unpark()
        return True

    def _full(self, more: int) -> bool:
        """Whether ``more`` bytes queued would be over the frames or the bytes allowed."""
        return len(self._queue) >= self._queue_size or self._queued + more > self._queue_bytes

    def send(self, msg: ServerMsg) -> None:
        self.send_frame(frame_of(msg))

    def send_frame(self, data: bytes) -> None:
        """Send or queue a whole frame without waiting; a full queue drops the connection."""
        if not self._writable():
            return  # closed by either side (a peer's FIN included): nothing more is written
        # Queued frames go first, and so does a frame the writer has popped and is sending.
        if not self._queue and not self._sending and self.ws.write(data):
            if self.ws.owed:
                self._writer.unpark()
            return
        if self._full(len(data)):
            self.abort(CLOSE_POLICY, "too slow: your updates were not being read")
            return
        self._queue.append(data)
        self._queued += len(data)
        self._writer.unpark()

    def close(self, reason: str, code: int = CLOSE_NORMAL, grace: float = 5.0) -> None:
        """Say ``Bye(reason)``, then close; gives up after ``grace`` seconds."""
        if self.closing is not None:
            return
        bye = frame_of(Bye(reason=reason))
        if len(self._queue) + 2 > self._queue_size or self._queued + len(bye) > self._queue_bytes:
            self.abort(code, reason)
            return
        self._queue.append(bye)
        self._queued += len(bye)
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
        except (Closed, trio.BrokenResourceError, trio.ClosedResourceError):
            self.unwritable = True
            self._queue.clear()
            self._queued = 0
            if self.closing is not None:  # a goodbye that cannot be said: close now
                self.scope.cancel()

    async def _drain(self) -> None:
        queue = self._queue
        ws = self.ws
        while True:
            if ws.owed:
                await ws.flush()
                continue
            if not queue:
                await self._writer.park()
                continue
            item = queue.popleft()
            if isinstance(item, _Close):
                await ws.aclose(item.code, item.reason)
                await ws.wait_peer_closed()  # the read loop reads on until the client's Close
                self.scope.cancel()
                return
            self._queued -= len(item)
            self._sending = True  # until the frame is written: nothing may overtake it
            try:
                await ws.send(item)
            finally:
                self._sending = False

    async def settle(self) -> None:
        """Wait until the room has handled every request of this connection queued for it."""
        for done in list(self.unanswered):
            await done.wait()
        self.unanswered.clear()

    def mark_closed(self) -> None:
        """The handler is ending: from now on nothing is queued and no room may seat it."""
        if self.closing is None:
            self.closing = _Close(CLOSE_NORMAL, "")

    async def final_close(self) -> None:
        """Close the WebSocket for good (shielded, bounded): called once the handler ends. The
        client's Close is waited for (and what it still sends dropped) for at most a second, and
        only while the client keeps to its frame budget."""
        self.mark_closed()
        assert self.closing is not None
        with trio.CancelScope(shield=True), trio.move_on_after(1.0):
            try:
                await self.ws.aclose(self.closing.code, self.closing.reason)
                await self.ws.drain()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
