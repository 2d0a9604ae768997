"""Re-decide a log: run every logged command through the rules and demand the logged events.

A log of rules version 2 holds, on the first record of every batch, the command that produced the
batch (``LogRecord.cmd``). Folding the events alone would accept any events the engine can apply;
deciding each command again accepts only the events the rules produce from it, in that state, at
that time. The server's recovery and ``conjure replay`` both use this. Pure (no I/O): it reads
records already verified by ``server.logstore.read_log``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from conjure.protocol.errors import Refusal
from conjure.protocol.events import Event, event_data, event_from_record, event_type
from conjure.server.logstore import LogRecord
from conjure.server.rules import commands as cmd
from conjure.server.rules.decide import decide_and_fold
from conjure.server.rules.state import Game


@dataclass(frozen=True)
class Mismatch:
    """Where a log stops being what the rules decide, in words."""

    line: int  #: 1-based line of the first record that is wrong (or of the batch's command)
    command: str  #: the logged command, as logged ("" when none could be read)
    why: str

    def sentence(self) -> str:
        what = f" (command {self.command})" if self.command else ""
        return f"line {self.line}{what}: {self.why}"


@dataclass
class Redecided:
    state: Game | None  #: the state after the last batch that matched
    batches: int  #: how many batches matched
    mismatch: Mismatch | None


def _show(command: dict[str, Any] | None) -> str:
    return "" if command is None else msgspec.json.encode(command).decode()


def _event_text(item: tuple[str, dict[str, Any]]) -> str:
    return f"{item[0]} {msgspec.json.encode(item[1]).decode()}"


def redecide(records: Sequence[LogRecord]) -> Redecided:
    """Decide every batch of ``records`` again; stops at the first difference."""
    state: Game | None = None
    i = batches = 0
    while i < len(records):
        batch = list(records[i : i + records[i].batch + 1])
        after, mismatch = _batch(state, batch, i + 1)
        if mismatch is not None:
            return Redecided(state, batches, mismatch)
        state = after
        batches += 1
        i += len(batch)
    return Redecided(state, batches, None)


def _batch(
    state: Game | None, batch: list[LogRecord], line: int
) -> tuple[Game | None, Mismatch | None]:
    """The state after one batch, or where it differs from what the rules decide."""
    first = batch[0]

    def fail(why: str, at: int = line) -> tuple[Game | None, Mismatch]:
        return state, Mismatch(at, _show(first.cmd), why)  # encoded only for a mismatch

    if first.cmd is None:
        return fail("no command is recorded for this batch, so no rule produced it")
    for k, rec in enumerate(batch[1:], 1):
        if rec.cmd is not None:
            return fail("a command recorded inside a batch", line + k)
        if rec.ts != first.ts:
            return fail("a batch's records carry different times", line + k)
    try:
        command = cmd.command_from_data(first.cmd)
    except msgspec.ValidationError as exc:
        return fail(f"the command cannot be read ({exc})")
    if command.now != first.ts:
        return fail(f"the batch is dated {first.ts} but its command was given at {command.now}")
    decided = decide_and_fold(state, command)
    if isinstance(decided, Refusal):
        if decided.code == "too_early":
            return fail(f"a clock command dated before its deadline: {decided.message}")
        return fail(f"the rules refuse this command ({decided.code}: {decided.message})")
    events, after = decided
    for k in range(max(len(events), len(batch))):
        want = events[k] if k < len(events) else None
        rec = batch[k] if k < len(batch) else None
        if rec is None:
            assert want is not None
            shown_want = _event_text((event_type(want), event_data(want)))
            return fail(f"the rules also produce {shown_want}, which is not logged")
        if want is None:
            return fail(f"the rules produce no {rec.type} here", line + k)
        if not _same_event(rec, want):
            shown_want = _event_text((event_type(want), event_data(want)))
            return fail(f"the rules produce {shown_want} instead", line + k)
    return after, None


def _same_event(rec: LogRecord, want: Event) -> bool:
    """The record is the event: same type, same fields (a field the record leaves out has its
    default, so logs written before a field was added still compare), and nothing else."""
    if rec.type != event_type(want):
        return False
    try:
        got = event_from_record(rec.type, rec.data)
    except msgspec.ValidationError:
        return False
    return got == want and set(rec.data) <= set(type(want).__struct_fields__)
