"""Startup: read every game log in ``replays/`` and bring unfinished games back.

Per file: verify the chain (``read_log``); a torn last line (a crash mid-append) is moved aside and
cut off (``recover_torn_tail``) with a message; damage before the last line is corruption or tampering,
so that game is refused with a message naming the line and every other game still loads. Finished
games stay on disk untouched. Blocking: run it in a thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from protocol.events import GameEnded, GameStarted, event_from_record
from protocol.messages import Receipt, ResultView
from server import results
from server.logstore import (
    LogCorrupt,
    LogError,
    LogWriter,
    open_for_append,
    read_log,
    recover_torn_tail,
)
from server.rules.state import Game


@dataclass
class Resumed:
    """An unfinished game, folded from its log, with a writer open to continue it."""

    path: Path
    game: Game
    writer: LogWriter
    receipt: Receipt
    results: list[ResultView]


@dataclass
class LoadReport:
    resumed: list[Resumed] = field(default_factory=list)
    finished: int = 0
    refused: list[str] = field(default_factory=list)  # one sentence per refused file
    recovered: list[str] = field(default_factory=list)  # one sentence per torn tail moved aside


def load_replays(replays: Path, say: Callable[[str], None]) -> LoadReport:
    """Read, verify and fold every ``*.jsonl`` in ``replays``; print what happened to each."""
    report = LoadReport()
    for path in sorted(replays.glob("*.jsonl")):
        try:
            _load_one(path, report, say)
        except LogCorrupt as exc:
            line = (
                f"refused {path}: line {exc.line} is damaged or was edited ({exc.reason}); "
                "this game is not loaded, the file is left as it is"
            )
            report.refused.append(line)
            say(line)
        except (LogError, OSError, ValueError) as exc:
            line = f"refused {path}: {exc}"
            report.refused.append(line)
            say(line)
        except Exception as exc:  # a log the engine cannot replay must not stop the others
            line = f"refused {path}: the events cannot be replayed ({exc!r})"
            report.refused.append(line)
            say(line)
    return report


def _load_one(path: Path, report: LoadReport, say: Callable[[str], None]) -> None:
    result = read_log(path)
    if result.torn:
        torn = recover_torn_tail(path, result)
        line = (
            f"recovered {path}: the last write was cut short ({result.torn_reason}); "
            f"{len(result.tail)} byte(s) moved to {torn}, {len(result.records)} record(s) kept"
        )
        report.recovered.append(line)
        say(line)
    records = result.records
    if not records:
        raise ValueError("the log holds no records (the game never started)")
    events = []
    for i, rec in enumerate(records, 1):
        try:
            events.append(event_from_record(rec.type, rec.data))
        except msgspec.ValidationError as exc:
            raise ValueError(f"line {i}: not a game event ({exc})") from None
    if not isinstance(events[0], GameStarted):
        raise ValueError("line 1: the first record is not game_started")
    if any(isinstance(e, GameEnded) for e in events):
        report.finished += 1
        return
    found: list[ResultView] = []
    game = results.apply(None, events, found)
    assert game is not None
    writer = open_for_append(path, records)
    last = records[-1]
    report.resumed.append(Resumed(path, game, writer, Receipt(last.seq, last.hash), found))
