"""A room before its game starts: seats, host, settings, password, and the deal.

Pure bookkeeping (no I/O, no clock): the room task calls these and turns a ``Refusal`` into an
``Error`` for the sender. The lobby is not logged: a room that has not started is lost on a crash and
its players simply create it again. Chance (codes, tokens, the shuffle) comes from ``secrets``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Container
from dataclasses import dataclass, field
from random import Random

from conjure.protocol.counts import MAX_PLAYERS, MIN_PLAYERS
from conjure.protocol.deck import Card, DeckError, clean_card_text, default_deck
from conjure.protocol.errors import Refusal
from conjure.protocol.events import COLOURS, PlayerInfo
from conjure.protocol.house import UnknownHouseRule, canonical
from conjure.protocol.messages import RoomSettings
from conjure.protocol.names import BadName, enforce_name, look_alike

#: Room code letters: no I/L (look like 1), O (0), U/V (like each other).
ROOM_LETTERS = "ABCDEFGHJKMNPQRSTWXYZ"
ROOM_CODE_LENGTH = 4


def new_room_code(taken: Container[str]) -> str:
    """A fresh random code not in ``taken``."""
    while True:
        code = "".join(secrets.choice(ROOM_LETTERS) for _ in range(ROOM_CODE_LENGTH))
        if code not in taken:
            return code


def new_token() -> str:
    """A seat's secret: 256 random bits, URL-safe. Only its hash is ever stored."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_matches(token: str, stored_hash: str) -> bool:
    """Constant-time comparison of a presented token with a stored hash."""
    return hmac.compare_digest(token_hash(token), stored_hash)


def new_player_id() -> str:
    """A seat's public id (shown to everyone; unrelated to its token)."""
    return "p" + secrets.token_hex(4)


def new_game_id() -> str:
    """A random, URL- and file-name-safe game id (names the log file)."""
    return "g" + secrets.token_hex(8)


def clean_name(name: str) -> str:
    """The name as it will be stored and shown (PRECIS Nickname, see protocol.names)."""
    try:
        return enforce_name(name)
    except BadName as exc:
        raise Refusal("bad_name", str(exc)) from None


@dataclass(frozen=True)
class PasswordHash:
    """A salted SHA-256 of the room password; the password itself is never kept."""

    salt: bytes
    digest: bytes

    @classmethod
    def make(cls, password: str) -> PasswordHash:
        salt = secrets.token_bytes(16)
        return cls(salt, hashlib.sha256(salt + password.encode("utf-8")).digest())

    def check(self, password: str | None) -> bool:
        got = hashlib.sha256(self.salt + (password or "").encode("utf-8")).digest()
        return hmac.compare_digest(got, self.digest)


def check_password(stored: PasswordHash | None, password: str | None) -> None:
    if stored is None:
        return
    if not password:
        raise Refusal("password_required", "This room has a password: give it to come in.")
    if not stored.check(password):
        raise Refusal("wrong_password", "Wrong password for this room.")


@dataclass
class LobbySeat:
    id: str
    name: str
    colour: str
    token_hash: str


@dataclass
class Lobby:
    """The seats in order (index = seat number), the host by id, the settings."""

    settings: RoomSettings = field(default_factory=RoomSettings)
    seats: list[LobbySeat] = field(default_factory=list)
    host_id: str | None = None

    # ------------------------------------------------------------ queries

    def index(self, player_id: str) -> int | None:
        for i, s in enumerate(self.seats):
            if s.id == player_id:
                return i
        return None

    @property
    def host(self) -> int | None:
        return None if self.host_id is None else self.index(self.host_id)

    def by_token(self, token: str) -> LobbySeat | None:
        found = None
        for s in self.seats:  # no early exit: the time taken does not depend on which seat
            if token_matches(token, s.token_hash):
                found = s
        return found

    def _require_host(self, player_id: str) -> None:
        if player_id != self.host_id:
            raise Refusal("not_host", "Only the host can do that.")

    # ------------------------------------------------------------ changes

    def join(self, name: str) -> tuple[LobbySeat, str]:
        """Seat a new player; returns the seat and its secret token."""
        name = clean_name(name)
        other = look_alike(name, (s.name for s in self.seats))
        if other == name:
            raise Refusal("name_taken", f"Someone in this room is already called {name!r}.")
        if other is not None:
            raise Refusal("name_taken", f"{name} looks like {other}, who is already here.")
        if len(self.seats) >= MAX_PLAYERS:
            raise Refusal("room_full", f"The room is full ({MAX_PLAYERS} players).")
        used = {s.colour for s in self.seats}
        colour = next(c for c in COLOURS if c not in used)
        token = new_token()
        seat = LobbySeat(new_player_id(), name, colour, token_hash(token))
        self.seats.append(seat)
        if self.host_id is None:
            self.host_id = seat.id
        return seat, token

    def remove(self, player_id: str, computers: Container[str] = ()) -> LobbySeat:
        """Take a seat away (left or kicked); the host role passes to the next seat a person
        holds, else to the next seat (``computers``: the seats computer players hold, who
        never start a game)."""
        i = self.index(player_id)
        if i is None:
            raise Refusal("not_in_room", "That player is not in this room.")
        seat = self.seats.pop(i)
        if self.host_id == player_id:
            after = self.seats[i:] + self.seats[:i]
            people = [s for s in after if s.id not in computers]
            self.host_id = (people or after)[0].id if after else None
        return seat

    def kick(self, by: str, seat: int, meant: str | None = None) -> LobbySeat:
        """Remove the player at ``seat``; ``meant``: their id as the host saw it, if given (a
        seat that holds someone else now is refused: the seating shifted since)."""
        self._require_host(by)
        if not 0 <= seat < len(self.seats):
            raise Refusal("unknown_seat", f"There is no seat {seat}.")
        if meant is not None and self.seats[seat].id != meant:
            raise Refusal(
                "seat_changed",
                f"The seating changed: board {seat + 1} is now {self.seats[seat].name}'s. "
                "Nobody was removed.",
            )
        if self.seats[seat].id == by:
            raise Refusal("cannot_kick_self", "The host cannot remove themselves.")
        return self.remove(self.seats[seat].id)

    def reorder(self, by: str, order: list[int]) -> None:
        self._require_host(by)
        if sorted(order) != list(range(len(self.seats))):
            raise Refusal(
                "bad_order",
                f"Give every seat number 0..{len(self.seats) - 1} exactly once, in the new order.",
            )
        self.seats = [self.seats[i] for i in order]

    def change_settings(self, by: str, settings: RoomSettings) -> None:
        self._require_host(by)
        self.settings = clean_settings(settings)

    def pass_host(self, to: str) -> None:
        self.host_id = to

    def players(self) -> tuple[PlayerInfo, ...]:
        return tuple(
            PlayerInfo(seat=i, id=s.id, name=s.name, colour=s.colour, token_hash=s.token_hash)
            for i, s in enumerate(self.seats)
        )

    def check_start(self, by: str) -> None:
        self._require_host(by)
        n = len(self.seats)
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise Refusal(
                "player_count", f"A game needs {MIN_PLAYERS} to {MAX_PLAYERS} players, not {n}."
            )


def clean_settings(settings: RoomSettings) -> RoomSettings:
    """Custom cards on one line each, none empty, none twice."""
    cards: list[Card] = []
    seen: set[str] = set()
    for i, card in enumerate(settings.custom_cards, 1):
        text = clean_card_text(card.text)
        if not text:
            raise Refusal("bad_settings", f"Custom card {i} has no text.")
        if text.casefold() in seen:
            raise Refusal("bad_settings", f"Custom card {i} ({text!r}) appears twice.")
        seen.add(text.casefold())
        cards.append(Card(text=text, stars=card.stars))
    return RoomSettings(
        variant=settings.variant,
        deck=settings.deck,
        custom_cards=cards,
        limits=settings.limits,
        spectators=settings.spectators,
        max_spectators=settings.max_spectators,
        house_rules=_house_rules(settings.house_rules),
    )


def _house_rules(names: list[str]) -> list[str]:
    try:
        return canonical(names)
    except UnknownHouseRule as exc:
        raise Refusal("bad_settings", f"{str(exc)[0].upper()}{str(exc)[1:]}.") from None


def build_deck(settings: RoomSettings) -> list[Card]:
    """The cards the deal draws from, as the settings ask."""
    cards: list[Card] = []
    if settings.deck in ("default", "default+custom"):
        try:
            cards.extend(default_deck())
        except (OSError, DeckError) as exc:
            raise Refusal(
                "no_default_deck", f"The default deck cannot be read on this server ({exc})."
            ) from None
    if settings.deck in ("custom", "default+custom"):
        # A custom card named as a default one takes its place, with the host's stars: it was
        # dropped, a host's "weapon ★★★" dealt as the default "Weapon ★" (found by review).
        custom = {c.text.casefold(): c for c in settings.custom_cards}
        cards = [custom.pop(c.text.casefold(), c) for c in cards]
        cards.extend(c for c in settings.custom_cards if c.text.casefold() in custom)
    return cards


def deal(settings: RoomSettings, players: int, rng: Random | None = None) -> tuple[Card, ...]:
    """One card per player, shuffled with the system's CSPRNG unless ``rng`` is given."""
    deck = build_deck(settings)
    if len(deck) < players:
        raise Refusal(
            "deck_too_small",
            f"The deck has {len(deck)} card(s); {players} players need at least {players}.",
        )
    rng = rng or secrets.SystemRandom()
    return tuple(rng.sample(deck, players))
