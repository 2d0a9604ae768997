"""The client's brain, without any I/O of its own: the latest View plus local state.

Given what the server last showed and what this player has done locally, a :class:`Session`
answers two questions: what does the input line say now (:meth:`Session.prompt`), and what does
a typed line or a key mean (:meth:`Session.submit`, :meth:`Session.key`)? Outgoing messages go
through the ``send`` callable it is given; secrets and receipts go through a
:class:`~client.statefile.StateDir`. The UI (``client.app``) and the network (``client.net``)
are thin shells around it, so nearly everything here is unit-tested without a terminal.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from client.statefile import StateDir
from protocol.commitment import commitment, new_nonce
from protocol.deck import Card, DeckError, card_text_problem, clean_card_text, load_deck
from protocol.events import RULE_TEXT
from protocol.messages import Bye as ByeMsg
from protocol.messages import (
    CastVote,
    ChallengeWord,
    ChangeSettings,
    Chat,
    ChooseCard,
    ClientMsg,
    CommitSummon,
    CreateRoom,
    Error,
    InLimits,
    JoinRoom,
    KickPlayer,
    Leave,
    MarkBoards,
    PauseGame,
    PlayerView,
    ProposalView,
    ProposeSame,
    ResumeGame,
    ResumeSeat,
    RevealSummon,
    ReviewDone,
    RoomSettings,
    Seated,
    SeatOrder,
    SendChat,
    SkipPlayer,
    StartGame,
    Update,
    View,
    Watch,
    Watching,
    Welcome,
    WriteSpell,
    chat_problem,
    reason_problem,
)
from protocol.names import name_problem
from protocol.words import contains_written, hidden_inside, same_word, validate_written

RULES: tuple[str, ...] = tuple(RULE_TEXT)
PHASES = ("choose", "spell", "mark", "commit", "reveal", "review")
LIMIT_DEFAULTS = InLimits()
MAX_CRYSTALS = 4

StatusKind = Literal["info", "warn", "error"]


def names_list(names: list[str]) -> str:
    """'Ann', 'Ann and Bob', 'Ann, Bob and Cat'."""
    if not names:
        return ""
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def stars(n: int) -> str:
    return "★" * n


def parse_card(text: str) -> Card:
    """'Famous bridge ***', 'Famous bridge ★★' or 'Famous bridge 3' -> a Card."""
    raw = text.strip()
    count = 0
    while raw and raw[-1] in "*★":
        count += 1
        raw = raw[:-1].rstrip()
    if count == 0:
        head, _, tail = raw.rpartition(" ")
        if head and tail.isdigit():
            count = int(tail)
            raw = head.strip()
        else:
            count = 1
    raw = clean_card_text(raw)
    if not raw:
        raise ValueError("A category needs some text, e.g. 'Famous bridge **'.")
    if not 1 <= count <= 3:
        raise ValueError("A category is worth 1 to 3 stars.")
    if len(raw) > 60:
        raise ValueError("A category text has at most 60 characters.")
    if problem := card_text_problem(raw, "A category"):
        raise ValueError(problem + ".")
    return Card(text=raw, stars=count)


def parse_limits(text: str, base: InLimits = LIMIT_DEFAULTS) -> InLimits:
    """'90 60 90 120 30 120', 'off', 'spell=30 review=off' or a mix -> per-phase limits."""
    values = msgspec.structs.asdict(base)
    tokens = text.replace(",", " ").split()
    if len(tokens) == 1 and tokens[0].lower() in ("off", "none"):
        return InLimits(**dict.fromkeys(PHASES))
    position = 0
    for token in tokens:
        if "=" in token:
            name, _, value = token.partition("=")
            name = name.strip().lower()
            if name not in values:
                raise ValueError(f"Unknown phase {name!r}: use {', '.join(PHASES)}.")
        else:
            if position >= len(PHASES):
                raise ValueError("Give at most six limits: choose spell mark commit reveal review.")
            name, value = PHASES[position], token
            position += 1
        value = value.strip().lower()
        if value in ("off", "none", "-", "0"):
            values[name] = None
            continue
        try:
            seconds = float(value.rstrip("s"))
        except ValueError:
            raise ValueError(f"{value!r} is not a number of seconds (or 'off').") from None
        if not 5 <= seconds <= 3600:
            raise ValueError("A time limit is 5 to 3600 seconds, or 'off'.")
        values[name] = seconds
    return InLimits(**values)


def limits_text(limits: InLimits) -> str:
    parts = []
    for name in PHASES:
        value = getattr(limits, name)
        parts.append(f"{name} {'off' if value is None else f'{value:g}s'}")
    return ", ".join(parts)


def settings_lines(s: RoomSettings) -> list[str]:
    variant = "Dark Magic" if s.variant == "dark-magic" else "standard"
    deck = {
        "default": "the default deck",
        "default+custom": "default deck + your categories",
        "custom": "only your categories",
    }[s.deck]
    lines = [
        f"variant: {variant} · categories: {deck} · spectators: "
        f"{'allowed' if s.spectators else 'not allowed'}",
        f"time limits: {limits_text(s.limits)}",
    ]
    if s.custom_cards:
        cards = ", ".join(f"{c.text} {stars(c.stars)}" for c in s.custom_cards)
        lines.append(f"your categories ({len(s.custom_cards)}): {cards}")
    return lines


# ------------------------------------------------------------------ the settings form


@dataclass
class SetupForm:
    """The room settings as a short sequence of questions inside the app."""

    settings: RoomSettings = field(default_factory=RoomSettings)
    step: str = "variant"
    cards: list[Card] = field(default_factory=list)
    for_create: bool = True

    def __post_init__(self) -> None:
        self.cards = list(self.settings.custom_cards)

    def prompt(self) -> str:
        s = self.settings
        if self.step == "variant":
            now = "2" if s.variant == "dark-magic" else "1"
            return f"Variant: 1 standard, 2 dark magic [{now}]: "
        if self.step == "limits":
            now = " ".join(
                "off" if getattr(s.limits, p) is None else f"{getattr(s.limits, p):g}"
                for p in PHASES
            )
            return f"Time limits in s (choose spell mark commit reveal review) [{now}]: "
        if self.step == "deck":
            now = {"default": "1", "default+custom": "2", "custom": "3"}[s.deck]
            return f"Categories: 1 default, 2 default + yours, 3 only yours [{now}]: "
        if self.step == "cards":
            return f"Add a category or @FILE.toml, Enter when done [{len(self.cards)} added]: "
        if self.step == "spectators":
            return f"Allow spectators? y/n [{'y' if s.spectators else 'n'}]: "
        verb = "Create the room" if self.for_create else "Apply these settings"
        return f"{verb}? Enter = yes, b = start over: "

    def help(self) -> str:
        """One line under the settings, about the current question."""
        return {
            "variant": "Dark Magic: the conjurer writes the summoning word first, in secret.",
            "limits": "Six numbers, 'off' for no clock at all, or e.g. spell=30 review=off.",
            "deck": "Your own categories: typed one by one or loaded from a TOML deck file.",
            "cards": "Type 'Famous bridge **' or 'Famous bridge 2' (1-3 stars), or @deck.toml.",
            "spectators": "Spectators see the public table, never a word before the reveal.",
        }.get(self.step, "Enter keeps the value in [brackets].")

    def answer(self, text: str) -> str | None:
        """Take one answer; returns an error sentence, or None (see ``step``, 'done' at the end)."""
        t = text.strip()
        s = self.settings
        if self.step == "variant":
            if t in ("", "1", "2", "s", "standard", "d", "dark", "dark magic", "dark-magic"):
                if t:
                    variant = "standard" if t in ("1", "s", "standard") else "dark-magic"
                    self.settings = msgspec.structs.replace(s, variant=variant)
                self.step = "limits"
                return None
            return "Type 1 for standard or 2 for Dark Magic."
        if self.step == "limits":
            if t:
                try:
                    self.settings = msgspec.structs.replace(s, limits=parse_limits(t, s.limits))
                except ValueError as exc:
                    return str(exc)
            self.step = "deck"
            return None
        if self.step == "deck":
            decks = {"1": "default", "2": "default+custom", "3": "custom"}
            if t and t not in decks:
                return "Type 1, 2 or 3."
            if t:
                self.settings = msgspec.structs.replace(s, deck=decks[t])
            self.step = "spectators" if self.settings.deck == "default" else "cards"
            return None
        if self.step == "cards":
            if not t:
                if self.settings.deck == "custom" and len(self.cards) < 3:
                    return "Only your own categories: add at least 3 (one per player)."
                self.step = "spectators"
                return None
            try:
                new = list(load_deck(t[1:].strip())) if t.startswith("@") else [parse_card(t)]
            except (DeckError, ValueError) as exc:
                return str(exc)
            known = {c.text.casefold() for c in self.cards}
            for card in new:
                if card.text.casefold() not in known:
                    self.cards.append(card)
                    known.add(card.text.casefold())
            self.cards = self.cards[:200]
            self.settings = msgspec.structs.replace(s, custom_cards=list(self.cards))
            return None
        if self.step == "spectators":
            if t.lower() in ("", "y", "yes", "n", "no"):
                if t:
                    self.settings = msgspec.structs.replace(s, spectators=t.lower().startswith("y"))
                self.step = "confirm"
                return None
            return "Type y or n."
        if self.step == "confirm":
            if t.lower() in ("b", "back"):
                self.step = "variant"
                return None
            if t.lower() in ("", "y", "yes"):
                if self.settings.deck == "default":
                    self.settings = msgspec.structs.replace(self.settings, custom_cards=[])
                self.step = "done"
                return None
            return "Press Enter to go ahead, or b to start over."
        return None


# ------------------------------------------------------------------ the session


@dataclass
class FeedLine:
    text: str
    kind: str = "event"  # event | chat | error | me


class Session:
    """State of one client: who we are, what the server showed, what we are in the middle of."""

    def __init__(
        self,
        *,
        server: str,
        store: StateDir,
        send: Callable[[ClientMsg], None],
        name: str | None = None,
        room: str | None = None,
        create: bool = False,
        password: str | None = None,
        spectator: bool = False,
        settings: RoomSettings | None = None,
        ask_settings: bool = True,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.server = server.rstrip("/")
        self.store = store
        self._send = send
        self.name = name
        self.room = room.upper() if room else None
        self.create = create
        self.password = password
        self.spectator = spectator
        self.clock = clock
        self.wall = wall

        self.view: View | None = None
        self.seat: int | None = None
        self.token: str | None = None
        self.player_id: str | None = None
        self.joined = False
        self.joining: str | None = None  # resume | join | create | watch, while waiting
        self.join_error: str | None = None
        self.connected = False
        self.banner: str | None = None
        self.retry_at: float | None = None
        self.ended: str | None = None  # the server said goodbye for good: no reconnecting
        self.bye_reason: str | None = None  # the last goodbye, until the close code is known
        self.server_name: str | None = None

        self.feed: deque[FeedLine] = deque(maxlen=300)
        self.status: tuple[StatusKind, str] | None = None
        self.deadline_at: float | None = None

        self.marks: set[int] = set()
        self.confirm_word: str | None = None
        self.sub: tuple = ()  # review / lobby sub-steps
        self.form: SetupForm | None = None
        self._phase_key: tuple | None = None
        self._reveal_sent: set[tuple] = set()
        self._reveal_index: dict[tuple, int] = {}
        self._my_words: dict[tuple, str] = {}
        self._receipt_seq: dict[str, int] = {}
        self.sent: list[ClientMsg] = []  # every message handed to send, for tests and the log

        if create and not spectator:
            base = settings or RoomSettings()
            if ask_settings:
                self.form = SetupForm(settings=base)
            self.pending_settings = base
        else:
            self.pending_settings = settings or RoomSettings()
        if not spectator and self.room and not create:
            saved = store.load_seat(self.server, self.room)
            if saved and (name is None or saved.get("name", "").casefold() == name.casefold()):
                self.token = saved["token"]
                self.seat = saved.get("seat")
                self.name = saved.get("name") or name

    # ---------------------------------------------------------------- helpers

    def send(self, msg: ClientMsg) -> None:
        self.sent.append(msg)
        self._send(msg)

    def say(self, kind: StatusKind, text: str) -> None:
        self.status = (kind, text)

    def add_feed(self, text: str, kind: str = "event") -> None:
        for line in text.splitlines() or [""]:
            self.feed.append(FeedLine(line, kind))

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
        v = self.view
        if v is not None and v.settings.variant == "dark-magic":
            return (0, MAX_CRYSTALS)
        return (2, MAX_CRYSTALS)

    # ---------------------------------------------------------------- connection events

    def join_messages(self) -> list[ClientMsg]:
        """What to send right after the server's welcome (also after each reconnection)."""
        self.joined = False
        if self.spectator:
            self.joining = "watch"
            return [Watch(room=self.room or "", password=self.password)]
        if self.token and self.room:
            self.joining = "resume"
            return [ResumeSeat(room=self.room, token=self.token)]
        if self.join_error or not self.name:
            return []  # waiting for the player to type a (new) name
        if self.create:
            if self.form is not None:
                return []  # the settings form is still open
            self.joining = "create"
            return [
                CreateRoom(name=self.name, password=self.password, settings=self.pending_settings)
            ]
        self.joining = "join"
        return [JoinRoom(room=self.room or "", name=self.name, password=self.password)]

    def on_connected(self, welcome: Welcome | None = None) -> list[ClientMsg]:
        self.connected = True
        if welcome is not None:
            self.server_name = welcome.server
        if self.banner:
            self.add_feed("connection restored", "me")
        self.banner = None
        self.retry_at = None
        self._reveal_sent.clear()
        return self.join_messages()

    def on_disconnected(self, reason: str, retry_in: float | None) -> None:
        was = self.connected
        self.connected = False
        self.joined = False if self.ended is None else self.joined
        self.retry_at = None if retry_in is None else self.clock() + retry_in
        if self.ended is not None:
            self.banner = f"disconnected: {self.ended}"
            self.say("error", f"Disconnected: {self.ended}")
        elif was or self.view is not None:
            self.banner = f"connection lost ({reason})"
        else:
            self.banner = f"cannot reach {self.server} ({reason})"

    def banner_text(self) -> str | None:
        if self.banner is None:
            return None
        if self.retry_at is None:
            return self.banner
        wait = max(0, round(self.retry_at - self.clock()))
        if wait <= 0:
            return f"{self.banner} — reconnecting…"
        return f"{self.banner} — reconnecting in {wait} s…"

    # ---------------------------------------------------------------- server messages

    def on_message(self, msg: object) -> None:
        if isinstance(msg, Update):
            self._on_update(msg)
        elif isinstance(msg, Seated):
            self._on_seated(msg)
        elif isinstance(msg, Watching):
            self.joined = True
            self.joining = None
            self.room = msg.room
            self.add_feed(f"watching room {msg.room}", "me")
        elif isinstance(msg, Error):
            self._on_error(msg)
        elif isinstance(msg, Chat):
            self.add_feed(f"{msg.name}: {msg.text}", "chat")
        elif isinstance(msg, ByeMsg):
            # Final or not depends on the close code that follows (see client.net).
            self.bye_reason = msg.reason
            self.add_feed(f"the server closed the connection: {msg.reason}", "error")
        elif isinstance(msg, Welcome):
            self.server_name = msg.server

    def _on_seated(self, msg: Seated) -> None:
        first = self.seat is None or self.token != msg.token
        self.joined = True
        how = self.joining
        self.joining = None
        self.join_error = None
        self.room = msg.room
        self.seat = msg.seat
        self.token = msg.token
        self.player_id = msg.player_id
        self.create = False  # from now on this seat is resumed, never created again
        try:
            self.store.save_seat(
                self.server,
                msg.room,
                seat=msg.seat,
                player_id=msg.player_id,
                token=msg.token,
                name=self.name or "",
            )
        except OSError as exc:
            self.say("warn", f"Could not save your seat token in {self.store.path}: {exc}")
        if how == "resume":
            self.add_feed(f"back at board {msg.seat + 1} in room {msg.room}", "me")
        elif first:
            self.add_feed(f"you sit at board {msg.seat + 1} in room {msg.room}", "me")

    def _on_error(self, msg: Error) -> None:
        text = msg.message.strip() or msg.code.replace("_", " ")
        if not self.joined and self.joining is not None:
            how = self.joining
            self.joining = None
            if how == "resume":
                # The saved seat is gone (game over, room closed, token refused): join anew.
                self.token = None
                self.seat = None
                if self.room:
                    with contextlib.suppress(OSError):
                        self.store.forget_seat(self.server, self.room)
                self.add_feed(f"could not resume your seat: {text}", "error")
                if self.name and self.connected:
                    for m in self.join_messages():
                        self.send(m)
                return
            self.join_error = text
            self.add_feed(f"could not {'watch' if how == 'watch' else 'join'}: {text}", "error")
            self.say("error", text)
            return
        if msg.code == "reveal_mismatch":
            key = self._round_key()
            if key is not None:
                self._reveal_index[key] = self._reveal_index.get(key, 0) + 1
                self._reveal_sent.discard(key)
                self._my_words.pop(key, None)
                self._maybe_reveal()
                return
        self.say("error", text)
        self.add_feed(text, "error")

    def _on_update(self, msg: Update) -> None:
        old = self.view
        v = msg.view
        self.view = v
        self.room = v.room or self.room
        if v.you is not None:
            self.seat = v.you
        if v.remaining is not None:
            self.deadline_at = self.clock() + v.remaining
        elif v.deadline is not None:
            # No relative time from the server: fall back on the absolute one (clock skew).
            self.deadline_at = self.clock() + max(0.0, v.deadline - self.wall())
        else:
            self.deadline_at = None
        for line in msg.feed:
            self.add_feed(line)
        if msg.receipt is not None and v.game_id:
            self._save_receipt(v.game_id, msg.receipt.seq, msg.receipt.hash)
        key = (v.game_id, v.round, v.phase)
        if key != self._phase_key:
            self._phase_key = key
            self.marks = set()
            self.sub = ()
            self.confirm_word = None
            if self.status and self.status[0] != "error":
                self.status = None
            if old is not None and old.phase == "lobby" and v.phase != "lobby":
                self.form = None
        self._maybe_reveal()

    def _save_receipt(self, game_id: str, seq: int, hash_: str) -> None:
        if self._receipt_seq.get(game_id, -1) >= seq:
            return
        try:
            self.store.save_receipt(game_id, seq, hash_, server=self.server, room=self.room or "")
            self._receipt_seq[game_id] = seq
        except OSError as exc:
            self.say("warn", f"Could not save the receipt in {self.store.path}: {exc}")

    def _maybe_reveal(self) -> None:
        """Reveal the committed word as soon as the server asks for reveals (also after a crash)."""
        v = self.view
        me = self.me
        if v is None or me is None or v.phase != "reveal" or not me.committed or me.revealed:
            return
        key = self._round_key()
        if key is None or key in self._reveal_sent or not self.connected:
            return
        attempts = self.store.load_summons(*key)
        index = self._reveal_index.get(key, 0)
        if index >= len(attempts):
            self.say(
                "error",
                "Your summoning word for this round is not in "
                f"{self.store.path}: it cannot be revealed and will count as invalid.",
            )
            self._reveal_sent.add(key)
            return
        chosen = attempts[index]
        self._reveal_sent.add(key)
        self._my_words[key] = chosen["word"]
        self.send(RevealSummon(word=chosen["word"], nonce=chosen["nonce"]))
        self.say("info", f"revealing your word '{chosen['word']}'")

    # ---------------------------------------------------------------- what the prompt says

    def wants_keys(self) -> bool:
        """Single keys act at once (no Enter needed) in these states."""
        if self.form is not None or not self.joined or self.view is None or self.spectator:
            return False
        v = self.view
        me = self.me
        if me is None or me.kicked:
            return False
        if v.phase == "lobby":
            return self.is_host()
        if v.paused:
            return False
        if v.phase == "mark" and self.is_conjurer() and not me.marked:
            return True
        if v.phase == "review" and not me.skipped:
            return not (self.sub and self.sub[0] == "vote" and len(self.sub) == 3)
        return False

    def prompt(self) -> str:
        """What the input line says: what you can do now, or what you are waiting for."""
        if self.form is not None:
            return self.form.prompt()
        if self.join_error is not None and not self.joined:
            if self.spectator:
                return f"Could not watch room {self.room}: Ctrl-Q to quit. "
            return "Type a name to try again (Ctrl-Q quits): "
        if not self.name and not self.spectator and not self.token:
            return "Your name: "
        if self.ended is not None:
            return f"Disconnected ({self.ended}). Ctrl-Q to quit. "
        v = self.view
        if v is None or not self.joined:
            if not self.connected:
                return "connecting… "
            return f"joining room {self.room}… " if self.room else "creating the room… "
        if self.spectator or v.you is None:
            return "watching: " + self.waiting_text() + " "
        me = self.me
        if me is None:
            return "waiting… "
        if me.kicked:
            return "You were removed from this game. Ctrl-Q to quit. "
        if v.phase == "lobby":
            if self.is_host():
                if self.sub == ("kick",):
                    return "Remove which player (board number, Esc cancels)? "
                return "Lobby: s=start e=settings k=remove a player: "
            return f"Waiting for {self.pname(v.host)} to start the game… "
        if v.phase == "over":
            ended = "Game abandoned" if v.abandoned else "Game over"
            return f"{ended}. Ctrl-Q to quit. "
        if me.skipped:
            return "You are skipped this round: " + self.waiting_text() + " "
        if v.paused:
            extra = " (/resume to continue)" if self.is_host() else ""
            return f"The game is paused{extra}. "
        conj = self.is_conjurer()
        if v.phase == "choose" and conj:
            n = len([c for c in v.cards if not c.used])
            return f"Choose a category (1-{n}): " if n else "Choose a category: "
        if v.phase == "dark-commit" and conj:
            if me.committed:
                return f"Secret word '{self.my_word() or '?'}' locked in. Another replaces it: "
            return "Your secret summoning word: "
        if v.phase == "spell" and v.turn == v.you:
            return "Your spell word: "
        if v.phase == "mark" and conj and not me.marked:
            low, high = self.crystal_range()
            numbers = [p.seat + 1 for p in self.markable()]
            span = f"{min(numbers)}-{max(numbers)}" if numbers else "-"
            return f"Toggle boards {span}, Enter to confirm ({low}-{high} crystals): "
        if v.phase == "commit" and any(p.seat == me.seat for p in self.summoners()):
            if self.confirm_word is not None:
                return "Lock it in anyway? Enter = yes, or change the word: "
            if me.committed:
                return f"Locked in '{self.my_word() or '?'}'. Another word replaces it: "
            return "Your summoning word: "
        if v.phase == "review":
            return self._review_prompt()
        return _cap(self.waiting_text()) + " "

    def _review_prompt(self) -> str:
        sub = self.sub
        if sub == ("challenge",):
            return "Challenge whose word (board number, Esc cancels)? "
        if sub and sub[0] == "challenge":
            target = self.player(sub[1])
            word = target.summon if target else "?"
            return f"Rule for '{word}': 1 noun 2 adjectives 3 category 4 written word: "
        if sub == ("same",):
            return "Same thing: first board number (Esc cancels)? "
        if sub and sub[0] == "same":
            return f"Same thing as '{self.player(sub[1]).summon}': which other board? "  # type: ignore[union-attr]
        if sub == ("vote",):
            return "Vote on which proposal (number, Esc cancels)? "
        if sub and sub[0] == "vote" and len(sub) == 2:
            return f"Proposal {sub[1] + 1}: y=yes n=no (Esc cancels)? "
        if sub and sub[0] == "vote":
            return f"Reason for your {'yes' if sub[2] else 'no'} (optional), Enter to send: "
        me = self.me
        if me is not None and me.done:
            return f"Done. {_cap(self.waiting_text())}; c s v still work: "
        return "Review: c=challenge s=same v=vote d=done: "

    def waiting_text(self) -> str:
        """What the table is waiting for, as a phrase."""
        v = self.view
        if v is None:
            return "waiting"
        if v.paused:
            return "the game is paused"
        conj = self.pname(v.conjurer)
        if v.phase == "lobby":
            return f"waiting for {self.pname(v.host)} to start the game"
        if v.phase == "choose":
            return f"waiting for {conj} to choose a category"
        if v.phase == "dark-commit":
            return f"waiting for {conj} to write a secret summoning word"
        if v.phase == "spell":
            who = self.pname(v.turn)
            if v.turn is not None and v.turn == v.you:
                return "waiting for your spell word"
            return f"waiting for {who}'s spell word"
        if v.phase == "mark":
            return f"waiting for {conj} to place the crystals"
        if v.phase == "commit":
            missing = [p.name for p in self.summoners() if not p.committed]
            return f"waiting for {names_list(missing) or 'everyone'} to lock in a summoning word"
        if v.phase == "reveal":
            missing = [p.name for p in v.players if p.committed and not p.revealed]
            return f"waiting for {names_list(missing) or 'the reveal'} to reveal"
        if v.phase == "review":
            missing = [p.name for p in v.players if self.active(p) and not p.done]
            return f"waiting for {names_list(missing) or 'the table'} to finish the review"
        if v.phase == "over":
            return "the game was abandoned" if v.abandoned else "the game is over"
        return "waiting"

    def key_help(self) -> str:
        parts = []
        if self.wants_keys():
            v = self.view
            if v is not None and v.phase == "mark":
                parts.append("1-8 toggle · Enter confirm")
            elif self.sub:
                parts.append("Esc cancel")
        else:
            parts.append("Enter send")
        parts.append("/say chat")
        if self.is_host() and self.view is not None and self.view.phase not in ("lobby", "over"):
            parts.append("/pause /resume /skip N /kick N")
        parts.append("/help")
        parts.append("^Q quit")
        return " · ".join(parts)

    # ---------------------------------------------------------------- input

    def key(self, key: str) -> None:
        """One key in keys mode: a printable character, 'enter' or 'escape'."""
        try:
            self._key(key)
        except _Refused as r:
            self.say("warn", str(r))

    def submit(self, text: str) -> bool:
        """A line typed and Enter pressed. True if it was used (clear the input line)."""
        try:
            return self._submit(text)
        except _Refused as r:
            self.say("warn", str(r))
            return False

    def _need_connection(self) -> None:
        if not self.connected:
            raise _Refused("Not connected right now: your text is kept, press Enter again later.")

    def _key(self, key: str) -> None:
        if key == "escape":
            self.sub = ()
            self.confirm_word = None
            self.status = None
            return
        if not self.wants_keys():
            return
        v = self.view
        assert v is not None
        if v.phase == "lobby":
            self._lobby_key(key)
        elif v.phase == "mark":
            self._mark_key(key)
        elif v.phase == "review":
            self._review_key(key)

    def _lobby_key(self, key: str) -> None:
        if self.sub == ("kick",):
            seat = self._board_number(key)
            self.sub = ()
            if seat == self.seat:
                raise _Refused("You cannot remove yourself.")
            self._need_connection()
            self.send(KickPlayer(seat=seat))
            return
        if key == "s":
            self._need_connection()
            n = len([p for p in self.view.players if not p.kicked])  # type: ignore[union-attr]
            if n < 3:
                raise _Refused(f"A game needs at least 3 players; {n} seated so far.")
            self.send(StartGame())
            self.say("info", "starting the game…")
        elif key == "e":
            self.form = SetupForm(settings=self.view.settings, for_create=False)  # type: ignore[union-attr]
        elif key == "k":
            self.sub = ("kick",)

    def _board_number(self, text: str) -> int:
        try:
            n = int(text.strip())
        except ValueError:
            raise _Refused(f"{text.strip()!r} is not a board number.") from None
        if self.player(n - 1) is None:
            raise _Refused(f"There is no board {n}.")
        return n - 1

    def _mark_key(self, key: str) -> None:
        if key == "enter":
            self._confirm_marks()
            return
        if not key.isdigit():
            return
        seat = int(key) - 1
        p = self.player(seat)
        if p is None:
            raise _Refused(f"There is no board {key}.")
        if not p.spell:
            raise _Refused(f"Board {key} ({p.name}) has no spell word to mark.")
        if seat in self.marks:
            self.marks.discard(seat)
        else:
            if len(self.marks) >= MAX_CRYSTALS:
                raise _Refused(f"You have only {MAX_CRYSTALS} crystals; remove one first.")
            self.marks.add(seat)
        self.status = None

    def _confirm_marks(self) -> None:
        low, high = self.crystal_range()
        n = len(self.marks)
        if n < low:
            raise _Refused(f"Place at least {low} crystals ({n} placed).")
        if n > high:
            raise _Refused(f"Place at most {high} crystals ({n} placed).")
        self._need_connection()
        self.send(MarkBoards(boards=sorted(self.marks)))
        words = ", ".join(self.player(s).spell or "?" for s in sorted(self.marks))  # type: ignore[union-attr]
        self.say("info", f"crystals placed on {words or 'no board'}")

    def _open_proposals_for_me(self) -> list[ProposalView]:
        v = self.view
        if v is None or v.you is None:
            return []
        return [
            p
            for p in v.proposals
            if p.carried is None and v.you in p.voters and v.you not in p.votes
        ]

    def _review_key(self, key: str) -> None:
        sub = self.sub
        v = self.view
        assert v is not None
        if not sub:
            if key == "c":
                self.sub = ("challenge",)
            elif key == "s":
                self.sub = ("same",)
            elif key == "v":
                open_ = self._open_proposals_for_me()
                if not open_:
                    raise _Refused("There is no open proposal for you to vote on.")
                self.sub = ("vote", open_[0].id) if len(open_) == 1 else ("vote",)
            elif key == "d":
                me = self.me
                if me is not None and me.done:
                    raise _Refused("You have already said you are done.")
                self._need_connection()
                self.send(ReviewDone())
                self.say("info", "done with the review")
            return
        if key == "enter":
            return
        if sub == ("challenge",):
            seat = self._summon_board(key)
            self.sub = ("challenge", seat)
        elif sub[0] == "challenge":
            try:
                rule = RULES[int(key) - 1]
            except (ValueError, IndexError):
                raise _Refused(f"Pick a rule by its number, 1-{len(RULES)}.") from None
            self._need_connection()
            self.sub = ()
            self.send(ChallengeWord(seat=sub[1], rule=rule))  # type: ignore[arg-type]
            self.say("info", f"challenged {self.pname(sub[1])}'s word: {RULE_TEXT[rule]}")
        elif sub == ("same",):
            self.sub = ("same", self._summon_board(key))
        elif sub[0] == "same":
            other = self._summon_board(key)
            if other == sub[1]:
                raise _Refused("Pick another player's board.")
            self._need_connection()
            self.sub = ()
            self.send(ProposeSame(a=sub[1], b=other))
            self.say("info", "proposed the two words as the same thing")
        elif sub == ("vote",):
            try:
                pid = int(key) - 1
            except ValueError:
                raise _Refused("Pick a proposal by its number.") from None
            if pid not in [p.id for p in self._open_proposals_for_me()]:
                raise _Refused(f"Proposal {key} is not open for your vote.")
            self.sub = ("vote", pid)
        elif sub[0] == "vote" and len(sub) == 2 and key.lower() in ("y", "n"):
            self.sub = ("vote", sub[1], key.lower() == "y")

    def _summon_board(self, text: str) -> int:
        seat = self._board_number(text)
        p = self.player(seat)
        if p is None or not p.summon:
            raise _Refused(f"Board {seat + 1} has no summoning word.")
        return seat

    def _submit(self, text: str) -> bool:
        if self.form is not None:
            return self._form_answer(text)
        stripped = text.strip()
        if stripped.startswith("/"):
            return self._command(stripped)
        if self.join_error is not None and not self.joined and not self.spectator:
            if not stripped:
                return False
            if problem := name_problem(stripped):
                raise _Refused(problem)
            self.name = stripped
            self.join_error = None
            if self.connected:
                for m in self.join_messages():
                    self.send(m)
            return True
        if not self.name and not self.spectator and not self.token:
            if not stripped:
                return False
            if problem := name_problem(stripped):
                raise _Refused(problem)
            self.name = stripped
            if self.connected and not self.joined:
                for m in self.join_messages():
                    self.send(m)
            return True
        if self.wants_keys():
            if self.sub and self.sub[0] == "vote" and len(self.sub) == 3:
                pass  # handled below: the reason line
            elif not stripped:
                self._key("enter")
                return True
            else:
                return self._keys_as_line(stripped)
        v = self.view
        me = self.me
        if self.sub and self.sub[0] == "vote" and len(self.sub) == 3 and v is not None:
            self._need_connection()
            _, pid, yes = self.sub
            reason = stripped[:200]
            if problem := reason_problem(reason):
                raise _Refused(problem + ": your text is kept.")
            self.send(CastVote(proposal=pid, yes=yes, reason=reason))
            self.sub = ()
            self.say("info", f"voted {'yes' if yes else 'no'} on proposal {pid + 1}")
            return True
        if not stripped:
            return False
        if v is None or me is None or not self.joined:
            raise _Refused("Not in a room yet: your text is kept.")
        if v.paused:
            raise _Refused("The game is paused: your text is kept.")
        conj = self.is_conjurer()
        if v.phase == "choose" and conj:
            return self._choose(stripped)
        if v.phase == "spell" and v.turn == v.you:
            problem = validate_written(stripped)
            if problem:
                raise _Refused(problem)
            self._need_connection()
            self.send(WriteSpell(word=stripped))
            return True
        if v.phase == "dark-commit" and conj:
            return self._commit(stripped, check=False)
        if v.phase == "commit" and any(p.seat == me.seat for p in self.summoners()):
            return self._commit(stripped, check=True)
        raise _Refused(f"Not your turn ({self.waiting_text()}): your text is kept.")

    def _keys_as_line(self, text: str) -> bool:
        """A whole line typed in a keys state: '1 3 4' marks, 'c 2 1' challenges, ..."""
        v = self.view
        assert v is not None
        tokens = text.replace(",", " ").split()
        if v.phase == "mark":
            seats = set()
            for t in tokens:
                seat = self._board_number(t)
                seats.add(seat)
            for seat in seats:
                p = self.player(seat)
                if p is None or not p.spell:
                    raise _Refused(f"Board {seat + 1} has no spell word to mark.")
            self.marks = seats
            self._confirm_marks()
            return True
        saved = self.sub
        try:
            for i, t in enumerate(tokens):
                if self.sub and self.sub[0] == "vote" and len(self.sub) == 3:
                    reason = " ".join(tokens[i:])
                    return self._submit(reason)
                self._key(t if len(t) == 1 or not t.isalpha() else t[0])
            if self.sub and self.sub[0] == "vote" and len(self.sub) == 3:
                return self._submit("")
        except _Refused:
            self.sub = saved
            raise
        return True

    def _choose(self, text: str) -> bool:
        v = self.view
        assert v is not None
        open_cards = [c for c in v.cards if not c.used]
        try:
            n = int(text)
        except ValueError:
            raise _Refused(f"Type the number of a category, 1-{len(open_cards)}.") from None
        if not 1 <= n <= len(open_cards):
            raise _Refused(f"Type the number of a category, 1-{len(open_cards)}.")
        card = open_cards[n - 1]
        self._need_connection()
        self.send(ChooseCard(card=card.index))
        self.say("info", f"you chose {card.text} {stars(card.stars)}")
        return True

    def word_warning(self, word: str) -> str | None:
        """A warning if the word is, contains or seems to hide a written spell word."""
        v = self.view
        if v is None:
            return None
        written = [(p, p.spell) for p in v.players if p.spell]
        for p, spell in written:
            if contains_written(word, spell):  # type: ignore[arg-type]
                what = "is" if same_word(word, spell) else "contains"  # type: ignore[arg-type]
                whose = "your" if p.seat == v.you else f"{p.name}'s"
                return f"Your word {what} '{spell}' ({whose} spell word): it would be invalid, -3."
        for p, spell in written:
            if hidden_inside(word, spell):  # type: ignore[arg-type]
                whose = "your" if p.seat == v.you else f"{p.name}'s"
                return (
                    f"'{spell}' ({whose} spell word) seems hidden inside your word: "
                    "the table may rule it invalid, -3."
                )
        return None

    def _commit(self, word: str, *, check: bool) -> bool:
        problem = validate_written(word)
        if problem:
            raise _Refused(problem)
        if check and self.confirm_word != word:
            warning = self.word_warning(word)
            if warning:
                self.confirm_word = word
                self.say("warn", warning + " Enter again to lock it in anyway, or change it.")
                return False
        self.confirm_word = None
        self._need_connection()
        v = self.view
        key = self._round_key()
        assert v is not None and key is not None
        game_id, round_, seat = key
        nonce = new_nonce()
        digest = commitment(game_id, round_, seat, nonce, word)
        try:
            self.store.save_summon(
                game_id, round_, seat, word=word, nonce=nonce.hex(), commitment=digest
            )
        except OSError as exc:
            raise _Refused(
                f"Could not save your word in {self.store.path} ({exc.strerror}); not sent."
            ) from None
        self._my_words[key] = word
        self._reveal_index.pop(key, None)
        self.send(CommitSummon(commitment=digest))
        self.say("info", f"'{word}' is locked in; it will be revealed when everyone is ready")
        return True

    def _form_answer(self, text: str) -> bool:
        form = self.form
        assert form is not None
        if text.strip().startswith("/") and text.strip() in ("/quit", "/help"):
            return self._command(text.strip())
        error = form.answer(text)
        if error:
            self.say("warn", error)
            return False
        self.status = None
        if form.step == "done":
            self.form = None
            self.pending_settings = form.settings
            if form.for_create:
                if self.connected:
                    for m in self.join_messages():
                        self.send(m)
            else:
                self._need_connection()
                self.send(ChangeSettings(settings=form.settings))
                self.say("info", "settings sent")
        return True

    def _command(self, text: str) -> bool:
        word, _, rest = text[1:].partition(" ")
        word = word.lower()
        rest = rest.strip()
        if word in ("say", "chat", "s"):
            if not rest:
                raise _Refused("Type something after /say.")
            text = rest[:300]
            if problem := chat_problem(text):
                raise _Refused(problem + ": your text is kept.")
            self._need_connection()
            self.send(SendChat(text=text))
            return True
        if word in ("help", "h", "?"):
            self.add_feed(HELP_TEXT, "me")
            return True
        if word in ("quit", "q", "exit"):
            self.quit_requested = True
            return True
        if word == "leave":
            self._need_connection()
            self.send(Leave())
            if self.room:
                with contextlib.suppress(OSError):
                    self.store.forget_seat(self.server, self.room)
            self.token = None
            self.quit_requested = True
            return True
        if word in ("pause", "resume", "skip", "kick", "start", "settings", "order"):
            if not self.is_host():
                raise _Refused("Only the host can do that.")
            self._need_connection()
            if word == "pause":
                self.send(PauseGame())
            elif word == "resume":
                self.send(ResumeGame())
            elif word == "start":
                self.send(StartGame())
            elif word == "order":
                self.send(SeatOrder(order=self._seat_order(rest)))
            elif word == "settings":
                if self.view is None or self.view.phase != "lobby":
                    raise _Refused("Settings can change only in the lobby.")
                self.form = SetupForm(settings=self.view.settings, for_create=False)
            else:
                seat = self._board_number(rest)
                self.send(SkipPlayer(seat=seat) if word == "skip" else KickPlayer(seat=seat))
            return True
        raise _Refused(f"Unknown command /{word}; /help lists them.")

    def _seat_order(self, rest: str) -> list[int]:
        """``/order 3 1 2``: the boards, by their current numbers, in their new seating order."""
        if self.view is None or self.view.phase != "lobby":
            raise _Refused("Seats can be reordered only in the lobby.")
        n = len(self.view.players)
        try:
            boards = [int(x) for x in rest.replace(",", " ").split()]
        except ValueError:
            boards = []
        if sorted(boards) != list(range(1, n + 1)):
            raise _Refused(f"List every board 1-{n} once, in the new order: /order 2 1 3")
        return [b - 1 for b in boards]

    quit_requested = False


class _Refused(Exception):
    """An input the client refuses locally, with the sentence to show."""


HELP_TEXT = """\
keys: type at the prompt and press Enter; numbers pick boards and cards
  mark: press board numbers to toggle crystals, Enter to confirm
  review: c=challenge a word, s=propose two words as the same, v=vote, d=done
commands: /say TEXT (chat) · /leave (give up your seat) · /quit (or Ctrl-Q)
host: /start · /settings · /order 2 1 3 (reseat, lobby) · /pause · /resume · /skip N · /kick N
      (N = board number)"""
