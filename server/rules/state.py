"""The state of one game: nothing but the fold of its events (see ``evolve``).

Plain dataclasses; ``evolve`` never changes a state it is given, it returns a copy that shares
every part the event left alone, so no code may change a state's parts (sets, dicts, lists,
proposals) in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conjure.protocol.events import GameSetup, Phase, Point


@dataclass
class Proposal:
    """A challenge of a word or a claim that two words name the same thing, and its vote."""

    id: int
    kind: str  # "challenge" | "same"
    by: int
    seats: tuple[int, ...]  # challenge: the word's writer; same: one writer of each word
    rule: str | None
    voters: frozenset[int]  # the players it does not concern
    votes: dict[int, bool] = field(default_factory=dict)
    reasons: dict[int, str] = field(default_factory=dict)
    carried: bool | None = None  # None while open

    @property
    def open(self) -> bool:
        return self.carried is None


@dataclass
class RoundResultRecord:
    """What the log recorded for a finished round."""

    round: int
    conjurer: int
    card: int | None
    case: str  # one of the four cases, or "void"
    points: dict[int, int]
    invalid: dict[int, str] = field(default_factory=dict)
    reason: str = ""
    #: Every point's reason (from the RoundScored event), and the summoning words published.
    reasons: dict[int, tuple[Point, ...]] = field(default_factory=dict)
    words: dict[int, str] = field(default_factory=dict)


@dataclass
class Round:
    number: int
    conjurer: int
    card: int | None = None
    spells: dict[int, str] = field(default_factory=dict)
    passed: set[int] = field(default_factory=set)
    skipped: set[int] = field(default_factory=set)
    marked: tuple[int, ...] | None = None
    commits: dict[int, str] = field(default_factory=dict)
    reveals: dict[int, tuple[str, str]] = field(default_factory=dict)
    published: dict[int, str] | None = None
    unrevealed: tuple[int, ...] = ()
    proposals: list[Proposal] = field(default_factory=list)
    done: set[int] = field(default_factory=set)


@dataclass
class Game:
    #: What the game was set up with (players, cards, limits, variant, house rules ...).
    setup: GameSetup
    rules_version: int
    #: The seat that hosts now: ``setup.host`` at first, then each host_changed.
    host: int
    kicked: set[int] = field(default_factory=set)
    #: Seats whose connection the room reported gone (PresenceChanged); the rules ignore it.
    away: set[int] = field(default_factory=set)
    used: set[int] = field(default_factory=set)
    totals: dict[int, int] = field(default_factory=dict)
    round: Round | None = None
    results: list[RoundResultRecord] = field(default_factory=list)
    phase: Phase = "choose"
    turn: int | None = None
    deadline: float | None = None
    paused: bool = False
    paused_remaining: float | None = None
    winners: tuple[int, ...] = ()
    abandoned: bool = False  # over because nobody was connected (A7): no winners

    @property
    def seats(self) -> range:
        return range(len(self.setup.players))

    @property
    def over(self) -> bool:
        return self.phase == "over"

    @property
    def clock_deadline(self) -> float | None:
        """The deadline the clock acts on (A3): none once the game is over or while paused."""
        return None if self.over or self.paused else self.deadline

    def name(self, seat: int) -> str:
        return self.setup.players[seat].name

    def active(self, seat: int) -> bool:
        """Still expected to act this round: not kicked, not skipped."""
        r = self.round
        return seat not in self.kicked and (r is None or seat not in r.skipped)

    def active_seats(self) -> list[int]:
        # active() for every seat with its two look-ups inlined: most commands ask this
        kicked = self.kicked
        skipped = () if self.round is None else self.round.skipped
        return [s for s in self.seats if s not in kicked and s not in skipped]

    def spell_order(self) -> list[int]:
        """Seat order starting with the conjurer (standard) or just after them (dark magic)."""
        assert self.round is not None
        n = len(self.setup.players)
        c = self.round.conjurer
        order = [(c + i) % n for i in range(n)]
        if self.setup.variant == "dark-magic":
            order = order[1:]
        return order

    def summoners(self) -> list[int]:
        """Who writes a summoning word in the commit phase (dark magic: the conjurer already did)."""
        assert self.round is not None
        seats = self.active_seats()
        if self.setup.variant == "dark-magic":
            seats = [s for s in seats if s != self.round.conjurer]
        return seats

    def remaining_cards(self) -> list[int]:
        return [i for i in range(len(self.setup.cards)) if i not in self.used]
