"""One game's append-only, hash-chained, fsync'd JSON-lines log (``replays/<game_id>.jsonl``).

The log is the game: the server acknowledges an action only after its records are on disk, and
anyone holding the file can check that no record was altered, dropped, reordered or inserted.
Record format and rules: docs/LOG.md ("Record format").

Each line is ``canonical(record) + b"\\n"`` with keys ``batch, data, hash, prev, seq, ts, type``,
where ``canonical`` is ``msgspec.json.encode(obj, order="sorted")`` and
``hash = sha256(DOMAIN_TAG + bytes.fromhex(prev) + canonical(record without hash))``.

``batch`` is how many records follow this one in the same append (one decision of the engine),
so a batch of n records counts n-1, n-2, ..., 0. ``read_log`` accepts only whole batches: a
batch that a crash cut short is treated as part of the torn tail and recovered away with it.

The file functions here (``read_log``, ``recover_torn_tail``, ``open_for_append``) block; call them
from Trio through ``trio.to_thread.run_sync`` (``open_writer`` does so). ``LogWriter.append`` writes
and fsyncs in a worker thread, batched with other logs' appends (``server.groupsync``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import msgspec
import trio

from server.fssync import shared_sync_device
from server.groupsync import AppendFailed, group_sync, write_all

__all__ = [
    "DOMAIN_TAG",
    "GENESIS",
    "LogCorrupt",
    "LogError",
    "LogFailure",
    "LogLocked",
    "LogReadResult",
    "LogRecord",
    "LogWriter",
    "build_record",
    "canonical",
    "chain_hash",
    "encode_record",
    "open_for_append",
    "open_writer",
    "read_log",
    "recover_torn_tail",
    "verify_receipt",
]

#: Prefixed to every hash input so a log hash can never be confused with another SHA-256 use.
DOMAIN_TAG = b"conjure-log-v1\x00"
#: ``prev`` of the record with seq 0.
GENESIS = "0" * 64

_Hex64 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]
_Seq = Annotated[int, msgspec.Meta(ge=0)]
_Count = Annotated[int, msgspec.Meta(ge=0)]


class LogRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One line of the log. ``data`` is the event's fields, opaque at this layer.

    ``batch`` is the number of records after this one in the same append: 0 ends a batch.
    """

    seq: _Seq
    ts: float
    type: str
    data: dict[str, Any]
    prev: _Hex64
    hash: _Hex64
    batch: _Count


class _Body(msgspec.Struct, frozen=True):
    """A record without its hash: what the hash covers."""

    seq: int
    ts: float
    type: str
    data: dict[str, Any]
    prev: str
    batch: int


_ENCODER = msgspec.json.Encoder(order="sorted")
_DECODER = msgspec.json.Decoder(LogRecord)


class LogError(Exception):
    """Base of this module's errors."""


class LogCorrupt(LogError):
    """A bad record that is not a torn tail: the file was damaged or edited; never auto-repaired."""

    def __init__(self, path: Path, line: int, expected_seq: int, offset: int, reason: str) -> None:
        self.path = path
        self.line = line  #: 1-based line number of the first bad record
        self.expected_seq = expected_seq  #: the seq a good record would have there
        self.offset = offset  #: byte offset where that line starts (= end of the valid prefix)
        self.reason = reason
        super().__init__(f"{path}: line {line} (seq {expected_seq} expected there): {reason}")


class LogFailure(LogError):
    """A write or fsync failed: the writer is broken for good (retrying an fsync can lie)."""


class LogLocked(LogError):
    """Another writer holds the file; a log has exactly one writer."""


def canonical(obj: Any) -> bytes:
    """The one byte encoding everything is hashed and stored in: sorted keys, no whitespace."""
    return _ENCODER.encode(obj)


def _hash_body(body: _Body) -> str:
    h = hashlib.sha256(DOMAIN_TAG)
    h.update(bytes.fromhex(body.prev))
    h.update(_ENCODER.encode(body))
    return h.hexdigest()


def _check_batch(batch: int) -> int:
    if not isinstance(batch, int) or isinstance(batch, bool) or batch < 0:
        raise ValueError(f"batch must be an int >= 0, got {batch!r}")
    return batch


def chain_hash(
    prev: str, seq: int, ts: float, type: str, data: dict[str, Any], *, batch: int = 0
) -> str:
    """Hash of the record (seq, ts, type, data, batch) chained onto ``prev`` (hex)."""
    return _hash_body(_Body(seq, float(ts), type, data, prev, _check_batch(batch)))


def build_record(
    prev: str, seq: int, ts: float, type: str, data: dict[str, Any], *, batch: int = 0
) -> LogRecord:
    """The record that follows ``prev``, with its hash computed. Pure.

    ``batch``: how many records follow this one in the same append (0: it ends its batch).
    """
    body = _Body(seq, float(ts), type, data, prev, _check_batch(batch))
    return LogRecord(seq, body.ts, type, data, prev, _hash_body(body), batch)


def encode_record(record: LogRecord) -> bytes:
    """The exact line stored for ``record``: canonical JSON plus a newline."""
    return _ENCODER.encode(record) + b"\n"


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
    breaks the writer for good: the caller must stop the game and recover from the file.
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
        self, items: Sequence[tuple[str, dict[str, Any]]], ts: float
    ) -> list[LogRecord]:
        """Append several records with one write and one fsync (one decision, one commit).

        The records carry ``batch`` = len(items)-1, ..., 1, 0. A crash may leave only part of the
        batch on disk; ``read_log`` then reports all of it as a torn tail, so after recovery the
        batch is either wholly there or wholly absent (see docs/LOG.md).
        """
        if not items:
            return []
        self._check_usable()
        async with self._lock:
            # Chain onto the last record only once no other append can move it.
            records, buf = self._prepare(items, ts)
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
            self._last_seq = records[-1].seq
            self._last_hash = records[-1].hash
        return records

    def _prepare(
        self, items: Sequence[tuple[str, dict[str, Any]]], ts: float
    ) -> tuple[list[LogRecord], bytes]:
        """Build and encode the records; reject anything that would not read back identically."""
        self._check_usable()
        ts = float(ts)
        if not math.isfinite(ts):
            raise ValueError(f"ts must be finite, got {ts!r}")
        prev, seq = self._last_hash, self._last_seq
        records: list[LogRecord] = []
        lines: list[bytes] = []
        for i, (type_, data) in enumerate(items):
            if not isinstance(type_, str) or not isinstance(data, dict):
                raise TypeError("each item must be (type: str, data: dict)")
            seq += 1
            record = build_record(prev, seq, ts, type_, data, batch=len(items) - 1 - i)
            line = encode_record(record)
            # NaN, tuples, non-str keys, Structs... would be stored as something else: refuse.
            if _DECODER.decode(line).data != data:
                raise ValueError(f"data for {type_!r} does not round-trip through JSON: {data!r}")
            records.append(record)
            lines.append(line)
            prev = record.hash
        return records, b"".join(lines)

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
    flags = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC
    # An existing log must exist; only an empty one may be created here.
    fd = os.open(path, flags if records else flags | os.O_CREAT, 0o644)
    try:
        _lock(fd, path)
        stat = os.fstat(fd)
        size = stat.st_size
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
    return LogWriter(path, fd, last_seq, last_hash, shared_sync_device(stat.st_dev))


async def open_writer(path: str | os.PathLike[str], records: Sequence[LogRecord] = ()) -> LogWriter:
    """``open_for_append`` off the Trio loop (creating a log fsyncs a directory)."""
    return await trio.to_thread.run_sync(open_for_append, path, records)


# ---------------------------------------------------------------------------------------------
# Reading and recovery


@dataclass(frozen=True)
class LogReadResult:
    """A verified log: its good records and, if the last write was torn, where the tail is."""

    path: Path
    records: list[LogRecord]
    valid_end: int  #: byte offset where the verified prefix ends
    size: int  #: file size when read
    #: the torn bytes (file[valid_end:size]), incomplete batch included; empty if none
    tail: bytes = b""
    torn_reason: str | None = None

    @property
    def torn(self) -> bool:
        return self.size > self.valid_end

    @property
    def last_hash(self) -> str:
        return self.records[-1].hash if self.records else GENESIS


def _damage(line: bytes) -> tuple[LogRecord | None, str | None]:
    """Check a line (without its newline) on its own: a record, canonical, its hash right.

    Failures here are what a torn write leaves; a record that passes is self-consistent.
    """
    try:
        record = _DECODER.decode(line)
    except msgspec.ValidationError as exc:
        return None, f"not a log record: {exc}"
    except msgspec.DecodeError:
        return None, "not valid JSON"
    if _ENCODER.encode(record) != line:
        return None, "not canonical JSON"
    body = _Body(record.seq, record.ts, record.type, record.data, record.prev, record.batch)
    if _hash_body(body) != record.hash:
        return None, "hash mismatch"
    return record, None


#: How every stored line begins (``batch`` sorts first).
_RECORD_START = b'{"batch":'


def _sound_record_after(tail: bytes) -> bool:
    """Whether a sound record (see ``_damage``) starts anywhere after the first bad line's start.

    Tries every later line, and every point in a line where ``{"batch":`` begins: a line whose
    newline was overwritten merges with the next record, which stays sound. A crash cannot
    leave a whole sound record after damage, so one found there means tampering or bit rot.
    Only runs on the error path.
    """
    for n, line in enumerate(tail.split(b"\n")):
        if n and _damage(line)[0] is not None:
            return True
        i = line.find(_RECORD_START, 1)
        while i > 0:
            if _damage(line[i:])[0] is not None:
                return True
            i = line.find(_RECORD_START, i + 1)
    return False


def read_log(path: str | os.PathLike[str]) -> LogReadResult:
    """Parse and verify a whole log; the first bad line decides.

    A bad line that is damaged (not JSON, not canonical, wrong shape, hash wrong, no newline)
    with no sound record starting after it is a torn tail: the result carries it. Anything else
    is ``LogCorrupt``: damage with a sound record after it, or a sound record in the wrong place
    (wrong seq, prev or batch count: a crash cannot forge a hash, so only an edit makes one).

    Only whole batches are returned: if the last good record has ``batch`` > 0, its batch was cut
    short by a crash, and every record of that batch joins the torn tail (``valid_end`` moves
    back to where the batch starts).
    """
    path = Path(path)
    buf = path.read_bytes()
    size = len(buf)
    records: list[LogRecord] = []
    prev = GENESIS
    pos = 0
    lineno = 0
    #: the ``batch`` the next record must carry; None after a batch ends (any count starts one)
    want: int | None = None
    batch_pos = batch_seq = 0  #: where the current batch starts: byte offset and seq
    torn: tuple[int, str] | None = None  #: (offset, reason) of a torn line, if any
    while pos < size:
        lineno += 1
        seq = len(records)
        nl = buf.find(b"\n", pos)
        record, damage = _damage(buf[pos : size if nl < 0 else nl])
        reason: str | None = damage
        if record is not None:
            if record.seq != seq:
                reason = f"sequence {seq} expected, found {record.seq}"
            elif record.prev != prev:
                reason = (
                    f"prev does not match line {lineno - 1}'s hash"
                    if seq
                    else "prev of the first record is not 64 zeros"
                )
            elif want is not None and record.batch != want:
                reason = (
                    f"batch {want} expected (line {lineno - 1} has batch {want + 1}), "
                    f"found {record.batch}"
                )
            elif nl < 0:
                damage = reason = "missing trailing newline"
        if reason is None:
            assert record is not None
            if want is None:
                batch_pos, batch_seq = pos, seq
            records.append(record)
            prev = record.hash
            want = record.batch - 1 if record.batch else None
            pos = nl + 1
            continue
        if damage is not None and not _sound_record_after(buf[pos:]):
            torn = (pos, f"line {lineno} (seq {seq}): {reason}")
            break
        raise LogCorrupt(path, lineno, seq, pos, reason)
    if want is not None:
        # The last good record expects more of its batch: a crash cut the batch short, so the
        # whole batch joins the torn tail (an append is all or nothing).
        total = records[batch_seq].batch + 1
        reason = (
            f"line {batch_seq + 1} (seq {batch_seq}): incomplete batch: "
            f"{len(records) - batch_seq} of {total} records written"
        )
        if torn is not None:
            reason += f"; then {torn[1]}"
        return LogReadResult(path, records[:batch_seq], batch_pos, size, buf[batch_pos:], reason)
    if torn is not None:
        return LogReadResult(path, records, torn[0], size, buf[torn[0] :], torn[1])
    return LogReadResult(path, records, size, size)


def _create_torn_file(path: Path) -> tuple[Path, int]:
    """``<log>.torn``, or ``<log>.torn.1``, ``.torn.2``... : never overwrite earlier evidence."""
    n = 0
    while True:
        candidate = path.with_name(path.name + ".torn" + (f".{n}" if n else ""))
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
            return candidate, os.open(candidate, flags, 0o644)
        except FileExistsError:
            n += 1


def recover_torn_tail(path: str | os.PathLike[str], result: LogReadResult) -> Path | None:
    """Move a torn tail aside into ``<log>.torn[.N]`` and cut the log to its valid prefix.

    The tail is saved and fsync'd before the log is truncated, so no byte is ever lost. Returns
    the .torn path, or None if there was nothing to do. Fails if the file changed since
    ``result`` was read, or if a writer holds it.
    """
    path = Path(path)
    if not result.torn:
        return None
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        _lock(fd, path)
        stat = os.fstat(fd)
        size = stat.st_size
        if size != result.size or os.pread(fd, size - result.valid_end, result.valid_end) != (
            result.tail
        ):
            raise LogError(f"{path}: changed since it was read; read it again")
        torn_path, tfd = _create_torn_file(path)
        try:
            write_all(tfd, result.tail)
            os.fsync(tfd)
        finally:
            os.close(tfd)
        _fsync_dir(path.parent)
        os.ftruncate(fd, result.valid_end)
        os.fsync(fd)
    finally:
        os.close(fd)
    _fsync_dir(path.parent)
    return torn_path


def verify_receipt(records: Sequence[LogRecord], seq: int, hash: str) -> bool:
    """Whether a receipt (seq, chain hash) a client kept lies on this verified chain."""
    if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq < len(records):
        return False
    record = records[seq]
    return record.seq == seq and record.hash == hash
