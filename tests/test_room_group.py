"""Group commit is invisible: a room that takes queued game commands together (``GROUP_MOST``)
logs, answers and shows exactly what a room taking them one at a time does.

Each case plays a seeded three-player game twice on the in-memory store of test_room_unit, with
the same inputs (a fixed clock, seeded secrets and game id, up to seven messages queued at
once: moves in and out of phase, pauses, resumes, skips and kicks, jumps of the clock, small
budgets, and in some cases writes that fail), once with groups and once with ``GROUP_MOST`` = 1,
and compares the log's records, the receipt, the budget counts, each seat's last view and each
seat's errors and feed lines in the order received. Three cases found by that comparison are
also pinned on their own below.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import replace

import pytest
import trio
from test_room_unit import (
    PATIENCE,
    FakeViewer,
    MemoryStore,
    Request,
    at_the_summon,
    behind_a_held_write,
    commit,
    config,
    errors,
    running_room,
    seat_three,
    start,
    to_commit,
)

from conjure.protocol import messages as m
from conjure.protocol.commitment import commitment
from conjure.server import room as room_mod

WORDS = ["apple", "stone", "river", "cloud", "ember", "frost", "glass", "honey"]
RULES = ["noun", "no-adjectives", "category", "written-word"]


def det_secrets(monkeypatch, seed):
    """The same secrets and game id in both plays of a seed."""
    rng = random.Random(seed)
    monkeypatch.setattr(secrets, "token_hex", lambda n=32: rng.randbytes(n).hex())
    monkeypatch.setattr(secrets, "token_bytes", lambda n=32: rng.randbytes(n))
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n=32: rng.randbytes(n).hex())
    monkeypatch.setattr(room_mod, "new_game_id", lambda: "gfixed0000000000")


def plan(rng, g, table, summons):
    """K messages chosen on the durable state ``g``."""
    out = []
    n = len(table)
    r = g.round
    for _ in range(rng.randint(1, 7)):
        seat = rng.randrange(n)
        v = table[seat]
        k = rng.random()
        phase = g.phase
        if rng.random() < 0.7 and r is not None:
            k = {
                "choose": 0.2,
                "spell": 0.3,
                "mark": 0.4,
                "commit": 0.5,
                "dark-commit": 0.5,
                "reveal": 0.6,
                "review": rng.choice([0.7, 0.8, 0.85, 0.95]),
            }.get(phase, k)
            if phase in ("choose", "mark"):
                seat = r.conjurer
            elif phase == "spell" and g.turn is not None and rng.random() < 0.8:
                seat = g.turn
            v = table[seat]
        if k < 0.06:
            msg = m.PauseGame()
            v = table[g.host]
        elif k < 0.12:
            msg = m.ResumeGame()
            v = table[g.host]
        elif k < 0.15:
            msg = m.SkipPlayer(seat=rng.randrange(n))
            v = table[g.host]
        elif k < 0.16:
            msg = m.KickPlayer(seat=rng.randrange(n))
            v = table[g.host]
        elif k < 0.22:
            msg = m.ChooseCard(card=rng.randrange(8))
        elif k < 0.35:
            msg = m.WriteSpell(word=rng.choice(WORDS))
        elif k < 0.42:
            ss = sorted(r.spells) if r is not None else []
            msg = m.MarkBoards(boards=rng.sample(ss, min(len(ss), rng.randint(1, 3))))
        elif k < 0.58:
            rn = r.number if r is not None else 0
            word, nonce = rng.choice(WORDS), rng.randbytes(32)
            summons[(rn, seat)] = (word, nonce)
            msg = m.CommitSummon(commitment=commitment(g.setup.game_id, rn, seat, nonce, word))
        elif k < 0.68:
            rn = r.number if r is not None else 0
            word, nonce = summons.get((rn, seat), ("apple", b"\0" * 32))
            msg = m.RevealSummon(word=word, nonce=nonce.hex())
        elif k < 0.74:
            msg = m.ChallengeWord(seat=rng.randrange(n), rule=rng.choice(RULES))
        elif k < 0.78:
            msg = m.ProposeSame(a=rng.randrange(n), b=rng.randrange(n))
        elif k < 0.9:
            np_ = len(r.proposals) if r is not None else 0
            msg = m.CastVote(proposal=rng.randrange(np_ + 1), yes=rng.random() < 0.5)
        else:
            msg = m.ReviewDone()
        out.append((v, msg))
    return out


def transcript(v: FakeViewer):
    out = []
    for x in v.received:
        if isinstance(x, m.Error):
            out.append(("E", x.code, x.ref, x.message))
        elif isinstance(x, m.Update):
            for line in x.feed:
                out.append(("F", line))
    return out


async def play(seed, monkeypatch, grouped, fail_p=0.0, cfg_over=None):
    det_secrets(monkeypatch, seed)
    monkeypatch.setattr(room_mod, "GROUP_MOST", 16 if grouped else 1)
    T = [1000.0]
    budgets = dict(max_actions_per_round=6, max_changes_per_round=2)
    budgets.update(cfg_over or {})
    cfg = replace(config(), clock=lambda: T[0], **budgets)
    store = MemoryStore()
    rng = random.Random(seed * 7 + 1)
    summons = {}
    fails = 0
    async with running_room(store, cfg) as room:
        table = await seat_three(room)
        await start(room, store, table)
        gid = room.game.setup.game_id
        for _ in range(60):
            g = room.game
            if g is None or g.over:
                break
            if rng.random() < 0.25:
                T[0] += rng.choice([1.0, 30.0, 500.0])
            log = store.logs[gid]
            failing = rng.random() < fail_p
            if failing:
                log.fail = True
                fails += 1
            reqs = [Request(v, msg) for v, msg in plan(rng, g, table, summons)]
            for r in reqs:
                room.submit(r)
            with trio.fail_after(PATIENCE):
                for r in reqs:
                    await r.done.wait()
            if failing:
                log.fail = False  # reopened once the clock passes log_retry
                T[0] += 1.0
                # a harmless request wakes the room so that the timer reopens the log
                rq = Request(table[0], m.Resync())
                room.submit(rq)
                await rq.done.wait()
        log = store.logs[gid]
        recs = [(x.type, x.data, x.cmd, x.batch, x.ts) for x in log.records]
        acted = (room._acted[0], dict(room._acted[1]))
        result = dict(
            recs=recs,
            transcripts=[transcript(v) for v in table],
            acted=acted,
            receipt=(room.receipt.seq, room.receipt.hash) if room.receipt else None,
            views=[v.updates()[-1].view for v in table if v.updates()],
            writes=list(log.writes),
            phase=room.game.phase if room.game else None,
        )
    return result


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i, x, y
    return len(a) if len(a) != len(b) else None, a[len(b) :][:3], b[len(a) :][:3]


def same(a: dict, b: dict, *, exact_errors: bool = True) -> None:
    assert a["recs"] == b["recs"], first_diff(a["recs"], b["recs"])
    assert a["acted"] == b["acted"]
    assert a["receipt"] == b["receipt"]
    for i in range(3):
        ta, tb = a["transcripts"][i], b["transcripts"][i]
        if not exact_errors:  # the same errors, in the same order, whatever their wording
            ta = [x[:3] if x[0] == "E" else x for x in ta]
            tb = [x[:3] if x[0] == "E" else x for x in tb]
        assert ta == tb, (i, first_diff(ta, tb))


@pytest.mark.parametrize("seed", range(150))
async def test_grouped_is_the_same_as_one_at_a_time(seed, monkeypatch):
    a = await play(seed, monkeypatch, True)
    b = await play(seed, monkeypatch, False)
    same(a, b)
    assert a["views"] == b["views"]


@pytest.mark.parametrize("seed", range(60))
async def test_grouped_is_the_same_as_one_at_a_time_when_writes_fail(seed, monkeypatch):
    a = await play(seed, monkeypatch, True, fail_p=0.15)
    b = await play(seed, monkeypatch, False, fail_p=0.15)
    same(a, b, exact_errors=False)


@pytest.mark.parametrize("seed", range(30))
async def test_grouped_is_the_same_as_one_at_a_time_on_tight_budgets(seed, monkeypatch):
    over = dict(max_actions_per_round=2, max_changes_per_round=1)
    a = await play(seed, monkeypatch, True, fail_p=0.1, cfg_over=over)
    b = await play(seed, monkeypatch, False, fail_p=0.1, cfg_over=over)
    same(a, b, exact_errors=False)


async def test_the_seeds_do_form_groups(monkeypatch):
    """The comparison means something only if groups happen: they do, in most games."""
    grouped = 0
    for seed in range(10):
        a = await play(seed, monkeypatch, True)
        grouped += any(n > 1 for n in a["writes"])
    assert grouped >= 5


# ------------------------------------------------------------------ found by the comparison


async def test_a_failed_group_answers_each_connection_in_the_order_it_sent():
    store = MemoryStore(full=True)
    async with running_room(store) as room:
        (ann, bob, _), log = await at_the_summon(room, store)

        def fail() -> None:
            log.fail = True

        # Ann (the host) pipelines a pause and a resume behind Bob's write: one group, which fails.
        await behind_a_held_write(
            room, log, (bob, commit()), (ann, m.PauseGame()), (ann, m.ResumeGame()), meanwhile=fail
        )
        refs = [x.ref for x in ann.received if isinstance(x, m.Error)]
        assert errors(ann) == ["log_unavailable"] * 2 and refs == ["pause", "resume"]


@pytest.mark.parametrize("most", [16, 1])
async def test_a_kicked_player_first_hears_of_their_own_move_before_the_kick(most, monkeypatch):
    monkeypatch.setattr(room_mod, "GROUP_MOST", most)
    store = MemoryStore()
    async with running_room(store) as room:
        (ann, bob, cy), log = await at_the_summon(room, store)
        before = len(bob.updates())
        await behind_a_held_write(
            room, log, (cy, commit()), (bob, commit()), (ann, m.KickPlayer(seat=1))
        )
        assert any(r.type == "committed" and r.data["seat"] == 1 for r in log.records)
        assert bob.closed == "the host removed you from the game"
        assert any("Bob has locked in" in line for u in bob.updates()[before:] for line in u.feed)


@pytest.mark.parametrize("most", [16, 1])
async def test_no_move_is_decided_after_the_phase_deadline(most, monkeypatch):
    """Deciding takes time (here 1 ms a command): a group stops at the deadline, as the room's
    timer would come between two requests taken one at a time. (The summon's commitments: a
    late proposal in the review moves its deadline on purpose, V7.)"""
    monkeypatch.setattr(room_mod, "GROUP_MOST", most)
    now = [1000.0]
    real = room_mod.decide_and_fold

    def slow_decide(state, command):
        now[0] += 0.001
        return real(state, command)

    monkeypatch.setattr(room_mod, "decide_and_fold", slow_decide)
    store = MemoryStore()
    async with running_room(store, replace(config(), clock=lambda: now[0])) as room:
        table = await seat_three(room)
        await start(room, store, table)
        await to_commit(room, table)
        g = room.game
        assert g is not None and g.round is not None and g.phase == "commit"
        assert g.deadline is not None
        deadline = g.deadline
        now[0] = deadline - 0.0025  # the summon has 2.5 ms left
        words = {0: "moon", 1: "star", 2: "comet"}
        requests = [
            Request(v, m.CommitSummon(commitment=commitment(
                g.setup.game_id, g.round.number, s, secrets.token_bytes(32), words[s])))
            for s, v in [*enumerate(table), (0, table[0])]  # (Ann's word replaced, last)
        ]  # fmt: skip
        for r in requests:
            room.submit(r)
        with trio.fail_after(PATIENCE):
            for r in requests:
                await r.done.wait()
        log = store.logs[g.setup.game_id]
        committed = [r for r in log.records if r.type == "committed"]
        assert committed and not [r for r in committed if r.ts >= deadline]
        assert len(committed) < len(requests)  # the clock closed the summon between them
