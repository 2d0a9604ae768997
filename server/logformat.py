"""What a game's log is, line by line, and how a log file is read and verified.

Each line is ``canonical(record) + b"\\n"`` with keys ``batch, data, hash, prev, seq, ts, type``
(and ``cmd`` on a batch's first record), where ``canonical`` is
``msgspec.json.encode(obj, order="sorted")`` and
``hash = sha256(DOMAIN_TAG + bytes.fromhex(prev) + canonical(record without hash))``. Record
format and rules: docs/LOG.md ("Record format").

``batch`` is how many records follow this one in the same append (one decision of the engine),
so a batch of n records counts n-1, n-2, ..., 0. ``read_log`` accepts only whole batches: a
batch that a crash cut short is treated as part of the torn tail.

Logs are read line by line (``read_log``), never whole: a line longer than ``MAX_LINE_BYTES`` is
damage, so memory is bounded by that, not by the file.

Why a module of its own: reading and checking a log needs no event loop and writes nothing, so
``conjure replay`` (the audit) starts without Trio, whose import was a tenth of a replay's time.
Writing, and moving a torn tail aside, are ``server.logstore``'s. ``read_log`` and
``first_record`` block; call them from Trio through ``trio.to_thread.run_sync``.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import msgspec

from conjure.protocol.structs import Time
from conjure.protocol.text import is_hex64

__all__ = [
    "DOMAIN_TAG",
    "GENESIS",
    "LOG_FORMAT",
    "MAX_LINE_BYTES",
    "LogCorrupt",
    "LogError",
    "LogReadResult",
    "LogRecord",
    "build_record",
    "canonical",
    "chain_hash",
    "encode_record",
    "first_record",
    "read_log",
    "verify_receipt",
]

#: The record format the server writes (``server.logstore``): 2 adds ``cmd`` (each batch's
#: command) to the first record of a batch; a log names its format in ``game_started.log_format``
#: (absent: 1).
LOG_FORMAT = 2
#: Prefixed to every hash input so a log hash can never be confused with another SHA-256 use.
DOMAIN_TAG = b"conjure-log-v1\x00"
#: ``prev`` of the record with seq 0.
GENESIS = "0" * 64

_Seq = Annotated[int, msgspec.Meta(ge=0)]
_Count = Annotated[int, msgspec.Meta(ge=0)]


class LogRecord(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True, gc=False
):
    """One line of the log. ``data`` is the event's fields, opaque at this layer.

    ``batch`` is the number of records after this one in the same append: 0 ends a batch.
    ``cmd`` (only on a batch's first record, and only in logs of rules version 2 on) is the
    command that produced the batch; a record without one stores no ``cmd`` key at all, so older
    logs read and hash exactly as they were written.

    ``gc=False``: a record holds decoded JSON, which cannot refer back to it, so it can be in no
    reference cycle; the cyclic collector need not track the thousands an audit or a recovery
    holds.
    """

    seq: _Seq
    ts: Time
    type: str
    data: dict[str, Any]
    prev: str  #: 64 lowercase hex digits, checked by ``_damage`` (``is_hex64``, not a pattern)
    hash: str  #: likewise
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


def _body_of_line(line: bytes) -> bytes:
    """A canonical line's body (what its hash covers), cut from the line itself.

    The body is the record without ``hash``, in the same canonical encoding, and its keys sort
    around ``hash`` (``... "data":{...},"hash":"H","prev":"..." ...``), so it is exactly the
    line with ``"hash":"H",`` taken out. Only the top-level key is followed by nothing that could
    hold those bytes (``prev``, ``seq``, ``ts``, ``type``; a quote inside a string is escaped), so
    the last match is the one. ``H`` is taken to be 64 digits long: if it is not, the body is
    wrong, but then no digest can equal ``H`` either. Encoding the record a second time would
    give the same bytes at more cost.
    """
    at = line.rfind(_HASH_KEY)
    return line[:at] + line[at + _HASH_FIELD_LEN :]


_HASH_KEY = b'"hash":"'
_HASH_FIELD_LEN = len(_HASH_KEY) + 64 + len(b'",')


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


# ---------------------------------------------------------------------------------------------
# Reading

#: Longest line (without its newline) a log may hold. No legal record comes near it (a game's
#: biggest, ``game_started``, is a few kilobytes); a longer line is damage, so a reader never holds
#: more than this much of one line in memory, whatever the file's size.
MAX_LINE_BYTES = 1 << 20
#: The most bytes one append writes (``LogWriter`` refuses a bigger one before writing): a crash
#: leaves at most one append torn, so more bytes after the last whole batch are no torn tail.
#: Far above any real append (a group of decisions holds tens of kilobytes); what it buys is
#: that a planted tail (a sparse file of gigabytes that takes no disk) is refused unread.
MAX_APPEND_BYTES = 64 << 20
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


def _damage(line: bytes, chained_to: str = GENESIS) -> tuple[LogRecord | None, str | None]:
    """Check a line (without its newline) on its own: a record, canonical, its hash right.

    Failures here are what a torn write leaves; a record that passes is self-consistent.
    ``chained_to``: the hash the record should follow, if known (64 hex digits already).
    """
    if len(line) > MAX_LINE_BYTES:
        return None, f"line longer than {MAX_LINE_BYTES} bytes (no record is that long)"
    try:
        record = _DECODER.decode(line)
    except msgspec.ValidationError as exc:
        return None, f"not a log record: {exc}"
    except msgspec.DecodeError:
        return None, "not valid JSON"
    except RecursionError:  # (arrays in arrays hundreds deep: no record nests so)
        return None, "not a log record: nested too deep"
    # A hash that equals a digest just computed is 64 lowercase hex digits, so only ``prev`` is
    # checked before hashing (``bytes.fromhex`` would skip whitespace in it), and only if it is
    # not the digest it should be; ``hash`` is looked at only to explain a mismatch.
    if record.prev != chained_to and not is_hex64(record.prev):
        return None, _NOT_HEX
    if _ENCODER.encode(record) != line:
        return None, "not canonical JSON"
    if _hash_encoded(record.prev, _body_of_line(line)) != record.hash:
        return None, "hash mismatch" if is_hex64(record.hash) else _NOT_HEX
    return record, None


_NOT_HEX = "not a log record: prev and hash must be 64 lowercase hexadecimal digits"


#: How every stored line begins (``batch`` sorts first).
RECORD_START = b'{"batch":'
#: Record starts tried in one line after damage, from its end (``_SoundRecordAfter``).
SOUND_TRIES = 16


class _SoundRecordAfter:
    """Whether a sound record (see ``_damage``) starts anywhere after the first bad line's start.

    Fed the file from the start of that line on, in chunks of any size. Tries every later line
    from its last points where ``{"batch":`` begins: a line whose newline was overwritten merges
    with the next record, which stays sound. A crash cannot leave a whole sound record
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
        # The line's last ``{"batch":`` starts, at most SOUND_TRIES of them, from the end: a
        # record's own start is the first in it, and a record the server wrote holds no other
        # (inside one every quote of a string is escaped, and no field is named "batch"). Trying
        # every start made a planted tail of nested starts take 1.3 s per MiB (found by review);
        # a record made to hide more starts than that after damage is read as a torn tail, which
        # still fails the audit.
        end = len(window)
        for _ in range(SOUND_TRIES):
            i = window.rfind(RECORD_START, 0, end)
            if i < 0 or (i == 0 and at_start and self._first) or self.found:
                break
            self.found = _damage(window[i:])[0] is not None
            end = i + len(RECORD_START) - 1
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
        record, damage = _damage(raw[:-1] if newline else raw, prev)
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
        if (bad is not None or p.incomplete) and st.st_size - tail_start > MAX_APPEND_BYTES:
            at = bad.line if bad is not None and not p.incomplete else p.batch_seq + 1
            raise LogCorrupt(
                path,
                at,
                len(records) if bad is not None and not p.incomplete else p.batch_seq,
                tail_start,
                f"{st.st_size - tail_start:,} bytes after the last whole batch, more than one "
                "append writes, so no crash left them",
            )
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


_BOM = b"\xef\xbb\xbf"


def converted(head: bytes) -> str | None:
    """What a text tool did to the log whose first bytes are ``head``, said with the way back;
    None if it looks untouched. Why: a log whose line ends a Windows editor or git made CRLF, or
    that an editor gave a byte-order mark, is one whose records may well be whole; it read as
    a crash in its first write or as an edit (found by review)."""
    if head.startswith(_BOM + RECORD_START):
        return (
            "it starts with a byte-order mark, which a text editor adds "
            "(sed -i '1s/^\\xEF\\xBB\\xBF//' FILE removes it)"
        )
    if head.startswith(RECORD_START) and head.split(b"\n", 1)[0].endswith(b"\r"):
        return (
            "its lines end in CRLF, as a Windows editor or git's autocrlf makes them "
            "(dos2unix FILE converts them back)"
        )
    return None


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


#: The most bytes :func:`last_batch` reads from a file's end: a game's last decision (a round
#: scored and the game's end, with every seat's standing) is a few kilobytes; a longer one is
#: read the long way.
LAST_BATCH_READ = 64 << 10


def last_batch(fd: int) -> list[LogRecord] | None:
    """The records of the last batch of an open file, oldest first, if the file ends with that
    whole batch, sound and chained: every line a sound record (canonical, its own hash right),
    the batch counting down to 0 on the last line, each record's ``prev`` the hash of the line
    before it, the line before the batch a sound record that ends a batch of its own (or none:
    the batch starts the file), and the last line ending with its newline. None otherwise.

    Reads at most ``LAST_BATCH_READ`` bytes, with ``pread`` (the file's offset is untouched).
    Whether the lines before the batch follow each other is not known from it: only reading
    the whole file (:func:`read_log`) tells that.
    """
    size = os.fstat(fd).st_size
    n = min(size, LAST_BATCH_READ)
    if n < 2:
        return None
    tail = os.pread(fd, n, size - n)
    if len(tail) != n or not tail.endswith(b"\n"):
        return None
    lines = tail[:-1].split(b"\n")
    whole = n == size  # else the first piece may be the end of a longer line: never used
    batch: list[LogRecord] = []
    for k in range(len(lines) - 1, -1, -1):
        if k == 0 and not whole:
            return None  # the batch, or the line before it, began before what was read
        record, _damage_found = _damage(lines[k])
        if record is None:
            return None
        if batch and record.hash != batch[-1].prev:
            return None
        if batch and record.batch == 0:  # the line before the batch: the end of another
            break
        if record.batch != len(batch):
            return None
        batch.append(record)
        if k == 0 and record.prev != GENESIS:
            return None
    batch.reverse()
    return batch


def verify_receipt(records: Sequence[LogRecord], seq: int, hash: str) -> bool:
    """Whether a receipt (seq, chain hash) a client kept lies on this verified chain."""
    if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq < len(records):
        return False
    record = records[seq]
    return record.seq == seq and record.hash == hash
