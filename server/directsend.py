"""Put a text frame straight onto a client's socket when nothing else is being sent.

Why: every update goes to six players, and ``WebSocketConnection.send_message`` costs a lock, two
scheduler checkpoints and a wake-up of the connection's writer task per frame. Most of the time
the socket's send buffer has room, so the frame can be framed and written at once, from the room
task, with one ``write(2)``: under load this halved the paced p99 (see README, Performance).

The shortcut reaches into trio-websocket (its wsproto connection, its send lock and its stream),
so it is guarded three ways:

* It is only attached to a plain TCP stream (TLS goes through ``send_message`` as before) and only
  if the connection object has the attributes it needs; otherwise :func:`attach` returns ``None``
  and the caller uses the ordinary path. ``tests/test_directsend.py`` fails if the installed
  trio-websocket stops offering them, so an upgrade cannot silently lose the shortcut.
* It writes only while no send is in progress (the lock is free) and no earlier frame is owed, so
  frames keep their order with trio-websocket's own pings, pongs and close frames.
* A write the kernel takes only in part leaves the rest *owed*: the stream's ``send_all`` is wrapped
  so that whatever trio-websocket sends next (under its lock) goes out after the owed bytes, and the
  connection's writer task flushes them (:meth:`DirectSend.flush`) as soon as it runs.
"""

from __future__ import annotations

import os
from typing import Any

import trio
from trio_websocket import WebSocketConnection
from wsproto.events import TextMessage
from wsproto.utilities import LocalProtocolError

_NEEDED = ("_stream", "_stream_lock", "_wsproto", "_close_reason")


def attach(ws: WebSocketConnection) -> DirectSend | None:
    """A shortcut for ``ws``, or ``None`` when it must use ``send_message`` (TLS, unknown layout)."""
    if not all(hasattr(ws, name) for name in _NEEDED):
        return None
    stream = ws._stream
    if type(stream) is not trio.SocketStream:
        return None
    return DirectSend(ws, stream)


class DirectSend:
    """One connection's shortcut; all its methods run on the Trio thread."""

    def __init__(self, ws: WebSocketConnection, stream: trio.SocketStream) -> None:
        self._ws = ws
        self._socket = stream.socket
        self._lock: trio.StrictFIFOLock = ws._stream_lock
        self._proto: Any = ws._wsproto
        self._owed = b""
        #: Frames written whole, and frames the kernel took only in part (for tests and benches).
        self.whole = 0
        self.partial = 0
        inner = stream.send_all

        async def send_all(data: bytes | bytearray | memoryview) -> None:
            # trio-websocket calls this under its lock: owed bytes go first. They are dropped
            # only as the kernel takes them, so a send cancelled half-way leaves the rest owed
            # (and a later close frame still lands after a whole frame).
            while self._owed:
                try:
                    n = await self._socket.send(self._owed)
                except OSError as exc:
                    raise trio.BrokenResourceError(f"socket send failed: {exc}") from exc
                self._owed = self._owed[n:]
            await inner(data)

        stream.send_all = send_all

    @property
    def owed(self) -> bool:
        """Part of a frame is still to be written; :meth:`flush` writes it."""
        return bool(self._owed)

    def write(self, text: str) -> bool:
        """Send ``text`` now if the socket is free; ``False`` means "queue it as usual".

        ``True`` means the frame is the socket's: written whole, or partly with the rest owed
        (the caller must then let the writer task :meth:`flush`).
        """
        if self._owed or self._lock.locked() or self._ws._close_reason is not None:
            return False
        fd = self._socket.fileno()
        if fd < 0:
            return False
        try:
            data = self._proto.send(TextMessage(data=text))
        except LocalProtocolError:  # a close is under way: the ordinary path reports it
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

    async def flush(self) -> None:
        """Write the owed bytes, waiting for the socket if it has to."""
        async with self._lock:
            if self._owed:
                await self._ws._stream.send_all(b"")
