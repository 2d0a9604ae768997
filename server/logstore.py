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

Logs are read line by line (``read_log``), never whole: a line longer than ``MAX_LINE_BYTES`` is
damage, so memory is bounded by that, not by the file. After a failed append (a full disk),
``reopen_after_failure`` moves the unacknowledged bytes aside and continues the durable records.

The file functions here (``read_log``, ``recover_torn_tail``, ``open_for_append``,
``reopen_after_failure``) block; call them from Trio through ``trio.to_thread.run_sync``
(``open_writer`` and ``reopen_writer`` do so). ``LogWriter.append`` writes and fsyncs in a worker
thread, batched with other logs' appends (``server.groupsync``).
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
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import msgspec
import trio

from conjure.server.fssync import shared_sync_device
from conjure.server.groupsync import AppendFailed, group_sync, write_all

__all__ = [
    "DOMAIN_TAG",
    "GENESIS",
    "MAX_LINE_BYTES",
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
    "first_record",
    "open_for_append",
    "open_writer",
    "read_log",
    "recover_torn_tail",
    "reopen_after_failure",
    "reopen_writer",
    "verify_receipt",
]

#: The record format this module writes: 2 adds ``cmd`` (each batch's command) to the first record
#: of a batch; a log names its format in ``game_started.log_format`` (absent: 1).
LOG_FORMAT = 2
#: Prefixed to every hash input so a log hash can never be confused with another SHA-256 use.
DOMAIN_TAG = b"conjure-log-v1\x00"
#: ``prev`` of the record with seq 0.
GENESIS = "0" * 64

_Hex64 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]
_Seq = Annotated[int, msgspec.Meta(ge=0)]
_Count = Annotated[int, msgspec.Meta(ge=0)]


class LogRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One line of the log. ``data`` is the event's fields, opaque at this layer.

    ``batch`` is the number of records after this one in the same append: 0 ends a batch.
    ``cmd`` (only on a batch's first record, and only in logs of rules version 2 on) is the
    command that produced the batch; a record without one stores no ``cmd`` key at all, so older
    logs read and hash exactly as they were written.
    """

    seq: _Seq
    ts: float
    type: str
    data: dict[str, Any]
    prev: _Hex64
    hash: _Hex64
    batch: _Count
    cmd: dict[str, Any] | None = None


class _Body(msgspec.Struct, frozen=True, omit_defaults=True):
    """A record without its hash: what the hash covers (``cmd`` included)."""

    seq: int
    ts: float
    type: str
    data: dict[str, Any]
    prev: str
    batch: int
    cmd: dict[str, Any] | None = None


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
    """A write or fsync failed: the writer is broken for good (retrying an fsync can lie).

    The log itself can go on: ``reopen_after_failure`` gives a fresh writer once the cause (say a
    full disk) is gone, or ``LogWriter.discard`` removes a log that never got a durable record.
    """


class LogLocked(LogError):
    """Another writer holds the file; a log has exactly one writer."""


def canonical(obj: Any) -> bytes:
    """The one byte encoding everything is hashed and stored in: sorted keys, no whitespace."""
    return _ENCODER.encode(obj)


def _hash_body(body: _Body) -> str:
    return _hash_encoded(body.prev, _ENCODER.encode(body))


def _hash_encoded(prev: str, body: bytes) -> str:
    h = hashlib.sha256(DOMAIN_TAG)
    h.update(bytes.fromhex(prev))
    h.update(body)
    return h.hexdigest()


def _body_of_line(line: bytes, hash_hex: str) -> bytes:
    """A canonical line's body (what its hash covers), cut from the line itself.

    The body is the record without ``hash``, in the same canonical encoding, and its keys sort
    around ``hash`` (``... "data":{...},"hash":"H","prev":"..." ...``), so it is exactly the
    line with ``"hash":"H",`` taken out. Only the top-level key is followed by nothing that could
    hold those bytes (``prev``, ``seq``, ``ts``, ``type``), so the last match is the one.
    Encoding the record a second time would give the same bytes at more cost.
    """
    field = b'"hash":"' + hash_hex.encode("ascii") + b'",'
    at = line.rfind(field)
    return line[:at] + line[at + len(field) :]


def _check_batch(batch: int) -> int:
    if not isinstance(batch, int) or isinstance(batch, bool) or batch < 0:
        raise ValueError(f"batch must be an int >= 0, got {batch!r}")
    return batch


def chain_hash(
    prev: str,
    seq: int,
    ts: float,
    type: str,
    data: dict[str, Any],
    *,
    batch: int = 0,
    cmd: dict[str, Any] | None = None,
) -> str:
    """Hash of the record (seq, ts, type, data, batch, cmd) chained onto ``prev`` (hex)."""
    return build_record(prev, seq, ts, type, data, batch=batch, cmd=cmd).hash


def build_record(
    prev: str,
    seq: int,
    ts: float,
    type: str,
    data: dict[str, Any],
    *,
    batch: int = 0,
    cmd: dict[str, Any] | None = None,
) -> LogRecord:
    """The record that follows ``prev``, with its hash computed. Pure.

    ``batch``: how many records follow this one in the same append (0: it ends its batch);
    ``cmd``: the command that produced the batch, on its first record only.
    """
    body = _Body(seq, float(ts), type, data, prev, _check_batch(batch), cmd)
    return LogRecord(seq, body.ts, type, data, prev, _hash_body(body), batch, cmd)


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
        self._check_usable()
        async with self._lock:
            # Chain onto the last record only once no other append can move it.
            records, buf = self._prepare(items, ts, command)
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
        self,
        items: Sequence[tuple[str, dict[str, Any]]],
        ts: float,
        command: dict[str, Any] | None = None,
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
    # changes nothing for a regular file.
    flags = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
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

#: Longest line (without its newline) a log may hold. No legal record comes near it (a game's
#: biggest, ``game_started``, is a few kilobytes); a longer line is damage, so a reader never holds
#: more than this much of one line in memory, whatever the file's size.
MAX_LINE_BYTES = 1 << 20
#: How much of a file is read at once off the common path (a torn tail, a copy into ``.torn``).
_CHUNK = 1 << 20
_EMPTY_SHA256 = hashlib.sha256().hexdigest()


@dataclass(frozen=True)
class LogReadResult:
    """A verified log: its good records and, if the last write was torn, where the tail is.

    The torn bytes are not kept in memory (a tail may be as big as the file): ``tail`` reads them
    again, and ``tail_sha256`` is what lets ``recover_torn_tail`` refuse a file that changed.
    """

    path: Path
    records: list[LogRecord]
    valid_end: int  #: byte offset where the verified prefix ends
    size: int  #: file size when read
    torn_reason: str | None = None
    #: SHA-256 (hex) of the torn bytes ``file[valid_end:size]`` as they were read
    tail_sha256: str = _EMPTY_SHA256
    #: ``(st_dev, st_ino)`` of the file that was read
    file_id: tuple[int, int] | None = None

    @property
    def torn(self) -> bool:
        return self.size > self.valid_end

    @property
    def last_hash(self) -> str:
        return self.records[-1].hash if self.records else GENESIS

    @property
    def tail(self) -> bytes:
        """The torn bytes (incomplete batch included; empty if none), read again from the file.

        Raises ``LogError`` if they are no longer what was read. Reads the whole tail into memory:
        for tests and small tails; ``recover_torn_tail`` copies it in chunks instead.
        """
        if not self.torn:
            return b""
        with _open_regular(self.path) as f:
            f.seek(self.valid_end)
            data = f.read(self.size - self.valid_end)
        if len(data) != self.size - self.valid_end or _sha256(data) != self.tail_sha256:
            raise LogError(f"{self.path}: changed since it was read; read it again")
        return data


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _damage(line: bytes) -> tuple[LogRecord | None, str | None]:
    """Check a line (without its newline) on its own: a record, canonical, its hash right.

    Failures here are what a torn write leaves; a record that passes is self-consistent.
    """
    if len(line) > MAX_LINE_BYTES:
        return None, f"line longer than {MAX_LINE_BYTES} bytes (no record is that long)"
    try:
        record = _DECODER.decode(line)
    except msgspec.ValidationError as exc:
        return None, f"not a log record: {exc}"
    except msgspec.DecodeError:
        return None, "not valid JSON"
    if _ENCODER.encode(record) != line:
        return None, "not canonical JSON"
    if _hash_encoded(record.prev, _body_of_line(line, record.hash)) != record.hash:
        return None, "hash mismatch"
    return record, None


#: How every stored line begins (``batch`` sorts first).
_RECORD_START = b'{"batch":'


class _SoundRecordAfter:
    """Whether a sound record (see ``_damage``) starts anywhere after the first bad line's start.

    Fed the file from the start of that line on, in chunks of any size. Tries every later line,
    and every point in a line where ``{"batch":`` begins: a line whose newline was overwritten
    merges with the next record, which stays sound. A crash cannot leave a whole sound record
    after damage, so one found there means tampering or bit rot. Only runs on the error path.

    Memory is bounded by ``MAX_LINE_BYTES``: of a longer line only its last ``MAX_LINE_BYTES``
    are kept, since a sound record is never longer and runs to the end of its line.
    """

    def __init__(self) -> None:
        self.found = False
        self._line = bytearray()  #: the current line's last MAX_LINE_BYTES bytes
        self._length = 0  #: the current line's length so far
        self._first = True  #: the current line is the bad line itself

    def feed(self, chunk: bytes) -> None:
        start = 0
        while not self.found:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            self._line += piece
            self._length += len(piece)
            if len(self._line) > MAX_LINE_BYTES:
                del self._line[: len(self._line) - MAX_LINE_BYTES]
            if nl < 0:
                return
            self._end_of_line()
            start = nl + 1

    def finish(self) -> bool:
        """The answer, once the whole rest of the file was fed (the last line needs no newline)."""
        if not self.found:
            self._end_of_line()
        return self.found

    def _end_of_line(self) -> None:
        window = bytes(self._line)
        at_start = self._length == len(window)  #: the window is the whole line
        if at_start and not self._first and _damage(window)[0] is not None:
            self.found = True
        else:
            i = window.find(_RECORD_START, 1 if at_start else 0)
            while i >= 0 and not self.found:
                self.found = _damage(window[i:])[0] is not None
                i = window.find(_RECORD_START, i + 1)
        self._line.clear()
        self._length = 0
        self._first = False


def _open_regular(path: Path) -> BinaryIO:
    """Open ``path`` for buffered reading; refuse what is not a regular file.

    ``O_NONBLOCK`` so that a FIFO (or a device) put where a log was expected cannot hang the
    reader in ``open``; it changes nothing for a regular file.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return os.fdopen(fd, "rb", buffering=_CHUNK)
    except BaseException:
        os.close(fd)
        raise


@dataclass
class _BadLine:
    offset: int  #: where the line starts
    line: int  #: 1-based line number
    reason: str
    damaged: bool  #: damaged on its own (torn-looking), not a sound record in the wrong place


@dataclass
class _Prefix:
    """What ``_verify`` found: the good records, where they end, and the first bad line."""

    records: list[LogRecord]
    end: int  #: byte offset after the last good record
    batch_pos: int  #: where the last (possibly incomplete) batch starts
    batch_seq: int  #: seq of its first record
    incomplete: bool  #: the last good record expects more of its batch
    bad: _BadLine | None = None


def _verify(f: BinaryIO, limit: int | None = None) -> _Prefix:
    """Check lines from the start of ``f`` until the first bad one, the end, or ``limit`` records.

    Each line is read with a bounded ``readline``: a longer one is damage, never held whole.
    """
    records: list[LogRecord] = []
    prev = GENESIS
    pos = 0
    #: the ``batch`` the next record must carry; None after a batch ends (any count starts one)
    want: int | None = None
    batch_pos = batch_seq = 0  #: where the current batch starts: byte offset and seq
    while limit is None or len(records) < limit:
        raw = f.readline(MAX_LINE_BYTES + 1)
        if not raw:
            break
        seq = len(records)
        lineno = seq + 1
        newline = raw.endswith(b"\n")
        record, damage = _damage(raw[:-1] if newline else raw)
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
            elif not newline:
                damage = reason = "missing trailing newline"
        if reason is not None:
            bad = _BadLine(pos, lineno, reason, damage is not None)
            return _Prefix(records, pos, batch_pos, batch_seq, want is not None, bad)
        assert record is not None
        if want is None:
            batch_pos, batch_seq = pos, seq
        records.append(record)
        prev = record.hash
        want = record.batch - 1 if record.batch else None
        pos += len(raw)
    return _Prefix(records, pos, batch_pos, batch_seq, want is not None)


def _scan_tail(f: BinaryIO, start: int, check_from: int | None) -> tuple[bool, int, str]:
    """Read ``f`` from ``start`` to its end in chunks: (a sound record after ``check_from``?,
    end offset, SHA-256 of the bytes read). Stops early once a sound record is found."""
    f.seek(start)
    digest = hashlib.sha256()
    scan = _SoundRecordAfter() if check_from is not None else None
    pos = start
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        digest.update(chunk)
        if scan is not None and check_from is not None and pos + len(chunk) > check_from:
            scan.feed(chunk[max(0, check_from - pos) :])
            if scan.found:
                return True, pos + len(chunk), digest.hexdigest()
        pos += len(chunk)
    found = scan.finish() if scan is not None else False
    return found, pos, digest.hexdigest()


def read_log(path: str | os.PathLike[str]) -> LogReadResult:
    """Parse and verify a whole log, line by line; the first bad line decides.

    A bad line that is damaged (not JSON, not canonical, wrong shape, hash wrong, longer than
    ``MAX_LINE_BYTES``, no newline) with no sound record starting after it is a torn tail: the
    result says where it starts. Anything else is ``LogCorrupt``: damage with a sound record after
    it, or a sound record in the wrong place (wrong seq, prev or batch count: a crash cannot forge
    a hash, so only an edit makes one).

    Only whole batches are returned: if the last good record has ``batch`` > 0, its batch was cut
    short by a crash, and every record of that batch joins the torn tail (``valid_end`` moves
    back to where the batch starts).

    Memory: the records, plus at most ``MAX_LINE_BYTES`` of the file at a time. The bytes after a
    bad line are read (in chunks) only to tell a torn tail from corruption. Refuses a path that is
    not a regular file (OSError), without blocking on a FIFO.
    """
    path = Path(path)
    with _open_regular(path) as f:
        st = os.fstat(f.fileno())
        file_id = (st.st_dev, st.st_ino)
        p = _verify(f)
        records, bad = p.records, p.bad
        tail_start = p.batch_pos if p.incomplete else p.end
        torn: str | None = None
        size, digest = p.end, _EMPTY_SHA256
        if bad is not None:
            found = True
            if bad.damaged:
                found, size, digest = _scan_tail(f, tail_start, bad.offset)
            if found:
                raise LogCorrupt(path, bad.line, len(records), bad.offset, bad.reason)
            torn = f"line {bad.line} (seq {len(records)}): {bad.reason}"
        elif p.incomplete:
            _, size, digest = _scan_tail(f, tail_start, None)
    if p.incomplete:
        # The last good record expects more of its batch: a crash cut the batch short, so the
        # whole batch joins the torn tail (an append is all or nothing).
        total = records[p.batch_seq].batch + 1
        reason = (
            f"line {p.batch_seq + 1} (seq {p.batch_seq}): incomplete batch: "
            f"{len(records) - p.batch_seq} of {total} records written"
        )
        if torn is not None:
            reason += f"; then {torn}"
        kept = records[: p.batch_seq]
        return LogReadResult(path, kept, p.batch_pos, size, reason, digest, file_id)
    if torn is not None:
        return LogReadResult(path, records, p.end, size, torn, digest, file_id)
    return LogReadResult(path, records, size, size, None, _EMPTY_SHA256, file_id)


def first_record(fd: int) -> tuple[LogRecord | None, str]:
    """The record on the first line of an open file, if that line is a sound first record.

    Reads at most ``MAX_LINE_BYTES`` + 1 bytes (with ``pread``: the file's offset is untouched),
    so a huge file or garbage costs no more than that. The line must pass ``_damage`` and be seq 0
    with ``prev`` GENESIS; its newline may be missing (a crash in the first append). Returns
    ``(record, "")`` or ``(None, why not)``.
    """
    head = os.pread(fd, MAX_LINE_BYTES + 1, 0)
    if not head:
        return None, "the file is empty"
    nl = head.find(b"\n")
    record, damage = _damage(head if nl < 0 else head[:nl])
    if record is None:
        return None, damage or "not a log record"
    if record.seq != 0:
        return None, f"its seq is {record.seq}, not 0"
    if record.prev != GENESIS:
        return None, "prev of the first record is not 64 zeros"
    return record, ""


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
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
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
    flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | os.O_NOCTTY
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


def verify_receipt(records: Sequence[LogRecord], seq: int, hash: str) -> bool:
    """Whether a receipt (seq, chain hash) a client kept lies on this verified chain."""
    if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq < len(records):
        return False
    record = records[seq]
    return record.seq == seq and record.hash == hash
