"""What one client holds: the latest View, the feed, the status line, and questions about them.

:class:`TableState` is the base of :class:`client.session.Session`: the plain state (who is
who, whose turn, what this player committed) that the prompts (``client.prompts``) and the input
handling (``client.inputs``) read. No I/O but the state directory's summoning secrets.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import trio

from conjure.client.statefile import StateDir
from conjure.client.textfit import shorten, wrap
from conjure.protocol.counts import MAX_PLAYERS, crystal_range
from conjure.protocol.events import RULE_TEXT, Rule, is_rule
from conjure.protocol.messages import ClientMsg, PlayerView, ProposalView, RoomSettings, View

if TYPE_CHECKING:
    from conjure.client.setupform import SetupForm

RULES: tuple[Rule, ...] = tuple(r for r in RULE_TEXT if is_rule(r))  # every key is one

StatusKind = Literal["info", "warn", "error"]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass
class FeedLine:
    text: str
    kind: str = "event"  # event | chat | error | me


OverlayKind = Literal["results", "over", "help", "howto", "panel"]
JoinField = Literal["room", "password", "name", "again", "watch"]


@dataclass
class Overlay:
    """A card drawn over the table until it is closed: a round's results, the help, ...

    ``round`` is the first round whose results it shows, with those of every round after it (for
    "results" and "over": two rounds can end at once); ``scroll`` is how
    many of its lines are scrolled off the top; ``hid`` is a status said only because the card
    hid the feed line that says it too (gone with the card).
    """

    kind: OverlayKind
    round: int | None = None
    scroll: int = 0
    hid: tuple[StatusKind, str] | None = None


#: The narrowest screen the client is laid out for (columns).
NARROWEST = 80
#: Rows the status line may take; a longer sentence is cut short there.
STATUS_ROWS = 2


def status_rows(text: str, width: int) -> tuple[list[str], bool]:
    """The status line's rows for ``text`` at ``width`` columns, and whether it is shown whole."""
    rows = wrap(text, width, " ", " ")
    if len(rows) <= STATUS_ROWS:
        return rows, True
    rest = " ".join(row.strip() for row in rows[STATUS_ROWS - 1 :])
    return [*rows[: STATUS_ROWS - 1], " " + shorten(rest, width - 1)], False


class TableState:
    """The state a Session holds (set up in ``Session.__init__``) and the questions it answers."""

    server: str
    store: StateDir
    _send: Callable[[ClientMsg], None]
    name: str | None
    room: str | None
    create: bool
    password: str | None
    spectator: bool
    clock: Callable[[], float]
    wall: Callable[[], float]
    view: View | None
    seat: int | None
    token: str | None
    joined: bool
    join_error: str | None
    connected: bool
    pin: str | None
    ended: str | None
    feed: deque[FeedLine]
    status: tuple[StatusKind, str] | None
    deadline_at: float | None
    marks: set[int]
    confirm_word: str | None
    sub: tuple
    form: SetupForm | None
    pending_settings: RoomSettings
    _my_words: dict[tuple, str]
    _reveal_index: dict[tuple, int]
    sent: list[ClientMsg]
    joined_once: bool
    retry: trio.Event
    gave_up: str | None
    back_unasked: float | None
    #: The round (``_round_key``) in which placing no crystal was asked about once.
    no_crystal_asked: tuple | None
    join_field: JoinField | None
    watch_instead: str | None  #: the command that watches a room one could not sit in
    watching_instead: bool  #: watching because a seat was refused (``Session.watch_here``)
    paused_on_quit: bool  #: this client paused its make play game as it quit
    gave_up_seat: bool  #: /leave, confirmed: the seat was given up for good
    draft: str | None
    overlay: Overlay | None
    _keys_ignored_until: float  #: see ``client.inputs.KEYS_PAUSE``
    feed_scroll: int
    _owner: tuple | None

    def join_messages(self) -> list[ClientMsg]:
        """What to send to join (``client.session.Session`` says)."""
        raise NotImplementedError

    def watch_here(self) -> None:
        """Watch the room one could not sit in (``client.session.Session`` says)."""
        raise NotImplementedError

    def join_again(self) -> None:
        """The join asked again, as it stands now: the refusal and its question are over."""
        self.join_field = None
        self.join_error = None
        self.status = None
        if self.connected:
            for m in self.join_messages():
                self.send(m)

    def coming_back(self) -> bool:
        """Whether the connection to the room this client was in is down, or up and not yet
        in the room again, and the client is making it again by itself (not given up, not
        said goodbye to for good)."""
        return (
            self.joined_once
            and not self.joined
            and self.ended is None
            and self.gave_up is None
            and self.join_field is None
        )

    def seat_offered(self) -> bool:
        """Whether a seat came free in the lobby this client watches because it was full
        (``watching_instead``): Enter takes it, on the same connection."""
        v = self.view
        return (
            self.spectator
            and self.watching_instead
            and self.joined
            and bool(self.name)
            and v is not None
            and v.phase == "lobby"
            and len(v.players) < MAX_PLAYERS
        )

    # ---------------------------------------------------------------- helpers

    def send(self, msg: ClientMsg) -> None:
        self.sent.append(msg)
        self._send(msg)

    def say(self, kind: StatusKind, text: str) -> None:
        self.status = (kind, text)

    def refuse(self, text: str) -> None:
        """A refusal of the player's own move, said once: on the status line, above the line they
        typed it on, until the phase moves on or they make another move. The feed (the table's story) takes it only when
        the status line would cut it on the narrowest screen, so the whole sentence is somewhere.
        """
        self.say("error", text)
        if not status_rows(text, NARROWEST)[1]:
            self.add_feed(text, "error")

    def add_feed(self, text: str, kind: str = "event") -> None:
        for line in text.splitlines() or [""]:
            self.feed.append(FeedLine(line, kind))

    @property
    def in_lobby(self) -> bool:
        """The room has no game yet (questions speak of the room, not of a game)."""
        return self.view is not None and self.view.phase == "lobby"

    @property
    def me(self) -> PlayerView | None:
        v = self.view
        if v is None or v.you is None:
            return None
        return self.player(v.you)

    def player(self, seat: int | None) -> PlayerView | None:
        if self.view is None or seat is None:
            return None
        for p in self.view.players:
            if p.seat == seat:
                return p
        return None

    def pname(self, seat: int | None) -> str:
        p = self.player(seat)
        return p.name if p else "someone"

    def marked_spells(self) -> str:
        """The spell words of the boards marked so far, in seat order ("?" for one not known)."""
        spells = []
        for seat in sorted(self.marks):
            p = self.player(seat)
            spells.append((p.spell if p else None) or "?")
        return ", ".join(spells)

    def is_host(self) -> bool:
        v = self.view
        return v is not None and v.you is not None and v.host == v.you

    def is_conjurer(self) -> bool:
        v = self.view
        return v is not None and v.you is not None and v.conjurer == v.you

    def active(self, p: PlayerView) -> bool:
        return not p.kicked and not p.skipped

    def summoners(self) -> list[PlayerView]:
        v = self.view
        if v is None:
            return []
        out = [p for p in v.players if self.active(p)]
        if v.settings.variant == "dark-magic":
            out = [p for p in out if p.seat != v.conjurer]
        return out

    def remaining(self) -> float | None:
        """Seconds left in the phase, from the server's ``remaining`` and our own clock."""
        if self.deadline_at is None or (self.view is not None and self.view.paused):
            return None
        return max(0.0, self.deadline_at - self.clock())

    def my_word(self) -> str | None:
        """The summoning word this client committed this round, if any."""
        key = self._round_key()
        if key is None:
            return None
        if key not in self._my_words:
            attempts = self.store.load_summons(*key)
            if attempts:
                self._my_words[key] = attempts[0]["word"]
            else:
                return None
        return self._my_words[key]

    def _round_key(self) -> tuple | None:
        v = self.view
        if v is None or v.game_id is None or v.you is None or not v.round:
            return None
        return (v.game_id, v.round, v.you)

    def markable(self) -> list[PlayerView]:
        v = self.view
        return [p for p in v.players if p.spell] if v else []

    def crystal_range(self) -> tuple[int, int]:
        """How many crystals the conjurer may place here: the rules' range, and no more than
        the boards with a spell word (seen at a 3-player table: "2-4 crystals" for 3 boards)."""
        v = self.view
        low, high = crystal_range(v.settings.variant if v is not None else "standard")
        boards = len(self.markable())
        return low, max(low, min(high, boards)) if v is not None and boards else high

    def open_proposals(self) -> list[ProposalView]:
        v = self.view
        return [p for p in v.proposals if p.carried is None] if v is not None else []

    def votable(self) -> list[ProposalView]:
        """Open proposals this player votes on (a vote already cast may still be changed, V2)."""
        v = self.view
        if v is None or v.you is None:
            return []
        return [p for p in self.open_proposals() if v.you in p.voters]

    def open_card(self, kind: OverlayKind, round_: int | None = None) -> None:
        self.overlay = Overlay(kind, round_)

    def close_card(self) -> None:
        card = self.overlay
        self.overlay = None
        if card is not None and card.hid is not None and self.status == card.hid:
            self.status = None  # the feed, in view again, says it

    def say_under_card(self, kind: StatusKind, text: str) -> None:
        """Say on the status line what the feed says too, while a card hides the feed."""
        card = self.overlay
        if card is not None:
            self.say(kind, text)
            card.hid = (kind, text)
