"""One room, one Trio task: joins, leaves, commands and clock ticks are handled one at a time.

Everything that changes a room arrives through its inbox (an unbounded queue: each
connection has at most one request in flight, so it stays small). For an accepted game command the
order is fixed: ``decide`` -> append the events to the log and fsync -> fold them into the state ->
send every viewer one ``Update``. Nobody hears of an action before it is durable, and the room never
awaits a client (see ``server.connection``).

A failed append (a full disk) stalls this room only: nothing unacknowledged is kept, the players are
told in words, game commands are refused, and the room keeps trying to reopen its log; once the disk
takes writes again the game goes on from its log. Rooms end: an empty lobby after
``lobby_idle_close``, a finished game after ``idle_close``, and a started game with no connected
player for ``abandon_after`` ends as abandoned, a fact in its log. Spectators are many and passive,
so what they are sent is coalesced (at most one update per ``spectator_interval``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import secrets
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

import msgspec
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from conjure.protocol import messages as m
from conjure.protocol.deal import combined_seed, commitment_of, seeded_deal
from conjure.protocol.deck import Card
from conjure.protocol.errors import Refusal
from conjure.protocol.events import (
    HOST_AWAY,
    HOST_LEFT,
    DealRecord,
    GameAbandoned,
    GameEnded,
    GameSetup,
    Limits,
    PresenceChanged,
    RoundStarted,
    event_data,
    event_type,
)
from conjure.protocol.messages import InLimits, Receipt, ResultView, RoomSettings
from conjure.protocol.receiptsig import key_text, sign
from conjure.protocol.structs import struct_tag
from conjure.protocol.words import shape_problem, word_fingerprint
from conjure.server import feed, results
from conjure.server.config import ServerConfig
from conjure.server.connection import CLOSE_GOING_AWAY, CLOSE_NORMAL, frame_of
from conjure.server.gate import Bucket, address_key, bucket_for, forget_refilled
from conjure.server.lobby import (
    Lobby,
    PasswordHash,
    build_deck,
    check_password,
    clean_settings,
    new_game_id,
    token_matches,
)
from conjure.server.logformat import LOG_FORMAT, LogError, LogRecord
from conjure.server.logstore import Batch, LogFailure
from conjure.server.members import Members, Roster
from conjure.server.patching import Frames, public_doc
from conjure.server.roomio import GameLog, LogStore, Viewer
from conjure.server.rules import commands as cmd
from conjure.server.rules.decide import decide, decide_and_fold
from conjure.server.rules.state import Game
from conjure.server.views import Table, ViewCache, update_frames

CLOSE_INTERNAL = 1011
log = logging.getLogger("conjure.server")

#: Said to the table when the log cannot be written, and when it can again.
LOG_STALLED = (
    "The server cannot write this game's log (is its disk full?), so the game is on hold: "
    "nothing you were told about is lost. It goes on by itself once the log can be written."
)
LOG_BACK = "The game log can be written again: play on."
DEALING = "The cards are being dealt; try again in a moment."
CHAT_BUSY = (
    "You are chatting faster than a player may: that line was not sent; say it again in a moment."
)
#: A removed player's goodbye.
REMOVED = "the host removed you from the game"
#: The messages ``to_command`` makes game commands of (a kick only once the game started).
_GAME_MSGS = (
    m.ChooseCard,
    m.WriteSpell,
    m.MarkBoards,
    m.CommitSummon,
    m.RevealSummon,
    m.ChallengeWord,
    m.ProposeSame,
    m.CastVote,
    m.ReviewDone,
    m.PauseGame,
    m.ResumeGame,
    m.SkipPlayer,
    m.KickPlayer,
)
#: What would change the table while it is being dealt for.
_LOBBY_CHANGES = (m.JoinRoom, m.Leave, m.ChangeSettings, m.SeatOrder, m.KickPlayer, m.StartGame)
#: Events after which the receipt is signed: a round begins (the first with the game's start),
#: or the game ends.
_SIGNED_AFTER = frozenset((RoundStarted, GameEnded, GameAbandoned))


@functools.cache
def _public(key: Ed25519PrivateKey) -> str:
    return key_text(key)


@dataclass
class Dealing:
    """The deal between the host's start and the game: the server's seed is committed, the
    seats' shares come in (protocol.deal)."""

    server_seed: str
    commitment: str
    deadline: float
    waiting: set[int]  #: connected seats whose share has not come yet
    host: Viewer
    deck: tuple[Card, ...]
    contributions: dict[int, str] = field(default_factory=dict)


#: Why a room with a password admits no spectators once the server restarted.
NO_SPECTATORS_AFTER_RESTART = (
    "This room has a password, which the server does not keep across a restart, so since its "
    "restart it admits no spectators; its players come back with their seats."
)


#: Told to whoever comes back to a game resumed after a restart (the last of ``Update.earlier``):
#: the table talk before it is told again from the log, but chat is not logged (seen: a player
#: back after a restart found the chat gone, with nothing to say so).
RESTARTED = "The server restarted; the game goes on (chat said before it is not kept)."


class Request:
    """A decoded client message for this room; ``done`` is set once it has been handled.

    (A plain class with slots: one is made for every message a client sends.)"""

    __slots__ = ("conn", "done", "msg")

    def __init__(self, conn: Viewer, msg: m.ClientMsg) -> None:
        self.conn = conn
        self.msg = msg
        self.done = trio.Event()


#: Comings and goings told to the table per address (``Room._announce``): one every 2 s, 12 at
#: once (a full table of 8 joining from one machine, and some to spare).
COMINGS_RATE = 0.5
COMINGS_BURST = 12
#: Beyond that budget, the table hears of them no more often than this (seconds).
COMINGS_QUIET = 1.0
#: A seat whose connection went is told away only once it has stayed away this long (seconds).
AWAY_GRACE = 2.0


@dataclass
class Detached:
    """A connection of this room has gone (closed, dropped or timed out)."""

    conn: Viewer


@dataclass
class Stop:
    """Close the room (server shutdown); requests queued before it are still handled."""

    reason: str


#: What a seat's records in one round are counted as (``Room._budget``).
Budget = Literal["actions", "presence", "changes"]

#: The shutdown goodbye to a paused game's table (``Room._bye_for_stop``).
PAUSED_SHUTDOWN_BYE = (
    "the server is shutting down; your game is saved, and stays paused until it is back and the"
    " host resumes it"
)


def watchers_words(reason: str) -> str:
    """A goodbye to the table, as a spectator reads it: the game is not theirs (a spectator
    was told "your game is saved" as the server stopped)."""
    return reason.replace("your game", "the game")


#: A step of the wall clock larger than this (seconds) is not time the room's own waits lasted.
CLOCK_STEP = 2.0

#: At most this many queued game commands are made durable together (``Room._game_commands``).
GROUP_MOST = 16


@dataclass
class Decided:
    """A game command of a group, decided: its events and the state they lead to."""

    command: cmd.AnyCommand
    events: list
    state: Game


def msg_tag(msg: m.ClientMsg) -> str:
    return struct_tag(type(msg))


def scaled(limits: InLimits, scale: float) -> Limits:
    """The limits a game runs with (``scale`` < 1 only in tests, for fast clocks)."""
    base = limits.to_limits()
    if scale == 1.0:
        return base
    return Limits(
        **{k: (None if v is None else v * scale) for k, v in msgspec.structs.asdict(base).items()}
    )


def settings_of(game: Game, scale: float = 1.0) -> RoomSettings:
    """Settings of a game resumed from its log (custom cards are in the dealt cards already).

    A room that had a password admits no spectators after a restart: the password is never logged.
    """
    limits = InLimits(
        **{
            k: (None if v is None else max(5.0, round(v / scale, 3)))
            for k, v in msgspec.structs.asdict(game.setup.limits).items()
        }
    )
    deck = (
        game.setup.deck if game.setup.deck in ("default", "default+custom", "custom") else "default"
    )
    return RoomSettings(
        variant=game.setup.variant,
        deck=deck,
        limits=limits,
        spectators=game.setup.spectators and not game.setup.private,
        house_rules=list(game.setup.house_rules),
    )


class Room:
    """A room's state and task. Create, then run :meth:`run` in a nursery."""

    def __init__(
        self,
        code: str,
        config: ServerConfig,
        on_closed: Callable[[Room], None],
        *,
        store: LogStore,
        lobby: Lobby | None = None,
        password: PasswordHash | None = None,
        game: Game | None = None,
        writer: GameLog | None = None,
        receipt: Receipt | None = None,
        results_: list[ResultView] | None = None,
        creator: str | None = None,
        told: Iterable[str] = (),
        on_wrong_password: Callable[[Viewer], None] | None = None,
        on_whole_views: Callable[[Viewer, int], None] | None = None,
    ) -> None:
        self.code = code
        #: The source address that created the room (None: resumed from a log); its limits count it.
        self.creator = creator
        #: Why the room ended, for the operator's log.
        self.end_reason = ""
        self.config = config
        self._on_closed = on_closed
        #: Told of each wrong password (the server counts them against the sender's address).
        self._on_wrong_password = on_wrong_password
        #: Asked before a lobby change sends its whole views: raises the Refusal if the
        #: sender's address is over its budget of them (the server's ``view_rate``).
        self._on_whole_views = on_whole_views
        #: Where this room's game log is kept (the server's: ``roomio.DiskLogStore``).
        self.store = store
        self.lobby = lobby if lobby is not None or game is not None else Lobby()
        self.password = password
        self.game = game
        self.writer = writer
        #: Resumed from its log: its last record, signed, so that whoever comes back holds the
        #: server's word for all that was played before the restart.
        self.receipt = receipt if receipt is None else self._receipt_of(receipt.seq, receipt.hash)
        self.results: list[ResultView] = results.extend_views(game, [])
        if self.lobby is not None:
            self.settings = self.lobby.settings
        else:
            assert game is not None  # no lobby: the room was resumed from its log
            self.settings = settings_of(game, config.limit_scale)
        #: Each seat's live connection, the spectators, who is away since when (server.members).
        self.members = Members()
        now = config.clock()
        if game is not None:  # a room loaded from its log: everyone is away
            self.members.away_since = {p.id: now for p in game.setup.players}
        #: Each seat's chat budget (``ServerConfig.chat_rate``): each line reaches every member.
        self._chat: dict[str, Bucket] = {}
        #: The chat budgets of seats that left the lobby, by address, until they refill: a seat
        #: joined again from there takes its budget back (``_chat_budget``).
        self._chat_left: dict[str, Bucket] = {}
        #: Comings and goings told to the table, by address (``_announce``).
        self._comings: dict[str, Bucket] = {}
        #: Seats whose connection went, not yet told as away: player id -> (when to tell it,
        #: the connection that went). See ``AWAY_GRACE``.
        self._going: dict[str, tuple[float, Viewer]] = {}
        #: The last time the host role could not pass at once was logged (``_leave``).
        self._host_stays_logged = -math.inf
        #: Since when no seat has been connected (spectators do not keep a game alive).
        self.no_player_since: float | None = now
        #: The log could not be written: when to try reopening it (None: all is well).
        self.stalled_retry: float | None = None
        self._stall_reason = ""
        #: Coalesced sends: when spectators (and, for a count change, players) are next due.
        self._spectators_due: float | None = None
        self._spectator_lines: list[str] = []
        self._spectators_sent = -math.inf
        self._players_due: float | None = None
        #: Seats whose connection came or went, to be logged as presence events (seat -> connected).
        self._presence: dict[int, bool] = {}
        #: The deal under way, between the host's start and the game (None otherwise).
        self._dealing: Dealing | None = None
        #: The wall clock less the steady one, as last seen (``_follow_clock_steps``).
        self._steady = config.elapsed_clock()
        self._clock_offset = now - self._steady()
        #: Records each seat has had logged this round, by budget: (round number, (seat,
        #: budget) -> count); see ``_budget``.
        self._acted: tuple[int, dict[tuple[int, Budget], int]] = (0, {})
        #: Seats whose coming or going went unlogged for their budget: logged at the next round.
        self._presence_owed: set[int] = set()
        # A game resumed after a restart: nobody is connected any more.
        restarted = game is not None and not game.over
        if game is not None and restarted:  # (both: the checker narrows ``game`` on the first)
            self._presence = {
                p.seat: False
                for p in game.setup.players
                if p.seat not in game.kicked and p.seat not in game.away
            }
        self.closed = False
        self._idle = False
        self._view_cache = ViewCache()
        #: Views made for patching clients so far: each has its number (server.patching).
        self._views_made = 0
        #: The table talk so far (the newest lines), for a connection's first view: seen, a
        #: player who came back after a terminal was closed found the table talk gone.
        if restarted:
            told = [*told, RESTARTED]
        self._told: deque[str] = deque(told, maxlen=m.EARLIER_LINES)
        #: Lines told in all (``_told`` keeps the newest), and the newest chat with how many
        #: lines had been told before each: a first view places its chat among its lines.
        self._told_count = len(self._told)
        self._said: deque[tuple[int, m.Chat]] = deque(maxlen=m.EARLIER_LINES)
        self._roster_of: tuple[GameSetup, int, set[int], bool, Roster] | None = None
        # A deque and a parking lot rather than a memory channel: queued requests are handled
        # back to back, without a scheduler round trip each (the room awaits only its log).
        self._inbox: deque[Request | Detached | Stop] = deque()
        self._wakeup = trio.lowlevel.ParkingLot()

    @property
    def conns(self) -> dict[str, Viewer]:
        """Player id -> its live connection."""
        return self.members.conns

    @property
    def watchers(self) -> set[Viewer]:
        return self.members.watchers

    @property
    def away_since(self) -> dict[str, float]:
        return self.members.away_since

    def _roster(self) -> Roster:
        """The seats as they are now: the lobby's, or once started the game's."""
        if self.lobby is not None:
            return Roster.of_lobby(self.lobby)
        g = self.game
        assert g is not None
        # What a roster is made of: the setup, the host, who was removed, whether it is over.
        # States share the parts an event leaves alone and never change one in place
        # (rules.evolve), so the same objects mean the same roster, state after state.
        made = self._roster_of
        if (
            made is None
            or made[0] is not g.setup
            or made[1] != g.host
            or made[2] is not g.kicked
            or made[3] != g.over
        ):
            made = self._roster_of = (g.setup, g.host, g.kicked, g.over, Roster.of_game(g))
        return made[4]

    def __repr__(self) -> str:
        return f"<Room {self.code} {'lobby' if self.game is None else self.game.phase}>"

    # ------------------------------------------------------------------ the task

    async def run(self) -> None:
        """The room's task: returns when the room closes; never raises (except Cancelled)."""
        try:
            await self._loop()
        except Exception:
            log.error("room %s: internal error, room closed\n%s", self.code, traceback.format_exc())
            self.end_reason = "internal error"
            self._close_all("internal server error: this room is closed", CLOSE_INTERNAL)
        finally:
            self._shut()

    def _shut(self) -> None:
        self.closed = True  # from here on ``submit`` refuses
        while self._inbox:
            item = self._inbox.popleft()
            if isinstance(item, Request):
                item.conn.send(m.error(code="room_closed", message="This room has closed."))
                item.done.set()
        self._close_all("this room has closed", CLOSE_GOING_AWAY)
        if self.writer is not None:
            self.writer.close()
        self._on_closed(self)

    def _bye_for_stop(self, reason: str) -> str:
        """The shutdown goodbye promises a resume only to a game that will resume, and a clock
        that runs on only to one that is not paused (a paused game was said to run on under
        the ⏸ on its screen: found by review)."""
        if self._running():
            assert self.game is not None
            if self.game.paused:
                return PAUSED_SHUTDOWN_BYE
            return reason
        if self.lobby is not None:
            return "the server is shutting down; this room had not started, so it will be gone"
        return "the server is shutting down; this game is over, so its room will be gone"

    async def _loop(self) -> None:
        if self._presence:
            await self._log_presence()
        while True:
            wake = self._next_wake()
            if not self._inbox:
                wait = wake - self.config.clock()
                if wait > 0:
                    with trio.move_on_after(wait):
                        await self._wakeup.park()
                # Woken by an item or by the clock. ``wake`` still holds: nothing of the room
                # changes while it waits (all comes through the inbox), only the time, unless
                # the wall clock stepped.
            if self._follow_clock_steps():
                wake = self._next_wake()
            if self.config.clock() >= wake:  # an overdue deadline goes before queued requests
                await trio.lowlevel.checkpoint()  # a timer that changed nothing must not spin
                await self._on_timer()
            elif not self._inbox:
                continue
            else:
                item = self._inbox.popleft()
                if isinstance(item, Stop):
                    self.end_reason = "server shutdown"
                    # A room that will not come back (a lobby, a game over) closes for good: a
                    # client does not dial a server gone for good (seen: "reconnecting in 3 s"
                    # under "this room had not started, so it will be gone").
                    code = CLOSE_GOING_AWAY if self._running() else CLOSE_NORMAL
                    self._close_all(self._bye_for_stop(item.reason), code)
                    return
                if isinstance(item, Detached):
                    self._on_detached(item.conn)
                else:
                    try:
                        await self._on_request(item.conn, item.msg)
                    except Refusal as e:
                        item.conn.send(
                            m.error(code=e.code, message=e.message, ref=msg_tag(item.msg))
                        )
                    finally:
                        item.done.set()
                del item  # a connection gone must not stay alive in this loop while it waits
            if self._dealing is not None and not self._dealing.waiting:
                await self._finish_deal()
            if self._presence:  # (after a start: who was away when it began, too)
                await self._log_presence()
            self._note_empty()
            if self._finished():
                return

    def _follow_clock_steps(self) -> bool:
        """Move the room's own waits with a step of the wall clock; True if it stepped.

        Why: those waits (a host away, nobody connected, the spectators' interval, a deal's
        shares, a stalled log's retry, the chat budgets) are measured on the wall clock, beside
        the game's logged deadlines, and a step of it (NTP after boot, a laptop waking from
        sleep, an operator) is not time they lasted: a step of 31 minutes abandoned every game
        nobody was connected to at that moment, and a step back would have emptied the chat
        budgets for as long (found by review). The game's own deadlines do not move: its clock
        runs on through a step, as it does through a restart (docs/RULES.md).
        """
        offset = self.config.clock() - self._steady()
        step, self._clock_offset = offset - self._clock_offset, offset
        if abs(step) < CLOCK_STEP:
            return False
        log.warning("room %s: the wall clock stepped %+.1f s; the room's waits move with it",
                    self.code, step)  # fmt: skip
        away = self.members.away_since
        for pid in away:
            away[pid] += step
        if self.no_player_since is not None:
            self.no_player_since += step
        if self.stalled_retry is not None:
            self.stalled_retry += step
        if self._spectators_due is not None:
            self._spectators_due += step
        if self._players_due is not None:
            self._players_due += step
        for pid, (due, gone) in self._going.items():
            self._going[pid] = (due + step, gone)
        self._spectators_sent += step
        if self._dealing is not None:
            self._dealing.deadline += step
        for budget in (*self._chat.values(), *self._chat_left.values(), *self._comings.values()):
            budget.stamp += step  # (a step back emptied them for as long)
        return True

    def _note_empty(self) -> None:
        """Start (or stop) the idle clock as the last seat's connection goes (or one comes)."""
        now = self.config.clock()
        if self.conns:
            self.no_player_since = None
        elif self.no_player_since is None:
            self.no_player_since = now

    def _finished(self) -> bool:
        """A lobby everyone left is gone; so is an idle room and an abandoned or ended game's room."""
        if self.end_reason:
            return True
        return self.lobby is not None and not self.lobby.seats

    def _running(self) -> bool:
        return self.game is not None and not self.game.over

    # ------------------------------------------------------------------ timers

    def _idle_limit(self) -> float | None:
        """How long this room may sit with nobody connected (None: a running game)."""
        if self.lobby is not None:
            return self.config.lobby_idle_close
        if self._running():
            return None
        return self.config.idle_close

    def _idle_since(self) -> float | None:
        """Since when the room has been idle in the sense of ``_idle_limit``: no seat
        connected. Spectators do not hold a room open: one spectator from anywhere kept a lobby
        past its 90 s, and a finished game's room for good, counted against the address that
        made it (found by reviews)."""
        return self.no_player_since

    def _next_wake(self) -> float:
        times = [math.inf]
        g = self.game
        retry = self.stalled_retry
        stalled = retry is not None
        if retry is not None:
            times.append(retry)
        if not stalled and g is not None and not g.over and not g.paused and g.deadline is not None:
            times.append(g.deadline)
        host = self._roster().host
        if (
            not stalled
            and host is not None
            and host in self.away_since
            and self._roster().successors(self.conns)
        ):
            times.append(self.away_since[host] + self.config.host_grace)
        limit = self._idle_limit()
        idle = self._idle_since()
        if limit is not None and idle is not None:
            times.append(idle + limit)
        if not stalled and self._running() and self.no_player_since is not None:
            times.append(self.no_player_since + self.config.abandon_after)
        if self._spectators_due is not None:
            times.append(self._spectators_due)
        if self._dealing is not None:
            times.append(self._dealing.deadline)
        if self._players_due is not None:
            times.append(self._players_due)
        times.extend(due for due, _ in self._going.values())
        return min(times)

    async def _on_timer(self) -> None:
        now = self.config.clock()
        if self._dealing is not None and now >= self._dealing.deadline:
            await self._finish_deal()  # the shares that came in time, and the server's
        for pid, (due, gone) in list(self._going.items()):
            if now >= due:
                del self._going[pid]
                over = self.game is not None and self.game.over  # (no news after the game)
                if pid not in self.conns and self._roster().seat(pid) is not None and not over:
                    self._announce(gone, f"{self._roster().name(pid)} is away.", arrived=False)
        if self._players_due is not None and now >= self._players_due:
            self._players_due = None
            self._broadcast([])
        if self._spectators_due is not None and now >= self._spectators_due:
            self._flush_spectators(now)
        if self.stalled_retry is not None:
            if now >= self.stalled_retry:
                await self._try_reopen_log()
            if self.stalled_retry is not None:
                return
        g = self.game
        deadline = _running_deadline(g)
        if deadline is not None and now >= deadline:
            try:
                await self._execute(cmd.Tick(now=now, deadline=deadline))
            except Refusal:  # the log failed (the room is on hold now); never spin on it
                return
        host = self._roster().host
        if (
            host is not None
            and host in self.away_since
            and now >= self.away_since[host] + self.config.host_grace
        ):
            try:
                await self._pass_host(HOST_AWAY)
            except Refusal as e:  # cannot happen with a sane engine; never spin on it
                log.warning("room %s: host not passed: %s", self.code, e.message)
                self.away_since[host] = now
        since = self.no_player_since
        if self._running() and since is not None and now >= since + self.config.abandon_after:
            await self._abandon(since)
        limit = self._idle_limit()
        idle = self._idle_since()
        if limit is not None and idle is not None and now >= idle + limit:
            self.end_reason = self.end_reason or f"nobody connected for {limit:g} s"

    async def _abandon(self, since: float) -> None:
        """Nobody has played for ``abandon_after``: the game ends as abandoned, in its log."""
        try:
            await self._execute(cmd.Abandon(now=self.config.clock(), idle_since=since))
        except Refusal as e:
            log.warning("room %s: not abandoned: %s", self.code, e.message)
            self.no_player_since = self.config.clock()  # never spin on it
            return
        if self.game is not None and self.game.over:
            assert self.game is not None
            log.info(
                "room %s: game %s abandoned (no player for %g s)",
                self.code,
                self.game.setup.game_id,
                self.config.abandon_after,
            )
            self.end_reason = "game abandoned"
            self._flush_spectators(self.config.clock())

    # ------------------------------------------------------------------ seats

    async def _pass_host(self, reason: str) -> None:
        candidates = self._roster().successors(self.conns)
        if not candidates:
            return
        # A person before a computer player: the role went to a bot while a person sat at the
        # table, and nobody there could pause, skip or remove (a newcomer's game, seen).
        people = [pid for pid in candidates if pid not in self.members.computers]
        to = (people or candidates)[0]
        if self.lobby is not None:
            self.lobby.pass_host(to)
            self._broadcast([f"{self._roster().name(to)} is now the host ({reason})."])
            return
        if self._running():
            roster = self._roster()
            i = roster.seat(to)
            gone = roster.seat(roster.host) if roster.host is not None else None
            assert i is not None
            # Passed at once because its holder left the table: a coming and going of theirs,
            # counted in that budget (a review: a host leaving and coming back, again and again,
            # grew the log without bound). Over it, the role waits for the host's grace, as for
            # a host whose connection dropped: that pass is never refused, so no table is left
            # without a host who is there (a paused game only its host can resume).
            charge: Callable[[], None] = lambda: None  # noqa: E731
            if reason == HOST_LEFT and gone is not None:
                charge = self._budget(gone, "presence")
            if await self._execute(cmd.PassHost(now=self.config.clock(), to=i, reason=reason)):
                charge()

    def _attach(self, conn: Viewer, player_id: str) -> None:
        """Bind ``conn`` to a seat; an older connection for the seat is replaced. A seat taken,
        or taken again, starts with a whole view (PROTOCOL.md, "Patches")."""
        self.members.seat(conn, player_id, self)
        conn.sent = None
        conn.earlier_due = True
        self._note_presence(player_id, True)

    def _detach(self, conn: Viewer) -> None:
        gone = self.members.release(conn, self.config.clock())
        if gone is not None:
            self._note_presence(gone, False)

    def _note_presence(self, player_id: str, connected: bool) -> None:
        """A seat came or went during a game: logged (by ``_log_presence``) once handled."""
        if self._running() and self.lobby is None:
            seat = self._roster().seat(player_id)
            if seat is not None:
                self._presence[seat] = connected

    async def _log_presence(self) -> None:
        """Presence is a fact of the game's record ("I was disconnected when the clock ran out")."""
        pending, self._presence = self._presence, {}
        if self.stalled_retry is not None or not self._running():
            return
        assert self.game is not None
        for seat, connected in pending.items():
            if (seat in self.game.away) != connected:
                continue  # the log already says so
            try:
                # A client that reconnects again and again is told live, but no longer logged
                # once over its budget (its own, so that it never stops the seat's actions).
                charge = self._budget(seat, "presence")
                logged = await self._execute(
                    cmd.Presence(now=self.config.clock(), seat=seat, connected=connected)
                )
            except Refusal as e:  # kicked since, over budget, or the log failed (room on hold)
                if e.code == "too_many_actions":
                    self._presence_owed.add(seat)  # logged as it stands once the round is new
                continue
            if logged:
                charge()

    def _on_detached(self, conn: Viewer) -> None:
        if conn.room is not self:
            return
        pid = conn.player_id
        was_seat = not conn.spectator and pid is not None and self.conns.get(pid) is conn
        if was_seat and self._dealing is not None and pid is not None:
            i = self._roster().seat(pid)
            self._dealing.waiting.discard(i if i is not None else -1)  # dealt without their share
        self._detach(conn)
        if was_seat and not (self.game is not None and self.game.over):
            # (after the game, players leaving is no news: seen, a newcomer read every
            # computer player "away" as the final standings came up)
            assert pid is not None
            # The views show it at once; the sentence waits until the seat has stayed away a
            # moment: a client taking its seat again at once (make play's client after its
            # launcher; a blip of the network) is no news (a newcomer's table read "Zed is
            # away." and "Zed is back." as make play began).
            self._going[pid] = (self.config.clock() + AWAY_GRACE, conn)
            self._announce(conn, None, arrived=False)
        else:
            self._viewers_changed()

    # ------------------------------------------------------------------ requests

    async def _on_request(self, conn: Viewer, msg: m.ClientMsg) -> None:
        if not conn.open:  # it went while the request waited: nobody to act for or answer
            return
        # (a spectator changes no table: it may stop watching, and is told what it may not do)
        if self._dealing is not None and isinstance(msg, _LOBBY_CHANGES) and not conn.spectator:
            raise Refusal("dealing", DEALING)
        match msg:
            case m.CreateRoom():
                self._create(conn, msg)
            case m.JoinRoom():
                self._join(conn, msg)
            case m.ResumeSeat():
                self._resume(conn, msg)
            case m.Watch():
                self._watch(conn, msg)
            case m.Leave():
                await self._leave(conn)
            case m.Resync():
                if conn.room is not self:
                    raise Refusal("not_in_room", "Join a room first.")
                self._send_view(conn)
            case m.SendChat():
                pid = self.members.acting(conn, self)
                now = self.config.clock()
                if self._chat_budget(conn, pid, now).take(now) > 0:
                    raise Refusal("chat_busy", CHAT_BUSY)
                i = self._roster().seat(pid)
                chat = m.Chat(name=self._roster().name(pid), text=msg.text, seat=i)
                self._said.append((self._told_count, chat))
                self._send_all(chat)
            case m.ChangeSettings():
                self._change_settings(conn, msg)
            case m.SeatOrder():
                pid = self.members.acting(conn, self)
                lobby = self._lobby_only()
                before = list(lobby.seats)
                lobby.reorder(pid, list(msg.order))
                if lobby.seats != before:  # (as for settings: no news is not broadcast)
                    try:
                        self._spend_whole_views(conn)
                    except Refusal:
                        lobby.seats = before  # refused: nothing changed
                        raise
                    self._broadcast([f"{self._roster().name(pid)} changed the seating order."])
            case m.StartGame():
                await self._start(conn)
            case m.DealSeed(seed=seed):
                if self._contribute(conn, seed):
                    await self._finish_deal()
            case m.KickPlayer() if self.lobby is not None:
                self._lobby_kick(conn, msg.seat, msg.player_id)
            case _:
                await self._game_commands(conn, msg)

    def _lobby_only(self) -> Lobby:
        if self.lobby is None:
            raise Refusal("already_started", "The game has already started.")
        return self.lobby

    def _create(self, conn: Viewer, msg: m.CreateRoom) -> None:
        lobby = self._lobby_only()
        lobby.settings = clean_settings(msg.settings)
        self.settings = lobby.settings
        if msg.password:
            self.password = PasswordHash.make(msg.password)
        seat, token = lobby.join(msg.name)
        self._attach(conn, seat.id)
        conn.send(m.Seated(room=self.code, seat=0, player_id=seat.id, token=token))
        self._broadcast([f"{seat.name} created room {self.code}."])

    def _not_member(self, conn: Viewer) -> None:
        if conn.room is self:
            raise Refusal("already_in_room", f"You are already in room {self.code}.")

    def _check_password(self, conn: Viewer, password: str | None) -> None:
        try:
            check_password(self.password, password)
        except Refusal as e:
            if e.code == "wrong_password" and self._on_wrong_password is not None:
                self._on_wrong_password(conn)
            raise

    def _join(self, conn: Viewer, msg: m.JoinRoom) -> None:
        # A spectator of this room's lobby may take a seat that came free (one who found the
        # room full watched instead, and could only quit and join again to play).
        watching = conn.spectator and conn.room is self
        if not watching:
            self._not_member(conn)
        if self.lobby is None:
            raise Refusal(
                "already_started",
                "This room's game has started; players who left can resume with their token.",
            )
        self._check_password(conn, msg.password)
        seat, token = self.lobby.join(msg.name)
        self._attach(conn, seat.id)
        i = self.lobby.index(seat.id)
        assert i is not None
        conn.send(m.Seated(room=self.code, seat=i, player_id=seat.id, token=token))
        self._announce(conn, f"{seat.name} joined.", arrived=True)
        if watching:
            self._viewers_changed()  # one spectator fewer

    def _resume(self, conn: Viewer, msg: m.ResumeSeat) -> None:
        pid: str | None = None
        if self.lobby is not None:
            found = self.lobby.by_token(msg.token)
            pid = found.id if found else None
        else:
            assert self.game is not None
            for p in self.game.setup.players:  # no early exit: timing does not tell which seat
                if token_matches(msg.token, p.token_hash):
                    pid = p.id
                    if p.seat in self.game.kicked:
                        raise Refusal("kicked", "You were removed from this game.")
        if pid is None:
            raise Refusal("bad_token", f"That token does not match a seat in room {self.code}.")
        if conn.room is self and conn.player_id != pid:
            raise Refusal("already_in_room", f"You are already in room {self.code}.")
        i = self._roster().seat(pid)
        assert i is not None
        # Still connected (on this connection or another): a seat taken again, nobody came
        # back. Told as "... is back." each time, a client resuming its own seat again and again
        # made the table hear it of someone who never left.
        here = pid in self.conns
        computer = pid in self.members.computers
        self._attach(conn, pid)
        conn.send(m.Seated(room=self.code, seat=i, player_id=pid, token=msg.token))
        if here and computer == (pid in self.members.computers):
            # The table is as it was: only this connection needs a view (a resume sent again
            # and again reached every seat as an update with no news; found by review). A
            # person taking a computer player's seat, or the reverse, changes its mark.
            self._send_view(conn)
        elif here:  # a person taking a computer player's seat, or the reverse: its mark
            self._broadcast([])
        elif self._going.pop(pid, None) is not None:  # back before it was told away: no news
            self._announce(conn, None, arrived=True)
        else:
            self._announce(conn, f"{self._roster().name(pid)} is back.", arrived=True)
        d = self._dealing
        if d is not None and i not in d.contributions:
            # The deal is open and this seat has given no share: its new connection is asked
            # for one (found by review: never told, the seat was dealt without its share after
            # the whole wait, and its client kept no commitment to check the log against).
            d.waiting.add(i)
            conn.send(m.DealOpen(commitment=d.commitment, deadline=d.deadline))

    def _watch(self, conn: Viewer, msg: m.Watch) -> None:
        self._not_member(conn)
        if not self.settings.spectators:
            g = self.game
            if g is not None and g.setup.spectators and g.setup.private:  # (seen: "does not
                # allow spectators" of a room that did, before the server restarted)
                raise Refusal("no_spectators", NO_SPECTATORS_AFTER_RESTART)
            raise Refusal("no_spectators", "This room does not allow spectators.")
        self._check_password(conn, msg.password)
        allowed = self.spectator_limit()
        if len(self.watchers) >= allowed:
            raise Refusal(
                "spectators_full",
                f"This room already has {allowed} spectators, as many as it allows.",
            )
        self.members.watch(conn, self)
        conn.earlier_due = True
        conn.send(m.Watching(room=self.code))
        # The newcomer sees the table now; everyone else learns the new count in a coalesced update.
        self._send_view(conn)
        self._viewers_changed()

    def spectator_limit(self) -> int:
        """The host's setting, within the server's ceiling."""
        return min(self.settings.max_spectators, self.config.max_spectators)

    async def _leave(self, conn: Viewer) -> None:
        if conn.room is not self:
            raise Refusal("not_in_room", "You are not in a room.")
        if conn.spectator:
            self._detach(conn)
            conn.close("you stopped watching")
            self._viewers_changed()
            return
        pid = self.members.acting(conn, self)
        name = self._roster().name(pid)
        if self.lobby is not None:
            self.lobby.remove(pid, self.members.computers)
            self.members.remove(pid)
            self._chat_gone(conn, pid)
            Members.unbind(conn)
            conn.close("you left the room")
            self._announce(conn, f"{name} left.", arrived=False)
            return
        self._detach(conn)
        conn.close("you left the game; your seat is kept and your token resumes it")
        self._announce(conn, f"{name} left the table.", arrived=False)
        if pid == self._roster().host:
            try:
                await self._pass_host(HOST_LEFT)
            except Refusal:  # over the leaver's budget: the host's grace passes it later
                # Said to the operator at most once a minute: a host leaving and coming back
                # again and again wrote a line each time, in words meant for a player (found
                # by review).
                now = self.config.clock()
                if now >= self._host_stays_logged + 60:
                    self._host_stays_logged = now
                    log.info(
                        "room %s: the host left, past their comings and goings for this round; "
                        "the role passes once the host's grace is over",
                        self.code,
                    )

    def _change_settings(self, conn: Viewer, msg: m.ChangeSettings) -> None:
        pid = self.members.acting(conn, self)
        lobby = self._lobby_only()
        before = lobby.settings
        lobby.change_settings(pid, msg.settings)
        if lobby.settings == before:
            # Nothing changed, and nobody is sent a thing: not an update with no news to every
            # seat, nor a whole view to the host, again and again (both found by review).
            return
        cards = lobby.settings.custom_cards != before.custom_cards
        try:
            self._spend_whole_views(conn, everyone=cards)
        except Refusal:
            lobby.settings = before  # refused: nothing changed
            raise
        self.settings = lobby.settings
        if not self.settings.spectators:
            for w in list(self.watchers):
                self._detach(w)
                w.close("this room no longer allows spectators")
        self._broadcast([f"{self._roster().name(pid)} changed the settings."])

    def _lobby_kick(self, conn: Viewer, seat: int, meant: str | None) -> None:
        pid = self.members.acting(conn, self)
        assert self.lobby is not None
        gone = self.lobby.kick(pid, seat, meant)
        kicked = self.members.remove(gone.id)
        if kicked is not None:
            self._chat_gone(kicked, gone.id)
            kicked.close("the host removed you from the room")
        self._broadcast([f"{self._roster().name(pid)} removed {gone.name} from the room."])

    # ------------------------------------------------------------------ the game

    async def _start(self, conn: Viewer) -> None:
        """The host starts: the deal opens (protocol.deal); the game starts once it is dealt."""
        pid = self.members.acting(conn, self)
        lobby = self._lobby_only()
        if self._dealing is not None:
            raise Refusal("dealing", DEALING)
        lobby.check_start(pid)
        deck = build_deck(lobby.settings)
        n = len(lobby.seats)
        if len(deck) < n:
            raise Refusal(
                "deck_too_small",
                f"The deck has {len(deck)} card(s); {n} players need at least {n}.",
            )
        now = self.config.clock()
        # What the engine would refuse is refused now, before the table is told of a deal: the
        # lobby's checks and the engine's must never disagree after the shuffle has begun.
        trial = decide(None, cmd.StartGame(now=now, setup=self._setup(tuple(deck[:n]), None)))
        if isinstance(trial, Refusal):
            raise trial
        seed = secrets.token_hex(32)
        waiting = {i for i, s in enumerate(lobby.seats) if s.id in self.conns}
        self._dealing = Dealing(
            server_seed=seed,
            commitment=commitment_of(seed),
            deadline=now + self.config.deal_timeout * min(1.0, self.config.limit_scale * 10),
            waiting=waiting,
            host=conn,
            deck=tuple(deck),
        )
        opened = m.DealOpen(commitment=self._dealing.commitment, deadline=self._dealing.deadline)
        for i in waiting:
            self.conns[lobby.seats[i].id].send(opened)
        self._broadcast(["Dealing: every player's client adds its share to the shuffle."])
        if not waiting:
            await self._finish_deal()

    def _contribute(self, conn: Viewer, seed: str) -> bool:
        """A seat's share of the shuffle; True once every awaited seat has given one."""
        pid = self.members.acting(conn, self)
        d = self._dealing
        if d is None:
            raise Refusal("not_dealing", "No deal is waiting for your share of the shuffle.")
        i = self._roster().seat(pid)
        assert i is not None
        if i in d.contributions:
            raise Refusal("already_contributed", "You already gave your share of this deal.")
        d.contributions[i] = seed
        d.waiting.discard(i)
        return not d.waiting

    async def _finish_deal(self) -> None:
        d, self._dealing = self._dealing, None
        assert d is not None and self.lobby is not None
        try:
            await self._begin(d)
        except Refusal as e:
            d.host.send(m.error(code=e.code, message=e.message, ref="start_game"))

    def _setup(self, cards: tuple[Card, ...], deal: DealRecord | None) -> GameSetup:
        """The game the lobby as it stands would start, with these cards."""
        lobby = self._lobby_only()
        settings = lobby.settings
        host = lobby.host
        assert host is not None
        return GameSetup(
            game_id=new_game_id(),
            room=self.code,
            variant=settings.variant,
            players=lobby.players(),
            host=host,
            cards=cards,
            limits=scaled(settings.limits, self.config.limit_scale),
            deck=settings.deck,
            spectators=settings.spectators,
            private=self.password is not None,
            words=word_fingerprint(),
            house_rules=tuple(settings.house_rules),
            deal=deal,
            log_format=LOG_FORMAT,
        )

    async def _begin(self, d: Dealing) -> None:
        lobby = self._lobby_only()
        n = len(lobby.seats)
        record = DealRecord(
            commitment=d.commitment,
            server_seed=d.server_seed,
            contributions=dict(sorted(d.contributions.items())),
            deck=d.deck,
        )
        cards = seeded_deal(d.deck, n, combined_seed(d.server_seed, record.contributions, n))
        now = self.config.clock()
        setup = self._setup(cards, record)
        game_id = setup.game_id
        players = setup.players
        start = cmd.StartGame(now=now, setup=setup)
        decided = decide_and_fold(None, start)
        if isinstance(decided, Refusal):
            raise decided
        events, state = decided
        try:
            writer = await self.store.create(game_id)
        except (OSError, LogError) as exc:
            log.error("room %s: cannot create the log of game %s: %s", self.code, game_id, exc)
            raise Refusal(
                "log_unavailable",
                f"The server cannot create the game log ({exc}); try again later.",
            ) from None
        self.writer = writer
        try:
            records = await self._append(events, start)
        except LogFailure as exc:
            # Not one record is durable: leave no log behind, and the lobby as it was.
            log.error(
                "room %s: cannot write the first record of %s: %s", self.code, writer.path, exc
            )
            self.writer = None
            with contextlib.suppress(OSError, LogError):
                await self.store.discard(writer)
            raise Refusal(
                "log_unavailable",
                "The server could not write the game log (is its disk full?), so the game did "
                "not start; the lobby is as it was. Try again later.",
            ) from None
        self.lobby = None
        log.info("room %s: game %s started (%d players)", self.code, game_id, len(players))
        self._apply(events, records, state)
        # A seat that went during the lobby or the deal starts the game away, in its log too
        # (a review: the start was logged as if everyone were there).
        for p in players:
            if p.id not in self.conns:
                self._note_presence(p.id, False)

    async def _game_commands(self, conn: Viewer, msg: m.ClientMsg) -> None:
        """``msg``, and the game commands queued right behind it, decided one after another and
        made durable with one write and one sync; then one update tells the table (group
        commit).

        Why: flat out, more than half of the requests found others already waiting in the inbox
        (docs/PERFORMANCE.md), and each paid a write, a sync, a hand-off and an update of its own.
        Nothing changes for anyone: each command is decided on the state the ones before it
        left, exactly as when they were taken one at a time, and none is acknowledged (nor any
        state it leads to shown) before all of them are durable. A group takes only
        consecutive requests, so each connection's answers keep their order; it ends before a
        command that is refused (that one is decided again on its own, once the group is
        durable, so its refusal speaks of a durable state), before anything that is not a game
        command, before a kick (whose player must first hear of the moves before it) and after
        one (nor of any move after it), after a command that ends the round, or once a deadline
        is due.
        """
        self.members.acting(conn, self)  # one who may not act is told so first
        now = self.config.clock()  # the group's one time: each deadline is judged against it
        g = self.game
        deadline = _running_deadline(g)
        while deadline is not None and now >= deadline and self.stalled_retry is None:
            # Due since the loop looked: the clock goes first (A3), as between two requests,
            # and again if the next phase's time ran out while the first tick was written.
            await self._on_timer()
            g, now = self.game, self.config.clock()
            was, deadline = deadline, _running_deadline(g)
            if deadline == was:
                break  # the clock changed nothing (refused): the engine says why, below
        if g is None:
            raise Refusal("not_started", "The game has not started yet.")
        if self.stalled_retry is not None:
            raise Refusal("log_unavailable", LOG_STALLED)
        acted = self._this_round()
        pending: dict[tuple[int, Budget], int] = {}
        group: list[Decided] = []
        state = self._decide_one(conn, msg, g, now, acted, pending, group)
        taken: list[Request] = []
        # A kick ends its group as it begins one: the removed player sees the update that
        # removes them, and no move decided after it.
        alone = isinstance(msg, m.KickPlayer) or not self._inbox
        most = 1 if alone or self._next_wake() <= now else GROUP_MOST
        try:
            while self._inbox and len(group) < most and self._goes_on(g, state, now):
                nxt = self._inbox[0]
                if (
                    not isinstance(nxt, Request)
                    or not self._is_game_msg(nxt.msg)
                    or isinstance(nxt.msg, m.KickPlayer)
                ):
                    break
                if nxt.conn.open:
                    try:
                        state = self._decide_one(
                            nxt.conn, nxt.msg, state, now, acted, pending, group
                        )
                    except Refusal:
                        break
                self._inbox.popleft()
                taken.append(nxt)
            asked = [(conn, msg), *((r.conn, r.msg) for r in taken)]
            if group and not await self._commit_group(group, asked):
                return  # every command of the group was refused, each told in its order
            for key, n in pending.items():
                acted[key] = acted.get(key, 0) + n
        finally:
            for r in taken:
                r.done.set()

    def _is_game_msg(self, msg: m.ClientMsg) -> bool:
        """Whether the room takes ``msg`` as a game command (``_on_request``)."""
        if isinstance(msg, m.KickPlayer):
            return self.lobby is None
        return isinstance(msg, _GAME_MSGS)

    def _goes_on(self, g: Game, state: Game, now: float) -> bool:
        """Whether a group that started on ``g`` and has led to ``state`` may take one more
        command: not once the round has changed or the game ended, nor once the phase's
        deadline is due (the room's timer goes first, as it would between two requests)."""

        def number(x: Game) -> int:
            return x.round.number if x.round is not None else 0

        if state.over or number(state) != number(g):
            return False
        return state.paused or state.deadline is None or now < state.deadline

    def _decide_one(
        self,
        conn: Viewer,
        msg: m.ClientMsg,
        state: Game,
        now: float,
        acted: dict[tuple[int, Budget], int],
        pending: dict[tuple[int, Budget], int],
        group: list[Decided],
    ) -> Game:
        """Decide ``msg`` on ``state`` (the durable one, or where the group so far leads);
        raises the refusal. A command that logs something joins ``group``, and its records
        count in ``pending`` towards the seat's budgets (``acted``: the durable counts)."""
        pid = self.members.acting(conn, self)
        seat = self._roster().seat(pid)
        assert seat is not None
        command = to_command(msg, seat, now)
        if command is None:
            raise Refusal("unexpected", f"{msg_tag(msg)!r} is not possible here.")
        kinds: list[Budget] = ["actions"]
        if self._is_change(msg, seat, state):
            kinds.append("changes")
        for kind in kinds:
            self._check_budget(
                seat, kind, acted.get((seat, kind), 0) + pending.get((seat, kind), 0)
            )
        decided = decide_and_fold(state, command)
        if isinstance(decided, Refusal):
            raise decided
        self._check_target(msg, state)  # (after the rules': a guest's skip is not_host first)
        events, after = decided
        if not events:
            return state
        assert after is not None
        group.append(Decided(command, events, after))
        for kind in kinds:
            pending[(seat, kind)] = pending.get((seat, kind), 0) + 1
        return after

    def _check_target(self, msg: m.ClientMsg, g: Game) -> None:
        """What the room knows of a skip's or a kick's target, and the rules do not.

        A skip is for a player who is gone (A1): during the reveals it leaves their commitment
        unopened, -3 (C6), so a host could cost a player who is at the table, their client
        about to open it, 3 points (found by review). And a kick names the player meant, as in
        the lobby, where a seat that holds someone else is refused: in a game it removed
        whoever sat there."""
        if not isinstance(msg, (m.SkipPlayer, m.KickPlayer)):
            return
        players = g.setup.players
        if not 0 <= msg.seat < len(players):
            return  # the rules' refusal (unknown_seat)
        target = players[msg.seat]
        if isinstance(msg, m.KickPlayer):
            if msg.player_id is not None and msg.player_id != target.id:
                raise Refusal(
                    "seat_changed",
                    f"Board {msg.seat + 1} is {target.name}'s, not the player meant. "
                    "Nobody was removed.",
                )
            return
        r = g.round
        unopened = (
            r is not None
            and g.phase == "reveal"
            and msg.seat in r.commits
            and msg.seat not in r.reveals
        )
        here = self.conns.get(target.id)
        if unopened and here is not None and here.open:
            raise Refusal(
                "present",
                f"{target.name} is at the table and their client is opening their word: "
                "skipped now, they would lose 3 points for it (only a player who is gone "
                "is skipped during the reveals).",
            )

    @staticmethod
    def _is_change(msg: m.ClientMsg, seat: int, g: Game) -> bool:
        """Whether ``msg`` only changes what the log already holds: a vote cast again, a
        summoning word replaced, a pause or a resume. The rules allow these again and again."""
        if isinstance(msg, (m.PauseGame, m.ResumeGame)):
            return True
        r = g.round
        if r is None:
            return False
        if isinstance(msg, m.CastVote):
            return 0 <= msg.proposal < len(r.proposals) and seat in r.proposals[msg.proposal].votes
        return isinstance(msg, m.CommitSummon) and seat in r.commits

    def _check_budget(self, seat: int, kind: Budget, count: int) -> None:
        """Refuse (``too_many_actions``) one more record of ``kind`` for ``seat`` this round
        when it already has ``count``. The budgets bound what one member can add to a game's
        log (``max_actions_per_round`` for its actions and, apart, its comings and goings;
        ``max_changes_per_round`` for its changes)."""
        limit = (
            self.config.max_changes_per_round
            if kind == "changes"
            else self.config.max_actions_per_round
        )
        if count >= limit:
            what = (
                "changed your vote, your summoning word or the pause"
                if kind == "changes"
                else "taken game actions"
            )
            raise Refusal(
                "too_many_actions",
                f"You have {what} {limit} times this round, as often as this server allows "
                "one player in a round; the next round starts afresh.",
            )

    def _budget(self, seat: int, kind: Budget) -> Callable[[], None]:
        """Check that ``seat`` may have one more record of ``kind`` logged this round (raises
        ``too_many_actions`` when not); returns what counts it once it was logged."""
        acted = self._this_round()
        key: tuple[int, Budget] = (seat, kind)
        self._check_budget(seat, kind, acted.get(key, 0))

        def charge() -> None:
            acted[key] = acted.get(key, 0) + 1

        return charge

    def _this_round(self) -> dict[tuple[int, Budget], int]:
        """This round's counts; a new round starts them afresh, and the log then catches up
        with the comings and goings its budget left unlogged (who is here now)."""
        assert self.game is not None
        number = self.game.round.number if self.game.round is not None else 0
        if self._acted[0] != number:
            self._acted = (number, {})
            roster = self._roster()
            for owed in self._presence_owed:
                pid = roster.ids[owed] if owed < len(roster.ids) else None
                self._presence[owed] = pid is not None and pid in self.conns
            self._presence_owed.clear()
        return self._acted[1]

    async def _execute(self, command: cmd.AnyCommand) -> bool:
        """Decide and commit ``command``; True if it logged anything."""
        assert self.game is not None
        decided = decide_and_fold(self.game, command)
        if isinstance(decided, Refusal):
            raise decided
        events, state = decided
        if events:
            await self._commit(events, state, command)
        return bool(events)

    async def _append(self, events: list, command: cmd.AnyCommand) -> list[LogRecord]:
        """The batch, with the command that produced it (so an audit can decide it again)."""
        assert self.writer is not None
        return await self.writer.append_many(
            [(event_type(e), event_data(e)) for e in events],
            command.now,
            command=cmd.command_data(command),
        )

    async def _commit(self, events: list, state: Game | None, command: cmd.AnyCommand) -> None:
        """Durable first, then the state, then the table: the one order that never lies."""
        try:
            records = await self._append(events, command)
        except LogFailure as exc:
            self._stall(exc)
            raise Refusal("log_unavailable", LOG_STALLED) from None
        self._apply(events, records, state)

    async def _commit_group(
        self, group: list[Decided], asked: list[tuple[Viewer, m.ClientMsg]]
    ) -> bool:
        """The group durable with one write, then the state, then the table: True. If the log
        fails, every request of the group (``asked``, in the order they came) is refused, in
        that order: False."""
        assert self.writer is not None
        batches = [
            Batch(
                [(event_type(e), event_data(e)) for e in d.events],
                d.command.now,
                cmd.command_data(d.command),
            )
            for d in group
        ]
        try:
            written = await self.writer.append_batches(batches)
        except LogFailure as exc:
            self._stall(exc)
            for viewer, msg in asked:
                if viewer.open:
                    viewer.send(
                        m.error(code="log_unavailable", message=LOG_STALLED, ref=msg_tag(msg))
                    )
            return False
        lines = [line for d in group for line in feed.describe(d.state, d.events)]
        self._apply([e for d in group for e in d.events], written[-1], group[-1].state, lines)
        return True

    def _apply(
        self,
        events: list,
        records: list[LogRecord],
        state: Game | None,
        lines: list[str] | None = None,
    ) -> None:
        """The state after ``events`` (now durable, ending with ``records``) becomes the
        room's, and the table is told (``lines``: the feed, else described from the events)."""
        self.game = state  # decided and folded once, by decide_and_fold
        results.extend_views(self.game, self.results)
        assert self.game is not None
        last = records[-1]
        self.receipt = self._receipt_of(
            last.seq, last.hash, signed=any(type(e) in _SIGNED_AFTER for e in events)
        )
        if all(isinstance(e, PresenceChanged) for e in events):
            return  # the room told everyone already ("... is away."); the view is the same
        self._broadcast(feed.describe(self.game, events) if lines is None else lines)
        # Removed players' connections go, once they have seen the update that removes them:
        # without it a removed player's screen kept the game as if they still played in it.
        for p in self.game.setup.players:
            if (
                p.seat in self.game.kicked
                and (gone := self.members.remove(p.id, seat_stays=True)) is not None
            ):
                gone.close(REMOVED)
        if self.game.over and self.writer is not None:
            if not self.game.abandoned:  # (an abandoned game has its own line, with why)
                log.info("room %s: game %s finished", self.code, self.game.setup.game_id)
            self.writer.close()

    def _receipt_of(self, seq: int, hash_: str, *, signed: bool = True) -> Receipt:
        """The receipt of the record ``seq``: signed by the server's key when ``signed`` (the
        first of each round, the last of a game, a resumed game's last) and the server has one.
        Why not every receipt: one at a round's start covers every move before it, rounds are
        what is disputed, and each signed receipt costs ~30 us and ~220 bytes to every viewer
        (docs/PROTOCOL.md, "Receipts")."""
        key = self.config.receipt_key
        if not signed or key is None or self.game is None:
            return Receipt(seq, hash_)
        game_id = self.game.setup.game_id
        return Receipt(seq, hash_, key=_public(key), sig=sign(key, game_id, seq, hash_))

    def _stall(self, exc: BaseException) -> None:
        """An append failed: hold the game (nothing of it was acknowledged) and retry the log."""
        first = self.stalled_retry is None
        self.stalled_retry = self.config.clock() + self.config.log_retry
        if first:
            log.error("room %s: appending to the game log failed: %s; game on hold", self.code, exc)
            self._broadcast([LOG_STALLED])

    async def _try_reopen_log(self) -> None:
        """Reopen the log at its last durable record; on success the game goes on."""
        old = self.writer
        assert old is not None
        old.close()  # it holds the log's lock; its last durable record is all that counts
        try:
            records, writer = await self.store.reopen(old)
        except (OSError, LogError) as exc:
            self.stalled_retry = self.config.clock() + self.config.log_retry
            log.debug("room %s: the game log still cannot be reopened: %s", self.code, exc)
            return
        if self.receipt is not None and (
            not records or records[-1].hash != self.receipt.hash
        ):  # cannot happen: the durable records are what everyone was told
            writer.close()
            raise RuntimeError(f"{old.path}: reopened log does not end at the last receipt")
        self.writer = writer
        self.stalled_retry = None
        log.warning("room %s: the game log can be written again; game resumed", self.code)
        self._broadcast([LOG_BACK])

    # ------------------------------------------------------------------ sending

    def _spend_whole_views(self, conn: Viewer, everyone: bool = False) -> None:
        """A lobby change from ``conn`` is about to be told: the whole views it sends (one to
        each member that takes no patches, spectators too, one at least; to every member when
        ``everyone``: a change of the custom cards is a patch as big as a view) spend its
        address's budget, or raise the refusal before anything changed. Why: a host swapping
        two seats back and forth at the message rate sent 22 MB a second of views with 200
        custom cards to one address's lobbies (found by an attacker's review)."""
        if self._on_whole_views is not None:
            members = [*self.conns.values(), *self.watchers]
            n = len(members) if everyone else sum(1 for c in members if not c.patches)
            self._on_whole_views(conn, max(1, n))

    def table(self) -> Table:
        return Table(
            code=self.code,
            settings=self.settings,
            lobby=self.lobby,
            connected=frozenset(self.conns),
            computers=self.members.computers,
            spectators=len(self.watchers),
            results=self.results,
            now=self.config.clock(),
        )

    def _receipt(self) -> Receipt | None:
        return self.receipt if self.game is not None else None

    def _broadcast(self, lines: list[str]) -> None:
        """One update per seat now (a patch, to a client that asked for patches: ``_patches``);
        the spectators' coalesced (``_send_spectators``)."""
        roster = self._roster()
        seats = {pid: roster.seat(pid) for pid in self.conns}
        self._players_due = None  # this update carries the spectator count too
        now = self.config.clock()
        if self.watchers:
            self._spectator_lines.extend(lines)
            if self._spectators_due is None:
                self._spectators_due = max(
                    now, self._spectators_sent + self.config.spectator_interval
                )
        else:  # nobody waits for held lines: a spectator who comes has them in ``earlier``
            self._spectator_lines = []
            self._spectators_due = None
        spectators = self._spectators_due is not None and now >= self._spectators_due
        # (a connection's first view is made apart, with the talk before it: ``_send_first``)
        viewers = {
            seats[pid]
            for pid, conn in self.conns.items()
            if not conn.patches and not conn.earlier_due
        }
        if spectators:
            viewers.add(None)
        table, receipt = self.table(), self._receipt()
        frames = (
            update_frames(table, self.game, viewers, receipt, lines, self._view_cache)
            if viewers
            else {}
        )
        patches: Frames | None = None
        for pid, conn in list(self.conns.items()):
            if conn.earlier_due:  # this broadcast's lines are its feed, the ones before earlier
                patches = self._send_first(
                    conn, seats[pid], table, receipt, lines, patches, self._earlier()
                )
            elif conn.patches:
                patches = patches or self._patches(table, receipt)
                self._send_patch(conn, patches, seats[pid], lines)
            else:
                conn.send_frame(frames[seats[pid]])
        if spectators:
            same = self._spectator_lines == lines  # no lines held back from coalesced updates
            self._send_spectators(now, table, receipt, frames[None] if same else None, patches)
        self._told.extend(lines)
        self._told_count += len(lines)

    def _send_first(
        self,
        conn: Viewer,
        seat: int | None,
        table: Table,
        receipt: Receipt | None,
        lines: list[str],
        patches: Frames | None,
        earlier: m.Earlier,
    ) -> Frames | None:
        """A connection's first view from this room, with the table talk before it
        (``Update.earlier``); the patching views made for it, to share with the others."""
        conn.earlier_due = False
        if conn.patches:
            patches = patches or self._patches(table, receipt)
            data, conn.sent = patches.full(seat, lines, earlier)
        else:
            data = update_frames(
                table, self.game, [seat], receipt, lines, self._view_cache, earlier
            )[seat]
        conn.send_frame(data)
        return patches

    def _earlier(self, held: int = 0) -> m.Earlier:
        """The table talk and the chat before a connection's first view (``Update.earlier``,
        ``Update.earlier_chat``), but for the newest ``held`` lines, which it hears later."""
        lines = list(self._told)
        if held:
            lines = lines[: max(0, len(lines) - held)]
        first = self._told_count - len(self._told)  # the count of the oldest line kept
        # Chat said before the oldest line kept is left out with the lines around it: shown
        # above them all, it read as said just before them (found by a newcomer).
        chat = [
            m.EarlierChat(name=c.name, text=c.text, seat=c.seat, after=min(at - first, len(lines)))
            for at, c in self._said
            if at >= first
        ]
        return lines, chat

    def _patches(self, table: Table, receipt: Receipt | None) -> Frames:
        self._views_made += 1
        return Frames(public_doc(table, self.game, self._view_cache), receipt, self._views_made)

    @staticmethod
    def _send_patch(conn: Viewer, frames: Frames, seat: int | None, lines: list[str]) -> None:
        data, conn.sent = frames.frame(conn.sent, seat, lines)
        conn.send_frame(data)

    def _flush_spectators(self, now: float) -> None:
        """Send the spectators the update that has been held back for them, if any."""
        if self._spectators_due is None:
            return
        if not self.watchers:
            self._spectators_due = None
            self._spectator_lines = []
            return
        self._send_spectators(now, self.table(), self._receipt())

    def _send_spectators(
        self,
        now: float,
        table: Table,
        receipt: Receipt | None,
        frame: bytes | None = None,
        patches: Frames | None = None,
    ) -> None:
        """Every spectator's update, with every feed line held back for them since the last."""
        lines = self._spectator_lines
        for w in list(self.watchers):  # (each had its first view when it came: ``_watch``)
            if w.patches:
                patches = patches or self._patches(table, receipt)
                self._send_patch(w, patches, None, lines)
                continue
            if frame is None:
                frame = update_frames(table, self.game, [None], receipt, lines, self._view_cache)[
                    None
                ]
            w.send_frame(frame)
        self._spectators_due = None
        self._spectator_lines = []
        self._spectators_sent = now

    def _send_view(self, conn: Viewer) -> None:
        """A whole view to one viewer: a newcomer, or a patching client that asked to resync."""
        seat = (
            None
            if conn.spectator or conn.player_id is None
            else self._roster().seat(conn.player_id)
        )
        table, receipt = self.table(), self._receipt()
        if conn.earlier_due:
            # The newest lines held for the spectators come in their next update: not twice.
            held = len(self._spectator_lines) if conn.spectator else 0
            self._send_first(conn, seat, table, receipt, [], None, self._earlier(held))
            return
        if conn.patches:
            data, conn.sent = self._patches(table, receipt).full(seat, [])
        else:
            data = update_frames(table, self.game, [seat], receipt, [], self._view_cache)[seat]
        conn.send_frame(data)

    def _announce(self, conn: Viewer, line: str | None, *, arrived: bool) -> None:
        """Tell the table that a seat came or went (joined, left, away, back): an update with
        ``line`` (None: the views alone) to every seat, within the budget of ``conn``'s address
        (``COMINGS_RATE``).

        Why: each reaches every member, as chat does; one client leaving and coming back
        again and again sent the others 19 lines a second and filled the talk a player coming
        back is shown (found by review). Beyond the budget the line is not said, and the
        table is updated quietly, at most once every ``COMINGS_QUIET`` seconds; a connection
        that ``arrived`` gets its own view at once."""
        now = self.config.clock()
        key = address_key(conn.remote)  # (a room's few addresses: refilled ones go at once)
        bucket = bucket_for(self._comings, key, now, COMINGS_RATE, COMINGS_BURST, keep=0)
        if bucket.take(now) == 0:
            self._broadcast([line] if line else [])
            return
        if arrived:
            self._send_view(conn)
        if self._players_due is None:
            self._players_due = now + COMINGS_QUIET

    def _chat_budget(self, conn: Viewer, pid: str, now: float) -> Bucket:
        """``pid``'s chat budget; a new seat from an address a seat left the lobby from takes
        that one's budget back (a seat left and joined again had a fresh one: 19 lines a second
        against 2; found by review)."""
        budget = self._chat.get(pid)
        if budget is None:
            cfg = self.config
            budget = self._chat_left.pop(address_key(conn.remote), None)
            self._chat[pid] = budget = budget or Bucket(cfg.chat_rate, cfg.chat_burst, now)
        return budget

    def _chat_gone(self, conn: Viewer, pid: str) -> None:
        """A seat left the lobby: its chat budget is kept by its address until it refills."""
        budget = self._chat.pop(pid, None)
        now = self.config.clock()
        forget_refilled(self._chat_left, now, keep=0)
        if budget is not None and not budget.full(now):
            key = address_key(conn.remote)
            kept = self._chat_left.get(key)
            if kept is None or kept.wait(now) < budget.wait(now):
                self._chat_left[key] = budget

    def _viewers_changed(self) -> None:
        """A spectator came or went: the count reaches everyone at most once per interval."""
        if self._players_due is None:
            self._players_due = max(
                self.config.clock(), self._spectators_sent + self.config.spectator_interval
            )

    def _send_all(self, msg: m.ServerMsg) -> None:
        data = frame_of(msg)
        for conn in self.members.everyone():
            conn.send_frame(data)

    def _close_all(self, reason: str, code: int) -> None:
        for conn in list(self.members.everyone()):
            words = watchers_words(reason) if conn.spectator else reason
            Members.unbind(conn)
            conn.close(words, code)
        self.conns.clear()
        self.watchers.clear()

    # ------------------------------------------------------------------ for tests and tools

    def submit(self, item: Request | Detached | Stop) -> None:
        """Queue an item without waiting; raises trio.BrokenResourceError once closed."""
        if self.closed:
            raise trio.BrokenResourceError(f"room {self.code} has closed")
        self._inbox.append(item)
        self._wakeup.unpark()


def _running_deadline(g: Game | None) -> float | None:
    """The deadline the clock acts on (none before the game starts)."""
    return None if g is None else g.clock_deadline


def to_command(msg: m.ClientMsg, seat: int, now: float) -> cmd.AnyCommand | None:
    """The engine command for a game message sent by ``seat`` (None: not a game command)."""
    match msg:
        case m.ChooseCard(card=card):
            return cmd.ChooseCard(now=now, seat=seat, card=card)
        case m.WriteSpell(word=word):
            if problem := shape_problem(word, summon=False):
                raise Refusal("bad_word", problem)
            return cmd.WriteSpell(now=now, seat=seat, word=word)
        case m.MarkBoards(boards=boards):
            return cmd.MarkBoards(now=now, seat=seat, boards=tuple(boards))
        case m.CommitSummon(commitment=c):
            return cmd.Commit(now=now, seat=seat, commitment=c)
        case m.RevealSummon(word=word, nonce=nonce):
            # Published as revealed (the commitment binds it), so padding would be shown to
            # everyone: 150 wide spaces before a word made a 340-column line.
            if problem := shape_problem(word, summon=True):
                raise Refusal("bad_word", problem)
            return cmd.Reveal(now=now, seat=seat, word=word, nonce=nonce)
        case m.ChallengeWord(seat=target, rule=rule):
            return cmd.Challenge(now=now, seat=seat, target=target, rule=rule)
        case m.ProposeSame(a=a, b=b):
            return cmd.ProposeSame(now=now, seat=seat, a=a, b=b)
        case m.CastVote(proposal=p, yes=yes, reason=reason):
            return cmd.Vote(now=now, seat=seat, proposal=p, yes=yes, reason=reason)
        case m.ReviewDone():
            return cmd.Done(now=now, seat=seat)
        case m.PauseGame():
            return cmd.Pause(now=now, seat=seat)
        case m.ResumeGame():
            return cmd.Resume(now=now, seat=seat)
        case m.SkipPlayer(seat=target):
            return cmd.Skip(now=now, seat=seat, target=target)
        case m.KickPlayer(seat=target):
            return cmd.Kick(now=now, seat=seat, target=target)
    return None
