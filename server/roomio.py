"""What a room needs from outside it: a store for its game's log, and viewers to send to.

A room is given both (as boardgame.io's master is given a storage and a transport), so its
behaviour can be driven without sockets or a disk: the server passes :class:`DiskLogStore` and its
``server.connection.Connection`` objects; a test can pass an in-memory store and fake viewers.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import trio

from conjure.protocol.messages import ServerMsg
from conjure.server.logformat import LogRecord
from conjure.server.logstore import Batch, LogError, open_writer, reopen_after_failure

if TYPE_CHECKING:
    from conjure.server.patching import Sent
    from conjure.server.room import Room

__all__ = ["DiskLogStore", "GameLog", "LogStore", "Viewer"]


class GameLog(Protocol):
    """One game's open log: appends are acknowledged only once durable (``LogWriter``).

    ``append_many`` and ``append_batches`` raise ``server.logstore.LogFailure`` when the store cannot take the batch;
    the log is then broken until the store reopens it.
    """

    @property
    def path(self) -> Path: ...

    @property
    def last_seq(self) -> int:
        """Seq of the last durable record; -1 while none is."""
        ...

    async def append_many(
        self,
        items: Sequence[tuple[str, dict[str, Any]]],
        ts: float,
        *,
        command: dict[str, Any] | None = None,
    ) -> list[LogRecord]: ...

    async def append_batches(self, batches: Sequence[Batch]) -> list[list[LogRecord]]:
        """Several batches, durable together (one write, one sync), each still a batch."""
        ...

    def close(self) -> None: ...

    def discard(self) -> None:
        """Close and remove a log with no durable record (may block: see ``LogStore.discard``)."""
        ...


class LogStore(Protocol):
    """Where rooms keep their games' logs."""

    async def create(self, game_id: str) -> GameLog:
        """A new, empty log for a game (``OSError`` or ``LogError`` if it cannot be made)."""
        ...

    async def reopen(self, log: GameLog) -> tuple[list[LogRecord], GameLog]:
        """After a failed append, with ``log`` closed: its durable records and a fresh log
        continuing them (``OSError`` or ``LogError`` while that is not possible yet)."""
        ...

    async def discard(self, log: GameLog) -> None:
        """Remove a log that never got a durable record (its game did not start)."""
        ...


class Viewer(Protocol):
    """A player's or spectator's connection as a room sees it; the room sets its fields."""

    room: Room | None
    player_id: str | None
    spectator: bool
    #: The peer's address (budgets kept per address: ``server.gate.address_key``).
    remote: str
    #: The client asked for patches in its hello (set by the server before any room sees it).
    patches: bool
    #: The client said a program plays through it (set by the server, as ``patches``).
    computer: bool
    #: What a patching client holds, kept by the room that sends it views (None: nothing yet).
    sent: Sent | None
    #: Its next view is its first from the room (a seat taken, taken again, or a watch): that
    #: view carries the table talk before it (``Update.earlier``). Set and cleared by the room.
    earlier_due: bool

    @property
    def open(self) -> bool: ...

    def send(self, msg: ServerMsg) -> None:
        """Send (or queue) a message; never waits."""
        ...

    def send_frame(self, data: bytes) -> None:
        """Send (or queue) a whole WebSocket frame (``server.wsframes``); never waits."""
        ...

    def close(self, reason: str, code: int = ...) -> None:
        """Say goodbye with ``reason``, then close."""
        ...


class DiskLogStore:
    """Logs as files ``<replays>/<game_id>.jsonl`` (``server.logstore``)."""

    def __init__(self, replays: Path, min_free: int = 0) -> None:
        self.replays = replays
        self.min_free = min_free  #: bytes the disk must keep free for a new log

    async def create(self, game_id: str) -> GameLog:
        if self.min_free:
            free = (await trio.to_thread.run_sync(shutil.disk_usage, self.replays)).free
            if free < self.min_free:
                raise LogError(
                    f"its disk has {free >> 20} MB free, under the {self.min_free >> 20} MB a "
                    "new game needs; games under way go on"
                )
        return await open_writer(self.replays / f"{game_id}.jsonl")

    async def reopen(self, log: GameLog) -> tuple[list[LogRecord], GameLog]:
        return await trio.to_thread.run_sync(reopen_after_failure, log.path, log.last_seq)

    async def discard(self, log: GameLog) -> None:
        await trio.to_thread.run_sync(log.discard)
