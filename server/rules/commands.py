"""Commands: what someone asks the game to do. Time arrives as data (``now``), never read inside."""

from __future__ import annotations

import msgspec

from protocol.deck import Card
from protocol.events import Limits, PlayerInfo, Variant


class Command(msgspec.Struct, frozen=True, kw_only=True):
    now: float


class StartGame(Command):
    game_id: str
    room: str
    variant: Variant
    players: tuple[PlayerInfo, ...]
    host: int
    cards: tuple[Card, ...]  # already shuffled and dealt: chance arrives as data
    limits: Limits
    deck: str = "default"
    spectators: bool = True
    private: bool = False


class ChooseCard(Command):
    seat: int
    card: int


class WriteSpell(Command):
    seat: int
    word: str


class MarkBoards(Command):
    seat: int
    boards: tuple[int, ...]


class Commit(Command):
    seat: int
    commitment: str


class Reveal(Command):
    seat: int
    word: str
    nonce: str


class Challenge(Command):
    seat: int
    target: int
    rule: str


class ProposeSame(Command):
    seat: int
    a: int
    b: int


class Vote(Command):
    seat: int
    proposal: int
    yes: bool
    reason: str = ""


class Done(Command):
    seat: int


class Tick(Command):
    """The clock: the room sends it when a deadline may have passed."""


class Pause(Command):
    seat: int


class Resume(Command):
    seat: int


class Skip(Command):
    seat: int
    target: int


class Kick(Command):
    seat: int
    target: int


class PassHost(Command):
    """The room hands the host role on (the host left); ``to`` is chosen by the room."""

    to: int
    reason: str


class Abandon(Command):
    """The room's, like Tick (no seat sends it): nobody has been connected since ``idle_since``
    for the server's abandon time, so the game ends as abandoned (docs/RULES.md A7)."""

    idle_since: float


class Rejection(msgspec.Struct, frozen=True):
    """A refused command: a stable code for programs and a sentence for people."""

    code: str
    message: str


AnyCommand = (
    StartGame
    | ChooseCard
    | WriteSpell
    | MarkBoards
    | Commit
    | Reveal
    | Challenge
    | ProposeSame
    | Vote
    | Done
    | Tick
    | Pause
    | Resume
    | Skip
    | Kick
    | PassHost
    | Abandon
)
