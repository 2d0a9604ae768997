"""Writing one game's append-only, hash-chained, fsync'd log (``replays/<game_id>.jsonl``).

The log is the game: the server acknowledges an action only after its records are on disk, and
anyone holding the file can check that no record was altered, dropped, reordered or inserted.
What a record is, and reading and verifying a log, are ``server.logformat``'s; docs/LOG.md
("Record format") states both.

A batch that a crash cut short is part of the torn tail ``read_log`` reports, and
``recover_torn_tail`` moves it aside. After a failed append (a full disk),
``reopen_after_failure`` moves the unacknowledged bytes aside and continues the durable records.

The file functions here (``recover_torn_tail``, ``open_for_append``, ``reopen_after_failure``)
block; call them from Trio through ``trio.to_thread.run_sync`` (``open_writer`` and
``reopen_writer`` do so). ``LogWriter.append`` writes and fsyncs in a worker thread, batched with
other logs' appends (``server.groupsync``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import math
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import trio

from conjure.server.fssync import shared_sync_device
from conjure.server.groupsync import AppendFailed, group_sync, write_all
from conjure.server.logformat import (
    _CHUNK,
    _DECODER,
    GENESIS,
    MAX_APPEND_BYTES,
    MAX_LINE_BYTES,
    LogError,
    LogReadResult,
    LogRecord,
    _verify,
    build_record,
    encode_record,
)

__all__ = [
    "Batch",
    "LogFailure",
    "LogLocked",
    "LogWriter",
    "open_for_append",
    "open_writer",
    "recover_torn_tail",
    "reopen_after_failure",
    "reopen_writer",
]


class Batch(NamedTuple):
    """One decision's records as one append takes them: ``(type, data)`` items, the time they
    are stamped with, and the command that produced them (kept on the first record)."""

    items: Sequence[tuple[str, dict[str, Any]]]
    ts: float
    command: dict[str, Any] | None = None


class LogFailure(LogError):
    """A write or fsync failed: the writer is broken for good (retrying an fsync can lie).

    The log itself can go on: ``reopen_after_failure`` gives a fresh writer once the cause (say a
    full disk) is gone, or ``LogWriter.discard`` removes a log that never got a durable record.
    """


class LogLocked(LogError):
    """Another writer holds the file; a log has exactly one writer."""


def _fsync_dir(path: Path) -> None:
    """Make a created/removed/truncated directory entry durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _lock(fd: int, path: Path) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        raise LogLocked(f"{path}: another writer has this log open") from exc


# ---------------------------------------------------------------------------------------------
# Writing


class LogWriter:
    """The single appender of one log file.

    Build with ``open_for_append`` (sync) or ``open_writer`` (from Trio). Appends are serialised;
    each returns only after its bytes are fsync'd. Any write/fsync error raises ``LogFailure`` and
    breaks the writer for good: the caller closes it and continues with ``reopen_after_failure``
    (or, if nothing was ever durable, ``discard``s the log).
    """

    def __init__(
        self, path: Path, fd: int, last_seq: int, last_hash: str, device: int | None = None
    ) -> None:
        self._path = path
        self._fd = fd
        self._device = device
        self._last_seq = last_seq
        self._last_hash = last_hash
        self._lock = trio.Lock()
        self._broken: BaseException | None = None
        self._closed = False
        self._busy = False

    @property
    def path(self) -> Path:
        return self._path

    @property
    def last_seq(self) -> int:
        """Seq of the last durable record; -1 for an empty log."""
        return self._last_seq

    @property
    def last_hash(self) -> str:
        """Hash of the last durable record (the receipt a client can keep); GENESIS if empty."""
        return self._last_hash

    @property
    def broken(self) -> bool:
        return self._broken is not None

    async def append(self, type: str, data: dict[str, Any], ts: float) -> LogRecord:
        """Append one record; returns once it is durable."""
        (record,) = await self.append_many([(type, data)], ts)
        return record

    async def append_many(
        self,
        items: Sequence[tuple[str, dict[str, Any]]],
        ts: float,
        *,
        command: dict[str, Any] | None = None,
    ) -> list[LogRecord]:
        """Append several records with one write and one fsync (one decision, one commit).

        ``command``: the command that produced them, stored on the first record.

        The records carry ``batch`` = len(items)-1, ..., 1, 0. A crash may leave only part of the
        batch on disk; ``read_log`` then reports all of it as a torn tail, so after recovery the
        batch is either wholly there or wholly absent (see docs/LOG.md).
        """
        if not items:
            return []
        (records,) = await self.append_batches([Batch(items, ts, command)])
        return records

    async def append_batches(self, batches: Sequence[Batch]) -> list[list[LogRecord]]:
        """Append several batches (each as ``append_many`` writes one) with one write and one
        fsync: the decisions that waited together are made durable together (group commit).

        A crash may leave a whole prefix of the batches and part of the next: that part is a
        torn tail, so after recovery each batch is still wholly there or wholly absent. None of
        them is durable, and so none may be acknowledged, before this returns.
        """
        batches = [b for b in batches if b.items]
        if not batches:
            return []
        self._check_usable()
        # The room is this log's only writer, so the lock is almost always free: taken without
        # a scheduling round trip then (``acquire`` always yields once, a task step per append).
        # A caller already cancelled still writes nothing.
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            self._lock.acquire_nowait()
        except trio.WouldBlock:
            await self._lock.acquire()
        try:
            # Chain onto the last record only once no other append can move it.
            out, buf = self._prepare(batches)
            self._busy = True
            try:
                try:
                    # Not cancellable: once bytes are written, their fate must be known.
                    await group_sync().append(self._fd, buf, self._device)
                except AppendFailed as exc:
                    self._break(exc.error)
                    raise LogFailure(f"{self._path}: {exc}") from exc.error
            finally:
                self._busy = False
                if self._closed:
                    self._release()
            self._last_seq = out[-1][-1].seq
            self._last_hash = out[-1][-1].hash
        finally:
            self._lock.release()
        return out

    def _prepare(self, batches: Sequence[Batch]) -> tuple[list[list[LogRecord]], bytes]:
        """Build and encode the records; reject anything that would not read back identically."""
        self._check_usable()
        prev, seq = self._last_hash, self._last_seq
        out: list[list[LogRecord]] = []
        lines: list[bytes] = []
        for items, ts, command in batches:
            ts = float(ts)
            if not math.isfinite(ts):
                raise ValueError(f"ts must be finite, got {ts!r}")
            records: list[LogRecord] = []
            for i, (type_, data) in enumerate(items):
                if not isinstance(type_, str) or not isinstance(data, dict):
                    raise TypeError("each item must be (type: str, data: dict)")
                seq += 1
                record = build_record(
                    prev, seq, ts, type_, data, batch=len(items) - 1 - i, cmd=None if i else command
                )
                line = encode_record(record)
                if len(line) > MAX_LINE_BYTES + 1:
                    raise ValueError(
                        f"record {type_!r} is {len(line) - 1} bytes; a log line holds at most "
                        f"{MAX_LINE_BYTES}"
                    )
                # NaN, tuples, non-str keys, Structs... would be stored as something else: refuse.
                back = _DECODER.decode(line)
                if back.data != data or back.cmd != record.cmd:
                    raise ValueError(
                        f"data for {type_!r} does not round-trip through JSON: {data!r}"
                    )
                records.append(record)
                lines.append(line)
                prev = record.hash
            out.append(records)
        data = b"".join(lines)
        if len(data) > MAX_APPEND_BYTES:  # (read_log takes no more for a torn tail)
            raise ValueError(
                f"an append of {len(data)} bytes; one holds at most {MAX_APPEND_BYTES}"
            )
        return out, data

    def _check_usable(self) -> None:
        if self._closed:
            raise trio.ClosedResourceError(f"{self._path}: writer is closed")
        if self._broken is not None:
            raise LogFailure(f"{self._path}: writer is broken ({self._broken}); recover the log")

    def _break(self, exc: BaseException) -> None:
        self._broken = exc

    def _release(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            with contextlib.suppress(OSError):
                os.close(fd)  # also drops the flock

    def close(self) -> None:
        """Close the file; an in-flight append finishes first (its fsync owns the fd)."""
        self._closed = True
        if not self._busy:
            self._release()

    def discard(self) -> None:
        """Close the log and delete its file: for a game whose first append failed.

        Only while nothing in it is durable (``last_seq`` -1) and no append is in flight; a log
        with a durable record is never deleted (``LogError``). Whatever bytes a failed first
        write left are never acknowledged, so they go with the file. The file is unlinked only
        if it is still the one this writer opened; then its directory is synced. Call it instead
        of ``close``, on an open (possibly broken) writer.
        """
        if self._closed:
            raise trio.ClosedResourceError(f"{self._path}: writer is closed")
        if self._last_seq != -1:
            raise LogError(
                f"{self._path}: holds durable records (up to seq {self._last_seq}); "
                "a log with records is never deleted"
            )
        if self._busy:
            raise LogError(f"{self._path}: an append is in flight")
        try:
            own = os.fstat(self._fd)
            with contextlib.suppress(FileNotFoundError):
                now = os.stat(self._path, follow_symlinks=False)
                if (now.st_dev, now.st_ino) == (own.st_dev, own.st_ino):
                    os.unlink(self._path)
                    _fsync_dir(self._path.parent)
        finally:
            self.close()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_for_append(path: str | os.PathLike[str], records: Sequence[LogRecord] = ()) -> LogWriter:
    """Open a writer continuing ``records`` (as returned by ``read_log``; empty for a new log).

    Checks that the file ends exactly with the last given record (no torn tail left, no stale
    records list) and that this record ends its batch (``batch`` 0), and takes an exclusive
    flock so a log never has two writers. Creating the file fsyncs its directory. Blocking:
    from Trio use ``open_writer``.
    """
    path = Path(path)
    # O_NONBLOCK: a FIFO put in the log's place fails at once instead of hanging the open; it
    # changes nothing for a regular file. O_NOFOLLOW: a log is written through no link (its
    # target may be anyone's file; start-up refuses links, and one swapped in since fails here).
    flags = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW
    # An existing log must exist; only an empty one may be created here.
    fd = os.open(path, flags if records else flags | os.O_CREAT, 0o644)
    try:
        _lock(fd, path)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise LogError(f"{path}: not a regular file")
        size = st.st_size
        if records:
            last = records[-1]
            if last.batch:
                raise LogError(
                    f"{path}: record seq {last.seq} is inside an incomplete batch "
                    f"({last.batch} more expected); read the log and recover its torn tail"
                )
            line = encode_record(last)
            tail = b""
            if size >= len(line):
                with open(path, "rb") as f:
                    f.seek(size - len(line))
                    tail = f.read(len(line))
            if tail != line:
                raise LogError(
                    f"{path}: file does not end with record seq {last.seq}; "
                    "re-read it (and recover a torn tail) before appending"
                )
            last_seq, last_hash = last.seq, last.hash
        else:
            if size:
                raise LogError(
                    f"{path}: log is not empty; pass its records to continue it "
                    "(after recovering any torn tail)"
                )
            _fsync_dir(path.parent)
            last_seq, last_hash = -1, GENESIS
    except BaseException:
        os.close(fd)
        raise
    return LogWriter(path, fd, last_seq, last_hash, shared_sync_device(st.st_dev))


async def open_writer(path: str | os.PathLike[str], records: Sequence[LogRecord] = ()) -> LogWriter:
    """``open_for_append`` off the Trio loop (creating a log fsyncs a directory)."""
    return await trio.to_thread.run_sync(open_for_append, path, records)


# ---------------------------------------------------------------------------------------------
# Reading and recovery


def _room_for_tail(path: Path, size: int) -> None:
    """OSError (ENOSPC) when saving ``size`` bytes would take more than half the free space.

    Why: a tail is copied byte for byte, holes of a sparse file included, so a planted file's
    tail of "nothing" could fill the disk the other games write to. A crash's tail is one write
    of the server's, far smaller than that; a tail that big is left where it is (the log with it).
    """
    st = os.statvfs(path.parent)
    free = st.f_bavail * st.f_frsize
    if size > free // 2:
        raise OSError(
            errno.ENOSPC,
            f"keeping its {size:,}-byte torn tail would take more than half the disk's free "
            f"space ({free:,} bytes); the log is left as it is",
        )


def _create_torn_file(path: Path) -> tuple[Path, int]:
    """``<log>.torn``, or ``<log>.torn.1``, ``.torn.2``... : never overwrite earlier evidence."""
    n = 0
    while True:
        candidate = path.with_name(path.name + ".torn" + (f".{n}" if n else ""))
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
            return candidate, os.open(candidate, flags, 0o644)
        except FileExistsError:
            n += 1


def _hash_range(fd: int, start: int, end: int, out: int | None = None) -> str:
    """SHA-256 of ``fd``'s bytes ``[start, end)``, read in chunks; also written to ``out``."""
    digest = hashlib.sha256()
    pos = start
    while pos < end:
        chunk = os.pread(fd, min(_CHUNK, end - pos), pos)
        if not chunk:
            break  # the file shrank: the digest will not match
        digest.update(chunk)
        if out is not None:
            write_all(out, chunk)
        pos += len(chunk)
    return digest.hexdigest()


def _move_aside(fd: int, path: Path, start: int, end: int, sha256: str | None) -> Path:
    """Save ``fd``'s bytes ``[start, end)`` in a new ``<log>.torn[.N]``, sync it, then cut the log
    at ``start`` and sync the log and its directory: no byte is ever lost.

    ``sha256``: the bytes must still be these (else ``LogError``, and nothing is changed). If the
    copy fails (a full disk), the partial ``.torn`` file is removed and the error raised, with the
    log untouched. The caller holds the log's lock.
    """
    _room_for_tail(path, end - start)
    if sha256 is not None and _hash_range(fd, start, end) != sha256:
        raise LogError(f"{path}: changed since it was read; read it again")
    torn_path, tfd = _create_torn_file(path)
    try:
        try:
            copied = _hash_range(fd, start, end, tfd)
            if sha256 is not None and copied != sha256:
                raise LogError(f"{path}: changed since it was read; read it again")
            os.fsync(tfd)
        finally:
            os.close(tfd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(torn_path)
        raise
    _fsync_dir(path.parent)
    os.ftruncate(fd, start)
    os.fsync(fd)
    _fsync_dir(path.parent)
    return torn_path


def recover_torn_tail(path: str | os.PathLike[str], result: LogReadResult) -> Path | None:
    """Move a torn tail aside into ``<log>.torn[.N]`` and cut the log to its valid prefix.

    The tail is saved and fsync'd before the log is truncated, so no byte is ever lost; it is
    copied in chunks, never held whole. Returns the .torn path, or None if there was nothing to
    do. Fails if the file changed since ``result`` was read (another file, size or tail bytes),
    or if a writer holds it.
    """
    path = Path(path)
    if not result.torn:
        return None
    # (O_NOFOLLOW: a tail is cut through no link: start-up refuses links, see open_for_append)
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW)
    try:
        _lock(fd, path)
        st = os.fstat(fd)
        same_file = result.file_id is None or (st.st_dev, st.st_ino) == result.file_id
        if not stat.S_ISREG(st.st_mode) or not same_file or st.st_size != result.size:
            raise LogError(f"{path}: changed since it was read; read it again")
        return _move_aside(fd, path, result.valid_end, result.size, result.tail_sha256)
    finally:
        os.close(fd)


def reopen_after_failure(
    path: str | os.PathLike[str], durable_seq: int
) -> tuple[list[LogRecord], LogWriter]:
    """After a failed append (``LogFailure``, e.g. a full disk): a fresh writer for the same log.

    ``durable_seq`` is the broken writer's ``last_seq``: the last record it made durable (-1 if
    none). Close the broken writer first (it still holds the log's lock). The log is read again
    from disk: records 0..durable_seq must be there, sound and chained (else ``LogError``: a
    durable record is never repaired); whatever follows them (bytes of the failed write, or a
    whole batch whose fsync failed: never acknowledged) is moved aside to ``<log>.torn[.N]``,
    saved and synced before the log is cut, exactly like a torn tail. Returns the durable records
    and a writer continuing them.

    If the disk is still full (saving the tail fails), this raises ``OSError`` having changed
    nothing: call it again later. It holds the lock throughout, so no other writer can get in
    between. Blocking: from Trio use ``reopen_writer``.
    """
    path = Path(path)
    if not isinstance(durable_seq, int) or isinstance(durable_seq, bool) or durable_seq < -1:
        raise ValueError(f"durable_seq must be an int >= -1, got {durable_seq!r}")
    # O_APPEND: the fd becomes the new writer's; pread and ftruncate ignore it.
    flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | os.O_NOCTTY | os.O_NOFOLLOW
    fd = os.open(path, flags)
    try:
        _lock(fd, path)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise LogError(f"{path}: not a regular file")
        with os.fdopen(os.dup(fd), "rb", buffering=_CHUNK) as f:
            p = _verify(f, durable_seq + 1)
        records = p.records
        if len(records) != durable_seq + 1:
            where = p.bad.reason if p.bad is not None else "the file ends before it"
            raise LogError(
                f"{path}: durable record seq {len(records)} is not in the file as written "
                f"({where}); the log is left as it is"
            )
        if p.incomplete:
            raise LogError(
                f"{path}: record seq {durable_seq} does not end its batch, so it cannot be the "
                "last durable record"
            )
        size = os.fstat(fd).st_size
        if size > p.end:
            _move_aside(fd, path, p.end, size, None)
        if durable_seq < 0:
            last_seq, last_hash = -1, GENESIS
        else:
            last_seq, last_hash = records[-1].seq, records[-1].hash
        writer = LogWriter(path, fd, last_seq, last_hash, shared_sync_device(st.st_dev))
    except BaseException:
        os.close(fd)
        raise
    return records, writer


async def reopen_writer(
    path: str | os.PathLike[str], durable_seq: int
) -> tuple[list[LogRecord], LogWriter]:
    """``reopen_after_failure`` off the Trio loop (it reads the log and syncs files)."""
    return await trio.to_thread.run_sync(reopen_after_failure, path, durable_seq)
