"""A7: a game nobody is connected to ends as abandoned, and stays ended.

Rules first, played on the pure engine like tests/test_rules.py (the room's ``Abandon`` carries the
time the last player's connection went). Then the same end as the log, the audit, a restart, the
feed, the view and the terminal client see it. The logs are real: scripted games on the engine,
written by the real LogWriter (tests/auditlogs.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from conjure.client import screen
from conjure.client.cli import main
from conjure.protocol import messages as m
from conjure.protocol.errors import Refusal
from conjure.protocol.events import GameAbandoned, event_data, event_from_record, event_type
from conjure.protocol.messages import RoomSettings
from conjure.server import feed
from conjure.server.audit import clock
from conjure.server.recovery import load_replays
from conjure.server.room import to_command
from conjure.server.rules import commands as c
from conjure.server.rules import decide, fold
from conjure.server.views import Table as ViewTable
from conjure.server.views import build_view
from tests.auditlogs import (
    START,
    RecordingTable,
    as_batches,
    round_one_then_animal,
    write_log,
    write_records,
)
from tests.rulestable import Table
from tests.test_client_session import Harness, players, view

HALF_HOUR = 1800.0


def abandon(t: Table, idle: float = HALF_HOUR) -> list[Any]:
    """Nobody has been connected since ``t.now``; the room notices ``idle`` seconds later."""
    since = t.now
    t.now += idle
    return t.run(c.Abandon(now=t.now, idle_since=since))


def round_one(t: Table) -> None:
    """Round 1 of the rulebook example: Ann conjures a Vehicle; Ann 3, Bob 3 (tests/test_rules)."""
    t.play_round(
        "Vehicle",
        {"Ann": "wing", "Bob": "engine", "Cy": "sky"},
        ("Ann", "Bob"),
        {"Ann": "airplane", "Bob": "airplanes", "Cy": "kite"},
    )


# ---------------------------------------------------------------- the rules


def test_A7_a_game_abandoned_mid_round_is_over_keeps_its_scores_and_has_no_winner():
    t = Table(3)
    round_one(t)
    assert t.g.totals == {0: 3, 1: 3, 2: 0}
    # Round 2: Bob chooses and two spell words are in; then everyone's connection goes.
    t.choose("Animal")
    t.spell("mane", "savanna")
    since = t.now
    [e] = abandon(t)
    assert e == GameAbandoned(
        round=2, phase="spell", idle_since=since, at=since + HALF_HOUR, totals={0: 3, 1: 3, 2: 0}
    )
    g = t.g
    assert g.over and g.abandoned and g.phase == "over"
    assert g.winners == ()  # a tie at the top, but nobody wins an abandoned game
    assert g.totals == {0: 3, 1: 3, 2: 0}  # the scores stand as recorded
    assert [r.round for r in g.results] == [1]  # round 2 is never scored
    assert g.deadline is None and g.turn is None
    assert fold(t.events) == g  # the state is still the fold of the events


def test_A7_after_abandonment_every_command_is_refused_as_game_over():
    t = Table(3)
    t.choose("Vehicle")
    abandon(t)
    now = t.now
    for command in (
        c.ChooseCard(now=now, seat=0, card=1),
        c.WriteSpell(now=now, seat=0, word="wing"),
        c.MarkBoards(now=now, seat=0, boards=(0, 1)),
        c.Commit(now=now, seat=1, commitment="0" * 64),
        c.Reveal(now=now, seat=1, word="jet", nonce="0" * 64),
        c.Challenge(now=now, seat=1, target=0, rule="noun"),
        c.ProposeSame(now=now, seat=1, a=0, b=2),
        c.Vote(now=now, seat=1, proposal=0, yes=True),
        c.Done(now=now, seat=1),
        c.Pause(now=now, seat=0),
        c.Resume(now=now, seat=0),
        c.Skip(now=now, seat=0, target=1),
        c.Kick(now=now, seat=0, target=1),
        c.Abandon(now=now, idle_since=now),
    ):
        assert t.reject(command) == "game_over", command
    assert t.try_(c.Tick(now=now + 1e6)) == []  # the clock has nothing left to move


def test_A7_abandon_on_a_finished_game_is_refused():
    t = Table(3)
    round_one(t)
    t.play_round(
        "Animal",
        {"Bob": "mane", "Cy": "savanna", "Ann": "roar"},
        ("Bob", "Ann"),
        {"Ann": "lion", "Bob": "lion", "Cy": "zebra"},
    )
    t.play_round(
        "Fruit",
        {"Cy": "yellow", "Ann": "monkey", "Bob": "peel"},
        ("Cy", "Bob"),
        {"Ann": "mango", "Bob": "kiwi", "Cy": "banana"},
    )
    assert t.g.over and t.g.winners == (0, 1)
    before = t.g
    assert t.reject(c.Abandon(now=t.now + HALF_HOUR, idle_since=t.now)) == "game_over"
    assert t.g is before and not t.g.abandoned and t.g.winners == (0, 1)
    # ... and there is nothing to abandon before a game exists.
    out = decide(None, c.Abandon(now=0.0, idle_since=0.0))
    assert isinstance(out, Refusal) and out.code == "not_started"


def test_A7_a_paused_game_is_abandoned_too():
    t = Table(3)
    t.run(c.Pause(now=t.now, seat=0))
    [e] = abandon(t)
    assert e.phase == "choose"
    assert t.g.over and t.g.abandoned and not t.g.paused and t.g.paused_remaining is None


def _sample(cls: type[m.ClientMsg]) -> m.ClientMsg:
    """One valid message of ``cls``, with a plain value for each required field."""
    plain = {"card": 0, "word": "wing", "boards": [0, 1], "commitment": "0" * 64, "nonce": "0" * 64}
    plain |= {"seed": "0" * 64}
    plain |= {"seat": 1, "rule": "noun", "a": 0, "b": 1, "proposal": 0, "yes": True, "text": "hi"}
    plain |= {"protocol": 1, "name": "Ann", "room": "ABCD", "token": "t" * 32, "order": [0, 1, 2]}
    plain |= {"settings": {}}
    fields = msgspec.structs.fields(cls)
    data = {f.name: plain[f.name] for f in fields if f.required}
    return msgspec.convert(data, cls)


def test_A7_abandonment_is_the_rooms_no_seat_can_send_it():
    assert "seat" not in c.Abandon.__struct_fields__
    for cls in m.AnyClientMsg.__args__:  # type: ignore[attr-defined]
        command = to_command(_sample(cls), 0, START)
        assert not isinstance(command, c.Abandon), cls
    for tag in ("abandon", "game_abandoned"):
        with pytest.raises(msgspec.ValidationError):
            m.client_decoder.decode(json.dumps({"type": tag, "idle_since": 0}))


# ---------------------------------------------------------------- feed, view, client


def test_A7_the_feed_says_what_happened_and_the_view_shows_it():
    t = Table(3)
    round_one(t)
    events = abandon(t)
    assert feed.describe(t.g, events) == [
        "The game was abandoned: nobody was connected for 30 minutes. "
        "Final standings: Ann 3, Bob 3, Cy 0. Nobody wins an abandoned game."
    ]
    table = ViewTable(code="ABCD", settings=RoomSettings(), lobby=None, connected=frozenset())
    v = build_view(table, t.g, None)
    assert (v.phase, v.abandoned, v.winners) == ("over", True, [])
    assert [p.score for p in v.players] == [3, 3, 0]
    assert not build_view(table, Table(3).g, None).abandoned


def test_A7_the_terminal_client_shows_an_abandoned_end(tmp_path):
    h = Harness(tmp_path)
    ps = players(0, Ann={"score": 3}, Bob={"score": 3})
    h.show(view("over", players=ps, abandoned=True))
    text = screen.plain(screen.panel(h.session, 80))
    assert "Final standings (the game was abandoned)" in text
    assert "nobody wins" in text and "★ winner" not in text
    assert h.session.prompt().startswith("Game abandoned.")
    h.show(view("over", players=ps, winners=[0, 1]))
    assert h.session.prompt().startswith("Game over.")


# ---------------------------------------------------------------- the log


def abandoned_log() -> RecordingTable:
    """Round 1 of tests/auditlogs.py's sample game, round 2 up to the summon, then nobody."""
    t = round_one_then_animal()
    t.spell_by({"Bob": "mane", "Cy": "savanna", "Dee": "roar", "Ann": "stripes"})
    t.mark("Bob", "Ann")
    t.commit("Ann", "lion")
    abandon(t)
    assert t.g.abandoned
    return t


def replay(*args: str) -> int:
    return main(["replay", *args, "--no-state-dir"])


def test_A7_an_abandoned_log_verifies_and_explains_the_end(tmp_path, capsys):
    t = abandoned_log()
    path = tmp_path / "game-1.jsonl"
    records = write_log(path, t.decisions)
    assert records[-1].type == "game_abandoned"
    assert replay(str(path), "--events") == 0
    out = capsys.readouterr().out
    assert "=> VERIFIED" in out
    assert "ok    final totals: as the rounds add up; the game was abandoned: no winner (A7)" in out
    assert "the game was abandoned (A7): the log does not record connections" in out
    last = records[-1].seq
    assert (
        f"The game was abandoned at {clock(records[-1].ts, date=True)}" in out
        and "in round 2 (commit phase), after round 1: nobody had been connected since" in out
        and "(30 minutes). Round 2 was never scored; the scores stand as recorded: "
        "Ann 3, Bob 3, Dee 0, Cy -3 (A7)."
        in out
    )
    assert "The game was abandoned during this round (commit phase): it was never scored" in out
    assert "Ann  committed +0:18, not revealed: the game was abandoned in the commit phase" in out
    assert "Winner: nobody: an abandoned game awards no win (A7)." in out
    event_line = next(x for x in out.splitlines() if x.lstrip().startswith(f"{last} "))
    assert "game_abandoned" in event_line and "round 2: abandoned in the commit phase" in event_line
    assert "no winner" in event_line

    assert main(["replay", str(path), "--json", "--no-state-dir"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verified"] and doc["finished"] and doc["winners"] == []
    assert doc["recorded_totals"] == {"Ann": 3, "Bob": 3, "Cy": -3, "Dee": 0}
    assert doc["recorded_winners"] == []
    gone = doc["abandoned"]
    assert (gone["round"], gone["phase"], gone["after_round"]) == (2, "commit", 1)
    assert gone["at"] - gone["idle_since"] == HALF_HOUR


def _rewrite_last(path: Path, t: RecordingTable, **changes: Any) -> None:
    """The same game, but the server's final record says something else (a sound chain)."""

    def edit(type_: str, data: dict[str, Any]) -> dict[str, Any]:
        return {**data, **changes} if type_ == "game_abandoned" else data

    write_records(path, as_batches(t.decisions, edit))


def test_A7_an_abandonment_the_log_contradicts_is_not_verified(tmp_path, capsys):
    t = abandoned_log()
    e = t.events[-1]
    assert isinstance(e, GameAbandoned)
    acted = t.decisions[-2][0]  # Ann's commitment: she was there then
    early = tmp_path / "early.jsonl"
    _rewrite_last(early, t, idle_since=acted - 60)
    assert replay(str(early)) == 1
    out = capsys.readouterr().out
    assert "but committed at line" in out and "is a player acting after that" in out
    lying = tmp_path / "lying.jsonl"
    _rewrite_last(lying, t, totals={"0": 9, "1": 3, "2": -3, "3": 0})
    assert replay(str(lying)) == 1
    assert "final totals: Ann: the log records 9" in capsys.readouterr().out


def test_A7_a_restart_counts_an_abandoned_game_finished_and_does_not_resume_it(tmp_path):
    t = abandoned_log()
    said: list[str] = []
    gone, live = tmp_path / "gone", tmp_path / "live"
    gone.mkdir()
    live.mkdir()
    write_log(gone / "game-1.jsonl", t.decisions)
    write_log(live / "game-1.jsonl", t.decisions[:-1])  # the same game before it was abandoned
    report = load_replays(gone, said.append)
    assert (report.finished, report.resumed, report.refused) == (1, [], [])
    report = load_replays(live, said.append)
    try:
        assert report.finished == 0 and len(report.resumed) == 1
        assert not report.resumed[0].game.over
    finally:
        for r in report.resumed:
            r.writer.close()


def test_A7_the_event_round_trips_through_a_log_record():
    t = Table(3)
    [e] = abandon(t)
    assert event_type(e) == "game_abandoned"
    assert event_from_record("game_abandoned", event_data(e)) == e
