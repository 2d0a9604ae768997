"""Startup: read every game log in ``replays/`` and bring unfinished games back.

Start-up never harms a file: it changes nothing but a real game log's torn tail, and that only
after the whole log checked out. Per entry of ``replays/``, in name order (docs/LOG.md, "What
start-up does with each file"):

- Only names ending in ``.jsonl`` are candidates; other names (the ``.torn`` files included) are
  never opened.
- What is not a regular file (a FIFO, socket, device, directory, a symbolic link to anything but
  a regular file) is **skipped** without being opened.
- A regular file whose first line (read with a bounded read, no lock) is not a sound
  ``game_started`` record is not a game log: **skipped**, left byte for byte as it was.
- A log under another rules version, damaged before its end (``LogCorrupt``), holding events the
  engine cannot read or that are not legal under the rules (``server.rules.legality``), or with no
  complete record, is **refused**: not loaded, left as it is.
- An unfinished game whose room code another log's unfinished game holds is **refused**, both
  of them; so is an unfinished log not named after its game, a link start-up would write
  through (an unfinished game or a torn tail), and a tail longer than one append.
- A log whose last batch, whole and sound, ends with a ``game_ended`` or ``game_abandoned``
  record is a finished game: counted, and read no further (``_ends_the_game`` says why).
- Only then is a torn tail (a crash mid-append) moved aside (``recover_torn_tail``); a finished
  game is counted and stays as it is; an unfinished one is resumed with a writer.

Every skipped and refused file is said once, with its reason. Blocking: run it in a thread.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from conjure.protocol.events import (
    AUDITABLE_RULES,
    DECIDED_RULES,
    FINAL_EVENTS,
    FINAL_TYPES,
    RULES_VERSION,
    Event,
    GameStarted,
    event_from_record,
)
from conjure.protocol.messages import EARLIER_LINES, Receipt, ResultView
from conjure.protocol.text import escape_unshown
from conjure.server import feed, results
from conjure.server.logformat import (
    LOG_FORMAT,
    MAX_LINE_BYTES,
    LogCorrupt,
    LogError,
    LogReadResult,
    LogRecord,
    converted,
    first_record,
    last_batch,
    read_log,
)
from conjure.server.logstore import LogWriter, open_for_append, recover_torn_tail
from conjure.server.redecide import redecide
from conjure.server.rules.legality import first_illegal
from conjure.server.rules.state import Game

#: The names start-up reads as game logs.
LOG_SUFFIX = ".jsonl"
#: Why a file in ``replays/`` is not taken for a game log.
NOT_A_LOG = "not a game log: the first line is not a game_started record"


@dataclass
class Resumed:
    """An unfinished game, folded from its log, with a writer open to continue it."""

    path: Path
    game: Game
    writer: LogWriter
    receipt: Receipt
    results: list[ResultView]
    #: The table talk the log's decisions make, the newest lines (``Update.earlier``): a room
    #: resumed after a restart (every ``make play`` that goes on with a game) has it again.
    talk: list[str] = field(default_factory=list)


@dataclass
class LoadReport:
    resumed: list[Resumed] = field(default_factory=list)
    finished: int = 0
    refused: list[str] = field(default_factory=list)  # one sentence per refused game log
    recovered: list[str] = field(default_factory=list)  # one sentence per torn tail moved aside
    skipped: list[str] = field(default_factory=list)  # one sentence per file that is no game log
    #: Room codes of the logs read that are not known to be finished (refused ones too): a new
    #: room never takes one, so no server writes two unfinished logs of one room (they are
    #: both refused at the next start) by reusing the code of a log it could not resume.
    held_rooms: set[str] = field(default_factory=set)


@dataclass
class _Claim:
    """An unfinished game read whole, resumed once no other log holds its room."""

    path: Path
    result: LogReadResult
    game: Game
    talk: list[str]


class _Skip(Exception):
    """Not a game log; the sentence says why."""


class _Refuse(Exception):
    """A game log that is not loaded; the sentence says why."""


def load_replays(replays: Path, say: Callable[[str], None]) -> LoadReport:
    """Check every ``*.jsonl`` in ``replays``, resume the unfinished games; say what happened."""
    report = LoadReport()
    try:
        names = sorted(e.name for e in os.scandir(replays) if e.name.endswith(LOG_SUFFIX))
    except OSError as exc:
        say(f"cannot list {replays}: {exc.strerror or exc}; no game was loaded")
        return report
    claims: dict[str, list[_Claim]] = {}  #: room code -> the unfinished logs that hold it
    rooms: dict[Path, str] = {}  #: each log's room, as its header names it
    finished: set[Path] = set()
    for name in names:
        path = replays / name
        count = report.finished
        try:
            _load_one(path, report, say, claims, rooms)
        except _Skip as why:
            line = f"skipped {path}: {why}; the file is left as it is"
            report.skipped.append(line)
            say(line)
            continue
        except _Refuse as why:
            line = f"refused {path}: {why}; this game is not loaded, the file is left as it is"
        except LogCorrupt as exc:
            line = (
                f"refused {path}: line {exc.line} is damaged or was edited ({exc.reason}); "
                "this game is not loaded, the file is left as it is"
            )
        except (LogError, OSError, ValueError) as exc:
            line = f"refused {path}: {exc}"
        except Exception as exc:  # a log the engine cannot replay must not stop the others
            line = f"refused {path}: the events cannot be replayed ({exc!r})"
        else:
            if report.finished > count:
                finished.add(path)
            continue
        report.refused.append(line)
        say(line)
    report.held_rooms = {room for path, room in rooms.items() if path not in finished}
    _resume_claimed(report, claims, say)
    return report


def _ends_the_game(batch: list[LogRecord] | None) -> bool:
    """Whether a log's last batch ends its game: read whole and sound, chained to the line
    before it, its last record a ``game_ended`` or ``game_abandoned`` after the first line,
    with nothing after it (``logformat.last_batch``).

    Why a finished log is read no further: nothing of a finished game is loaded, so start-up
    needs only to know that it is over, and reading and deciding every finished log again made
    start-up grow with the history (510 finished games of about 700 events each: 8.4 s before
    the server listened; docs/LOG.md). The whole last batch, not its last line alone: a crash
    that kept an append's end but not its middle (blocks written out of order) leaves a
    decision that was never acknowledged, which is read the long way as any torn tail.
    ``conjure replay`` audits a finished log whole.
    """
    if not batch:
        return False
    end = batch[-1]
    if end.seq == 0 or end.type not in FINAL_TYPES:
        return False
    try:
        event_from_record(end.type, end.data)
    except msgspec.ValidationError:
        return False
    return True


def _finished(events: Sequence[Event]) -> bool:
    """A game that ended (or was abandoned) is never resumed."""
    return any(isinstance(e, FINAL_EVENTS) for e in events)


def _load_one(
    path: Path,
    report: LoadReport,
    say: Callable[[str], None],
    claims: dict[str, list[_Claim]],
    rooms: dict[Path, str],
) -> None:
    fd = _open_candidate(path)
    try:
        st = os.fstat(fd)
        header = _header(fd)
        ending = last_batch(fd)
    finally:
        os.close(fd)
    start = event_from_record(header.type, header.data)
    if isinstance(start, GameStarted):
        rooms[path] = start.room
    version = getattr(start, "rules_version", None)
    if version not in AUDITABLE_RULES:
        raise _Refuse(
            f"it names rules version {version!r}, which this server does not know "
            f"(it plays version {RULES_VERSION})"
        )
    fmt = getattr(start, "log_format", 1)
    if fmt > LOG_FORMAT:
        raise _Refuse(f"it is in log format {fmt}; this server reads formats 1 to {LOG_FORMAT}")
    if version in DECIDED_RULES:
        illegal = first_illegal([start])  # the table, before reading further
        if illegal is not None:
            raise _Refuse(f"line 1 is not legal under rules version {version}: {illegal[1]}")
    if _ends_the_game(ending):
        report.finished += 1
        return
    result = read_log(path)
    if result.file_id != (st.st_dev, st.st_ino):
        raise _Refuse("the file was replaced while start-up read it")
    records = result.records
    if not records:
        raise _Refuse(
            f"the log holds no complete record ({result.torn_reason}): a crash cut its first "
            "decision short, so the game never started"
        )
    if records[0].hash != header.hash:
        raise _Refuse("the file changed while start-up read it")
    events = _events(records)
    finished = _finished(events)
    if version not in DECIDED_RULES:
        if finished:  # nothing to resume: an older game's record, for conjure replay
            report.finished += 1
            return
        raise _Refuse(
            f"an unfinished game of rules version {version}; this server plays version "
            f"{RULES_VERSION} and cannot go on with it (conjure replay still audits it)"
        )
    talk: deque[str] = deque(maxlen=EARLIER_LINES)
    batch: list[Event] = []

    def told(record: LogRecord, event: Event, after: Game) -> None:
        batch.append(event)
        if not record.batch:  # a decision's last record: its sentences, as the room said them
            talk.extend(feed.describe(after, batch))
            batch.clear()

    # The moves, not only the events, must be the rules'.
    decided = redecide(records, each=None if finished else told)
    if decided.mismatch is not None:
        # Fold the events a second time only for a refused log: for the plainest sentence
        # (a seat, a phase, a length) where there is one.
        illegal = first_illegal(events)
        if illegal is not None:
            i, why = illegal
            raise _Refuse(f"line {i + 1} is not legal under rules version {version}: {why}")
        raise _Refuse(f"it is not what the rules decide: {decided.mismatch.sentence()}")
    game = None if finished else decided.state
    if (game is not None or result.torn) and path.is_symlink():
        # Start-up writes to no file through a link: its target may be anyone's file, outside
        # replays/ (found by review: a link's target was cut back and then written to).
        raise _Refuse(
            "it is a symbolic link, and start-up writes through none (its target may be no "
            "file of this server's); put the log itself in replays/ to go on with it"
        )
    if game is not None and path.name != f"{game.setup.game_id}{LOG_SUFFIX}":
        raise _Refuse(
            f"its name is not its game's ({escape_unshown(game.setup.game_id)}{LOG_SUFFIX}), and "
            "the server names every log after its game: so this one was put here by hand"
        )
    if game is None:
        _recover_tail(path, result, report, say)
        report.finished += 1
        return
    # Resumed after every log was read (``_resume_claimed``): a room two logs hold is neither's.
    claims.setdefault(game.setup.room, []).append(_Claim(path, result, game, list(talk)))


def _recover_tail(
    path: Path, result: LogReadResult, report: LoadReport, say: Callable[[str], None]
) -> None:
    if result.torn:
        torn = recover_torn_tail(path, result)
        line = (
            f"recovered {path}: the last write was cut short ({result.torn_reason}); "
            f"{result.size - result.valid_end} byte(s) moved to {torn}, "
            f"{len(result.records)} record(s) kept"
        )
        report.recovered.append(line)
        say(line)


def _resume_claimed(
    report: LoadReport, claims: dict[str, list[_Claim]], say: Callable[[str], None]
) -> None:
    """Resume each unfinished game whose room no other unfinished log holds. A room has one
    game at a time, so no server wrote two: the first in name order winning let a planted log
    take a real game's room (its host refused as ``bad_token``, the planter seated; found by
    review). Both are refused, before either's torn tail is moved: left as they are."""
    for room, held in claims.items():
        if len(held) > 1:
            for claim in held:
                others = ", ".join(c.path.name for c in held if c is not claim)
                line = (
                    f"refused {claim.path}: room {room} is held by another unfinished game too "
                    f"({others}), and a room has one game at a time: this game is not loaded, "
                    "the file is left as it is"
                )
                report.refused.append(line)
                say(line)
            continue
        (claim,) = held
        try:
            _recover_tail(claim.path, claim.result, report, say)
            writer = open_for_append(claim.path, claim.result.records)
        except (LogError, OSError, ValueError) as exc:
            line = f"refused {claim.path}: {exc}"
            report.refused.append(line)
            say(line)
            continue
        last = claim.result.records[-1]
        found = results.extend_views(claim.game, [])
        resumed = Resumed(
            claim.path, claim.game, writer, Receipt(last.seq, last.hash), found, claim.talk
        )
        report.resumed.append(resumed)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def _open_candidate(path: Path) -> int:
    """A read-only fd on ``path`` if it is a regular file (or a link to one); else ``_Skip``.

    The kind is checked with ``lstat``/``stat`` before anything is opened, and the open itself
    cannot hang or follow a link swapped in meanwhile (``O_NONBLOCK``, ``O_NOFOLLOW``).
    """
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise _Skip(f"cannot examine it ({exc.strerror or exc})") from None
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.stat(path)
        except OSError:
            raise _Skip(
                "not a game log: a symbolic link to nothing, so it was not opened"
            ) from None
        if not stat.S_ISREG(target.st_mode):
            raise _Skip(
                f"not a game log: a symbolic link to {_kind(target.st_mode)}, so it was not opened"
            )
    elif stat.S_ISREG(st.st_mode):
        flags |= os.O_NOFOLLOW
    else:
        raise _Skip(
            f"not a game log: {_kind(st.st_mode)}, not a regular file, so it was not opened"
        )
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _Skip(f"cannot open it ({exc.strerror or exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _Skip("not a game log: it stopped being a regular file while start-up looked at it")
    return fd


def _header(fd: int) -> LogRecord:
    """The first record, if it is a sound ``game_started`` whose data is the event; else ``_Skip``."""
    record, why = first_record(fd)
    if record is None:
        conversion = converted(os.pread(fd, MAX_LINE_BYTES + 1, 0))
        if conversion is not None:  # (it was "not a game log")
            raise _Skip(f"a game log that a text tool changed: {conversion}; undone, it loads")
        raise _Skip(f"{NOT_A_LOG} ({why})")
    if record.type != "game_started":
        raise _Skip(f"{NOT_A_LOG} (it is a {record.type[:40]!r} record)")
    try:
        start = event_from_record(record.type, record.data)
    except msgspec.ValidationError as exc:
        raise _Skip(f"{NOT_A_LOG} (its data is not a game start: {exc})") from None
    assert isinstance(start, GameStarted)
    return record


def _events(records: Sequence[LogRecord]) -> list[Event]:
    events = []
    for i, rec in enumerate(records, 1):
        try:
            events.append(event_from_record(rec.type, rec.data))
        except msgspec.ValidationError as exc:
            raise _Refuse(f"line {i} is not a game event ({exc})") from None
    return events
