"""A computer player: a real protocol client that plays Conjure with a :class:`Brain`.

Nothing in the server knows it is a bot. A :class:`Bot` connects, says hello, joins (or resumes
its seat with its token, or creates the room when asked to host), and then acts on every
``update``: it chooses a category as the conjurer, writes spell words, marks boards (standard:
2-4 boards via :meth:`Brain.plan`; Dark Magic: the secret word is committed right after the
choice and every associated board is marked, 0-4), commits a summoning word with a fresh nonce and
reveals it once the summon closes, votes on the table's proposals with a reason, rarely challenges
a word that is clearly outside the category, and says done.

How it acts: one task looks at the newest view, works out the one next move (if any), waits a
human-like delay (``delay``; 0 in tests), looks again and sends the move only if it still applies.
What it has sent is remembered per connection only: after a reconnect the view says what the
server got. Summoning words and nonces stay in memory, and in the state directory (when one is
given) *before* the commitment leaves, so a restarted bot can still reveal.

It speaks through the one protocol client (:mod:`client.wire`). Dropped connections are retried
with backoff (0.5 s doubling to 10 s) and resumed with the seat token; a seat saved in the state
directory (:func:`saved_bots` finds them) is resumed by a new bot of the same name. The bot stops
when the game is over, when it is removed from the room, when it cannot join at all (unknown room,
wrong password, game already started), when the server cannot be reached after
``give_up_after`` tries in a row, or when a wss:// server's certificate is refused
(:mod:`client.pins`).
"""

from __future__ import annotations

import contextlib
import math
import random
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import trio

from conjure.client import wire
from conjure.client.bots.brain import Brain, is_stopped, knows, load_data
from conjure.client.pins import KnownServers, Trust, refused
from conjure.client.statefile import StateDir
from conjure.protocol import messages as m
from conjure.protocol.commitment import commitment, new_nonce
from conjure.protocol.structs import struct_tag
from conjure.protocol.words import contains_written, validate_written

CLIENT_NAME = "conjure-bot/0.1"
#: The state-file "server" of a bot's seat is its URL, this, and its name (never a person's key).
BOT_SEAT_MARK = "#bot:"
#: Names tried on one connection before waiting and reconnecting (taken names are skipped).
MAX_JOIN_TRIES = 12
UNKNOWN_CATEGORY_LINE = "I don't know this category well, bear with me"

#: Default names, handed out in this order (never starting with "Bot": they sit at the table
#: as players do).
NAMES = (
    "Ada",
    "Basil",
    "Cleo",
    "Dora",
    "Emil",
    "Flora",
    "Gus",
    "Hazel",
    "Iris",
    "Jasper",
    "Kit",
    "Luna",
    "Milo",
    "Nell",
    "Otto",
    "Pia",
    "Quinn",
    "Rosa",
    "Silas",
    "Tilda",
    "Ulla",
    "Vera",
    "Wren",
    "Yara",
    "Zeno",
)

#: Join errors after which waiting and retrying cannot help.
FATAL_JOIN = frozenset(
    {
        "unknown_room",
        "wrong_password",
        "password_required",
        "already_started",
        "room_full",
        "kicked",
        "server_full",
        "already_in_room",
        "protocol_version",
    }
)


class NamePool:
    """Names for the bots of one process: the wished-for ones first, then :data:`NAMES`, then
    numbered ones. A name is never handed out twice (ignoring case)."""

    def __init__(self, preferred: Sequence[str] = ()) -> None:
        self._queue = list(dict.fromkeys(preferred)) + list(NAMES)
        self._given: set[str] = set()

    def take(self) -> str:
        for name in self._queue:
            if name.casefold() not in self._given:
                self._given.add(name.casefold())
                return name
        k = 2
        while True:
            for name in NAMES:
                candidate = f"{name} {k}"
                if candidate.casefold() not in self._given:
                    self._given.add(candidate.casefold())
                    return candidate
            k += 1


def bot_seat_server(url: str, name: str) -> str:
    """The "server" a bot's seat is saved under in a state directory (:mod:`client.statefile`):
    its URL, :data:`BOT_SEAT_MARK` and its name, so bots and people sharing a directory never
    take each other's seats."""
    return f"{url.rstrip('/')}{BOT_SEAT_MARK}{name}"


def saved_bots(store: StateDir, url: str, room: str) -> list[dict]:
    """The bot seats saved in ``store`` for ``room`` on ``url`` (each with its ``name``,
    ``seat``, ``player_id`` and ``token``), in seat order: the names to start bots with so they
    resume those seats."""
    prefix = bot_seat_server(url, "")
    found = []
    for entry in store.read_secrets()["seats"].values():
        if (
            isinstance(entry, dict)
            and str(entry.get("server", "")).startswith(prefix)
            and str(entry.get("room", "")).upper() == room.upper()
            and isinstance(entry.get("token"), str)
            and isinstance(entry.get("name"), str)
        ):
            found.append(entry)
    return sorted(found, key=lambda e: e.get("seat") if isinstance(e.get("seat"), int) else 99)


def moved_bots_url(store: StateDir, url: str, room: str) -> str | None:
    """The address at which bot seats of ``room`` were saved on the same host as ``url`` at
    another port (the newest), if any: the same server, restarted on a port of its own. As a
    person's client finds its seat there (``StateDir.load_seat_moved``); a bot command told
    the new port started new bots, refused "has started without you" (seen with friends)."""
    here = urlsplit(url)
    found: tuple[float, str] | None = None
    for entry in store.read_secrets()["seats"].values():
        server = entry.get("server") if isinstance(entry, dict) else None
        if not isinstance(server, str) or BOT_SEAT_MARK not in server:
            continue
        if str(entry.get("room", "")).upper() != room.upper():
            continue
        old = server.split(BOT_SEAT_MARK, 1)[0]
        try:
            there = urlsplit(old)
            moved = (there.scheme, there.hostname) == (here.scheme, here.hostname) and (
                there.port != here.port
            )
        except ValueError:  # (a port out of range, in a file edited by hand)
            continue
        at = entry.get("saved_at", 0)
        if moved and isinstance(at, int | float) and (found is None or at > found[0]):
            found = (at, old)
    return found[1] if found is not None else None


def move_bot_seats(store: StateDir, old_url: str, new_url: str, room: str) -> None:
    """Save the bot seats of ``room`` kept for ``old_url`` under ``new_url`` as well (the same
    server, restarted on another port)."""
    if old_url.rstrip("/") == new_url.rstrip("/"):
        return
    for entry in saved_bots(store, old_url, room):
        store.save_seat(
            bot_seat_server(new_url, entry["name"]),
            room,
            seat=entry.get("seat", 0),
            player_id=entry.get("player_id", ""),
            token=entry["token"],
            name=entry["name"],
        )


def parse_delay(text: str) -> tuple[float, float]:
    """``"0"`` (act at once), ``"2"`` (about 2 s: 1-3 s) or ``"1-3"`` (between 1 and 3 s)."""
    text = text.strip()
    if "-" in text.lstrip("-"):
        lo_text, hi_text = text.split("-", 1)
        lo, hi = float(lo_text), float(hi_text)
    else:
        mid = float(text)
        lo, hi = mid / 2, mid * 1.5
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo < 0 or hi < lo:
        raise ValueError(f"not a delay: {text!r} (say S or MIN-MAX, in seconds)")
    return lo, hi


@dataclass
class BotOptions:
    url: str
    room: str | None = None  # None: create a room (with ``create``)
    password: str | None = None
    seed: int = 0
    #: Seconds before each move, drawn between these two (human-like); (0, 0) acts at once.
    delay: tuple[float, float] = (1.0, 3.0)
    #: Where to keep the seat token and summoning secrets (None: memory only).
    store: StateDir | None = None
    #: Create a room with these settings (the bot is its host) instead of joining ``room``.
    create: m.RoomSettings | None = None
    #: As host in the lobby: start the game once this holds for the view.
    start_when: Callable[[m.View], bool] | None = None
    #: Chance per round of looking for a word clearly outside the category to challenge.
    challenge_rate: float = 0.1
    noise: float | None = None
    log: Callable[[str], None] = print
    #: Called with every view this bot receives (the demo's running commentary).
    on_view: Callable[[m.View], None] | None = None
    #: The wss:// server's certificate fingerprint (see client.pins; None: as remembered).
    pin: str | None = None
    #: Stop after this many connection tries in a row that got no seat (None: never).
    give_up_after: int | None = 8


#: Seconds a computer conjurer gives the table to read a round's results before choosing the
#: next category (only when it takes its time at all: ``BotOptions.delay``).
RESULTS_READING = 8.0


@dataclass
class _Action:
    key: tuple
    kind: str  # for the delay: "think", "quick", "reflex", "after-results"
    build: Callable[[], Awaitable[list[m.ClientMsg]]]


@dataclass
class _Secret:
    word: str
    nonce: str  # hex


@dataclass
class Record:
    """What a bot did, for tests and the demo's summary (summoning words only once revealed)."""

    errors: list[m.Error] = field(default_factory=list)
    spells: list[str] = field(default_factory=list)
    summons: list[str] = field(default_factory=list)
    votes: list[tuple[int, bool, str]] = field(default_factory=list)
    challenges: list[tuple[int, str]] = field(default_factory=list)
    chats: list[str] = field(default_factory=list)


class Bot:
    """One computer player on one server. ``await bot.run()`` plays until the game ends."""

    def __init__(self, opts: BotOptions, names: NamePool | None = None, name: str | None = None):
        self.opts = opts
        self.names = names or NamePool()
        self.name = name or self.names.take()
        kwargs = {} if opts.noise is None else {"noise": opts.noise}
        self.brain = Brain(opts.seed, **kwargs)
        self.rng = random.Random(opts.seed * 7919 + 17)
        self.room: str | None = opts.room.upper() if opts.room else None
        self.token: str | None = None
        self.player_id: str | None = None
        self.view: m.View | None = None
        self.view_at = 0.0  # trio.current_time() when the view arrived
        self.receipt: m.Receipt | None = None
        self.status: str | None = None  # set once the bot is finished: "over", or why not
        self.exit_code = 0
        self.connections = 0
        self._retrying: str | None = None  #: the retry line said last (not said again)
        self.record = Record()
        self._secrets: dict[tuple[str, int], list[_Secret]] = {}  # newest last
        self._targets: dict[tuple[str, int], str] = {}
        self._sent: set[tuple] = set()  # this connection's moves in flight or done
        self._once: set[tuple] = set()  # moves made once for good (chat, challenge look)
        self._tries: dict[tuple, int] = {}
        self._last_key: dict[str, tuple] = {}  # message type -> key of the last one sent
        self._link: wire.Link | None = None
        self._bye: str | None = None
        #: The deal kept last (room, commitment), until the server names its game.
        self._dealt: tuple[str, str] | None = None
        self._changed = trio.Event()
        self._cancel: trio.CancelScope | None = None
        self.seated_now = False  # seated on the current connection (the backoff starts over)
        self.seated = trio.Event()  # set once the bot first has a seat
        #: The last view of each round's review (spell words, crystals, words), by round.
        self.reviews: dict[int, m.View] = {}
        if opts.store is not None and self.room is not None:
            self._load_seat()
        self._trust = Trust(
            pin=opts.pin,
            known=KnownServers(opts.store.path if opts.store is not None else None),
            tell=self.say,
        )

    # ------------------------------------------------------------------ plumbing

    def say(self, text: str) -> None:
        with contextlib.suppress(Exception):
            self.opts.log(f"[{self.name}] {text}")

    def _seat_server(self) -> str:
        """The state-file key of this bot's seat (never the same as a person's client)."""
        return bot_seat_server(self.opts.url, self.name)

    def _load_seat(self) -> None:
        assert self.opts.store is not None and self.room is not None
        with contextlib.suppress(OSError):
            saved = self.opts.store.load_seat(self._seat_server(), self.room)
            if saved:
                self.token = saved["token"]
                self.say(f"found my seat in room {self.room}; resuming it")

    def drop(self) -> None:
        """Cut the current connection (the bot then reconnects); for tests."""
        if self._cancel is not None:
            self._cancel.cancel()

    def stop(self, reason: str = "stopped") -> None:
        if self.status is None:
            self.status = reason
        self.drop()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> int:
        """Play until finished; returns the exit status (0 = fine)."""
        backoff = wire.Backoff(
            0.5, 10.0, random.Random(self.opts.seed), tries=self.opts.give_up_after
        )
        task_status.started()
        while self.status is None:
            reason = "closed"
            try:
                with trio.CancelScope() as scope:
                    self._cancel = scope
                    await self._connect_once()
                if scope.cancelled_caught and self.status is None:
                    self.say("connection dropped")
                    reason = "dropped"
            except (Exception, BaseExceptionGroup) as exc:
                # A group with anything but errors in it goes on up: being cancelled, and Ctrl-C
                # (a KeyboardInterrupt that landed inside the connection's nursery was taken for
                # a lost connection, and the bot played on; seen as a flaky test).
                if isinstance(exc, BaseExceptionGroup) and exc.split(Exception)[1] is not None:
                    raise
                reason = wire.describe(exc)
                self._after_loss(exc)
            finally:
                self._cancel = None
            if self.status is not None:
                break
            if self.seated_now:  # it worked for a while: start the backoff over
                self.seated_now = False
                backoff.reset()
            wait = backoff.next()
            if wait is None:
                self.status = wire.gave_up_line(self.opts.url, reason)
                self.exit_code = 1
                self.say(self.status)
                break
            await trio.sleep(wait)
        return self.exit_code

    def _after_loss(self, exc: BaseException) -> None:
        code = wire.close_code(exc)
        bye, self._bye = self._bye, None
        if (refusal := refused(exc)) is not None:  # retrying cannot change the certificate
            self.status = f"refused the server: {refusal}"
            self.exit_code = 1
            self.say(self.status)
            return
        said_no = next((e for e in wire.leaves(exc) if isinstance(e, wire.Refused)), None)
        if said_no is not None and said_no.code in FATAL_JOIN:
            self.status = f"could not join: {said_no}"
            self.exit_code = 1
            self.say(self.status)
            return
        if bye is not None and code in (None, 1000):
            self.status = f"removed: {bye}"
            self.say(f"the server closed my seat: {bye}")
            return
        if not wire.expected(exc):
            self.say("unexpected failure:\n" + "".join(traceback.format_exception(exc)))
        else:
            # Said once while it lasts (a newcomer's screen filled with it, the server being
            # down), and never "lost" before a first connection.
            what = "connection lost" if self.connections else "cannot reach the server"
            line = f"{what} ({wire.describe(exc)}); trying again"
            if line != self._retrying:
                self._retrying = line
                self.say(line)

    async def _connect_once(self) -> None:
        async with wire.connect(
            self.opts.url, client=CLIENT_NAME, trust=self._trust, strict=False, computer=True
        ) as link:
            self._link = link
            link.on_deal = self._keep_deal
            try:
                self.connections += 1
                self._retrying = None  # (a later failure is news again)
                self._sent.clear()
                self._last_key.clear()
                await self._join(link)
                if self.status is not None:
                    return
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._act_loop)
                    while self.status is None:
                        await self._on_message(await link.recv())
                    nursery.cancel_scope.cancel()
            finally:
                self._link = None

    async def _send(self, msg: m.ClientMsg) -> None:
        link = self._link
        if link is None:
            raise trio.ClosedResourceError("not connected")
        await link.send(msg)

    async def _join(self, link: wire.Link) -> None:
        """Take a seat (resume, create or join); a taken name is replaced and tried again."""
        for _ in range(MAX_JOIN_TRIES):
            try:
                if self.token is not None and self.room is not None:
                    seated = await link.resume(self.room, self.token)
                elif self.opts.create is not None and self.room is None:
                    seated = await link.create(self.name, self.opts.create, self.opts.password)
                elif self.room is not None:
                    seated = await link.join(self.room, self.name, self.opts.password)
                else:
                    raise ValueError("a bot needs a room code, or settings to create a room")
            except wire.Refused as refusal:
                if not await self._on_join_refused(refusal):
                    return
                continue
            await self._on_seated(seated)
            return
        raise wire.Refused("name_taken", "every name tried is taken here")

    async def _on_join_refused(self, err: wire.Refused) -> bool:
        """Handle a refused seat request: True to try again on this connection, False when the
        bot is finished; raises to reconnect after a pause."""
        if err.code in ("name_taken", "bad_name"):
            old, self.name = self.name, self.names.take()
            self.say(f"the name {old!r} is taken here; I am {self.name} instead")
            return True
        if err.code == "bad_token" and err.ref == "resume_seat":
            self.say("my saved seat is gone; joining anew")
            self.token = None
            if self.opts.store is not None and self.room is not None:
                with contextlib.suppress(OSError):
                    self.opts.store.forget_seat(self._seat_server(), self.room)
            return True
        if err.code in FATAL_JOIN or err.ref == "create_room":
            self.status = f"could not join: {err}"
            self.exit_code = 1
            self.say(self.status)
            return False
        self.say(f"could not join yet ({err.code}): {err}")
        raise err  # reconnect and try again after a pause

    async def _on_seated(self, msg: m.Seated) -> None:
        fresh = self.token != msg.token
        self.seated_now = True
        self.room, self.token, self.player_id = msg.room, msg.token, msg.player_id
        if fresh:
            self.say(f"seated in room {msg.room} (board {msg.seat + 1})")
        else:
            self.say(f"back in my seat in room {msg.room}")
        if self.opts.store is not None and fresh:
            await trio.to_thread.run_sync(self._save_seat, msg)
        self.seated.set()

    # ------------------------------------------------------------------ messages

    def _keep_deal(self, commitment: str, share: str) -> None:
        """A deal opened for this seat: kept in the state directory, as a person's client keeps
        it (``client.net``), so that an audit given it confirms this seat's share (it said the
        share was the server's word, and to give a state directory that held none: found by
        review)."""
        store = self.opts.store
        if store is None or self.room is None:
            return
        v = self.view
        seat = v.you if v is not None and v.phase == "lobby" else None
        try:
            store.save_deal(self._seat_server(), self.room, commitment=commitment, share=share,
                            seat=seat, name=self.name)  # fmt: skip
            self._dealt = (self.room, commitment)
        except OSError as exc:  # the share still goes: the deal is not held up by a disk
            self.say(f"could not keep the deal's share ({exc.strerror or exc})")

    def _name_deal(self, view: m.View) -> None:
        """The game id the server named once the kept deal was dealt (``StateDir.name_deal``)."""
        if self._dealt is None or self.opts.store is None or not view.game_id:
            return
        if view.phase == "lobby":
            return
        with contextlib.suppress(OSError):
            self.opts.store.name_deal(*self._dealt, view.game_id, server=self._seat_server())
        self._dealt = None

    async def _on_message(self, msg: m.ServerMsg) -> None:
        match msg:
            case m.Seated():
                await self._on_seated(msg)
            case m.Update(view=view, receipt=receipt):
                self.view = view
                self._name_deal(view)
                self.view_at = trio.current_time()
                if receipt is not None:
                    self.receipt = receipt
                if view.phase == "review":
                    self.reviews[view.round] = view
                if self.opts.on_view is not None:
                    self.opts.on_view(view)
                me = _me(view)
                if view.phase == "over":
                    self._finish_game(view)
                elif me is not None and me.kicked:
                    self.status = "removed from the game"
                    self.say("I was removed from the game")
                self._wake()
            case m.Error():
                await self._on_error(msg)
            case m.Bye(reason=reason):
                self._bye = reason
            case _:
                pass

    def _save_seat(self, msg: m.Seated) -> None:
        assert self.opts.store is not None
        try:
            self.opts.store.save_seat(
                self._seat_server(),
                msg.room,
                seat=msg.seat,
                player_id=msg.player_id,
                token=msg.token,
                name=self.name,
            )
        except OSError as exc:
            self.say(f"could not save my seat token: {exc}")

    def _finish_game(self, view: m.View) -> None:
        if self.status is not None:
            return
        self.status = "over"
        me = _me(view)
        if me is not None:
            won = me.seat in view.winners
            points = f"{me.score} point{'' if me.score == 1 else 's'}"
            self.say(f"the game is over: {points}{' - I won!' if won else ''}")

    async def _on_error(self, err: m.Error) -> None:
        self.record.errors.append(err)
        self.say(f"refused ({err.code}): {err.message}")
        key = self._last_key.get(err.ref or "")
        if key is None:
            return
        if err.code == "reveal_mismatch" and len(key) >= 3:
            gid, round_ = key[1], key[2]
            attempts = self._secrets.get((gid, round_), [])
            if attempts:
                attempts.pop()  # try the older commitment next
        self._sent.discard(key)
        self._tries[key] = self._tries.get(key, 0) + 1
        if self._tries[key] >= 3:
            self._once.add(key)  # give up on this move
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # ------------------------------------------------------------------ acting

    async def _act_loop(self) -> None:
        while self.status is None:
            changed = self._changed
            action = self.next_action()
            if action is None:
                await changed.wait()
                continue
            pause = self._delay_for(action.kind)
            if pause > 0:
                await trio.sleep(pause)
                again = self.next_action()
                if again is None or again.key != action.key:
                    continue
                action = again
            try:
                msgs = await action.build()
            except Exception:  # a bug in one move must not end the game for this bot
                self.say(f"could not make the move {action.key}:\n{traceback.format_exc()}")
                self._once.add(action.key)
                continue
            self._sent.add(action.key)
            if action.key[0] in ("chat", "challenges"):
                self._once.add(action.key)
            for msg in msgs:
                self._last_key[_tag(msg)] = action.key
                await self._send(msg)

    def _delay_for(self, kind: str) -> float:
        lo, hi = self.opts.delay
        if hi <= 0:
            return 0.0
        base = self.rng.uniform(lo, hi)
        if kind == "reflex":  # what a client does by itself (the reveal)
            base = min(0.3, base * 0.1)
        elif kind == "quick":
            base *= 0.5
        elif kind == "after-results":
            # The last round's results have just opened on everyone's screen: a conjurer who
            # chose at once started a race of spell words while a newcomer was reading them.
            base += RESULTS_READING
        v = self.view
        if v is not None and v.remaining is not None:
            left = v.remaining - (trio.current_time() - self.view_at) - 2.0
            base = max(0.0, min(base, left))
        return base

    def next_action(self) -> _Action | None:
        """The one move to make now for the newest view, or None (pure: sends nothing)."""
        for action in self._candidates():
            if action.key not in self._sent and action.key not in self._once:
                return action
        return None

    def _candidates(self):
        v = self.view
        if v is None or self.status is not None or v.you is None:
            return
        me = _me(v)
        if me is None:
            return
        if v.phase == "lobby":
            if self.opts.start_when is not None and v.host == v.you and self.opts.start_when(v):
                yield _Action(("start", len(v.players)), "quick", _const([m.StartGame()]))
            return
        if v.phase == "over" or v.paused or me.kicked or me.skipped or v.game_id is None:
            return
        gid, rnd = v.game_id, v.round
        dark = v.settings.variant == "dark-magic"
        conjurer = v.conjurer == v.you
        my_turn = v.turn == v.you
        if v.phase == "choose":
            if my_turn:
                kind = "after-results" if v.results else "think"
                yield _Action(("choose", gid, rnd), kind, self._choose)
            return
        category = v.card.text if v.card is not None else ""
        acting = my_turn and v.phase in ("dark-commit", "spell", "mark")
        if acting and category and not knows(category):
            yield _Action(("chat", category.casefold()), "quick", self._chat_unknown)
        if v.phase == "dark-commit" and my_turn:
            yield _Action(("commit", gid, rnd), "think", self._commit)
        elif v.phase == "spell" and my_turn:
            yield _Action(("spell", gid, rnd), "think", self._spell)
        elif v.phase == "mark" and my_turn:
            yield _Action(("mark", gid, rnd), "think", self._mark)
        elif v.phase == "commit" and not me.committed and not (dark and conjurer):
            yield _Action(("commit", gid, rnd), "think", self._commit)
        elif v.phase == "reveal" and me.committed and not me.revealed:
            n = len(self._attempts(gid, rnd))
            if n:
                yield _Action(("reveal", gid, rnd, n), "reflex", self._reveal)
        elif v.phase == "review":
            for p in v.proposals:
                if p.carried is None and v.you in p.voters and v.you not in p.votes:
                    yield _Action(("vote", gid, rnd, p.id), "think", _bind(self._vote, p))
            yield _Action(("challenges", gid, rnd), "quick", self._challenge)
            if not me.done:
                yield _Action(("done", gid, rnd, len(v.proposals)), "quick", self._done)

    # -- the moves (each computes from the newest view when it is made)

    def _table(self) -> tuple[m.View, m.PlayerView, str, bool]:
        v = self.view
        assert v is not None
        me = _me(v)
        assert me is not None
        category = v.card.text if v.card is not None else ""
        return v, me, category, v.settings.variant == "dark-magic"

    async def _choose(self) -> list[m.ClientMsg]:
        v = self.view
        assert v is not None
        cards = [c for c in v.cards if not c.used]
        pick = cards[self.brain.choose_card([(c.text, c.stars) for c in cards])]
        self.say(f"round {v.round}: I choose the category {pick.text!r}")
        return [m.ChooseCard(card=pick.index)]

    async def _chat_unknown(self) -> list[m.ClientMsg]:
        self.record.chats.append(UNKNOWN_CATEGORY_LINE)
        return [m.SendChat(text=UNKNOWN_CATEGORY_LINE)]

    async def _spell(self) -> list[m.ClientMsg]:
        v, _, category, dark = self._table()
        written = [p.spell for p in v.players if p.spell]
        word = self.brain.spell_word(category, written, dark_magic=dark)
        if validate_written(word) is not None or is_stopped(word):
            word = _safe_noun(written)
        self.record.spells.append(word)
        self.say(f"round {v.round}: spell word {word!r}")
        return [m.WriteSpell(word=word)]

    async def _mark(self) -> list[m.ClientMsg]:
        v, _, category, dark = self._table()
        assert v.game_id is not None
        spells = {p.seat: p.spell for p in v.players if p.spell}
        if dark:
            secret = self._attempts(v.game_id, v.round)
            word = secret[-1].word if secret else None
            marks = self.brain.mark(category, spells, dark_magic_word=word) if word else []
            marks = [s for s in marks if s in spells][:4]
        else:
            plan = self.brain.plan(category, spells)
            marks = sorted({s for s in plan.marks if s in spells})[:4]
            if len(marks) < 2:  # cannot happen with a sane plan; still play a legal move
                marks = sorted(spells)[: max(2, min(4, len(spells)))]
            if plan.summon:
                self._targets[(v.game_id, v.round)] = plan.summon
        names = ", ".join(repr(spells[s]) for s in marks) or "no board"
        self.say(f"round {v.round}: crystals on {names}")
        return [m.MarkBoards(boards=marks)]

    async def _commit(self) -> list[m.ClientMsg]:
        v, _, category, dark = self._table()
        assert v.game_id is not None and v.you is not None
        written = [p.spell for p in v.players if p.spell]
        marked = [p.spell for p in v.players if p.marked and p.spell]
        conjurer = v.conjurer == v.you
        if dark and conjurer:
            word = self.brain.dark_summon(category)  # exempt from the written-word rule
            word = word if validate_written(word) is None else _safe_noun([])
        else:
            word = self._targets.get((v.game_id, v.round)) if conjurer else None
            if word is None:
                word = self.brain.summon(category, marked, written, dark_magic=dark)
            word = safe_summon(self.brain, word, category, marked, written, dark_magic=dark)
        nonce = new_nonce()
        digest = commitment(v.game_id, v.round, v.you, nonce, word)
        self._secrets.setdefault((v.game_id, v.round), []).append(_Secret(word, nonce.hex()))
        if self.opts.store is not None:  # before the commitment leaves
            store, gid, rnd, seat = self.opts.store, v.game_id, v.round, v.you
            await trio.to_thread.run_sync(
                lambda: store.save_summon(
                    gid, rnd, seat, word=word, nonce=nonce.hex(), commitment=digest
                )
            )
        self.say(f"round {v.round}: locked in my summoning word")
        return [m.CommitSummon(commitment=digest)]

    def _attempts(self, gid: str, rnd: int) -> list[_Secret]:
        found = self._secrets.get((gid, rnd))
        if found:
            return found
        v = self.view
        if self.opts.store is not None and v is not None and v.you is not None:
            with contextlib.suppress(OSError):
                saved = self.opts.store.load_summons(gid, rnd, v.you)  # newest first
                if saved:
                    found = [_Secret(a["word"], a["nonce"]) for a in reversed(saved)]
                    self._secrets[(gid, rnd)] = found
                    return found
        return []

    async def _reveal(self) -> list[m.ClientMsg]:
        v = self.view
        assert v is not None and v.game_id is not None
        secret = self._attempts(v.game_id, v.round)[-1]
        return [m.RevealSummon(word=secret.word, nonce=secret.nonce)]

    async def _vote(self, p: m.ProposalView) -> list[m.ClientMsg]:
        v, _, category, _ = self._table()
        written = [x.spell for x in v.players if x.spell]
        if p.kind == "same" and len(p.words) >= 2:
            yes, reason = self.brain.vote("same", p.words[0], other=p.words[1])
        elif p.kind == "challenge" and p.words and p.rule:
            yes, reason = self.brain.vote(p.rule, p.words[0], category=category, written=written)
        else:
            yes, reason = False, "I cannot tell"
        reason = reason[:200]
        self.record.votes.append((p.id, yes, reason))
        vote = "yes" if yes else "no"  # (proposals are numbered from 1 where people read them)
        self.say(f"round {v.round}: I vote {vote} on proposal {p.id + 1}: {reason}")
        return [m.CastVote(proposal=p.id, yes=yes, reason=reason)]

    async def _challenge(self) -> list[m.ClientMsg]:
        v, _, category, _ = self._table()
        if not category or not knows(category) or self.rng.random() >= self.opts.challenge_rate:
            return []
        for p in v.players:
            if p.seat == v.you or not p.valid or not p.summon:
                continue
            yes, reason = self.brain.vote("category", p.summon, category=category)
            if yes:
                self.record.challenges.append((p.seat, reason))
                self.say(f"round {v.round}: I challenge {p.summon!r}: {reason}")
                return [m.ChallengeWord(seat=p.seat, rule="category")]
        return []

    async def _done(self) -> list[m.ClientMsg]:
        v = self.view
        me = _me(v) if v is not None else None
        if me is not None and me.summon and me.summon not in self.record.summons:
            self.record.summons.append(me.summon)
        return [m.ReviewDone()]


# ------------------------------------------------------------------ helpers


def _me(v: m.View) -> m.PlayerView | None:
    if v.you is None:
        return None
    for p in v.players:
        if p.seat == v.you:
            return p
    return None


def _tag(msg: m.ClientMsg) -> str:
    return struct_tag(type(msg))


def _const(msgs: list[m.ClientMsg]) -> Callable[[], Awaitable[list[m.ClientMsg]]]:
    async def build() -> list[m.ClientMsg]:
        return msgs

    return build


def _bind(fn, *args):
    async def build() -> list[m.ClientMsg]:
        return await fn(*args)

    return build


def passes_checks(word: str, written: Sequence[str]) -> bool:
    """Whether no automatic check rejects ``word`` as a summoning word against these spell
    words (and it is not stop-listed): what a bot double-checks before committing."""
    return (
        validate_written(word) is None
        and not is_stopped(word)
        and not any(contains_written(word, x) for x in written if x.strip())
    )


def safe_summon(
    brain: Brain,
    word: str,
    category: str,
    marked: Sequence[str],
    written: Sequence[str],
    *,
    dark_magic: bool = False,
) -> str:
    """``word`` if no automatic check can reject it, else the best word that passes."""
    if passes_checks(word, written):
        return word
    for w, _ in brain.rank_summons(category, marked, written, k=50, dark_magic=dark_magic):
        if passes_checks(w, written):
            return w
    data = load_data()
    for i in data.common:
        w = data.words[int(i)]
        if passes_checks(w, written):
            return w
    raise RuntimeError("no summoning word passes the checks")  # pragma: no cover


def _safe_noun(written: Sequence[str]) -> str:
    data = load_data()
    for i in data.common:
        w = data.words[int(i)]
        if not any(contains_written(w, x) or contains_written(x, w) for x in written):
            return w
    return "thing"
