"""The game's events: the only facts the log holds.

Every accepted action becomes one or more of these; a game's state is nothing but their fold
(``server.rules.evolve``). They are plain data, so the same types serve the log, the replay tool
and the tests. Deadlines are absolute unix times so they survive a restart.
"""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

import msgspec

from conjure.protocol.deck import Card
from conjure.protocol.structs import FrozenStruct, struct_tag

#: Version 2: events carry every consequence the rules work out (who votes on a proposal, whose
#: commitment a skip drops, the reasons behind every point), and the log records, beside each batch,
#: the command that produced it, so an audit re-decides every move (docs/LOG.md). Version 1 logs
#: are still audited, by folding, not re-deciding (server.rules.legacy).
#: Version 3 (docs/RULES.md, "Rules versions"): everyone matching needs the conjurer's word (P1),
#: a word made of the round's spell words joined is invalid (C1), and a proposal made as the
#: review's time runs out gives its voters time to vote (V7).
RULES_VERSION = 3
#: Rules versions this engine can audit.
AUDITABLE_RULES = (1, 2, 3)
#: Rules versions whose logs record the commands: each batch is decided again, by the rules of
#: its own version, and an unfinished game of one plays on by them after a restart.
DECIDED_RULES = (2, 3)
#: The seconds a proposal's voters have at least, in rules version 3 on (V7).
VOTE_TIME = 20.0

Variant = Literal["standard", "dark-magic"]
Phase = Literal["choose", "dark-commit", "spell", "mark", "commit", "reveal", "review", "over"]
Rule = Literal["noun", "no-adjectives", "category", "written-word"]

#: The four summoning rules a word can be challenged under, with the sentence the table reads.
RULE_TEXT: dict[str, str] = {
    "noun": "must be a noun",
    "no-adjectives": "must be a thing without adjectives or describing words",
    "category": "must fit the category",
    "written-word": "cannot be or contain a written word",
}


def already_challenged(word: str, rule: str, proposal_id: int) -> str:
    """A challenge made again (V5), said with what to do instead: by the rules engine, and by
    the client before it sends one (it said "That word has already been challenged so.")."""
    return (
        f"'{word}' is already challenged as one that {RULE_TEXT.get(rule, rule)}: proposal "
        f"{proposal_id + 1}; vote on it instead."
    )


def is_rule(name: str) -> TypeGuard[Rule]:
    """Whether ``name`` is one of the summoning rules (a command or message carries a plain str)."""
    return name in RULE_TEXT


#: How a round ended (``RoundScored.case``, RULES P1-P4, or a void round), as the table reads it:
#: the feed and the terminal client both name a case by these words.
CASE_TEXT: dict[str, str] = {
    "everyone": "everyone summoned the same thing",
    "conjured": "the conjurer was matched",  # (a newcomer read the bare "conjured" as jargon)
    "missed-conjurer": "matches, but none with the conjurer",
    "failed": "the conjuration failed",
    "void": "the round was void",
}

COLOURS: tuple[str, ...] = ("red", "blue", "green", "yellow", "purple", "orange", "cyan", "pink")


class Limits(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Seconds allowed per phase (per turn for spell words); None switches the clock off."""

    choose: float | None = 90.0
    spell: float | None = 60.0
    mark: float | None = 90.0
    commit: float | None = 120.0
    reveal: float | None = 30.0
    review: float | None = 120.0


class PlayerInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A seat as the log knows it; only a hash of the seat's secret token is ever stored."""

    seat: int
    id: str
    name: str
    colour: str
    token_hash: str


class DealRecord(msgspec.Struct, frozen=True, kw_only=True):
    """How the cards were dealt (protocol.deal): the deck, the server's committed seed, and each
    seat's contribution (a seat missing here sent none in time)."""

    commitment: str
    server_seed: str
    contributions: dict[int, str]
    deck: tuple[Card, ...]


class GameSetup(FrozenStruct):
    """What a game is set up with, declared once: the command that starts a game carries it
    (``StartGame.setup``), ``game_started`` records it (its fields at the top of the record,
    beside ``rules_version``) and the game's state keeps it (``Game.setup``)."""

    game_id: str
    room: str
    variant: Variant
    players: tuple[PlayerInfo, ...]
    host: int
    cards: tuple[Card, ...]
    limits: Limits
    #: Room settings a restarted server needs; a room password itself is never logged.
    deck: str = "default"
    spectators: bool = True
    private: bool = False
    #: Fingerprint of the word data the rules compared words with (protocol.words); "" in v1 logs.
    words: str = ""
    #: House rules the host chose (protocol.house names, sorted): the game is scored by them.
    house_rules: tuple[str, ...] = ()
    #: The seeded deal the cards came from (None: the cards were given, as in tests and v1).
    deal: DealRecord | None = None
    #: The log's record format (server.logformat.LOG_FORMAT): 2 from the logs whose batches carry
    #: their commands; 1 before.
    log_format: int = 1


class Event(FrozenStruct, tag_field="type"):
    """Base of every event; ``type`` is the tag."""


class GameStarted(Event, GameSetup, tag="game_started", kw_only=True):
    rules_version: int

    @classmethod
    def of(cls, setup: GameSetup, rules_version: int) -> GameStarted:
        """The event that records ``setup``, played by rules ``rules_version``."""
        return cls(**msgspec.structs.asdict(setup), rules_version=rules_version)

    @property
    def setup(self) -> GameSetup:
        """The setup this event records (without the rules version)."""
        return GameSetup(**{f: getattr(self, f) for f in GameSetup.__struct_fields__})


class RoundStarted(Event, tag="round_started"):
    round: int
    conjurer: int


class PhaseStarted(Event, tag="phase_started"):
    round: int
    phase: Phase
    turn: int | None = None
    deadline: float | None = None


class CardChosen(Event, tag="card_chosen"):
    round: int
    seat: int
    card: int


class SpellWritten(Event, tag="spell_written"):
    round: int
    seat: int
    word: str


class TurnPassed(Event, tag="turn_passed"):
    round: int
    seat: int
    reason: str


class BoardsMarked(Event, tag="boards_marked"):
    round: int
    seat: int
    boards: tuple[int, ...]


class Committed(Event, tag="committed"):
    round: int
    seat: int
    commitment: str
    replaced: bool = False


class Revealed(Event, tag="revealed"):
    round: int
    seat: int
    word: str
    nonce: str


class SummonsPublished(Event, tag="summons_published"):
    """Every revealed word at once; ``unrevealed`` committed but never revealed."""

    round: int
    words: dict[int, str]
    unrevealed: tuple[int, ...] = ()


class ProposalMade(Event, tag="proposal_made"):
    """``voters``: who votes on it (V1: not the writers of the words in question); ``reopened``:
    who had said done and must look again (both None in rules version 1 logs)."""

    round: int
    proposal: int
    by: int
    kind: Literal["challenge", "same"]
    seats: tuple[int, ...]
    rule: Rule | None = None
    voters: tuple[int, ...] | None = None
    reopened: tuple[int, ...] | None = None


class ReviewExtended(Event, tag="review_extended"):
    """V7 (rules version 3 on): proposal ``proposal`` came with less than ``VOTE_TIME`` left of
    the review, whose deadline moves to ``deadline`` so that its voters can vote."""

    round: int
    proposal: int
    deadline: float


class VoteCast(Event, tag="vote_cast"):
    round: int
    proposal: int
    seat: int
    yes: bool
    reason: str = ""


class ProposalSettled(Event, tag="proposal_settled"):
    round: int
    proposal: int
    carried: bool
    yes: int
    no: int


class PlayerDone(Event, tag="player_done"):
    round: int
    seat: int


class Point(msgspec.Struct, frozen=True, kw_only=True):
    """One line of a seat's score for a round: the points, why, and the ruling it rests on."""

    points: int
    why: str
    rule: str


class RoundScored(Event, tag="round_scored"):
    """``reasons`` explains every point (None in rules version 1 logs)."""

    round: int
    case: str
    points: dict[int, int]
    invalid: dict[int, str] = {}  # noqa: RUF012 (a struct field: msgspec copies the default)
    reasons: dict[int, tuple[Point, ...]] | None = None


class RoundVoided(Event, tag="round_voided"):
    round: int
    reason: str


class PlayerSkipped(Event, tag="player_skipped"):
    """``dropped``: the seat's unopened commitment leaves the round (A1; None in v1 logs)."""

    round: int
    seat: int
    by: int | None = None
    dropped: bool | None = None


class PlayerKicked(Event, tag="player_kicked"):
    seat: int
    by: int
    dropped: bool | None = None


class PresenceChanged(Event, tag="presence_changed"):
    """A seat's connection went (``connected`` false) or came back: the room's word, logged so an
    organizer can settle "I was disconnected when the clock ran out"."""

    seat: int
    connected: bool


class HostChanged(Event, tag="host_changed"):
    seat: int
    reason: str


#: Why the host role passed (``HostChanged.reason``): the host left the table, which counts in
#: their budget of comings and goings; or the host was away for the server's grace, which does
#: not (server/room.py, and the audit that counts the budget: server/audit_verify.py).
HOST_LEFT = "the host left"
HOST_AWAY = "the host was away"


class GamePaused(Event, tag="game_paused"):
    by: int
    remaining: float | None = None


class GameResumed(Event, tag="game_resumed"):
    by: int
    deadline: float | None = None


class GameEnded(Event, tag="game_ended"):
    totals: dict[int, int]
    winners: tuple[int, ...]


class GameAbandoned(Event, tag="game_abandoned"):
    """Nobody was connected for the server's abandon time (docs/RULES.md A7): the game ends here.

    No winner; the scores stand as recorded and ``round`` (left in ``phase``) is never scored.
    Connections are not in the log, so ``idle_since`` is the room's word for when the last
    player's connection went; ``at`` is when the game was abandoned.
    """

    round: int
    phase: Phase
    idle_since: float
    at: float
    totals: dict[int, int]


AnyEvent = (
    GameStarted
    | RoundStarted
    | PhaseStarted
    | CardChosen
    | SpellWritten
    | TurnPassed
    | BoardsMarked
    | Committed
    | Revealed
    | SummonsPublished
    | ProposalMade
    | ReviewExtended
    | VoteCast
    | ProposalSettled
    | PlayerDone
    | RoundScored
    | RoundVoided
    | PlayerSkipped
    | PlayerKicked
    | PresenceChanged
    | HostChanged
    | GamePaused
    | GameResumed
    | GameEnded
    | GameAbandoned
)

#: The events that finish a game: nothing follows them, its log is closed and never resumed.
FINAL_EVENTS: tuple[type[Event], ...] = (GameEnded, GameAbandoned)
#: The record types a game's log ends with.
FINAL_TYPES: frozenset[str] = frozenset(struct_tag(cls) for cls in FINAL_EVENTS)

EVENT_TYPES: dict[str, type[Event]] = {struct_tag(cls): cls for cls in get_args(AnyEvent)}


def event_type(event: Event) -> str:
    """The tag an event is logged under."""
    return struct_tag(type(event))


def event_data(event: Event) -> dict:
    """An event's fields as plain JSON-ready data, without the tag (the log stores it apart)."""
    # A JSON round trip, so the data is exactly what a reader of the log will see (string keys).
    data = msgspec.json.decode(msgspec.json.encode(event))
    data.pop("type", None)
    return data


def event_from_record(type_: str, data: dict) -> Event:
    """Rebuild an event from a log record; raises msgspec.ValidationError for an unknown shape."""
    cls = EVENT_TYPES.get(type_)
    if cls is None:
        raise msgspec.ValidationError(f"unknown event type {type_!r}")
    return msgspec.convert(data, cls, strict=False)
