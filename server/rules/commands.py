"""Commands: what someone asks the game to do. Time arrives as data (``now``), never read inside.

Commands are logged beside the events they produced (``kind`` is the tag), so an audit can decide
every batch again and compare (docs/LOG.md, "Commands").
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from conjure.protocol.events import RULES_VERSION, GameSetup
from conjure.protocol.structs import FrozenStruct, Time


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Command(FrozenStruct, tag_field="kind", tag=_snake):
    now: Time


class StartGame(Command):
    #: The cards are already shuffled and dealt, the word data fingerprinted: chance and data
    #: arrive as data. A seeded deal (``setup.deal``) is checked by decide, so by every audit.
    setup: GameSetup
    #: The rules the game is played by, to its end (one of ``DECIDED_RULES``). A start command
    #: of a rules version 2 log names none: :func:`command_from_data` reads it as 2.
    rules_version: int = RULES_VERSION


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
    """The clock: the room sends it when ``deadline`` (the phase's, as the room saw it) has passed.

    Logged with the deadline it acted on, so a tick dated before its deadline is refused on replay.
    """

    deadline: Time | None = None


class Presence(Command):
    """The room: a seat's connection went or came back (logged, never refused in a live game)."""

    seat: int
    connected: bool


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

    idle_since: Time


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
    | Presence
)

_DECODER = msgspec.json.Decoder(AnyCommand)


def command_data(command: AnyCommand) -> dict[str, Any]:
    """A command as the plain JSON-ready data the log stores (``kind`` included)."""
    return msgspec.json.decode(msgspec.json.encode(command))


#: The rules version of a logged start command that names none (rules version 2 logs).
_UNNAMED_RULES = 2


def command_from_data(data: Any) -> AnyCommand:
    """A logged command back; raises msgspec.ValidationError for an unknown shape."""
    command = _DECODER.decode(msgspec.json.encode(data))
    if isinstance(command, StartGame) and "rules_version" not in data:
        return msgspec.structs.replace(command, rules_version=_UNNAMED_RULES)
    return command
