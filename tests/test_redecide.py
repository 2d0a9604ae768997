"""The audit re-decides every move: forged logs with valid hash chains are caught, the line named.

Every forged log here chains correctly (the real LogWriter writes it), so only deciding each
recorded command again can tell it from a real game. Each is reported NOT VERIFIED by
``conjure replay`` naming the line, and a server finds it in replays/ and refuses to resume it.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conjure.client.cli import main
from conjure.protocol.deck import Card
from conjure.protocol.words import MAX_WORD_LENGTH
from conjure.server.logformat import GENESIS, build_record, read_log
from conjure.server.redecide import redecide
from conjure.server.rules import Refusal, decide, fold
from conjure.server.rules import commands as c
from tests.auditlogs import as_batches, sample_game, write_records
from tests.rulestable import DEFAULT_CARDS, start_command
from tests.test_rules_properties import command_for

Batches = list[Any]


def sample_batches() -> Batches:
    return as_batches(sample_game().decisions)


def first(batches: Batches, kind: str, **fields: Any) -> int:
    """Index of the first batch whose command is ``kind`` with these fields."""
    for i, b in enumerate(batches):
        cmd = b.command
        if cmd["kind"] == kind and all(cmd.get(k) == v for k, v in fields.items()):
            return i
    raise AssertionError(f"no {kind} {fields}")


def line_of(batches: Batches, index: int) -> int:
    """1-based line of batch ``index``'s first record."""
    return 1 + sum(len(b[1]) for b in batches[:index])


def rebatch(b: Any, *, ts: float | None = None, items: Any = None, command: Any = None) -> Any:
    """A copy of batch ``b`` with parts replaced (a Decision keeps its command alongside)."""
    return type(b)(
        b[0] if ts is None else ts,
        copy.deepcopy(list(b[1])) if items is None else items,
        copy.deepcopy(b.command) if command is None else command,
    )


def spell_by(batches: Batches, i: int, seat: int, word: str | None = None) -> Any:
    """Batch ``i`` (a write_spell) as if ``seat`` had written it (and ``word``)."""
    b = batches[i]
    cmd = {**b.command, "seat": seat}
    items = copy.deepcopy(b[1])
    items[0][1]["seat"] = seat
    if word is not None:
        cmd["word"] = word
        items[0][1]["word"] = word
    return rebatch(b, items=items, command=cmd)


def forge_seat_not_at_table(batches: Batches) -> tuple[Batches, int]:
    i = first(batches, "write_spell", seat=1)
    return [*batches[:i], spell_by(batches, i, 7), *batches[i + 1 :]], line_of(batches, i)


def forge_out_of_turn(batches: Batches) -> tuple[Batches, int]:
    i = first(batches, "write_spell", seat=1)
    return [*batches[:i], spell_by(batches, i, 3), *batches[i + 1 :]], line_of(batches, i)


def forge_out_of_phase(batches: Batches) -> tuple[Batches, int]:
    i = first(batches, "write_spell", seat=1)
    b = batches[i]
    vote = {"kind": "vote", "seat": 2, "proposal": 0, "yes": True, "reason": "", "now": b[0]}
    items = [("vote_cast", {"round": 1, "proposal": 0, "seat": 2, "yes": True, "reason": ""})]
    extra = rebatch(b, items=items, command=vote)
    return [*batches[:i], extra, *batches[i:]], line_of(batches, i)


def forge_same_event_twice(batches: Batches) -> tuple[Batches, int]:
    i = first(batches, "write_spell", seat=1)
    return [*batches[: i + 1], batches[i], *batches[i + 1 :]], line_of(batches, i + 1)


def forge_event_no_command_produces(batches: Batches) -> tuple[Batches, int]:
    i = first(batches, "write_spell", seat=1)
    b = batches[i]
    bonus = ("round_scored", {"round": 1, "case": "conjured", "points": {"1": 50}, "invalid": {}})
    items = [*copy.deepcopy(b[1]), bonus]
    return [*batches[:i], rebatch(b, items=items), *batches[i + 1 :]], line_of(batches, i) + len(
        b[1]
    )


def forge_word_over_the_limit(batches: Batches) -> tuple[Batches, int]:
    i = first(batches, "write_spell", seat=1)
    long = "a" * (MAX_WORD_LENGTH + 1)
    return [*batches[:i], spell_by(batches, i, 1, long), *batches[i + 1 :]], line_of(batches, i)


def forge_clock_before_deadline(batches: Batches) -> tuple[Batches, int]:
    i = first(batches, "tick")
    b = batches[i]
    early = b.command["deadline"] - 30.0
    cmd = {**b.command, "now": early}
    items = copy.deepcopy(b[1])
    for _, data in items:  # what a lying server would write: deadlines counted from then
        if data.get("deadline") is not None:
            data["deadline"] -= b[0] - early
    return [*batches[:i], rebatch(b, ts=early, items=items, command=cmd), *batches[i + 1 :]], (
        line_of(batches, i)
    )


def forge_score_the_engine_does_not_give(batches: Batches) -> tuple[Batches, int]:
    for i, b in enumerate(batches):
        for k, (type_, data) in enumerate(b[1]):
            if type_ == "round_scored":
                items = copy.deepcopy(b[1])
                items[k][1]["points"] = {**data["points"], "1": data["points"]["1"] + 5}
                return [*batches[:i], rebatch(b, items=items), *batches[i + 1 :]], (
                    line_of(batches, i) + k
                )
    raise AssertionError("no round_scored")


FORGERIES = {
    "a seat not at the table": forge_seat_not_at_table,
    "out of turn": forge_out_of_turn,
    "out of phase": forge_out_of_phase,
    "the same event twice": forge_same_event_twice,
    "an event no command produces": forge_event_no_command_produces,
    "a word over the limit": forge_word_over_the_limit,
    "a clock event before its deadline": forge_clock_before_deadline,
    "a score the engine does not give": forge_score_the_engine_does_not_give,
}


def unfinished(batches: Batches, upto: int) -> Batches:
    """The log as a server would have it mid-game, a few decisions after ``upto``."""
    end = min(len(batches) - 1, upto + 3)
    return batches[:end]


def test_the_sample_game_is_decided_again_into_exactly_its_log(tmp_path):
    log = tmp_path / "g.jsonl"
    write_records(log, sample_batches())
    records = read_log(log).records
    decided = redecide(records)
    assert decided.mismatch is None
    assert decided.batches == len(sample_batches())
    assert decided.state == sample_game().state


@pytest.mark.parametrize("what", sorted(FORGERIES))
def test_a_forged_log_is_not_verified_and_the_line_is_named(what, tmp_path, capsys):
    batches, line = FORGERIES[what](sample_batches())
    log = tmp_path / "forged.jsonl"
    write_records(log, batches)
    read_log(log)  # the chain is sound: only the rules can tell
    decided = redecide(read_log(log).records)
    assert decided.mismatch is not None, what
    assert decided.mismatch.line == line, (what, decided.mismatch.sentence())
    assert main(["replay", str(log), "--no-state-dir"]) == 1
    out = capsys.readouterr().out
    assert f"FAIL  not what the rules decide at line {line} " in out, out
    assert "NOT VERIFIED" in out
    if what == "a clock event before its deadline":
        assert "a clock command dated before its deadline" in out


@pytest.mark.parametrize("what", sorted(FORGERIES))
async def test_the_server_refuses_to_resume_a_forged_log(what, start_server, tmp_path, said):
    batches, line = FORGERIES[what](sample_batches())
    replays = tmp_path / "replays"
    replays.mkdir()
    log = replays / "forged.jsonl"
    await trio.to_thread.run_sync(
        write_records, log, unfinished(batches, _batch_at_line(batches, line))
    )
    before = log.read_bytes()
    server = await start_server()
    assert not server.rooms
    refused = [x for x in said if x.startswith(f"refused {log}:")]
    assert len(refused) == 1, said
    assert f"line {line}" in refused[0]
    assert log.read_bytes() == before


def _batch_at_line(batches: Batches, line: int) -> int:
    for i in range(len(batches)):
        if line_of(batches, i) <= line < line_of(batches, i + 1):
            return i
    return len(batches) - 1


# ---------------------------------------------------------------------------- any legal game


def random_game(data: st.DataObject, n: int, variant: str) -> list[tuple[float, list, Any]]:
    """A random game the engine accepted, as (ts, events, command) decisions."""
    cards = tuple(Card(text=f"{t}{i}", stars=s) for i, (t, s) in enumerate(DEFAULT_CARDS * 2))
    now = 1000.0
    start = start_command(n, variant, cards, now=now)
    out = decide(None, start)
    assert not isinstance(out, Refusal)
    state = fold(out)
    decisions = [(now, out, start)]
    for _ in range(data.draw(st.integers(10, 120), label="steps")):
        if state.phase == "over":
            break
        now += 1.0
        command = command_for(data, state, now)
        if isinstance(command, c.Tick):  # the room records the deadline a tick acts on
            command = c.Tick(now=command.now, deadline=state.deadline)
        out = decide(state, command)
        if not isinstance(out, Refusal) and out:
            state = fold(out, state)
            decisions.append((command.now, out, command))
    return decisions


def records_of(decisions: list[tuple[float, list, Any]]) -> list:
    from conjure.protocol.events import event_data, event_type

    out = []
    prev, seq = GENESIS, 0
    for ts, events, command in decisions:
        for k, e in enumerate(events):
            cmd = c.command_data(command) if k == 0 else None
            rec = build_record(
                prev, seq, ts, event_type(e), event_data(e), batch=len(events) - 1 - k, cmd=cmd
            )
            out.append(rec)
            prev, seq = rec.hash, seq + 1
    return out


def mutated(records: list, data: st.DataObject) -> list:
    """The same log with one command or one event changed (and the chain made valid again)."""
    i = data.draw(st.integers(0, len(records) - 1), label="record")
    rec = records[i]
    if rec.cmd is not None and data.draw(st.booleans(), label="the command"):
        cmd = dict(rec.cmd)
        if "seat" in cmd and cmd["kind"] not in ("tick",):
            cmd["seat"] = (cmd["seat"] + 1) % 9
        else:
            cmd["now"] = cmd["now"] + 0.5
        fields = {"cmd": cmd, "data": rec.data}
    else:
        dat = dict(rec.data)
        key = data.draw(st.sampled_from(sorted(dat)), label="field")
        value = dat[key]
        dat[key] = (
            value + 1
            if isinstance(value, int) and not isinstance(value, bool)
            else (not value)
            if isinstance(value, bool)
            else f"{value}x"
            if isinstance(value, str)
            else None
            if value is not None
            else 1
        )
        fields = {"cmd": rec.cmd, "data": dat}
    out = list(records[:i])
    prev = out[-1].hash if out else GENESIS
    for j, r in enumerate(records[i:], i):
        cmd, dat = (fields["cmd"], fields["data"]) if j == i else (r.cmd, r.data)
        new = build_record(prev, r.seq, r.ts, r.type, dat, batch=r.batch, cmd=cmd)
        out.append(new)
        prev = new.hash
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(3, 6), variant=st.sampled_from(["standard", "dark-magic"]))
def test_any_legal_game_is_decided_again_exactly_and_any_one_change_is_caught(data, n, variant):
    decisions = random_game(data, n, variant)
    records = records_of(decisions)
    decided = redecide(records)
    assert decided.mismatch is None
    assert decided.batches == len(decisions)
    assert decided.state == fold([e for _, events, _ in decisions for e in events])
    forged = mutated(records, data)
    assert redecide(forged).mismatch is not None


def test_a_log_without_commands_cannot_be_decided_again(tmp_path: Path):
    decisions = [(ts, events) for ts, events in sample_game().decisions]  # no commands kept
    log = tmp_path / "bare.jsonl"
    write_records(log, as_batches(decisions))
    decided = redecide(read_log(log).records)
    assert decided.mismatch is not None and decided.mismatch.line == 1
    assert "no command is recorded" in decided.mismatch.why
