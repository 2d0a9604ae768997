"""Lean scripted players for bench/load.py: one generator process drives a slice of the rooms.

Each room has 6 players, each one WebSocket (raw trio-websocket) with two small tasks:

* a reader that takes every frame as it arrives, stamps it with ``time.monotonic()``, lets the
  other readers woken with it stamp theirs (``stamped``), decodes only the few fields the script
  needs (msgspec skips the rest) and records, per room, when each update (by its receipt
  ``seq``) reached each player;
* an actor that waits until the player may act, waits 0.5-1.5 s (paced) or not at all (flat),
  and sends one prebuilt frame.

The same game script runs against both servers: start -> per round: choose, 6 spells in turn order,
mark, 6 commits, 6 reveals, 6 dones; 6 rounds (157 actions a game). Against Conjure the players read
"may I act" from their view; against the baseline they replay the script on a tiny local simulation
fed by the broadcasts.

Latency of an action = from just before its frame is sent to the moment the LAST of the room's 6
players received the update reflecting it. The actor finds that update's ``seq`` (the first update it
receives that reflects its own action: for Conjure by view content, for the baseline by the echoed
action), then the room's arrival record gives the time its 6th copy arrived.
"""

from __future__ import annotations

import gc
import os
import random
import resource
import secrets
import time
import traceback
from dataclasses import dataclass, field

import msgspec
import trio
from trio_websocket import ConnectionClosed, connect_websocket

from conjure.protocol.commitment import commitment
from conjure.protocol.patch import apply

convert = msgspec.convert

#: Awaited by a reader right after it stamps a frame's arrival, before it decodes it. The six
#: players of a room share one generator process with many other rooms' players, and their copies
#: of an update arrive together: each reader yields once, so that every reader woken in the same
#: scheduler pass stamps before any decodes. Without it a room's last stamp waited for the
#: decoding (for Conjure, applying a patch) of every reader that ran before it, which no real
#: player's latency includes (at 300 paced rooms, 0.3-0.6 ms of Conjure's p50 and 0-0.1 ms of
#: the baseline's; docs/PERFORMANCE.md). Left out: the last player's own decoding.
stamped = trio.lowlevel.cancel_shielded_checkpoint

N = 6
SPELLS = ("rocket", "ocean", "hydrogen", "engine", "wheel", "sail", "cloud", "tiger", "forest")
SUMMONS = ("ship", "car", "boat", "train", "plane", "bicycle", "horse", "sled", "kite")
LAG_TICK = 0.01  # the event-loop probe sleeps this long and records the overshoot


# ------------------------------------------------------------------ lean decoding (Conjure)


class LPlayer(msgspec.Struct):
    committed: bool = False
    revealed: bool = False
    done: bool = False


class LCard(msgspec.Struct):
    index: int
    used: bool = False


class LView(msgspec.Struct):
    phase: str = "lobby"
    game_id: str | None = None
    round: int = 0
    conjurer: int | None = None
    turn: int | None = None
    players: list[LPlayer] = []
    cards: list[LCard] = []


class LReceipt(msgspec.Struct):
    seq: int


class LMsg(msgspec.Struct, tag_field="type"):
    pass


class LUpdate(LMsg, tag="update"):
    view: LView
    receipt: LReceipt | None = None
    n: int | None = None  # numbered: a patch will follow from it


class LPatch(LMsg, tag="patch"):
    """What changed since view ``base`` (protocol.patch): the players ask for patches."""

    base: int
    n: int
    ops: list[dict]
    receipt: LReceipt | None = None


class LWelcome(LMsg, tag="welcome"):
    pass


class LSeated(LMsg, tag="seated"):
    room: str
    seat: int


class LError(LMsg, tag="error"):
    code: str
    message: str = ""


class LBye(LMsg, tag="bye"):
    reason: str = ""


class LOther(LMsg, tag="chat"):
    pass


class LDeal(LMsg, tag="deal_open"):
    """The fair deal: every seat answers with a random share (protocol.deal)."""


class LWatching(LMsg, tag="watching"):
    pass


conjure_decoder = msgspec.json.Decoder(
    LUpdate | LPatch | LWelcome | LSeated | LError | LBye | LOther | LWatching | LDeal
)
#: The hello of every player: patches, as the terminal client and the computer players ask.
HELLO = msgspec.json.encode(
    {"type": "hello", "protocol": 1, "client": "bench", "features": ["patches"]}
).decode()


def conjure_need(v: LView, me: int) -> tuple[int, str] | None:
    """The action this seat may take now, as (round, kind), or None."""
    ph = v.phase
    r = v.round
    if ph == "lobby":
        return (0, "start") if me == 0 and len(v.players) == N else None
    if ph == "choose":
        return (r, "choose") if v.conjurer == me else None
    if ph == "spell":
        return (r, "spell") if v.turn == me else None
    if ph == "mark":
        return (r, "mark") if v.conjurer == me else None
    if not v.players:
        return None
    p = v.players[me]
    if ph == "commit":
        return None if p.committed else (r, "commit")
    if ph == "reveal":
        return (r, "reveal") if p.committed and not p.revealed else None
    if ph == "review":
        return None if p.done else (r, "done")
    return None


# ------------------------------------------------------------------ the baseline's script


class BAction(msgspec.Struct):
    seat: int
    n: int
    act: str


class BUpdate(msgspec.Struct):
    seq: int
    a: BAction | None = None
    members: int = 0


baseline_decoder = msgspec.json.Decoder(BUpdate)


class Sim:
    """The game's flow without its rules: what the baseline's players replay from the broadcasts."""

    __slots__ = (
        "commits",
        "conjurer",
        "dones",
        "members",
        "phase",
        "reveals",
        "round",
        "spells",
        "turn",
    )

    def __init__(self) -> None:
        self.phase = "lobby"
        self.round = 0
        self.conjurer = -1
        self.turn = -1
        self.spells = 0
        self.members = 0
        self.commits: set[int] = set()
        self.reveals: set[int] = set()
        self.dones: set[int] = set()

    def _round(self, r: int) -> None:
        self.round, self.conjurer, self.turn, self.phase, self.spells = r, r - 1, r - 1, "choose", 0
        self.commits.clear()
        self.reveals.clear()
        self.dones.clear()

    def apply(self, seat: int, act: str) -> None:
        if act == "start":
            self._round(1)
        elif act == "choose":
            self.phase, self.turn = "spell", self.conjurer
        elif act == "spell":
            self.spells += 1
            if self.spells == N:
                self.phase, self.turn = "mark", self.conjurer
            else:
                self.turn = (self.turn + 1) % N
        elif act == "mark":
            self.phase = "commit"
        elif act == "commit":
            self.commits.add(seat)
            if len(self.commits) == N:
                self.phase = "reveal"
        elif act == "reveal":
            self.reveals.add(seat)
            if len(self.reveals) == N:
                self.phase = "review"
        elif act == "done":
            self.dones.add(seat)
            if len(self.dones) == N:
                if self.round == N:
                    self.phase = "over"
                else:
                    self._round(self.round + 1)

    def need(self, me: int) -> tuple[int, str] | None:
        ph, r = self.phase, self.round
        if ph == "lobby":
            return (0, "start") if me == 0 and self.members == N else None
        if ph == "choose" or ph == "mark":
            return (r, ph) if self.conjurer == me else None
        if ph == "spell":
            return (r, "spell") if self.turn == me else None
        if ph == "commit":
            return None if me in self.commits else (r, "commit")
        if ph == "reveal":
            return None if me in self.reveals else (r, "reveal")
        if ph == "review":
            return None if me in self.dones else (r, "done")
        return None


# ------------------------------------------------------------------ rooms and players


@dataclass
class RoomRun:
    """One room's measurements. ``arrivals[seq] = [copies received, time of the last copy]``."""

    name: str
    arrivals: dict[int, list] = field(default_factory=dict)
    actions: list[tuple[float, int, str]] = field(default_factory=list)  # (t_sent, seq, kind)
    finished_players: int = 0
    t_done: float | None = None
    errors: list[str] = field(default_factory=list)
    failed: str | None = None
    ended: trio.Event = field(default_factory=trio.Event)  # finished or failed
    ready: bool = False
    frames: int = 0  # update frames received during the game, and their bytes
    nbytes: int = 0

    def arrive(self, seq: int, t: float) -> None:
        a = self.arrivals.get(seq)
        if a is None:
            self.arrivals[seq] = [1, t]
        else:
            a[0] += 1
            a[1] = t


class Player:
    __slots__ = (
        "code",
        "current",
        "doc",
        "finished",
        "full",
        "kind",
        "last_seq",
        "n",
        "pending",
        "rng",
        "room",
        "seat",
        "seated",
        "secret",
        "sent",
        "sim",
        "view",
        "vn",
        "wake",
        "welcomed",
        "ws",
    )

    def __init__(self, kind: str, room: RoomRun, seat: int, rng: random.Random) -> None:
        self.kind = kind
        self.room = room
        self.seat = seat
        self.rng = rng
        self.ws = None
        self.sim = Sim() if kind == "baseline" else None
        self.view: LView | None = None
        self.doc: dict | None = None  # the whole view, as JSON data, that patches apply to
        self.vn: int | None = None  # its number
        self.current: tuple[int, str] | None = None  # what I may do now
        self.sent: tuple[int, str] | None = None  # the last action I sent
        self.pending: tuple[float, tuple[int, str]] | None = None  # sent, not yet seen reflected
        self.n = 0  # actions sent (the baseline echoes it back)
        self.last_seq = -1
        self.wake = trio.Event()
        self.welcomed = trio.Event()
        self.seated = trio.Event()
        self.full = trio.Event()  # this player has seen all N seats taken
        self.code: str | None = None
        self.finished = False
        self.secret: tuple[str, bytes] | None = None

    # -- reading

    async def read_conjure(self, on_finish) -> None:
        ws, room, me = self.ws, self.room, self.seat
        dec = conjure_decoder.decode
        need = conjure_need
        mono = time.monotonic
        while True:
            raw = await ws.get_message()
            t = mono()
            await stamped()
            msg = dec(raw)
            kind = type(msg)
            if kind is LPatch or kind is LUpdate:
                rc = msg.receipt
                if rc is not None:
                    room.frames += 1
                    room.nbytes += len(raw)
                if rc is not None and rc.seq > self.last_seq:
                    self.last_seq = rc.seq
                    room.arrive(rc.seq, t)
                if kind is LPatch:
                    if self.doc is None or msg.base != self.vn:
                        raise RuntimeError(f"seat {me}: patch {msg.n} does not follow {self.vn}")
                    self.doc = apply(self.doc, msg.ops)
                    self.vn = msg.n
                    v = convert(self.doc, LView)
                else:
                    if msg.n is not None:
                        self.doc, self.vn = msgspec.json.decode(raw)["view"], msg.n
                    v = msg.view
                self.view = v
                if len(v.players) >= N:
                    self.full.set()
                cur = need(v, me)
                if self.pending is not None and cur != self.pending[1]:
                    room.actions.append((self.pending[0], self.last_seq, self.pending[1][1]))
                    self.pending = None
                if cur != self.current:
                    self.current = cur
                    if cur is not None:
                        self.wake.set()
                if v.phase == "over" and not self.finished:
                    self.finished = True
                    self.wake.set()
                    on_finish(room, t)
            elif type(msg) is LWelcome:
                self.welcomed.set()
            elif type(msg) is LSeated:
                self.code = msg.room
                self.seated.set()
            elif type(msg) is LError:
                room.errors.append(f"seat {me}: {msg.code}: {msg.message[:120]}")
                self.pending = None
            elif type(msg) is LBye:
                room.errors.append(f"seat {me}: bye: {msg.reason}")
            elif type(msg) is LDeal:
                await ws.send_message(f'{{"type":"deal_seed","seed":"{secrets.token_hex(32)}"}}')

    async def read_baseline(self, on_finish) -> None:
        ws, room, me, sim = self.ws, self.room, self.seat, self.sim
        dec = baseline_decoder.decode
        mono = time.monotonic
        while True:
            raw = await ws.get_message()
            t = mono()
            await stamped()
            u = dec(raw)
            a = u.a
            if a is None:
                sim.members = u.members
                if u.members >= N:
                    self.full.set()
            else:
                room.frames += 1
                room.nbytes += len(raw)
                if u.seq > self.last_seq:
                    self.last_seq = u.seq
                    room.arrive(u.seq, t)
                sim.apply(a.seat, a.act)
                if a.seat == me and self.pending is not None and a.n == self.n:
                    room.actions.append((self.pending[0], u.seq, self.pending[1][1]))
                    self.pending = None
            cur = sim.need(me)
            if cur != self.current:
                self.current = cur
                if cur is not None:
                    self.wake.set()
            if sim.phase == "over" and not self.finished:
                self.finished = True
                self.wake.set()
                on_finish(room, t)

    # -- acting

    def frame(self, key: tuple[int, str]) -> str:
        r, kind = key
        me = self.seat
        if self.kind == "baseline":
            return f'{{"seat":{me},"n":{self.n},"act":"{kind}"}}'
        v = self.view
        if kind == "start":
            return '{"type":"start_game"}'
        if kind == "choose":
            card = next((c.index for c in v.cards if not c.used), 0)
            return f'{{"type":"choose_card","card":{card}}}'
        if kind == "spell":
            return f'{{"type":"write_spell","word":"{SPELLS[(me + r) % len(SPELLS)]}"}}'
        if kind == "mark":
            return f'{{"type":"mark_boards","boards":[{(me + 1) % N},{(me + 2) % N}]}}'
        if kind == "commit":
            word = SUMMONS[(me + r) % 3]  # some players match, as at a real table
            nonce = os.urandom(32)
            self.secret = (word, nonce)
            c = commitment(v.game_id or "", r, me, nonce, word)
            return f'{{"type":"commit_summon","commitment":"{c}"}}'
        if kind == "reveal":
            word, nonce = self.secret or ("", b"\0" * 32)
            return f'{{"type":"reveal_summon","word":"{word}","nonce":"{nonce.hex()}"}}'
        return '{"type":"done"}'

    async def act(self, go: trio.Event, paced: bool, stagger: float = 0.0) -> None:
        """Act whenever the player may; ``stagger``: the host delays the start by U(0, stagger) s."""
        await go.wait()
        ws = self.ws
        while not self.finished:
            await self.wake.wait()
            self.wake = trio.Event()
            key = self.current
            if key is None or key == self.sent or self.pending is not None:
                continue
            delay = self.rng.uniform(0.5, 1.5) if paced else 0.0
            if stagger > 0 and key[1] == "start":
                delay += self.rng.uniform(0.0, stagger)
            if delay > 0:
                await trio.sleep(delay)
                if self.current != key or self.finished:
                    continue
            self.n += 1
            text = self.frame(key)
            self.sent = key
            self.pending = (time.monotonic(), key)
            await ws.send_message(text)


# ------------------------------------------------------------------ one generator process


@dataclass
class GenConfig:
    proc: int
    kind: str  # "conjure" | "baseline"
    host: str
    port: int
    rooms: int  # rooms played at the same time ("slots"); each plays ``games`` games in a row
    paced: bool
    stagger: float  # the first game of each room starts U(0, stagger) s after "go"
    cap: float  # seconds from "go" until the process gives up waiting for its games
    seed: int
    games: int = 1
    dump: bool = False  # return every action's (t sent, latency ms, kind, room)
    setup_timeout: float = 120.0
    connect_concurrency: int = 32


async def _connect(cfg: GenConfig, nursery: trio.Nursery):
    with trio.fail_after(30):
        return await connect_websocket(
            nursery, cfg.host, cfg.port, "/", use_ssl=False, max_message_size=2**22
        )


async def _table_full(room: RoomRun, players: list[Player]) -> None:
    """Until every player has seen all N seats taken, or the room failed (``_guard`` then sets
    ``room.ended``)."""
    async with trio.open_nursery() as waiting:

        async def everyone() -> None:
            for p in players:
                await p.full.wait()
            waiting.cancel_scope.cancel()

        async def failed() -> None:
            await room.ended.wait()
            waiting.cancel_scope.cancel()

        waiting.start_soon(everyone)
        waiting.start_soon(failed)


async def _setup_room(
    cfg: GenConfig,
    nursery: trio.Nursery,
    room: RoomRun,
    players: list[Player],
    limiter: trio.CapacityLimiter,
    on_finish,
) -> None:
    """Connect the 6 players and seat them; the room is ready when everyone sees 6 seats."""
    try:
        async with limiter:
            for p in players:
                p.ws = await _connect(cfg, nursery)
                reader = p.read_baseline if cfg.kind == "baseline" else p.read_conjure
                nursery.start_soon(_guard, room, reader, on_finish)
            with trio.fail_after(60):
                if cfg.kind == "baseline":
                    for p in players:
                        await p.ws.send_message(f'{{"room":"{room.name}","seat":{p.seat}}}')
                    await _table_full(room, players)
                    return
                for p in players:
                    await p.ws.send_message(HELLO)
                    await p.welcomed.wait()
                host = players[0]
                await host.ws.send_message(
                    '{"type":"create_room","name":"P0","settings":{"spectators":false}}'
                )
                await host.seated.wait()
                for p in players[1:]:
                    await p.ws.send_message(
                        f'{{"type":"join_room","room":"{host.code}","name":"P{p.seat}"}}'
                    )
                    await p.seated.wait()
                await _table_full(room, players)
    except Exception as exc:  # a room that cannot be seated is reported, not fatal
        if room.failed is None:
            room.failed = f"setup: {type(exc).__name__}: {exc}"[:200]


async def _guard(room: RoomRun, fn, *args) -> None:
    try:
        await fn(*args)
    except (ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
        if room.t_done is None and room.failed is None:
            room.failed = f"connection lost: {exc!r}"[:200]
    except Exception:
        if room.failed is None:
            room.failed = traceback.format_exc(limit=3)[-400:]
    if room.failed is not None:
        room.ended.set()


async def _lag_probe(out: list[float]) -> None:
    mono = time.monotonic
    while True:
        t = mono()
        await trio.sleep(LAG_TICK)
        out.append(mono() - t - LAG_TICK)


def _cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class _Gen:
    """One generator process's rooms: ``cfg.rooms`` slots, each playing ``cfg.games`` games."""

    def __init__(self, cfg: GenConfig) -> None:
        self.cfg = cfg
        self.rooms: list[RoomRun] = []
        self.master = random.Random(cfg.seed * 1000 + cfg.proc)
        self.limiter = trio.CapacityLimiter(cfg.connect_concurrency)
        self.go = trio.Event()
        self.stop = trio.Event()  # the measurement is over: connections may close
        self.all_done = trio.Event()
        self.set_up = 0
        self.slots_left = cfg.rooms
        self.first_ready = trio.Event()

    def on_finish(self, room: RoomRun, t: float) -> None:
        room.finished_players += 1
        if room.finished_players == N:
            room.t_done = t
            room.ended.set()

    def _slot_over(self) -> None:
        self.slots_left -= 1
        if self.slots_left <= 0:
            self.all_done.set()

    def _counted_setup(self) -> None:
        self.set_up += 1
        if self.set_up >= self.cfg.rooms:
            self.first_ready.set()

    async def slot(self, i: int) -> None:
        cfg = self.cfg
        try:
            for g in range(cfg.games):
                room = RoomRun(f"g{cfg.proc}s{i}n{g}")
                self.rooms.append(room)
                plist = [
                    Player(cfg.kind, room, s, random.Random(self.master.random())) for s in range(N)
                ]
                async with trio.open_nursery() as conns:
                    await _setup_room(cfg, conns, room, plist, self.limiter, self.on_finish)
                    if g == 0 and self.go.is_set() and room.failed is None:
                        room.failed = "setup took longer than the setup timeout"
                    room.ready = room.failed is None
                    if g == 0:
                        self._counted_setup()
                        await self.go.wait()
                    if room.failed is None:
                        for p in plist:
                            stagger = cfg.stagger if g == 0 else 0.0
                            conns.start_soon(_guard, room, p.act, self.go, cfg.paced, stagger)
                        await room.ended.wait()
                    if g == cfg.games - 1 or room.failed is not None:
                        self._slot_over()
                        await self.stop.wait()  # keep the sockets open until the end
                        conns.cancel_scope.cancel()
                        return
                    conns.cancel_scope.cancel()
        finally:
            if cfg.games == 0:
                self._slot_over()


async def _generate(cfg: GenConfig, ready_q, go_evt, result_q) -> None:
    gen = _Gen(cfg)
    lags: list[float] = []
    async with trio.open_nursery() as nursery:
        t0 = time.monotonic()
        for i in range(cfg.rooms):
            nursery.start_soon(gen.slot, i)
        with trio.move_on_after(cfg.setup_timeout):
            await gen.first_ready.wait()
        first = gen.rooms[: cfg.rooms]
        live = sum(1 for r in first if r.ready)
        ready_q.put(("ready", cfg.proc, live, time.monotonic() - t0))
        # Keep the collector's full passes (tens of ms with this many objects) out of the run.
        gc.collect()
        gc.freeze()
        gc.set_threshold(50_000, 50, 1000)
        while not await trio.to_thread.run_sync(go_evt.wait, 0.25):
            pass
        t_go = time.monotonic()
        cpu0 = _cpu_self()
        gen.go.set()
        nursery.start_soon(_lag_probe, lags)
        with trio.move_on_after(cfg.cap):
            await gen.all_done.wait()
        t_end = time.monotonic()
        cpu1 = _cpu_self()
        result_q.put(_results(cfg, gen.rooms, t_go, t_end, cpu1 - cpu0, lags))
        gen.stop.set()
        nursery.cancel_scope.cancel()


def _results(cfg, rooms, t_go, t_end, cpu, lags) -> dict:
    lat: list[float] = []
    sent_at: list[float] = []
    dump: list[tuple] = []
    done_at: list[float] = []  # when the 6th copy arrived, per complete action
    incomplete = 0
    kinds: dict[str, list[float]] = {}
    started_at = t_go
    for r in rooms:
        for t_sent, seq, kind in r.actions:
            a = r.arrivals.get(seq)
            if a is None or a[0] < N:
                incomplete += 1
                continue
            d = a[1] - t_sent
            if kind == "start":
                started_at = max(started_at, a[1])
            lat.append(d)
            sent_at.append(t_sent)
            done_at.append(a[1])
            kinds.setdefault(kind, []).append(d)
            if cfg.dump:
                dump.append((round(t_sent - t_go, 4), round(1000 * d, 2), kind, r.name))
    lags.sort()
    return {
        "proc": cfg.proc,
        "t_go": t_go,
        "t_end": t_end,
        "started_at": started_at,
        "cpu": cpu,
        "latencies": lat,
        "sent_at": sent_at,
        "dump": dump,
        "done_at": done_at,
        "by_kind": {k: (len(v), sorted(v)[len(v) // 2], max(v)) for k, v in kinds.items()},
        "incomplete": incomplete,
        "rooms": len(rooms),
        "failed": [r.failed for r in rooms if r.failed],
        "finished": [r.t_done for r in rooms if r.t_done is not None],
        "unfinished": sum(1 for r in rooms if r.failed is None and r.t_done is None),
        "errors": [e for r in rooms for e in r.errors][:20],
        "n_errors": sum(len(r.errors) for r in rooms),
        "lag_p99": lags[int(0.99 * (len(lags) - 1))] if lags else 0.0,
        "lag_max": lags[-1] if lags else 0.0,
        "lag_n": len(lags),
        "frames": sum(r.frames for r in rooms),
        "nbytes": sum(r.nbytes for r in rooms),
    }


def gen_main(cfg: GenConfig, ready_q, go_evt, result_q) -> None:
    """Entry point of one generator process (multiprocessing target)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        trio.run(_generate, cfg, ready_q, go_evt, result_q)
    except BaseException:
        result_q.put({"proc": cfg.proc, "crash": traceback.format_exc()[-2000:]})
        ready_q.put(("crash", cfg.proc, 0, 0.0))
