"""A room driven directly: an in-memory log store and fake viewers, no sockets and no disk.

The room depends only on ``server.roomio``'s two sides (a ``LogStore``, ``Viewer`` connections),
so its pipeline (decide -> append -> apply -> broadcast) can be watched step by step here: nobody
hears of an action before the store has acknowledged it, and a store that fails holds the game
until it can be written again.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import trio
from wsclient import unframe

from conjure.protocol import messages as m
from conjure.protocol.deck import Card
from conjure.protocol.messages import RoomSettings
from conjure.server.config import ServerConfig
from conjure.server.connection import frame_of
from conjure.server.logformat import GENESIS, LogRecord, build_record
from conjure.server.logstore import Batch, LogFailure
from conjure.server.room import LOG_BACK, LOG_STALLED, Request, Room, Stop

CARDS = [Card(text=f"Category {i}", stars=1 + i % 3) for i in range(12)]
#: A bound on every wait, so a broken room fails the test instead of hanging it (not a timing check).
PATIENCE = 10.0


class FakeViewer:
    """A connection as the room sees it (``server.roomio.Viewer``): it keeps what it was sent."""

    def __init__(self, name: str, *, computer: bool = False) -> None:
        self.name = name
        self.room: Room | None = None
        self.player_id: str | None = None
        self.spectator = False
        self.remote = "127.0.0.1"
        self.patches = False
        self.computer = computer
        self.sent = None
        self.earlier_due = False
        self.closed: str | None = None
        self.received: list[m.ServerMsg] = []
        self._news = trio.Event()

    @property
    def open(self) -> bool:
        return self.closed is None

    def send(self, msg: m.ServerMsg) -> None:
        self.send_frame(frame_of(msg))

    def send_frame(self, data: bytes) -> None:
        self.received.append(m.server_decoder.decode(unframe(data)))
        self._news.set()
        self._news = trio.Event()

    def close(self, reason: str, code: int = 1000) -> None:
        self.closed = reason

    def updates(self) -> list[m.Update]:
        return [x for x in self.received if isinstance(x, m.Update)]

    def heard(self, line: str) -> bool:
        return any(line in f for u in self.updates() for f in u.feed)

    async def wait_for(self, what: Callable[[], bool]) -> None:
        with trio.fail_after(PATIENCE):
            while not what():
                await self._news.wait()


@dataclass
class MemoryLog:
    """A game's log in memory (``server.roomio.GameLog``); appends can be held or made to fail."""

    path: Path
    records: list[LogRecord] = field(default_factory=list)
    #: While set to an unset Event, an append waits for it before it acknowledges.
    hold: trio.Event | None = None
    #: Set when an append has the batch in hand (and is waiting for ``hold``, if any).
    appending: trio.Event = field(default_factory=trio.Event)
    fail: bool = False
    closed: bool = False
    #: How many batches each write held (one per decision, or a group's).
    writes: list[int] = field(default_factory=list)

    @property
    def last_seq(self) -> int:
        return len(self.records) - 1

    async def append_many(
        self,
        items: Sequence[tuple[str, dict[str, Any]]],
        ts: float,
        *,
        command: dict[str, Any] | None = None,
    ) -> list[LogRecord]:
        (batch,) = await self.append_batches([Batch(items, ts, command)])
        return batch

    async def append_batches(self, batches: Sequence[Batch]) -> list[list[LogRecord]]:
        assert not self.closed
        if self.fail:
            raise LogFailure(f"{self.path}: fsync failed: [Errno 28] No space left on device")
        self.appending.set()
        self.writes.append(len(batches))
        if self.hold is not None:
            await self.hold.wait()
        out: list[list[LogRecord]] = []
        for items, ts, command in batches:
            batch: list[LogRecord] = []
            prev = self.records[-1].hash if self.records else GENESIS
            for i, (type_, data) in enumerate(items):
                record = build_record(
                    prev,
                    self.last_seq + 1 + i,
                    ts,
                    type_,
                    data,
                    batch=len(items) - 1 - i,
                    cmd=None if i else command,
                )
                batch.append(record)
                prev = record.hash
            self.records.extend(batch)
            out.append(batch)
        return out

    def close(self) -> None:
        self.closed = True

    def discard(self) -> None:
        assert not self.records
        self.closed = True


@dataclass
class MemoryStore:
    """Logs by game id (``server.roomio.LogStore``); ``full`` makes reopening fail."""

    logs: dict[str, MemoryLog] = field(default_factory=dict)
    full: bool = False
    reopen_tried: trio.Event = field(default_factory=trio.Event)

    async def create(self, game_id: str) -> MemoryLog:
        log = self.logs[game_id] = MemoryLog(Path("memory") / game_id)
        return log

    async def reopen(self, log: Any) -> tuple[list[LogRecord], MemoryLog]:
        assert isinstance(log, MemoryLog) and log.closed  # the room closes the broken one first
        self.reopen_tried.set()
        if self.full:
            raise OSError(28, "No space left on device")
        fresh = MemoryLog(log.path, list(log.records))
        self.logs[log.path.name] = fresh
        return list(fresh.records), fresh

    async def discard(self, log: Any) -> None:
        log.discard()


def config() -> ServerConfig:
    # The replays directory is never touched: the store is in memory.
    return ServerConfig(replays=Path("no-such-dir"), clock=trio.current_time, log_retry=0.05)


async def ask(room: Room, viewer: FakeViewer, msg: m.ClientMsg) -> None:
    """Hand the room one request and wait until it has been handled."""
    request = Request(viewer, msg)
    room.submit(request)
    with trio.fail_after(PATIENCE):
        await request.done.wait()


def errors(viewer: FakeViewer) -> list[str]:
    return [x.code for x in viewer.received if isinstance(x, m.Error)]


@asynccontextmanager
async def running_room(store: MemoryStore, cfg: ServerConfig | None = None) -> AsyncIterator[Room]:
    closed: list[Room] = []
    async with trio.open_nursery() as nursery:
        room = Room("ABCD", cfg or config(), closed.append, store=store)
        nursery.start_soon(room.run)
        yield room
        room.submit(Stop("the test is over"))
    assert closed == [room]


async def seat_three(room: Room) -> list[FakeViewer]:
    ann, bob, cy = FakeViewer("Ann"), FakeViewer("Bob"), FakeViewer("Cy")
    await ask(
        room,
        ann,
        m.CreateRoom(name="Ann", settings=RoomSettings(deck="custom", custom_cards=CARDS)),
    )
    for v in (bob, cy):
        await ask(room, v, m.JoinRoom(room="ABCD", name=v.name))
    return [ann, bob, cy]


async def start(room: Room, store: MemoryStore, table: list[FakeViewer]) -> MemoryLog:
    """The host starts, every seat gives its share, the game is dealt; returns its log."""
    await ask(room, table[0], m.StartGame())
    for v in table:
        assert any(isinstance(x, m.DealOpen) for x in v.received)
        await ask(room, v, m.DealSeed(seed=secrets.token_hex(32)))
    assert room.game is not None
    return store.logs[room.game.setup.game_id]


async def test_a_join_seats_the_player_and_everyone_sees_the_table():
    store = MemoryStore()
    async with running_room(store) as room:
        ann, bob, cy = await seat_three(room)
        seated = [x for x in cy.received if isinstance(x, m.Seated)]
        assert [(s.room, s.seat) for s in seated] == [("ABCD", 2)]
        assert cy.player_id == seated[0].player_id and cy.room is room
        for v in (ann, bob, cy):
            assert [p.name for p in v.updates()[-1].view.players] == ["Ann", "Bob", "Cy"]
        assert ann.heard("Cy joined.")
        assert not errors(ann) + errors(bob) + errors(cy)
        assert store.logs == {}  # a lobby writes nothing


async def test_a_start_deals_with_every_share_and_logs_the_deal_first():
    store = MemoryStore()
    async with running_room(store) as room:
        table = await seat_three(room)
        log = await start(room, store, table)
        first = log.records[0]
        assert first.type == "game_started" and first.seq == 0
        assert sorted(first.data["deal"]["contributions"]) == ["0", "1", "2"]
        assert first.cmd is not None  # the command that produced the batch, for an audit
        for v in table:
            update = v.updates()[-1]
            assert update.view.round == 1
            assert update.receipt is not None and update.receipt.hash == log.records[-1].hash
        assert room.lobby is None


async def test_a_command_reaches_every_viewer_only_once_the_store_acknowledged_it():
    store = MemoryStore()
    async with running_room(store) as room:
        table = await seat_three(room)
        log = await start(room, store, table)
        watcher = FakeViewer("Wes")
        await ask(room, watcher, m.Watch(room="ABCD"))
        for v in table:  # the new spectator count reaches the players first (coalesced)
            await v.wait_for(lambda v=v: v.updates()[-1].view.spectators == 1)
        heard = [len(v.received) for v in table]
        log.hold, log.appending = trio.Event(), trio.Event()
        request = Request(table[0], m.ChooseCard(card=0))
        room.submit(request)
        with trio.fail_after(PATIENCE):
            await log.appending.wait()  # the room has the batch at the store, not yet durable
        assert [len(v.received) for v in table] == heard and not request.done.is_set()
        seq = log.last_seq
        log.hold.set()
        with trio.fail_after(PATIENCE):
            await request.done.wait()
        assert log.last_seq > seq
        for v in table:
            update = v.updates()[-1]
            assert update.view.phase == "spell"
            assert update.receipt is not None and update.receipt.seq == log.last_seq
        # Spectators' updates are coalesced, but they come, and with the same receipt.
        await watcher.wait_for(
            lambda: (u := watcher.updates()) != [] and u[-1].view.phase == "spell"
        )


async def test_a_failing_store_holds_the_game_and_it_goes_on_once_the_log_can_be_written():
    store = MemoryStore(full=True)
    async with running_room(store) as room:
        table = await seat_three(room)
        log = await start(room, store, table)
        receipt = table[0].updates()[-1].receipt
        log.fail = True
        await ask(room, table[0], m.ChooseCard(card=0))
        assert errors(table[0]) == ["log_unavailable"]
        for v in table:  # everyone is told in words; nothing unacknowledged reached anyone
            assert v.heard(LOG_STALLED) and v.open
            assert v.updates()[-1].view.phase != "spell"
        assert receipt is not None and log.last_seq == receipt.seq
        with trio.fail_after(PATIENCE):
            await store.reopen_tried.wait()  # the disk is still full: the game stays on hold
        await ask(room, table[0], m.ChooseCard(card=0))
        assert errors(table[0]) == ["log_unavailable"] * 2
        assert not table[1].heard(LOG_BACK)
        store.full = False
        await table[1].wait_for(lambda: table[1].heard(LOG_BACK))
        fresh = store.logs[log.path.name]
        assert fresh is not log and fresh.records == log.records
        await ask(room, table[0], m.ChooseCard(card=0))
        assert errors(table[0]) == ["log_unavailable"] * 2
        assert fresh.last_seq > log.last_seq
        assert table[1].updates()[-1].view.phase == "spell"


# ------------------------------------------------------------------ group commit


async def to_commit(room: Room, table: list[FakeViewer]) -> None:
    """Play round 1 up to its summon: a category, every spell word, two crystals."""
    g = room.game
    assert g is not None and g.round is not None
    await ask(room, table[g.round.conjurer], m.ChooseCard(card=0))
    while (g := room.game) is not None and g.phase == "spell":
        assert g.turn is not None
        await ask(room, table[g.turn], m.WriteSpell(word=f"clue{g.turn}"))
    assert g is not None and g.phase == "mark" and g.round is not None
    await ask(room, table[g.round.conjurer], m.MarkBoards(boards=[1, 2]))
    assert room.game is not None and room.game.phase == "commit", errors(table[0])


async def at_the_summon(room: Room, store: MemoryStore) -> tuple[list[FakeViewer], MemoryLog]:
    """Three seated, the game dealt, round 1 at its summon; the seats and the game's log."""
    table = await seat_three(room)
    log = await start(room, store, table)
    await to_commit(room, table)
    return table, log


def commit() -> m.CommitSummon:
    return m.CommitSummon(commitment=secrets.token_hex(32))


async def behind_a_held_write(
    room: Room,
    log: MemoryLog,
    first: tuple[FakeViewer, m.ClientMsg],
    *rest: tuple[FakeViewer, m.ClientMsg],
    meanwhile: Callable[[], None] = lambda: None,
) -> list[Request]:
    """``first`` is at the store, not yet durable, while ``rest`` queue up behind it (and
    ``meanwhile`` runs); then the write completes. Returns every request, all handled."""
    log.hold, log.appending = trio.Event(), trio.Event()
    requests = [Request(*first)]
    room.submit(requests[0])
    with trio.fail_after(PATIENCE):
        await log.appending.wait()
    for viewer, msg in rest:
        requests.append(Request(viewer, msg))
        room.submit(requests[-1])
    meanwhile()
    log.hold.set()
    log.hold = None
    with trio.fail_after(PATIENCE):
        for r in requests:
            await r.done.wait()
    return requests


async def test_commands_that_waited_together_are_made_durable_together_and_told_once():
    store = MemoryStore()
    async with running_room(store) as room:
        table, log = await at_the_summon(room, store)
        ann, bob, cy = table
        updates = [len(v.updates()) for v in table]
        writes, before = len(log.writes), len(log.records)
        requests = await behind_a_held_write(
            room, log, (ann, commit()), (bob, commit()), (cy, commit())
        )
        assert all(r.done.is_set() for r in requests)
        # Ann's write alone; Bob's and Cy's, which waited behind it, in one write of two batches.
        assert log.writes[writes:] == [1, 2]
        # Each decision is still a batch of its own, its command on its first record.
        assert log.records[before].cmd is not None and log.records[before].batch == 0
        group = log.records[before + 1 :]  # Ann's commit is one record
        starts = [i for i, r in enumerate(group) if i == 0 or group[i - 1].batch == 0]
        assert len(starts) == 2 and group[-1].batch == 0
        assert [i for i, r in enumerate(group) if r.cmd is not None] == starts
        assert [group[i].cmd["seat"] for i in starts] == [1, 2]
        for v, before in zip(table, updates, strict=True):
            news = v.updates()[before:]
            assert len(news) == 2  # one update for Ann's, one for both of the others
            assert news[-1].receipt is not None and news[-1].receipt.seq == log.last_seq
            assert news[-1].view.phase == "reveal"  # Cy's commit closed the summon
            assert sum("locked in" in line for line in news[-1].feed) == 2, news[-1].feed
        assert not errors(ann) + errors(bob) + errors(cy)


async def test_a_refused_command_ends_the_group_and_is_refused_on_the_durable_state():
    store = MemoryStore()
    async with running_room(store) as room:
        table, log = await at_the_summon(room, store)
        ann, bob, cy = table
        writes = len(log.writes)
        bob_heard = len(bob.received)
        await behind_a_held_write(
            room, log, (ann, commit()), (bob, commit()), (bob, m.ChooseCard(card=1)), (cy, commit())
        )
        assert log.writes[writes:] == [1, 1, 1]  # the refusal split the group
        assert errors(bob) == ["out_of_phase"]
        later = bob.received[bob_heard:]
        kinds = [type(x).__name__ for x in later]
        # Bob hears of his commit (durable) before the refusal of what he sent after it.
        assert kinds.index("Error") > kinds.index("Update")
        assert room.game is not None and room.game.phase == "reveal"


async def test_the_budgets_count_every_command_of_a_group():
    store = MemoryStore()
    async with running_room(store, replace(config(), max_changes_per_round=1)) as room:
        (ann, bob, _), log = await at_the_summon(room, store)
        writes = len(log.writes)
        # Bob's first word is new; the second replaces it (a change, his one); the third is over.
        await behind_a_held_write(room, log, (ann, commit()), *[(bob, commit())] * 3)
        assert log.writes[writes:] == [1, 2]
        assert errors(bob) == ["too_many_actions"]


async def test_a_failing_write_refuses_every_command_of_its_group():
    store = MemoryStore(full=True)
    async with running_room(store) as room:
        table, log = await at_the_summon(room, store)
        ann, bob, cy = table

        def fail() -> None:  # Ann's write is in hand and succeeds; the group behind it fails
            log.fail = True

        await behind_a_held_write(
            room, log, (ann, commit()), (bob, commit()), (cy, commit()), meanwhile=fail
        )
        assert not errors(ann)
        assert errors(bob) == errors(cy) == ["log_unavailable"]
        assert room.game is not None and room.game.round is not None
        assert room.game.phase == "commit" and len(room.game.round.commits) == 1  # Ann's alone


async def test_a_move_behind_a_slow_tick_meets_the_next_deadline_too(monkeypatch, tmp_path):
    """Found by review: the clock that goes first when a deadline fell due can itself take longer
    than the next phase's time (a stalled write): the request behind it must meet that phase's
    end too, or it is logged after the deadline, which the audit fails (A3)."""
    from dataclasses import replace

    from conjure.server import room as room_mod
    from conjure.server.audit_verify import audit
    from conjure.server.logformat import encode_record

    T = [1_000_000.0]
    store = MemoryStore()
    cfg = replace(config(), clock=lambda: T[0])
    async with running_room(store, cfg) as room:
        table, log = await at_the_summon(room, store)
        ann, bob, _cy = table
        for v in (ann, bob):
            done = Request(v, commit())
            room.submit(done)
            await done.done.wait()
        g = room.game
        assert g is not None and g.phase == "commit" and g.deadline is not None
        deadline = g.deadline
        # The host's pause is taken just before the summon's deadline by the loop's clock, and
        # handled just after it (the loop looked, then time went on).
        real_on_request = room_mod.Room._on_request

        async def late(self, conn, msg):
            T[0] = deadline + 0.001
            return await real_on_request(self, conn, msg)

        monkeypatch.setattr(room_mod.Room, "_on_request", late)
        real_append = type(log).append_many

        async def slow(self, items, ts, *, command=None):  # the tick's write stalls 40 s
            out = await real_append(self, items, ts, command=command)
            T[0] += 40.0
            return out

        monkeypatch.setattr(type(log), "append_many", slow)
        pause = Request(ann, m.PauseGame())
        room.submit(pause)
        with trio.fail_after(10):
            await pause.done.wait()
        monkeypatch.setattr(room_mod.Room, "_on_request", real_on_request)
        records = list(store.logs[room.game.setup.game_id].records)
    path = tmp_path / "game.jsonl"
    path.write_bytes(b"".join(encode_record(r) for r in records))
    paused = [r for r in records if r.cmd is not None and r.cmd.get("kind") == "pause"]
    assert paused, [r.type for r in records]
    a = audit(path)
    assert a.verified, a.problems
