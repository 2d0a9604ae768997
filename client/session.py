"""The client's brain, without any I/O of its own: the latest View plus local state.

Given what the server last showed and what this player has done locally, a :class:`Session`
answers two questions: what does the input line say now (:meth:`Session.prompt`), and what does
a typed line or a key mean (:meth:`Session.submit`, :meth:`Session.key`)? Outgoing messages go
through the ``send`` callable it is given; secrets and receipts go through a
:class:`~client.statefile.StateDir`. The UI (``client.app``) and the network (``client.net``)
are thin shells around it, so nearly everything here is unit-tested without a terminal.

The class is split along what it holds: the state and its questions (``client.tablestate``),
the prompts (``client.prompts``), the input handling (``client.inputs``) and the settings form
(``client.setupform``); this module holds the connection and server-message side.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections import deque
from collections.abc import Callable

import trio

from conjure.client.inputs import Inputs, Refused
from conjure.client.setupform import (
    LIMIT_DEFAULTS,
    PHASES,
    SetupForm,
    limits_text,
    parse_card,
    parse_limits,
    settings_lines,
)
from conjure.client.statefile import StateDir
from conjure.client.tablestate import (
    RULES,
    FeedLine,
    JoinField,
    Overlay,
    StatusKind,
)
from conjure.client.textfit import first_fitting, shorten
from conjure.client.texts import HELP_TEXT
from conjure.protocol.counts import MAX_CRYSTALS
from conjure.protocol.messages import (
    EARLIER_LINES,
    Chat,
    ClientMsg,
    CreateRoom,
    EarlierChat,
    Error,
    JoinRoom,
    Receipt,
    ResumeSeat,
    RevealSummon,
    RoomSettings,
    Seated,
    Update,
    View,
    Watch,
    Watching,
    Welcome,
)
from conjure.protocol.messages import Bye as ByeMsg
from conjure.protocol.names import name_problem
from conjure.protocol.program import program_here
from conjure.protocol.receiptsig import verify
from conjure.protocol.wording import watch_command

__all__ = [
    "HELP_TEXT",
    "LIMIT_DEFAULTS",
    "MAX_CRYSTALS",
    "PHASES",
    "RULES",
    "FeedLine",
    "Refused",
    "Session",
    "SetupForm",
    "StatusKind",
    "limits_text",
    "name_problem",
    "parse_card",
    "parse_limits",
    "settings_lines",
]


#: Refusals of a join that leave watching the room as the way in (``Session.watch_here``).
WATCH_INSTEAD = frozenset({"already_started", "room_full"})

#: Which field of the join a refusal asks the player to change (``Session.join_field``).
JOIN_FIELD: dict[str, JoinField] = {
    "unknown_room": "room",
    "room_closed": "room",
    "room_full": "again",
    "already_started": "watch",
    "no_spectators": "room",
    "wrong_password": "password",
    "password_required": "password",
    "name_taken": "name",
    "bad_name": "name",
}


#: Refusals of a join that say "not now" rather than "no": a saved seat is kept through them.
TRY_LATER = frozenset({"too_many_guesses", "rate_limited"})


def host_port(url: str) -> str:
    """'ws://h:1/' -> 'h:1' (for lines that must stay short)."""
    return url.split("://", 1)[-1].rstrip("/")


def chat_line(name: str, text: str) -> str:
    """How a chat line reads in the feed, said now or before one came back."""
    return f"{name}: {text}"


#: Said when the server refused a chat line as too quick: two rows at 80 columns, whole.
CHAT_BACK = (
    "Chatting too fast: that line was not sent. It is back in the input: send it again soon."
)


class Session(Inputs):
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
        #: Whether a computer player has sat at this table since its game (or lobby) began: the
        #: board keeps room for the ⚙ mark while this holds, so that its columns do not move when
        #: a person takes a computer's seat back.
        self.computers_seen = False
        self._computers_of: str | None = None  # the game (or room, in a lobby) that holds
        self.seat: int | None = None
        self.token: str | None = None
        self.player_id: str | None = None
        self.joined = False
        #: Seated or watching at least once in this run (else the program exits non-zero).
        self.joined_once = False
        self.joining: str | None = None  # resume | join | create | watch, while waiting
        self.join_error: str | None = None
        #: The part of the join the player must change after a refusal (None: nothing asked).
        self.join_field: JoinField | None = None
        self._last_join_refusal: str | None = None  # (``_join_refused``)
        self.connected = False
        self.banner: str | None = None
        self.retry_at: float | None = None
        #: Set when the connection gave up (``on_gave_up``): the reason; the UI offers r or quit.
        self.gave_up: str | None = None
        #: ``client.net`` waits on it after giving up; the retry key sets it (a new one each time).
        self.retry = trio.Event()
        #: When the connection came back by itself while "r: try again" was offered (the
        #: client tries now and then on its own): an r pressed just after is not text.
        self.back_unasked: float | None = None
        self.ended: str | None = None  # the server said goodbye for good: no reconnecting
        self.bye_reason: str | None = None  # the last goodbye, until the close code is known
        self.server_name: str | None = None
        #: The server certificate's fingerprint, when it was accepted by pinning (``Trust``).
        self.pin: str | None = None

        self.feed: deque[FeedLine] = deque(maxlen=500)
        self.feed_scroll = 0  # wrapped feed lines scrolled back (PgUp), 0 = the newest
        self.status: tuple[StatusKind, str] | None = None
        self.deadline_at: float | None = None
        self.overlay: Overlay | None = None
        self._keys_ignored_until = 0.0
        self.draft: str | None = None  # text the input line should hold next (see settle_input)
        self._held: str | None = None  # a line typed before a y/n question, kept aside
        #: The command that watches the room whose game started without this player.
        self.watch_instead: str | None = None
        self.watching_instead = False
        self.gave_up_seat = False
        self.paused_on_quit = False
        self._auto_card: Overlay | None = None  # the results card that opened by itself
        self._talk_of: str | None = None  # the room whose table talk the feed holds

        self.marks: set[int] = set()
        self.no_crystal_asked: tuple | None = None
        self.confirm_word: str | None = None
        self.sub: tuple = ()  # review / lobby sub-steps
        self.form: SetupForm | None = None
        self._phase_key: tuple | None = None
        self._owner: tuple | None = None
        self._reveal_sent: set[tuple] = set()
        self._reveal_index: dict[tuple, int] = {}
        self._my_words: dict[tuple, str] = {}
        #: The newest receipt kept per (game, signed): nothing older is written again.
        self._receipt_seq: dict[tuple[str, bool], int] = {}
        #: (room, commitment) of the deal this client last added a share to, until the server
        #: names its game (``StateDir.name_deal``).
        self.dealt: tuple[str, str] | None = None
        self.sent: list[ClientMsg] = []  # every message handed to send, for tests and the log
        self.first_time = not store.seen("howto")
        self._reason = ""  # why the connection was lost, for the banner
        self._first_seat: tuple[int, str, bool] | None = None  # said with the first view

        # --create asks the settings once the server has answered (see on_connected).
        self._ask_settings = create and not spectator and ask_settings
        self.pending_settings = settings or RoomSettings()
        if not spectator and self.room and not create:
            self._load_seat()

    def _load_seat(self) -> None:
        """Resume a seat this user holds in ``self.room`` (same name, or no name given)."""
        assert self.room is not None
        saved = self.store.load_seat(self.server, self.room)
        if saved is None:  # the same server at another port, its rooms back (load_seat_moved)
            saved = self.store.load_seat_moved(self.server, self.room)
        name = self.name
        if saved and (name is None or saved.get("name", "").casefold() == name.casefold()):
            self.token = saved["token"]
            self.seat = saved.get("seat")
            self.name = saved.get("name") or name

    # ---------------------------------------------------------------- connection events

    def join_messages(self) -> list[ClientMsg]:
        """What to send right after the server's welcome (also after each reconnection)."""
        self.joined = False
        if self.join_field is not None:
            return []  # waiting for the player to change the refused part
        if self.spectator:
            self.joining = "watch"
            return [Watch(room=self.room or "", password=self.password)]
        if self.token and self.room:
            self.joining = "resume"
            return [ResumeSeat(room=self.room, token=self.token)]
        if not self.name:
            return []  # waiting for the player to type a name
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
        if self.banner and self.joined_once:
            self.add_feed("connection restored", "me")
        self.banner = None
        self.retry_at = None
        if self.gave_up is not None:  # back by itself while "r: try again" was offered
            self.back_unasked = self.clock()
        self.gave_up = None
        self._reveal_sent.clear()
        if self._ask_settings:
            # The server is there: now the settings are worth asking.
            self._ask_settings = False
            self.form = SetupForm(settings=self.pending_settings)
        return self.join_messages()

    def on_disconnected(self, reason: str, retry_in: float | None) -> None:
        was = self.connected
        self.connected = False
        self.joined = False if self.ended is None else self.joined
        self.retry_at = None if retry_in is None else self.clock() + retry_in
        if self.ended is not None:
            self.banner = f"disconnected: {self.ended}"  # the status row shows it, said once
        elif was or self.view is not None:
            self.banner = f"connection lost ({reason})"
        else:
            self.banner = f"cannot reach {self.server} ({reason})"
        self._reason = reason

    def on_gave_up(self, reason: str) -> None:
        """The server could not be reached after a few tries: offer to try again or quit.

        ``client.net`` then waits for ``self.retry``; the retry key (r) sets it. Each give-up
        gets a new Event, since a Trio Event cannot be cleared.
        """
        # Either the reason ("connection refused") or the whole line client.net says
        # ("Cannot reach ws://h:1 (connection refused)"): keep the reason, say the line here.
        said = re.fullmatch(r"Cannot reach \S+(?: \((.*)\))?\.?", reason.strip())
        if said is not None:
            reason = said.group(1) or ""
        self.connected = False
        self.joined = False if self.ended is None else self.joined
        self.retry_at = None
        self.back_unasked = None  # (an r now is the one the screen asks for again)
        self.gave_up = reason
        self.retry = trio.Event()
        self.banner = f"cannot reach {self.server}" + (f" ({reason})" if reason else "")

    def try_again(self) -> None:
        """The player asked to retry after a give-up."""
        if self.gave_up is None:
            return
        self.gave_up = None
        self.back_unasked = None
        self.banner = f"trying {host_port(self.server)} again…"
        self.retry.set()

    def banner_text(self, width: int = 80) -> str | None:
        """The connection line for the status row, shortened on purpose to ``width`` cells."""
        if self.gave_up is not None:
            why = f" ({self.gave_up})" if self.gave_up else ""
            hp = host_port(self.server)
            keys = "r: try again, Ctrl-Q: quit"
            return first_fitting(
                [
                    f"Cannot reach {self.server}{why}. {keys}",
                    f"Cannot reach {hp}{why}. {keys}",
                    f"Cannot reach {hp}. {keys}",
                    f"No server. {keys}",
                ],
                width,
            )
        if self.banner is None:
            return None
        if self.retry_at is None:
            if self.ended is not None and self.banner == f"disconnected: {self.ended}":
                # Its first clause, and where the rest is: cut at the edge, the line the eye
                # lands on ended "so its room will…" (found by a newcomer).
                first = self.ended.split("; ", 1)[0]
                return first_fitting(
                    [self.banner, f"disconnected: {first} (the feed says more)", first], width
                )
            return shorten(self.banner, width)
        wait = max(0, round(self.retry_at - self.clock()))
        again = "reconnecting…" if wait <= 0 else f"reconnecting in {wait} s…"
        reason = self._reason
        hp = host_port(self.server)
        lead = (
            "connection lost"
            if (self.joined_once or self.view is not None)
            else (f"cannot reach {self.server}")
        )
        return first_fitting(
            [
                f"{self.banner} — {again}",
                f"{lead} — {again}",
                f"cannot reach {hp} ({reason}) — {again}",
                f"cannot reach {hp} — {again}",
                again,
            ],
            width,
        )

    def left_room(self) -> bool:
        """The server said goodbye for good to a seat that is no longer at the table: a lobby's
        seat (the host removed it, say), or a player removed from the game (their last view
        says so). The table on screen is no longer this player's. Not once the game is over:
        a removal can end it (the last round's conjurer removed), and then the final standings
        are this player's too."""
        v = self.view
        if self.ended is None or v is None:
            return False
        if v.phase == "lobby":
            return True
        me = self.me
        return me is not None and me.kicked and v.phase != "over"

    # ---------------------------------------------------------------- server messages

    def on_message(self, msg: object) -> None:
        if isinstance(msg, Update):
            self._on_update(msg)
        elif isinstance(msg, Seated):
            self._on_seated(msg)
        elif isinstance(msg, Watching):
            self.joined = True
            self.joined_once = True
            self.joining = None
            self._joined_now()
            self.room = msg.room
            self.add_feed(f"watching room {msg.room}", "me")
        elif isinstance(msg, Error):
            self._on_error(msg)
        elif isinstance(msg, Chat):
            self.add_feed(chat_line(msg.name, msg.text), "chat")
        elif isinstance(msg, ByeMsg):
            # Final or not depends on the close code that follows (see client.net).
            self.bye_reason = msg.reason
            reason = msg.reason
            if self.spectator:
                # Spectators hold no token: leave out what only a seated player can do.
                reason = "; ".join(p for p in reason.split("; ") if "token" not in p) or reason
            self.add_feed(f"the server closed the connection: {reason}", "error")
        elif isinstance(msg, Welcome):
            self.server_name = msg.server

    def _joined_now(self) -> None:
        """A join went through: the refusal and its question are over, and so is an offer to
        watch instead (kept, a seat's later refusal offered it: found by review)."""
        self.join_error = None
        self.join_field = None
        self.watch_instead = None
        if self.status is not None and self.status[0] == "error":
            self.status = None

    def _on_seated(self, msg: Seated) -> None:
        first = not self.joined_once
        if self.spectator:  # a free seat taken in the lobby it watched (``seat_offered``)
            self.spectator = self.watching_instead = False
            self.add_feed(f"you took board {msg.seat + 1} in room {msg.room}", "me")
        self.joined = True
        self.joined_once = True
        how = self.joining
        self.joining = None
        self._joined_now()
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
        if first:
            # Said with the first view: a seat resumed in a game underway is a return, a seat
            # in a lobby (a new room made for us by ``make play``, say) is a first sitting.
            self._first_seat = (msg.seat, msg.room, how == "resume")
        elif how == "resume":
            self.add_feed(f"back at board {msg.seat + 1} in room {msg.room}", "me")

    def _on_error(self, msg: Error) -> None:
        text = msg.message.strip() or msg.code.replace("_", " ")
        if self.joined and self.joining == "join":  # a free seat, taken by another first:
            self.joining = None  # the spectator watches on (``seat_offered``)
        if not self.joined and self.joining is not None:
            how = self.joining
            self.joining = None
            if how == "watch" and self.watching_instead:
                # Watching was this player's way in, not their wish (the room takes no
                # spectators, say): a code typed next is a room to sit in (found by review).
                self.spectator = self.watching_instead = False
            if how == "resume" and msg.code in TRY_LATER:
                # Refused for now, not for good: the saved seat stays, for Enter to try again.
                self.watch_instead = None  # (a seat of one's own is not given up for a look)
                self._join_refused(text, "again")
                return
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
            if msg.code == "wrong_password" and not self.password:
                text = f"Room {self.room} has a password: type it to come in."
            if msg.code == "already_started":
                # Nothing to retype: only the game's own players can come back (with their seat).
                text = f"The game in room {self.room} has started without you."
            # A late friend can still watch, here and now (Enter; for a full room, where a seat
            # may free up and Enter tries again, w). It was "quit and type this other command",
            # and the command is still said if they quit. Another refusal takes the offer back
            # (a w typed for a wrong code watched that room: a newcomer).
            self.watch_instead = (
                watch_command(self.server, self.room or "", program_here())
                if msg.code in WATCH_INSTEAD
                else None
            )
            self._join_refused(text, JOIN_FIELD.get(msg.code, "again"))
            return
        if msg.code == "chat_busy":
            # The line is given back to be sent again (refused after it left the input line,
            # it was lost, though the sentence said to say it again: seen with friends). Of a
            # burst, the last line sent comes back, once, and is what each refusal speaks of.
            if self.last_chat is not None:
                self.draft, self.last_chat = "/say " + self.last_chat, None
            self.refuse(CHAT_BACK)
            return
        if msg.code == "reveal_mismatch":
            key = self._round_key()
            if key is not None:
                self._reveal_index[key] = self._reveal_index.get(key, 0) + 1
                self._reveal_sent.discard(key)
                self._my_words.pop(key, None)
                self._maybe_reveal()
                return
        self.refuse(text)

    def _add_earlier(self, v: View, earlier: list[str], earlier_chat: list[EarlierChat]) -> None:
        """A connection's first view from a room: the table talk and the chat before it, as the
        room kept them (``Update.earlier``).

        Back with an empty screen (a closed terminal, another machine), all of it. Back with
        the feed kept (a connection lost and made again), what came after the last line this
        client was told: it showed none, and a friend back after the host's restart was never
        told "Hal resumed the game" (found by a newcomer). One's own comings and goings are no
        news (seen: a newcomer read "Mira is away." as they sat down); the seat's name is the
        one the room said them with.
        """
        me = next((p.name for p in v.players if p.seat == v.you), None)
        own = (
            {f"{me} is away.", f"{me} is back.", f"{me} created room {v.room}."}
            if me is not None
            else set()
        )
        # (no more than a server keeps: a bigger list is no server's, and took seconds)
        lines = earlier[-EARLIER_LINES:]
        chat = sorted(earlier_chat[-EARLIER_LINES:], key=lambda c: c.after)
        if self._talk_of != v.room:
            start = 0
            # (a server keeps that many: a full list may have lost older ones)
            cut = f" (the newest {EARLIER_LINES} lines)" if len(lines) == EARLIER_LINES else ""
            heading = f"earlier in room {v.room}{cut}:"
        else:
            last = next((f.text for f in reversed(self.feed) if f.kind == "event"), None)
            found = [i for i, line in enumerate(lines) if line == last]
            if not found:
                return  # nothing to place it after: what this client kept is all it knows
            start = found[-1] + 1
            heading = "while you were away:"
        heard = {f.text for f in self.feed if f.kind == "chat"}
        told: list[tuple[str, str]] = []
        k = 0
        for i, line in enumerate(lines):
            while k < len(chat) and chat[k].after <= i:
                if not start or chat[k].after >= start:
                    told.append((chat_line(chat[k].name, chat[k].text), "chat"))
                k += 1
            if i >= start and line not in own:
                told.append((line, "event"))
        told += [
            (chat_line(c.name, c.text), "chat") for c in chat[k:] if not start or c.after >= start
        ]
        if start:  # (chat said as the connection went may have reached it still)
            told = [(text, kind) for text, kind in told if kind != "chat" or text not in heard]
        if told:
            self.add_feed(heading, "me")
            for text, kind in told:
                self.add_feed(text, kind)

    def _join_refused(self, text: str, field: JoinField) -> None:
        """Said once on the status line and shown with the field to change; not in the feed
        as well, where the same sentence read as a second refusal. The same refusal again
        says it was tried again: the screen did not change, as if Enter had done nothing
        (found by a newcomer at a full room)."""
        again = text == self._last_join_refusal
        self._last_join_refusal = text
        self.join_error = text
        self.join_field = field
        self.say("error", f"Tried again: {text[:1].lower()}{text[1:]}" if again else text)

    def watch_here(self) -> None:
        """Watch the room this player could not sit in, on the same connection (offered when
        its game has started or it is full: ``JOIN_FIELD``)."""
        self.spectator = True
        self.watching_instead = True
        self.token = None
        self.watch_instead = None
        self.join_again()

    def _on_update(self, msg: Update) -> None:
        old = self.view
        v = msg.view
        self.view = v
        table = v.game_id or v.room
        if table != self._computers_of:
            self._computers_of, self.computers_seen = table, False
        self.computers_seen = self.computers_seen or any(p.computer for p in v.players)
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
        quiet: set[str] = set()
        if msg.earlier or msg.earlier_chat:
            self._add_earlier(v, msg.earlier, msg.earlier_chat)
        self._talk_of = v.room
        if self._first_seat is not None:
            seat, room, resumed = self._first_seat
            self._first_seat = None
            if resumed and v.phase != "lobby":
                self.add_feed(f"back at board {seat + 1} in room {room}", "me")
            else:
                self.add_feed(f"you sit at board {seat + 1} in room {room}", "me")
            quiet = {f"{self.name} is back.", f"{self.name} joined."}
        for line in msg.feed:
            if line not in quiet:  # "Ann is back." about ourselves: we said "back at board …"
                self.add_feed(line)
        if msg.feed and self.status is not None and self.status[0] == "info" and not self.overlay:
            # A move's confirmation ("You proposed ...") is over once the feed, in sight, says
            # what happened: seen at 80x24, it stayed after the proposal had been rejected.
            self.status = None
        if msg.receipt is not None and v.game_id:
            self._save_receipt(v.game_id, msg.receipt)
        if self.dealt is not None and v.game_id and v.phase != "lobby":
            # (not kept: the deal's check still runs on its commitment, room and seat)
            with contextlib.suppress(OSError):
                self.store.name_deal(*self.dealt, v.game_id)
            self.dealt = None
        # In the lobby, who is seated counts too: "a game needs at least 3 players" stayed up
        # after four had joined, and a board number half typed for a removal may name another.
        seated = sum(not p.kicked for p in v.players) if v.phase == "lobby" else None
        key = (v.game_id, v.round, v.phase, seated)
        if key != self._phase_key:
            self._phase_key = key
            if self.spectator and self.overlay is not None and self.overlay is self._auto_card:
                # A spectator makes no move to close it: the results that opened by themselves
                # give way when the next phase begins (seen: they hid two rounds of play).
                self.close_card()
            self.marks = set()
            self.sub = ()
            self.kick_question = None  # board numbers may name others now
            self.status = None  # a warning or a refusal belongs to the phase it was said in
            if self.confirm_word is not None and self._owner is not None:
                # Asked about ("lock it in anyway?"), never answered: it was lost without a
                # line when the summon closed (found by review); said as for text typed.
                word, self.confirm_word = self.confirm_word, None
                self._left_behind(self._owner, word)
            self.confirm_word = None
            if old is not None and old.phase == "lobby" and v.phase != "lobby":
                self.form = None
                if self.first_time:
                    self.first_time = False
                    self.store.mark_seen("howto")
        elif (
            old is not None
            and old.paused
            and not v.paused
            and self.status is not None
            and self.status[0] in ("warn", "error")
        ):
            # The pause ended: a refusal said during it no longer holds (seen: "The game is
            # paused: your text is kept." stayed up after the host resumed).
            self.status = None
        self._open_results(old, v)
        self._told_host(old, v)
        self._maybe_reveal()

    def _open_results(self, old: View | None, v: View) -> None:
        """A round just ended: its results stay on screen until closed or the next action."""
        # From the first round this view brings: two can end at once (seen: a round scored,
        # then the next void at once, its conjurer removed; the first round's card never showed).
        seen = old is not None and old.game_id == v.game_id
        known = len(old.results) if old is not None and seen else len(v.results) - 1
        first = v.results[max(0, min(known, len(v.results) - 1))].round if v.results else None
        if v.phase == "over":
            if old is None or old.phase != "over":
                self.open_card("over", first)
            return
        if old is None or old.game_id != v.game_id or not v.results:
            return
        if len(v.results) > len(old.results):
            self.open_card("results", first)
            self._auto_card = self.overlay

    def _told_host(self, old: View | None, v: View) -> None:
        """The seat of the host passed to this player during a game: say what that gives them
        (seen: a friend became host while the old host's turn stalled, and was told nothing)."""
        if old is None or v.you is None or old.game_id != v.game_id:
            return
        if v.host == v.you and old.host != v.you and v.phase not in ("lobby", "over"):
            self.say("info", "You are the host now: /pause, /skip N and /kick N are yours (F1).")

    def _save_receipt(self, game_id: str, receipt: Receipt) -> None:
        """Keep the newest receipt, and the newest the server signed (its signature checked:
        one that does not verify proves nothing, so it is not kept as if it did)."""
        seq, hash_ = receipt.seq, receipt.hash
        signed = None
        if (
            receipt.key is not None
            and receipt.sig is not None
            and self._receipt_seq.get((game_id, True), -1) < seq
            and verify(receipt.key, receipt.sig, game_id, seq, hash_)
        ):
            signed = {"seq": seq, "hash": hash_, "key": receipt.key, "sig": receipt.sig}
        if signed is None and self._receipt_seq.get((game_id, False), -1) >= seq:
            return
        try:
            self.store.save_receipt(
                game_id, seq, hash_, server=self.server, room=self.room or "", signed=signed
            )
            self._receipt_seq[(game_id, False)] = seq
            if signed is not None:
                self._receipt_seq[(game_id, True)] = seq
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
        self.say("info", f"Revealing your word '{chosen['word']}'.")
