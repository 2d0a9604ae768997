"""Crash recovery for real: ``conjure serve`` in a subprocess, killed with SIGKILL mid-game.

A 4-player game of each variant is played by scripted protocol clients (tests/crashhelpers.py).
The server is killed at several points of one game (after an acknowledged action, right after an
action was sent, with an action sent to a stopped server, or as soon as an action's records are in
the log file, acknowledged or not), then
restarted on the same replays/ directory on a new port; the clients reconnect with their tokens
(``resume_seat``) and carry on, re-sending an unacknowledged action only if the resumed view shows
it missing. A client that committed before a crash reveals the same word and nonce after it.

Checked after every game: the final scores and every round's case and points equal the hand-worked
ones (which the same game played without a crash also gets: the ``no-crash`` cases); every action
a client saw acknowledged is in the log exactly as sent; no action was logged twice (nothing
acknowledged was lost, nothing logged was re-sent); the clients' last receipts match the log; the
restarted server said how many games it resumed and printed no errors. Three kill schedules of four
kill points per variant (24 kills in all) hit every phase between them: right after the start,
choose, mid-spell, the last spell word, mark, Dark Magic's early commitment, some commitments, the
one closing the summon, reveals, the one publishing the words, review (done, a challenge, a vote
half cast) and the game's last action. Then one kill with five rooms mid-game at once, all resumed
and finished.

The rooms run with every clock off, so nothing times out while the server is down.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
import trio
from crashhelpers import (
    Kill,
    ScriptedTable,
    ServerProcess,
    build_steps,
    find,
    server_process,
)
from gamescripts import SCRIPTS, TOTALS

pytestmark = pytest.mark.slow

# The games of tests/gamescripts.py (seats 0-3 are Ann, Bob, Cy, Dee; every card 2 stars).


def _k(variant: str, round: int, kind: str, nth: int = 1, mode: str = "ack") -> Kill:
    steps = build_steps(variant, SCRIPTS[variant], 4)
    return Kill(find(steps, round, kind, nth), mode, f"r{round}-{kind}{nth}-{mode}")  # type: ignore[arg-type]


def _start() -> Kill:
    return Kill(-1, "ack", "started")


def _schedules(variant: str) -> dict[str, list[Kill]]:
    k = lambda *a, **kw: _k(variant, *a, **kw)  # noqa: E731
    if variant == "standard":
        return {
            "A": [
                _start(),  # the game has started, nobody has acted
                k(1, "spell", 2),  # mid-spell
                k(2, "commit", 2),  # some commitments in, the others still to come
                k(3, "reveal", 2, mode="unread"),  # a reveal lost: re-sent from the kept secret
            ],
            "B": [
                k(1, "choose", mode="sent"),
                k(1, "commit", 4, mode="logged"),  # the commitment that closes the summon
                k(3, "done", 2),  # review: half the table is done
                k(4, "challenge", mode="logged"),  # a challenge opens a vote
            ],
            "C": [
                k(1, "mark"),
                k(2, "reveal", 3),  # during reveals, one still to come
                k(4, "vote", 1),  # a vote half cast
                k(4, "done", 4, mode="logged"),  # the game ended with the write the kill cut off
            ],
        }
    return {
        "A": [
            _start(),
            k(1, "dark_commit"),  # the conjurer committed first; reveals after the crash
            k(2, "spell", 2),  # mid-spell
            k(3, "commit", 3, mode="unread"),  # a commitment lost: committed anew
        ],
        "B": [
            k(1, "choose", mode="logged"),
            k(1, "spell", 3, mode="sent"),  # the last spell word
            k(2, "mark"),
            k(3, "reveal", 1, mode="logged"),
        ],
        "C": [
            k(2, "dark_commit", mode="unread"),
            k(2, "reveal", 4, mode="logged"),  # the reveal that publishes every word
            k(3, "done", 4),  # the round is scored and the last one begins
            k(4, "done", 4, mode="sent"),  # the last action of the game in flight
        ],
    }


CASES = [
    pytest.param(variant, kills, id=f"{variant}-{name}")
    for variant in ("standard", "dark-magic")
    for name, kills in {"no-crash": [], **_schedules(variant)}.items()
]


async def _kill_and_restart(srv: ServerProcess, tables: list[ScriptedTable]) -> None:
    """SIGKILL, drop the dead connections, restart on the same replays/, everyone comes back."""
    await srv.kill()
    for t in reversed(tables):  # connections opened last close first (nested scopes)
        await t.drop()
    await srv.start()
    unfinished = [t for t in tables if t.read(srv.replays).records[-1].type != "game_ended"]
    assert srv.resumed() == (len(unfinished), len(tables) - len(unfinished), 0), srv.banner
    for t in tables:  # in this task: the clients' connections live in its scopes
        await t.come_back(srv.url, srv.replays)


@pytest.mark.parametrize(("variant", "kills"), CASES)
async def test_a_game_killed_at_many_points_finishes_with_the_same_scores(
    tmp_path: Path, variant: str, kills: list[Kill]
):
    table = ScriptedTable(variant, SCRIPTS[variant], name=variant)
    async with server_process(tmp_path) as srv:
        try:
            await table.seat_and_start(srv.url)
            for kill in kills:
                await table.play_to(kill, srv)
                await _kill_and_restart(srv, [table])
            if not table.finished_in_crash:
                await table.play()
            table.check(srv.replays)
            assert table.expected_totals() == TOTALS[variant]
            # every kill point was reached: one server start per kill, and one to begin with
            assert srv.starts == len(kills) + 1
            for i, mode, shown in table.inflight:
                if mode == "logged":  # written before the kill: resumed, never re-sent
                    assert shown and table.sends[i] == 1, table.steps[i]
                elif mode == "unread":  # never read by the server: missing, so re-sent
                    assert not shown and table.sends[i] == 2, table.steps[i]
                else:
                    assert table.sends[i] == (1 if shown else 2), table.steps[i]
            srv.check_output()
        finally:
            await table.drop()


async def test_five_rooms_mid_game_all_resume(tmp_path: Path):
    """One kill with five games at different points (two with an action in flight)."""
    plan = [
        ("standard", _k("standard", 1, "spell", 3)),
        ("dark-magic", _k("dark-magic", 1, "dark_commit", mode="sent")),
        ("standard", _k("standard", 2, "commit", 3, mode="sent")),
        ("dark-magic", _k("dark-magic", 3, "reveal", 2)),
        ("standard", _k("standard", 4, "vote", 1)),
    ]
    tables = [ScriptedTable(v, SCRIPTS[v], name=f"room{i} {v}") for i, (v, _) in enumerate(plan)]
    async with server_process(tmp_path) as srv, contextlib.AsyncExitStack() as stack:
        for t in tables:
            stack.push_async_callback(t.drop)
        for t in tables:
            await t.seat_and_start(srv.url)
        assert len({t.code for t in tables}) == 5
        async with trio.open_nursery() as nursery:
            for t, (_, kill) in zip(tables, plan, strict=True):
                nursery.start_soon(t.play_to, kill, srv)
        await _kill_and_restart(srv, tables)
        assert srv.resumed() == (5, 0, 0)
        async with trio.open_nursery() as nursery:
            for t in tables:
                nursery.start_soon(t.play)
        for t in tables:
            t.check(srv.replays)
        srv.check_output()
