"""Real game logs for the audit tests: scripted games on the real engine, written by the real LogWriter.

``sample_game()`` plays four rounds covering what ``conjure replay`` has to explain: a replaced
commitment, an automatic invalid word (C1), a "same thing" proposal that carries and a challenge
that fails (with reasons), a pause, a void round, and a commitment never revealed (C6).
``write_log`` writes one ``append_many`` per decision (one batch), with the decision's time and
the command that produced it, as the server does (rules version 2).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from conjure.protocol.events import Event, event_data, event_type
from conjure.server.logformat import LogRecord
from conjure.server.logstore import open_for_append
from conjure.server.rules import commands as c
from tests.rulestable import Table

START = 1767225600.0  # 2026-01-01 00:00:00 UTC
STEP = 2.5  # seconds between two decisions of the scripted players

SAMPLE_CARDS = (("Vehicle", 2), ("Animal", 1), ("Fruit", 1), ("Tool", 3))

#: What the sample game scores, worked by hand from docs/RULES.md.
SAMPLE_CASES = {1: "conjured", 2: "conjured", 3: "void", 4: "missed-conjurer"}
SAMPLE_SCORES = {
    # Ann conjures; Bob matches (2 stars), both boards hold crystals; Cy's word contains "sky".
    1: {"Ann": 3, "Bob": 3, "Cy": -3, "Dee": 0},
    # Bob conjures; Ann matches, Dee's "big cat" is ruled the same as "lion"; Bob and Ann marked.
    2: {"Ann": 2, "Bob": 3, "Cy": 0, "Dee": 1},
    3: {},
    # Dee conjures but never reveals; Ann and Bob match each other (3 stars).
    4: {"Ann": 6, "Bob": 6, "Cy": 0, "Dee": -3},
}
SAMPLE_TOTALS = {"Ann": 11, "Bob": 12, "Cy": -3, "Dee": -2}


class Decision(tuple):
    """``(ts, events)``, as it unpacks, with the command that produced them as ``.command``."""

    command: c.AnyCommand | None

    def __new__(cls, ts: float, events: list[Any], command: c.AnyCommand | None) -> Decision:
        self = super().__new__(cls, (ts, events))
        self.command = command
        return self


class RecordingTable(Table):
    """A Table that keeps each decision's events apart, with its time, and lets time pass."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.decisions: list[Decision] = []
        kwargs.setdefault("now", START)
        super().__init__(*args, **kwargs)

    def run(self, command: c.AnyCommand) -> list[Event]:
        if isinstance(command, c.Tick) and command.deadline is None and self.state is not None:
            # The room records the deadline a tick acts on; so does this table.
            command = c.Tick(now=command.now, deadline=self.state.deadline)
        out = super().run(command)
        if out:
            self.decisions.append(Decision(command.now, out, command))
        self.now = max(self.now, command.now) + STEP
        return out


def round_one_then_animal() -> RecordingTable:
    """Round 1 of the sample game played through, and round 2's Animal chosen (the start of
    the abandoned games of tests/test_abandon.py and tests/test_audit_trust.py)."""
    t = RecordingTable(4, cards=SAMPLE_CARDS)
    t.choose("Vehicle")
    t.spell_by({"Ann": "wing", "Bob": "engine", "Cy": "sky", "Dee": "wheel"})
    t.mark("Ann", "Bob")
    t.summon({"Ann": "airplane", "Bob": "airplanes", "Cy": "sky diver", "Dee": "jet"})
    t.done()
    t.choose("Animal")
    return t


def sample_game(round1_spell: str = "wing") -> RecordingTable:
    """The scripted four-player game (``round1_spell`` changes history for the receipt tests)."""
    t = RecordingTable(4, cards=SAMPLE_CARDS)
    # Round 1: Ann conjures a Vehicle (2 stars).
    t.choose("Vehicle")
    t.spell_by({"Ann": round1_spell, "Bob": "engine", "Cy": "sky", "Dee": "wheel"})
    t.mark("Ann", "Bob")
    t.commit("Ann", "airplane")
    t.commit("Bob", "car")
    t.commit("Bob", "airplanes")  # replaced while the summon is open
    t.commit("Cy", "sky diver")
    t.commit("Dee", "jet")
    for name, word in (("Ann", "airplane"), ("Bob", "airplanes"), ("Cy", "sky diver")):
        t.reveal(name, word)
    t.reveal("Dee", "jet")
    t.done()
    # Round 2: Bob conjures an Animal (1 star); a pause, a proposal that carries, one that fails.
    t.choose("Animal")
    t.spell_by({"Bob": "mane", "Cy": "savanna", "Dee": "roar", "Ann": "stripes"})
    t.run(c.Pause(now=t.now, seat=0))
    t.run(c.Resume(now=t.now, seat=0))
    t.mark("Bob", "Ann")
    t.summon({"Ann": "lion", "Bob": "lion", "Cy": "zebra", "Dee": "big cat"})
    t.run(c.ProposeSame(now=t.now, seat=3, a=3, b=1))  # Dee: "big cat" = "lion"
    t.run(c.Vote(now=t.now, seat=2, proposal=0, yes=True, reason="a lion is a big cat"))
    t.run(c.Challenge(now=t.now, seat=0, target=2, rule="noun"))  # Ann challenges "zebra"
    t.run(c.Vote(now=t.now, seat=1, proposal=1, yes=False, reason="zebra is a noun"))
    t.run(c.Vote(now=t.now, seat=3, proposal=1, yes=False))
    t.done()
    # Round 3: Cy lets the choosing time run out: the round is void.
    t.timeout()
    # Round 4: Dee conjures a Tool (3 stars) and never reveals.
    t.choose("Tool")
    t.spell_by({"Dee": "nail", "Ann": "wood", "Bob": "handle", "Cy": "steel"})
    t.mark("Dee", "Ann")
    for name, word in (("Ann", "hammer"), ("Bob", "hammers"), ("Cy", "saw"), ("Dee", "screw")):
        t.commit(name, word)
    for name, word in (("Ann", "hammer"), ("Bob", "hammers"), ("Cy", "saw")):
        t.reveal(name, word)
    t.timeout()  # Dee's reveal never comes
    t.done()
    assert t.g.over, t.g.phase
    return t


def dark_game(game_id: str = "game-1") -> RecordingTable:
    """Three players, Dark Magic, one flagged word; every round scored."""
    t = RecordingTable(3, variant="dark-magic", cards=SAMPLE_CARDS[:3], game_id=game_id)
    t.play_round(
        "Vehicle",
        {"Bob": "ship", "Cy": "star"},
        ("Bob", "Cy"),
        {"Bob": "spaceship", "Cy": "rocket"},
        dark_word="spaceship",
    )
    t.play_round(
        "Animal",
        {"Cy": "stripes", "Ann": "horse"},
        ("Cy",),
        {"Ann": "zebra", "Cy": "zebra"},
        dark_word="tiger",
    )
    t.play_round(
        "Fruit",
        {"Ann": "yellow", "Bob": "monkey"},
        ("Ann", "Bob"),
        {"Ann": "banana", "Bob": "kiwi"},
        dark_word="banana",
    )
    assert t.g.over
    return t


Edit = Callable[[str, dict[str, Any]], dict[str, Any]]
Batch = tuple[float, list[tuple[str, dict[str, Any]]]]


def write_records(path: Path, batches: list[Batch]) -> list[LogRecord]:
    """Write raw ``(ts, [(type, data), ...])`` batches with the real LogWriter (a batch from
    ``as_batches`` carries its command along, and it is written with the batch)."""

    async def main() -> list[LogRecord]:
        records: list[LogRecord] = []
        with open_for_append(path) as writer:
            for batch in batches:
                ts, items = batch
                command = getattr(batch, "command", None)
                records.extend(await writer.append_many(items, ts, command=command))
        return records

    return trio.run(main)


def as_batches(decisions: list[tuple[float, list[Event]]], edit: Edit | None = None) -> list[Batch]:
    """The engine's decisions as log batches; ``edit`` may change an event's data first."""
    out: list[Batch] = []
    for decision in decisions:
        ts, events = decision
        items = []
        for e in events:
            type_, data = event_type(e), event_data(e)
            items.append((type_, edit(type_, data) if edit is not None else data))
        command = getattr(decision, "command", None)
        out.append(Decision(ts, items, None if command is None else c.command_data(command)))  # type: ignore[arg-type]
    return out


def write_log(
    path: Path, decisions: list[tuple[float, list[Event]]], edit: Edit | None = None
) -> list[LogRecord]:
    """Write the decisions as a real log (one batch each); ``edit`` may change an event's data
    before it is written (a lying server: the chain is still valid)."""
    return write_records(path, as_batches(decisions, edit))
