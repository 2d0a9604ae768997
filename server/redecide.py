"""Re-decide a log: run every logged command through the rules and demand the logged events.

A log of rules version 2 holds, on the first record of every batch, the command that produced the
batch (``LogRecord.cmd``). Folding the events alone would accept any events the engine can apply;
deciding each command again accepts only the events the rules produce from it, in that state, at
that time. The server's recovery and ``conjure replay`` both use this. Pure (no I/O): it reads
records already verified by ``server.logformat.read_log``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from conjure.protocol.errors import Refusal
from conjure.protocol.events import EVENT_TYPES, Event, event_data, event_from_record, event_type
from conjure.server.logformat import LogRecord
from conjure.server.rules import commands as cmd
from conjure.server.rules.decide import decide_and_trace
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


#: Told each record of a batch that matched, in order, with its event (read from the log) and
#: the state after it, so a caller checks the events without folding them a second time.
Matched = Callable[[LogRecord, Event, Game], object]


def _show(command: dict[str, Any] | None) -> str:
    return "" if command is None else msgspec.json.encode(command).decode()


def _event_text(item: tuple[str, dict[str, Any]]) -> str:
    return f"{item[0]} {msgspec.json.encode(item[1]).decode()}"


def redecide(records: Sequence[LogRecord], *, each: Matched | None = None) -> Redecided:
    """Decide every batch of ``records`` again; stops at the first difference."""
    state: Game | None = None
    i = batches = 0
    while i < len(records):
        end = i + records[i].batch + 1
        batch = records[i:end] if isinstance(records, list) else list(records[i:end])
        after, mismatch, traced = _batch(state, batch, i + 1)
        if mismatch is not None:
            return Redecided(state, batches, mismatch)
        if each is not None:
            for rec, (event, reached) in zip(batch, traced, strict=True):
                each(rec, event, reached)
        state = after
        batches += 1
        i += len(batch)
    return Redecided(state, batches, None)


def _batch(
    state: Game | None, batch: list[LogRecord], line: int
) -> tuple[Game | None, Mismatch | None, list[tuple[Event, Game]]]:
    """The state after one batch and its records' events with the state after each, or where
    the batch differs from what the rules decide."""
    first = batch[0]
    if first.cmd is None:
        return _fail(
            state, first, line, "no command is recorded for this batch, so no rule produced it"
        )
    if len(batch) > 1:
        for k, rec in enumerate(batch[1:], 1):
            if rec.cmd is not None:
                return _fail(state, first, line + k, "a command recorded inside a batch")
            if rec.ts != first.ts:
                return _fail(state, first, line + k, "a batch's records carry different times")
    try:
        command = cmd.command_from_data(first.cmd)
    except msgspec.ValidationError as exc:
        return _fail(state, first, line, f"the command cannot be read ({exc})")
    if command.now != first.ts:
        why = f"the batch is dated {first.ts} but its command was given at {command.now}"
        return _fail(state, first, line, why)
    decided = decide_and_trace(state, command)
    if isinstance(decided, Refusal):
        if decided.code == "too_early":
            why = f"a clock command dated before its deadline: {decided.message}"
        else:
            why = f"the rules refuse this command ({decided.code}: {decided.message})"
        return _fail(state, first, line, why)
    events, states = decided
    traced: list[tuple[Event, Game]] = []
    for k, (rec, want) in enumerate(zip(batch, events, strict=False)):  # lengths: below
        got = _logged_event(rec, want)
        if got is None:
            shown_want = _event_text((event_type(want), event_data(want)))
            return _fail(state, first, line + k, f"the rules produce {shown_want} instead")
        traced.append((got, states[k]))
    if len(events) > len(batch):
        want = events[len(batch)]
        shown_want = _event_text((event_type(want), event_data(want)))
        return _fail(
            state, first, line, f"the rules also produce {shown_want}, which is not logged"
        )
    if len(batch) > len(events):
        why = f"the rules produce no {batch[len(events)].type} here"
        return _fail(state, first, line + len(events), why)
    return (states[-1] if states else state), None, traced


def _fail(
    state: Game | None, first: LogRecord, at: int, why: str
) -> tuple[Game | None, Mismatch, list[tuple[Event, Game]]]:
    return state, Mismatch(at, _show(first.cmd), why), []  # encoded only for a mismatch


def _logged_event(rec: LogRecord, want: Event) -> Event | None:
    """The record's event when it is ``want``: same type, same fields (a field the record leaves
    out has its default, so logs written before a field was added still compare), and nothing
    else; None when it is not."""
    if EVENT_TYPES.get(rec.type) is not type(want):  # tags and types match one to one
        return None
    try:
        got = event_from_record(rec.type, rec.data)
    except msgspec.ValidationError:
        return None
    if got == want and rec.data.keys() <= _FIELDS[type(want)]:
        return got
    return None


#: Each event type's field names: a logged record may carry no others.
_FIELDS: dict[type[Event], frozenset[str]] = {
    kind: frozenset(kind.__struct_fields__) for kind in EVENT_TYPES.values()
}
