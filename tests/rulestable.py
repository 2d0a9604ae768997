"""A tabletop for the pure engine: seats players, drives commands, keeps the log of events.

Tests read like the rulebook: ``t.spell("freighter", "hydrogen", "rocket", "ocean")``.
"""

from __future__ import annotations

import hashlib

from conjure.protocol.commitment import commitment
from conjure.protocol.deck import Card
from conjure.protocol.events import COLOURS, RULES_VERSION, Event, GameSetup, Limits, PlayerInfo
from conjure.server.rules import Game, Refusal, decide, fold
from conjure.server.rules import commands as c

NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal")
#: The rulebook example's spell words (Vehicle, 2 stars).
ROCKET_SPELLS = {"Ann": "freighter", "Bob": "hydrogen", "Cy": "rocket", "Dee": "ocean"}
DEFAULT_CARDS = (
    ("Vehicle", 2),
    ("Animal", 1),
    ("Fruit", 1),
    ("Tool", 3),
    ("Sport", 2),
    ("Bird", 3),
    ("Job", 1),
    ("Drink", 2),
)


def nonce_for(seat: int, round_: int, word: str) -> bytes:
    """Deterministic nonces keep tests reproducible; real clients use fresh random ones."""
    return hashlib.sha256(f"{seat}/{round_}/{word}".encode()).digest()


def players(n: int) -> tuple[PlayerInfo, ...]:
    return tuple(
        PlayerInfo(seat=i, id=f"p{i}", name=NAMES[i], colour=COLOURS[i], token_hash=f"h{i}")
        for i in range(n)
    )


class RulesError(AssertionError):
    pass


def start_command(
    n: int,
    variant: str = "standard",
    cards: tuple[Card, ...] | None = None,
    *,
    limits: Limits | None = None,
    now: float = 1000.0,
    game_id: str = "g",
    rules_version: int = RULES_VERSION,
) -> c.StartGame:
    """Start a game of ``n`` players (seat 0 hosts) in room ABCD, ``cards`` dealt (by default
    the first ``n`` of DEFAULT_CARDS)."""
    dealt = cards or tuple(Card(text=t, stars=s) for t, s in DEFAULT_CARDS[:n])
    setup = GameSetup(
        game_id=game_id,
        room="ABCD",
        variant=variant,  # type: ignore[arg-type]
        players=players(n),
        host=0,
        cards=dealt[:n],
        limits=limits or Limits(),
    )
    return c.StartGame(now=now, setup=setup, rules_version=rules_version)


class Table:
    def __init__(
        self,
        n: int = 4,
        variant: str = "standard",
        cards: tuple[tuple[str, int], ...] | None = None,
        limits: Limits | None = None,
        now: float = 1000.0,
        game_id: str = "game-1",
        rules_version: int = RULES_VERSION,
    ) -> None:
        self.now = now
        self.state: Game | None = None
        self.events: list[Event] = []
        cards = cards or DEFAULT_CARDS[:n]
        dealt = tuple(Card(text=t, stars=stars) for t, stars in cards)
        self.run(
            start_command(
                n, variant, dealt, limits=limits, now=now, game_id=game_id,
                rules_version=rules_version,
            )
        )  # fmt: skip

    # -- plumbing
    @property
    def g(self) -> Game:
        assert self.state is not None
        return self.state

    def try_(self, command: c.AnyCommand) -> list[Event] | Refusal:
        return decide(self.state, command)

    def run(self, command: c.AnyCommand) -> list[Event]:
        out = decide(self.state, command)
        if isinstance(out, Refusal):
            raise RulesError(f"{out.code}: {out.message}")
        self.events.extend(out)
        self.state = fold(out, self.state)
        return out

    def reject(self, command: c.AnyCommand) -> str:
        out = decide(self.state, command)
        assert isinstance(out, Refusal), f"expected a rejection, got {out}"
        return out.code

    def seat(self, name: str) -> int:
        return NAMES.index(name)

    @property
    def conjurer(self) -> int:
        assert self.g.round is not None
        return self.g.round.conjurer

    @property
    def round(self) -> int:
        assert self.g.round is not None
        return self.g.round.number

    # -- phases
    def choose(self, card: int | str = 0) -> None:
        if isinstance(card, str):
            card = [x.text for x in self.g.setup.cards].index(card)
        self.run(c.ChooseCard(now=self.now, seat=self.conjurer, card=card))

    def spell(self, *words: str | None) -> None:
        """Spell words in turn order; None lets that turn's time run out."""
        for w in words:
            assert self.g.phase == "spell", self.g.phase
            if w is None:
                self.timeout()
            else:
                self.run(c.WriteSpell(now=self.now, seat=self.g.turn, word=w))  # type: ignore[arg-type]

    def spell_by(self, words: dict[str, str]) -> None:
        """Spell words given per player name, written in whatever turn order applies."""
        while self.g.phase == "spell":
            turn = self.g.turn
            assert turn is not None
            self.run(c.WriteSpell(now=self.now, seat=turn, word=words[NAMES[turn]]))

    def mark(self, *names: str) -> None:
        self.run(
            c.MarkBoards(
                now=self.now, seat=self.conjurer, boards=tuple(self.seat(n) for n in names)
            )
        )

    def commit(self, name: str, word: str) -> None:
        s = self.seat(name)
        h = commitment(self.g.setup.game_id, self.round, s, nonce_for(s, self.round, word), word)
        self.run(c.Commit(now=self.now, seat=s, commitment=h))

    def reveal(self, name: str, word: str) -> None:
        s = self.seat(name)
        self.run(
            c.Reveal(now=self.now, seat=s, word=word, nonce=nonce_for(s, self.round, word).hex())
        )

    def summon(self, words: dict[str, str]) -> None:
        """Everyone named commits, then everyone reveals (the Dark Magic conjurer committed earlier)."""
        for name, w in words.items():
            if not (self.g.phase == "reveal" or self.seat(name) in self.g.round.commits):  # type: ignore[union-attr]
                self.commit(name, w)
        if self.g.phase == "commit":
            self.timeout()
        for name, w in words.items():
            if self.g.phase == "reveal":
                self.reveal(name, w)

    def done(self, *names: str) -> None:
        for n in names or [NAMES[s] for s in self.g.active_seats()]:
            if self.g.phase == "review" and self.seat(n) not in self.g.round.done:  # type: ignore[union-attr]
                self.run(c.Done(now=self.now, seat=self.seat(n)))

    def timeout(self) -> None:
        assert self.g.deadline is not None, "this phase has no clock"
        self.now = self.g.deadline + 0.001
        self.run(c.Tick(now=self.now))

    def last_result(self):
        return self.g.results[-1]

    def play_round(
        self,
        card: int | str,
        spells: dict[str, str],
        marks: tuple[str, ...],
        summons: dict[str, str],
        dark_word: str | None = None,
    ) -> None:
        """One whole round without disputes."""
        self.choose(card)
        if dark_word is not None:
            self.commit(NAMES[self.conjurer], dark_word)
        self.spell_by(spells)
        self.mark(*marks)
        words = dict(summons)
        if dark_word is not None:
            words[NAMES[self.conjurer]] = dark_word
        self.summon(words)
        self.done()


def rulebook_example(t: Table) -> None:
    """The rulebook's FREIGHTER / HYDROGEN / ROCKET round on a fresh 4-player table: Ann, Bob
    and Cy get crystals, Cy's "zeppelin" is challenged as not fitting the category (carried
    2-0), Dee's "hydrogen bomb" contains a spell word."""
    t.choose("Vehicle")
    t.spell_by(ROCKET_SPELLS)
    t.mark("Ann", "Bob", "Cy")
    t.summon({"Ann": "spaceship", "Bob": "Spaceships", "Cy": "zeppelin", "Dee": "hydrogen bomb"})
    t.run(c.Challenge(now=t.now, seat=0, target=2, rule="category"))
    t.run(c.Vote(now=t.now, seat=1, proposal=0, yes=True))
    t.run(c.Vote(now=t.now, seat=3, proposal=0, yes=True))
    t.done()
