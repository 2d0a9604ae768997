"""Rooms and seats: the lobby, reconnects, spectators, the host role, skips and kicks, pause,
deadlines, restarts on the same replays (torn and corrupt logs too), slow readers, log failures."""

from __future__ import annotations

import contextlib
import os
import time

import pytest
import trio
from clienthelpers import wait_until
from polling import poll_until
from test_server_game import NAMES, deck
from wsclient import Client, by_seat, open_client, open_table, play_round, reset, start_game

from conjure.client import wire
from conjure.protocol import messages as m
from conjure.protocol.deck import Card
from conjure.protocol.events import event_from_record
from conjure.protocol.messages import InLimits, RoomSettings
from conjure.server.audit_verify import Receipt, audit
from conjure.server.connection import Connection
from conjure.server.logformat import read_log
from conjure.server.logstore import LogFailure
from conjure.server.rules import fold


async def write_spells(table: list[Client], words: list[str]) -> None:
    """Round 1 (Ann conjures): Ann chooses the first card and everyone writes in seat order."""
    await table[0].choose(0)
    for c, w in zip(table, words, strict=True):
        await c.wait_view(lambda v, c=c: v.phase == "spell" and v.turn == c.seat)
        await c.spell(w)


# ---------------------------------------------------------------------------- lobby


async def test_lobby_names_password_settings_order_kick_start(server):
    async with contextlib.AsyncExitStack() as stack:
        ann, bob, bob2, cy, dee = [
            await stack.enter_async_context(open_client(server.url, n))
            for n in ["Ann", "Bob", "bob", "Cy", "Dee"]
        ]
        code = await ann.create(password="pw")
        await bob.join(code, "pw")
        await bob2.send(m.JoinRoom(room=code, name="bob", password="pw"))
        await bob2.expect_error("name_taken")
        await bob2.send(m.JoinRoom(room=code, name="  BOB ", password="pw"))
        await bob2.expect_error("name_taken")
        v = await ann.wait_view(lambda v: len(v.players) == 2)
        assert [(p.name, p.colour, p.host) for p in v.players] == [
            ("Ann", "red", True),
            ("Bob", "blue", False),
        ]
        last = [x for x in ann.received if isinstance(x, m.Update)][-1]
        assert v.phase == "lobby" and last.receipt is None  # nothing is logged before the start
        # Only the host changes settings; everyone sees them.
        dark = RoomSettings(variant="dark-magic", limits=InLimits(choose=None, spell=30))
        await bob.send(m.ChangeSettings(settings=dark))
        await bob.expect_error("not_host")
        await ann.send(m.ChangeSettings(settings=dark))
        v = await bob.wait_view(lambda v: v.settings.variant == "dark-magic")
        assert v.settings.limits.choose is None and v.settings.limits.spell == 30
        # Starting with two players is refused.
        await ann.send(m.StartGame())
        await ann.expect_error("player_count")
        # Reorder: Bob first. The host stays Ann (now seat 1).
        await ann.send(m.SeatOrder(order=[0, 0]))
        await ann.expect_error("bad_order")
        await ann.send(m.SeatOrder(order=[1, 0]))
        v = await ann.wait_view(lambda v: v.players[0].name == "Bob")
        assert v.you == 1 and v.host == 1 and v.players[1].you
        # Cy joins and is kicked; Dee then gets the first free colour.
        await cy.join(code, "pw")
        await ann.wait_view(lambda v: len(v.players) == 3)
        await bob.send(m.KickPlayer(seat=2))
        await bob.expect_error("not_host")
        await ann.send(m.KickPlayer(seat=2))
        await cy.wait_closed()
        assert any(isinstance(x, m.Bye) and "removed" in x.reason for x in cy.received)
        await dee.join(code, "pw")
        v = await ann.wait_view(lambda v: len(v.players) == 3 and v.players[2].name == "Dee")
        assert v.players[2].colour == "green"
        await ann.send(m.StartGame())
        v = await dee.wait_view(lambda v: v.phase != "lobby")
        assert v.phase == "choose" and v.settings.variant == "dark-magic"
        # No joining a started game.
        await bob2.send(m.JoinRoom(room=code, name="Late", password="pw"))
        await bob2.expect_error("already_started")


async def test_a_lobby_kick_that_names_its_player_removes_nobody_else_when_the_seats_shift(server):
    """Found by review: the host meant Cy at board 3, but Bob left first and the seats moved
    up, so "kick seat 2" removed Dee. A kick that names the player is refused instead."""
    async with contextlib.AsyncExitStack() as stack:
        ann, bob, cy, dee = [
            await stack.enter_async_context(open_client(server.url, n))
            for n in ["Ann", "Bob", "Cy", "Dee"]
        ]
        code = await ann.create()
        for c in (bob, cy, dee):
            await c.join(code)
        v = await ann.wait_view(lambda v: len(v.players) == 4)
        cy_id = v.players[2].id
        await bob.send(m.Leave())
        await ann.wait_view(lambda v: [p.name for p in v.players] == ["Ann", "Cy", "Dee"])
        await ann.send(m.KickPlayer(seat=2, player_id=cy_id))  # board 3: Dee's, now
        err = await ann.expect_error("seat_changed")
        assert "board 3 is now Dee's" in err.message and "Nobody was removed" in err.message
        await ann.send(m.KickPlayer(seat=1, player_id=cy_id))
        await cy.wait_closed()
        v = await ann.wait_view(lambda v: [p.name for p in v.players] == ["Ann", "Dee"])
        assert dee.room == code


async def test_a_player_at_the_table_is_not_skipped_out_of_their_locked_in_word(server):
    """A1: the host skips a player who is gone. Found by review: during the reveals a skip of
    a player whose client was about to open their word cost them 3 points (C6, "never
    revealed"). Refused while they are there; gone, they are skipped, and C6 stands. And a
    game's kick naming another player than the seat's removes nobody, as in the lobby."""
    async with open_table(server.url, NAMES, deck()) as table:
        ann, bob, cy, dee = table
        await start_game(table)
        await ann.choose(0)
        for c, w in zip(table, ["lava", "mountain", "smoke", "island"], strict=True):
            await c.wait_view(lambda v, c=c: v.phase == "spell" and v.turn == table.index(c))
            await c.spell(w)
        await ann.wait_view(lambda v: v.phase == "mark")
        await ann.mark([1, 2])
        for c, w in zip(table, ["volcano", "volcano", "volcano", "glacier"], strict=True):
            await c.wait_view(lambda v: v.phase == "commit")
            await c.commit(w)
        v = await ann.wait_view(lambda v: v.phase == "reveal")
        await ann.send(m.SkipPlayer(seat=2))
        err = await ann.expect_error("present")
        assert "Cy is at the table" in err.message and "lose 3 points" in err.message
        # kick: the seat and the player meant must agree (they do not shift in a game)
        await ann.send(m.KickPlayer(seat=1, player_id=v.players[3].id))
        err = await ann.expect_error("seat_changed")
        assert "Board 2 is Bob's" in err.message and "Nobody was removed" in err.message
        await ann.reveal()
        v = await ann.wait_view(lambda v: v.players[0].revealed)
        assert not any(p.skipped or p.kicked for p in v.players)
        async with open_client(server.url, "Cy again") as cy2:  # Cy's seat moves, then goes
            await cy2.resume(ann.room, cy.token)
            await cy.wait_closed()
        # Cy is gone now: skipped, and the commitment stands unopened (C6)
        await ann.wait_view(lambda v: not v.players[2].connected)
        await ann.send(m.SkipPlayer(seat=2))
        await ann.wait_view(lambda v: v.players[2].skipped)
        await bob.reveal()
        await dee.reveal()
        v = await ann.wait_view(lambda v: v.phase == "review")
        assert v.players[2].valid is False


async def test_deck_must_cover_every_player(server):
    small = RoomSettings(deck="custom", custom_cards=[Card(text="One", stars=1)])
    async with open_table(server.url, ["Ann", "Bob", "Cy"], small) as (ann, _bob, _cy):
        await ann.send(m.StartGame())
        err = await ann.expect_error("deck_too_small")
        assert "1 card" in err.message
        dup = RoomSettings(deck="custom", custom_cards=[Card(text="A", stars=1)] * 2)
        await ann.send(m.ChangeSettings(settings=dup))
        await ann.expect_error("bad_settings")


async def test_lobby_host_leaves_then_everyone(server):
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as (ann, bob, cy):
        code = ann.room
        await ann.send(m.Leave())
        await ann.wait_closed()
        v = await bob.wait_view(lambda v: len(v.players) == 2)
        assert v.host == 0 and v.players[0].name == "Bob"
        await bob.send(m.Leave())
        await cy.send(m.Leave())
        await cy.wait_closed()
        with trio.fail_after(2):
            await poll_until(lambda: code not in server.rooms)


async def test_an_abandoned_lobby_closes(start_server):
    server = await start_server(lobby_idle_close=0.2)
    async with open_table(server.url, ["Ann", "Bob"]) as (ann, _bob):
        code = ann.room
        assert code in server.rooms
    with trio.fail_after(3):
        await poll_until(lambda: code not in server.rooms)


# ---------------------------------------------------------------------------- seats


async def test_reconnect_with_token_gets_full_view_and_replaces_old(server):
    async with open_table(server.url, NAMES, deck()) as table:
        ann, bob, cy, dee = table
        await start_game(table)
        await write_spells(table[:2], ["lava", "mountain"])
        async with open_client(server.url, "Bob again") as bob2:
            seated = await bob2.resume(ann.room.lower(), bob.token)
            assert (seated.seat, seated.player_id) == (1, bob.player_id)
            v = await bob2.wait_view(lambda v: v.phase == "spell")
            assert v.you == 1 and v.turn == 2 and v.players[1].spell == "mountain"
            assert v.game_id == ann.view.game_id and bob2.receipt is not None
            await bob.wait_closed()
            bye = [x for x in bob.received if isinstance(x, m.Bye)]
            assert bye and bye[-1].reason == "replaced by a new connection"
            # The new connection acts for the seat; the room still sees Bob as present.
            await bob2.send(m.SendChat(text="back"))
            await cy.recv_until(lambda x: isinstance(x, m.Chat) and x.seat == 1)
            assert (await cy.wait_view(lambda v: v.players[1].connected)).players[1].connected
        # Closing the connection leaves the seat away; it can come back again.
        await cy.wait_view(lambda v: not v.players[1].connected)
        async with open_client(server.url, "Bob third") as bob3:
            await bob3.resume(ann.room, bob.token)
            await cy.wait_view(lambda v: v.players[1].connected)
            await bob3.send(m.ResumeSeat(room=ann.room, token=dee.token))
            await bob3.expect_error("already_in_room")


async def test_spectators_see_the_public_view_only(server):
    async with open_table(server.url, ["Ann", "Bob", "Cy"], deck()) as table:
        ann = table[0]
        async with open_client(server.url, "Viv") as viv:
            await viv.watch(ann.room)
            v = await viv.wait_view(lambda v: len(v.players) == 3)
            assert v.you is None and not any(p.you for p in v.players)
            await ann.wait_view(lambda v: v.spectators == 1)
            await viv.send(m.SendChat(text="hi"))
            await viv.expect_error("spectator")
            await start_game(table)
            await viv.choose(0)
            await viv.expect_error("spectator")
            await viv.send(m.StartGame())
            await viv.expect_error("spectator")
            v = await viv.wait_view(lambda v: v.phase == "choose")
            assert v.you is None and v.game_id is not None
            assert all(not isinstance(x, m.Seated) for x in viv.received)
        await ann.wait_view(lambda v: v.spectators == 0)


async def test_a_spectator_of_a_full_lobby_takes_a_seat_that_comes_free(server):
    """One who found the room full and watched instead could only quit and join again to
    play when a seat came free: a spectator of the lobby may join it, on the same connection.
    While it is still full, the join is refused and the spectator watches on."""
    names = [f"P{i}" for i in range(8)]
    async with open_table(server.url, names) as table, open_client(server.url, "Viv") as viv:
        room = table[0].room
        await viv.send(m.JoinRoom(room=room, name="Viv"))
        await viv.expect_error("room_full")
        await viv.watch(room)
        await table[0].wait_view(lambda v: v.spectators == 1)
        await viv.send(m.JoinRoom(room=room, name="Viv"))
        await viv.expect_error("room_full")  # still full: still watching, nothing changed
        await table[7].send(m.Leave())
        await viv.wait_view(lambda v: len(v.players) == 7)
        seated = await viv.join(room)
        assert seated.seat == 7
        v = await viv.wait_view(lambda v: v.you == 7)
        assert [p.name for p in v.players][-1] == "Viv"
        await table[0].wait_view(lambda v: v.spectators == 0 and len(v.players) == 8)
        await viv.send(m.SendChat(text="I play now"))  # a seat's, not a spectator's, rights
        await table[0].recv_until(lambda x: isinstance(x, m.Chat) and x.name == "Viv")
        await viv.send(m.Watch(room=room))  # seated, it cannot watch its own room
        await viv.expect_error("already_in_room")


async def test_spectators_can_be_switched_off(server):
    async with (
        open_table(server.url, ["Ann", "Bob", "Cy"]) as (ann, _bob, _cy),
        open_client(server.url, "Viv") as viv,
        open_client(server.url, "W") as w,
    ):
        await viv.watch(ann.room)
        await ann.send(m.ChangeSettings(settings=RoomSettings(spectators=False)))
        await viv.wait_closed()
        await w.send(m.Watch(room=ann.room))
        await w.expect_error("no_spectators")


async def test_host_passes_when_the_host_leaves_or_stays_away(start_server):
    server = await start_server(host_grace=0.5)
    async with open_table(server.url, NAMES, deck()) as table:
        ann, bob, cy, _dee = table
        await start_game(table)
        await ann.send(m.Leave())
        bye = await ann.recv_until(lambda x: isinstance(x, m.Bye))
        assert "token" in bye.reason
        v = await bob.wait_view(lambda v: v.host == 1)
        assert not v.players[0].connected
        assert any(
            "Bob is now the host (the host left)" in line
            for x in bob.received
            if isinstance(x, m.Update)
            for line in x.feed
        )
        # Bob, now host, drops off: after the grace period Cy (next connected seat) takes over.
        await bob.ws.aclose()
        v = await cy.wait_view(lambda v: not v.players[1].connected)
        assert v.host == 1
        v = await cy.wait_view(lambda v: v.host == 2, timeout=10)
        assert v.players[2].host


async def test_skip_and_kick_in_a_game(server):
    async with open_table(server.url, NAMES, deck()) as table:
        ann, bob, cy, dee = table
        await start_game(table)
        await ann.choose(0)
        await ann.wait_view(lambda v: v.turn == 0)
        await ann.spell("lava")
        await bob.wait_view(lambda v: v.turn == 1)
        await ann.send(m.SkipPlayer(seat=1))  # Bob is slow: skipped for this round
        v = await cy.wait_view(lambda v: v.turn == 2)
        assert v.players[1].skipped and v.players[1].spell is None
        await bob.spell("late")
        await bob.expect_error("skipped")
        await ann.send(m.KickPlayer(seat=3))
        await dee.wait_closed()
        assert any(isinstance(x, m.Bye) and "removed" in x.reason for x in dee.received)
        assert dee.view is not None and dee.view.players[3].kicked  # told before the goodbye
        v = await cy.wait_view(lambda v: v.players[3].kicked)
        async with open_client(server.url, "Dee again") as dee2:
            await dee2.send(m.ResumeSeat(room=ann.room, token=dee.token))
            await dee2.expect_error("kicked")
        await cy.spell("smoke")
        v = await ann.wait_view(lambda v: v.phase == "mark")
        assert [p.spell for p in v.players] == ["lava", None, "smoke", None]


async def test_pause_and_resume(server):
    async with open_table(server.url, ["Ann", "Bob", "Cy"], deck()) as table:
        ann, bob, _cy = table
        v = await start_game(table)
        assert v.deadline is not None
        await bob.send(m.PauseGame())
        await bob.expect_error("not_host")
        await ann.send(m.PauseGame())
        v = await bob.wait_view(lambda v: v.paused)
        assert v.deadline is None and 80 < v.remaining <= 90
        await ann.choose(0)
        await ann.expect_error("paused")
        await ann.send(m.ResumeGame())
        v = await bob.wait_view(lambda v: not v.paused)
        assert v.deadline is not None and 80 < v.remaining <= 90  # the clock runs again
        await ann.choose(0)
        await bob.wait_view(lambda v: v.phase == "spell")


async def test_deadlines_pass_turns_and_void_rounds(start_server):
    """Limits scaled by 0.05: 5 s becomes 0.25 s. Nobody acts; the clock plays the game out."""
    server = await start_server(limit_scale=0.05)
    limits = InLimits(choose=5, spell=None, mark=None, commit=None, reveal=None, review=None)
    settings = RoomSettings(deck="custom", custom_cards=deck().custom_cards, limits=limits)
    async with open_table(server.url, ["Ann", "Bob", "Cy"], settings) as table:
        await start_game(table)
        with trio.fail_after(5):
            v = await table[1].wait_view(lambda v: v.phase == "over", timeout=5)
        assert [r.case for r in v.results] == ["void"] * 3
        assert "ran out of time" in v.results[0].reason


async def test_spell_turns_time_out(start_server):
    server = await start_server(limit_scale=0.05)
    limits = InLimits(choose=None, spell=5, mark=None, commit=None, reveal=None, review=None)
    settings = RoomSettings(deck="custom", custom_cards=deck().custom_cards, limits=limits)
    async with open_table(server.url, ["Ann", "Bob", "Cy"], settings) as table:
        await start_game(table)
        await table[0].choose(0)
        v = await table[0].wait_view(lambda v: len(v.results) == 1)
        assert v.results[0].case == "void" and "fewer than two" in v.results[0].reason


# ---------------------------------------------------------------------------- restarts


async def test_the_shutdown_goodbye_says_a_paused_game_stays_paused(start_server):
    """Found by review: a paused game's table was told "its clock keeps running meanwhile"
    under the ⏸ on its screens; a game in play is still told that its clock runs on."""
    server = await start_server()
    async with (
        open_table(server.url, ["Ann", "Bob", "Cy"], deck()) as paused,
        open_table(server.url, ["Dee", "Eve", "Fay"], deck()) as playing,
        open_client(server.url, "Viv") as viv,
        open_client(server.url, "Nobody") as nobody,
    ):
        await start_game(paused)
        await start_game(playing)
        await paused[0].send(m.PauseGame())
        await paused[1].wait_view(lambda v: v.paused)
        await viv.watch(playing[0].room)
        await server.aclose()
        for c in [*paused, *playing, viv, nobody]:
            await c.wait_closed()
        bye = {c.name: next(x.reason for x in c.received if isinstance(x, m.Bye)) for c in
               [*paused, *playing, viv, nobody]}  # fmt: skip
        assert all("stays paused" in bye[n] and "clock" not in bye[n] for n in ("Ann", "Bob"))
        assert all("clock keeps running" in bye[n] for n in ("Dee", "Eve", "Fay"))
        assert "your game is saved" in bye["Dee"]
        # A spectator's game is not theirs, and a connection in no room has none (both were
        # told "your game is saved").
        assert "the game is saved" in bye["Viv"] and "your" not in bye["Viv"]
        assert bye["Nobody"] == "the server is shutting down"


async def test_restart_resumes_an_unfinished_game(start_server, said):
    first = await start_server()
    async with open_table(first.url, NAMES, deck()) as old:
        await start_game(old)
        await write_spells(old, ["lava", "mountain", "smoke", "island"])
        await old[0].wait_view(lambda v: v.phase == "mark")
        await old[0].mark([1, 2])
        for c, w in zip(old[:2], ["volcano", "volcano"], strict=True):
            await c.wait_view(lambda v: v.phase == "commit")
            await c.commit(w)
        await old[3].wait_view(lambda v: v.players[1].committed)
        code = old[0].room
        await first.aclose()
        for c in old:
            await c.wait_closed()
            assert any(isinstance(x, m.Bye) and "shutting down" in x.reason for x in c.received)
    second = await start_server()
    assert len(second.report.resumed) == 1 and not said
    assert code in second.rooms
    # the room's settings come back from the log (no password here, so spectators stay welcome)
    assert second.rooms[code].settings.spectators
    assert second.rooms[code].settings.deck == deck().deck
    async with contextlib.AsyncExitStack() as stack:
        table = [await stack.enter_async_context(open_client(second.url, n)) for n in NAMES]
        for new, prev in zip(table, old, strict=True):
            await new.resume(code, prev.token)
            new.secrets = prev.secrets  # word + nonce, kept by the client until the reveal
        v = await table[3].wait_view(lambda v: all(p.connected for p in v.players))
        assert v.phase == "commit"
        assert [p.committed for p in v.players] == [True, True, False, False]
        assert [p.spell for p in v.players] == ["lava", "mountain", "smoke", "island"]
        await table[2].commit("volcano")
        await table[3].commit("glacier")
        for c in table:
            await c.wait_view(lambda v: v.phase == "reveal")
            await c.reveal()
        v = await table[0].wait_view(lambda v: v.phase == "review")
        assert [p.summon for p in v.players] == ["volcano", "volcano", "volcano", "glacier"]
        for c in table:
            await c.done()
        v = await table[0].wait_view(lambda v: len(v.results) == 1)
        assert v.results[0].points == {0: 4, 1: 3, 2: 3, 3: 0}
        room = second.rooms[code]
        log = read_log(second.replays / f"{v.game_id}.jsonl")
        assert fold(event_from_record(r.type, r.data) for r in log.records) == room.game
        r = table[0].receipt
        assert r is not None and (r.seq, r.hash) == (log.records[-1].seq, log.records[-1].hash)


async def test_torn_tail_is_recovered_at_startup(start_server, said):
    first = await start_server()
    (room, game_id, tokens), _ = await _two_games(first)
    path = first.replays / f"{game_id}.jsonl"
    good = path.read_bytes()
    with path.open("ab") as f:
        f.write(b'{"data":{"round":1,"seat":0,"wo')  # a crash in the middle of an append
    second = await start_server()
    assert path.read_bytes().startswith(good)  # the restart may add presence records after it
    torn = path.with_name(path.name + ".torn")
    assert torn.read_bytes() == b'{"data":{"round":1,"seat":0,"wo'
    assert any(line.startswith(f"recovered {path}") for line in said)
    async with open_client(second.url, "Ann") as ann:
        await ann.resume(room, tokens[0])
        v = await ann.wait_view(lambda v: v.phase == "spell")
        assert v.card is not None and v.turn == 0


async def test_corrupt_log_is_refused_and_the_others_load(start_server, said):
    first = await start_server()
    (bad_room, bad_id, _), (good_room, _, good_tokens) = await _two_games(first)
    path = first.replays / f"{bad_id}.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"round":1', b'"round":2')  # tampering in the middle
    path.write_bytes(b"\n".join(lines))
    second = await start_server()
    refused = [line for line in said if line.startswith(f"refused {path}")]
    assert refused and "line 2" in refused[0]
    assert bad_room not in second.rooms and good_room in second.rooms
    assert len(second.report.refused) == 1 and len(second.report.resumed) == 1
    async with open_client(second.url, "Xi") as xi:
        await xi.resume(good_room, good_tokens[0])
        await xi.wait_view(lambda v: v.phase == "spell")
        await xi.send(m.JoinRoom(room=bad_room, name="Xi"))
        await xi.expect_error("already_in_room")


async def test_finished_games_are_not_resumed(start_server):
    first = await start_server()
    async with open_table(first.url, ["Ann", "Bob", "Cy"], deck()) as table:
        await start_game(table)
        for _ in range(3):
            spells = {0: "tree", 1: "rock", 2: "cloud"}
            await play_round(table, {0: "apple", 1: "apple", 2: "pear"}, spells, [0, 1])
        await table[0].wait_view(lambda v: v.phase == "over")
    await first.aclose()
    second = await start_server()
    assert second.report.finished == 1 and not second.rooms


async def test_a_spectator_does_not_keep_a_finished_games_room_open(start_server):
    """Found by review: a stranger watching a finished game kept its room open for good, and
    the room kept counting against the address that made it (at one room an address, that
    address could make no other)."""
    server = await start_server(idle_close=0.5, max_rooms_per_address=1)
    async with open_table(server.url, ["Ann", "Bob", "Cy"], deck()) as table:
        room = table[0].room
        async with open_client(server.url, "stranger", source="127.0.0.9") as stranger:
            await stranger.watch(room)
            await start_game(table)
            for _ in range(3):
                spells = {0: "tree", 1: "rock", 2: "cloud"}
                await play_round(table, {0: "apple", 1: "apple", 2: "pear"}, spells, [0, 1])
            await stranger.wait_view(lambda v: v.phase == "over")
            for c in table:
                await c.send(m.Leave())
            await wait_until(lambda: room not in server.rooms, timeout=10, what="the room to close")
            await stranger.wait_closed()
    async with open_client(server.url, "Ann") as ann:
        assert await ann.create(RoomSettings())  # the address may make a room again


async def test_deadlines_survive_a_restart(start_server):
    """The spell deadline is logged as an absolute time; after a restart past it, the turn passes."""
    first = await start_server(limit_scale=0.01)  # spell 100 s -> 1 s
    limits = InLimits(choose=None, spell=100, mark=None, commit=None, reveal=None, review=None)
    settings = RoomSettings(deck="custom", custom_cards=deck().custom_cards, limits=limits)
    async with open_table(first.url, ["Ann", "Bob", "Cy"], settings) as table:
        await start_game(table)
        await table[0].choose(0)
        v = await table[0].wait_view(lambda v: v.phase == "spell")
        deadline, tokens = v.deadline, [c.token for c in table]
        await first.aclose()
    await trio.sleep(max(0.0, deadline - time.time()) + 0.05)
    second = await start_server(limit_scale=0.01)
    async with open_client(second.url, "Bob") as bob:
        await bob.resume(v.room, tokens[1])
        v = await bob.wait_view(lambda v: v.players[0].passed, timeout=10)
        assert v.turn == 1 and v.deadline is not None and v.deadline > deadline


async def _two_games(server) -> tuple[tuple[str, str, list[str]], tuple[str, str, list[str]]]:
    """Start two 3-player games (round 1 at the spell phase); stop the server.

    Returns (room, game_id, tokens) for each game.
    """
    games = []
    for names in (["Ann", "Bob", "Cy"], ["Xi", "Yu", "Zoe"]):
        async with open_table(server.url, names, deck()) as table:
            v = await start_game(table)
            await table[0].choose(0)
            await table[0].wait_view(lambda v: v.phase == "spell")
            games.append((v.room, v.game_id, [c.token for c in table]))
    await server.aclose()
    return games[0], games[1]


# ---------------------------------------------------------------------------- failures


@pytest.mark.parametrize(
    "limit",
    [{"outbound_queue": 8}, {"outbound_bytes": 64 << 10}],  # frames queued, or their bytes
)
async def test_a_client_that_never_reads_does_not_delay_the_others(start_server, limit):
    """Dropped once what waits for it is over either bound: a count of frames alone let one
    such client hold 64 whole views (3.4 MB with a big deck; found by review)."""
    server = await start_server(
        rate=10_000, burst=10_000, view_rate=1e9, view_burst=1e9, heartbeat_interval=60, **limit
    )
    async with open_table(server.url, ["Ann", "Bob"]) as (ann, bob):
        code = ann.room
        async with wire.open_websocket(server.url, message_queue_size=1) as ws:
            await ws.send_message('{"type": "hello", "protocol": 1}')
            await ws.send_message(f'{{"type": "join_room", "room": "{code}", "name": "Zed"}}')
            await bob.wait_view(lambda v: len(v.players) == 3)
            slowest = 0.0
            for i in range(400):
                cards = [Card(text=f"{i} card {j} " + "x" * 40, stars=1) for j in range(200)]
                start = trio.current_time()
                await ann.send(m.ChangeSettings(settings=RoomSettings(custom_cards=cards)))
                v = await bob.wait_view(
                    lambda v, i=i: (
                        v.settings.custom_cards[:1] != []
                        and v.settings.custom_cards[0].text.startswith(f"{i} ")
                    )
                )
                slowest = max(slowest, trio.current_time() - start)
                if not v.players[2].connected:
                    break
            assert not v.players[2].connected, "the reader that never reads was never dropped"
            assert slowest < 1.0, slowest
            await bob.send(m.SendChat(text="fine"))
            await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "fine")


async def test_heartbeat_marks_an_unresponsive_client_away(start_server):
    """A client whose reader has stalled answers no ping: it is dropped and shown away."""
    server = await start_server(heartbeat_interval=0.2, heartbeat_timeout=0.5)
    async with (
        open_table(server.url, ["Ann", "Bob"]) as (ann, bob),
        wire.open_websocket(server.url, message_queue_size=1) as ws,
    ):
        await ws.send_message('{"type": "hello", "protocol": 1}')
        await ws.send_message(f'{{"type": "join_room", "room": "{ann.room}", "name": "Zed"}}')
        # Welcome, seated and the first update already fill Zed's one-message queue: its
        # reader stops, and so do its pongs. (Zed may be gone before Bob looks: fine.)
        await bob.wait_view(lambda v: len(v.players) == 3)
        await ann.send(m.SendChat(text="one"))
        v = await bob.wait_view(lambda v: not v.players[2].connected, timeout=5)
        assert v.players[0].connected and v.players[1].connected
        # (said once Zed has stayed away a moment: Room.AWAY_GRACE)
        await bob.recv_until(
            lambda x: isinstance(x, m.Update) and "Zed is away." in x.feed, timeout=5
        )


async def test_a_log_failure_holds_only_its_room_until_the_log_can_be_written(start_server):
    server = await start_server(log_retry=0.2)
    async with (
        open_table(server.url, ["Ann", "Bob", "Cy"], deck()) as one,
        open_table(server.url, ["Xi", "Yu", "Zoe"], deck()) as two,
    ):
        await start_game(one)
        await start_game(two)
        room = server.rooms[one[0].room]
        failing = room.writer

        async def broken(*args, **kwargs):
            raise LogFailure("fsync failed: [Errno 5] Input/output error")

        failing.append_many = failing.append_batches = broken
        receipt = one[0].receipt
        await one[0].choose(0)
        err = await one[0].expect_error("log_unavailable")
        assert "nothing you were told about is lost" in err.message
        for c in one:  # everyone is told in words, and nobody is sent away
            await wait_until(
                lambda c=c: any(
                    isinstance(x, m.Update) and any("on hold" in f for f in x.feed)
                    for x in c.received
                ),
                what=f"{c.name} to hear the game is on hold",
            )
            assert c.closed is None
        # The other room plays on meanwhile.
        await two[0].choose(0)
        await two[1].wait_view(lambda v: v.phase == "spell")
        # The room reopens its log by itself (here the disk was never the problem) and goes on
        # from the last durable record: the one everyone's receipt names.
        await one[1].recv_until(
            lambda x: isinstance(x, m.Update) and any("written again" in f for f in x.feed)
        )
        assert room.writer is not failing and one[0].receipt == receipt
        await one[0].choose(0)
        await one[1].wait_view(lambda v: v.phase == "spell")


@pytest.mark.skipif(not hasattr(os, "RWF_DSYNC"), reason="pwritev2(RWF_DSYNC) is Linux's")
async def test_moves_that_reach_a_room_together_go_to_disk_in_one_write_and_the_log_audits(
    start_server, monkeypatch
):
    """Group commit on a real disk: while a write is slow, the summoning words and the "done"s
    sent meanwhile wait behind it and reach the disk together; the log still reads and audits
    as if each decision had been written alone, and every player's receipt is on its chain."""
    server = await start_server()
    writes: list[int] = []
    real = os.pwritev

    def slow(fd: int, buffers: list, offset: int, flags: int = 0) -> int:
        writes.append(fd)
        data = b"".join(bytes(b) for b in buffers)
        if b'"type":"committed"' in data or b'"type":"player_done"' in data:
            # A worker thread's wait, as on a slow disk: the moves sent at once queue up.
            time.sleep(0.3)
        return real(fd, buffers, offset, flags)

    async with open_table(server.url, NAMES[:4], deck()) as table:
        await start_game(table)
        room = server.rooms[table[0].room]
        assert room.writer is not None
        path = room.writer.path
        monkeypatch.setattr(os, "pwritev", slow)
        before = len(read_log(path).records)
        await play_round(
            table,
            summons={0: "moon", 1: "moon", 2: "star", 3: "comet"},
            spells={0: "night", 1: "sky", 2: "light", 3: "tail"},
            marks=[1, 2],
        )
        for c in table:
            await c.wait_view(lambda v: v.round == 2)
        monkeypatch.undo()
        records = read_log(path).records[before:]
        decisions = sum(1 for r in records if r.batch == 0)
        assert decisions > len(writes) >= 1, (decisions, len(writes))
        found = audit(
            path,
            receipts=[Receipt(c.receipt.seq, c.receipt.hash, c.name) for c in table if c.receipt],
        )
        assert found.verified, found.problems
        assert len(found.receipts) == 4 and {r.status for r in found.receipts} == {"on-chain"}


@pytest.mark.skipif(not hasattr(os, "RWF_DSYNC"), reason="pwritev2(RWF_DSYNC) is Linux's")
async def test_a_player_who_commits_and_resets_behind_a_slow_write_loses_nothing(
    start_server, monkeypatch
):
    """The worst moment to vanish: Dee's commitment reaches the room while Ann's is still being
    written, and Dee's TCP connection is reset before either is durable. The server stays up,
    the others play on, Dee's commitment is kept (the answer had nowhere to go, the log has it),
    Dee comes back with the token and reveals, and the log audits with every receipt on it."""
    server = await start_server()
    real = os.pwritev

    def slow(fd: int, buffers: list, offset: int, flags: int = 0) -> int:
        if b'"type":"committed"' in b"".join(bytes(b) for b in buffers):
            time.sleep(0.3)  # a worker thread's wait, as on a slow disk
        return real(fd, buffers, offset, flags)

    async with open_table(server.url, NAMES[:4], deck()) as table:
        ann, bob, cy, dee = table
        await start_game(table)
        room = server.rooms[ann.room]
        assert room.writer is not None
        summons = {0: "moon", 1: "moon", 2: "star", 3: "comet"}
        v = await ann.wait_view(lambda v: v.phase == "choose")
        seats = by_seat(table)
        conj = seats[v.conjurer]
        await conj.choose(0)
        for s in [(v.conjurer + i) % 4 for i in range(4)]:
            await seats[s].wait_view(lambda v, s=s: v.phase == "spell" and v.turn == s)
            await seats[s].spell(["night", "sky", "light", "tail"][s])
        await conj.wait_view(lambda v: v.phase == "mark")
        await conj.mark([1, 2])
        await dee.wait_view(lambda v: v.phase == "commit")
        commitment_, nonce = dee.commitment_for(summons[3])
        async with trio.open_nursery() as nursery:
            stream = await wire.open_stream(server.url)
            ws = await wire.wrap(nursery, stream, server.url)
            link = wire.Link(ws)
            await link.hello("tests")
            await link.resume(dee.room, dee.token)  # Dee's seat, on a socket this test owns
            await dee.wait_closed()
            monkeypatch.setattr(os, "pwritev", slow)
            await ann.commit(summons[0])
            await link.send(m.CommitSummon(commitment=commitment_))
            await trio.sleep(0.1)  # the room holds Dee's commitment behind Ann's write
            reset(stream)
            nursery.cancel_scope.cancel()
        await bob.commit(summons[1])
        await cy.commit(summons[2])
        await ann.wait_view(lambda v: not v.players[3].connected and v.players[3].committed)
        monkeypatch.undo()
        async with open_client(server.url, "Dee again") as dee2:
            await dee2.resume(ann.room, dee.token)
            v = await dee2.wait_view(lambda v: v.phase == "reveal")
            assert v.players[3].committed and v.you == 3
            for c in (ann, bob, cy):
                await c.wait_view(lambda v: v.phase == "reveal")
                await c.reveal()
            await dee2.send(m.RevealSummon(word=summons[3], nonce=nonce.hex()))
            for c in (ann, bob, cy, dee2):
                await c.wait_view(lambda v: v.phase == "review" or len(v.results) >= 1)
                if c.view is not None and c.view.phase == "review":
                    await c.done()
            v = await ann.wait_view(lambda v: len(v.results) >= 1)
            assert v.results[0].words[3] == summons[3]
            receipts = [
                Receipt(c.receipt.seq, c.receipt.hash, c.name)
                for c in (ann, bob, cy, dee2)
                if c.receipt
            ]
        found = audit(room.writer.path, receipts=receipts)
        assert found.verified, found.problems
        assert {r.status for r in found.receipts} == {"on-chain"}


def test_what_waits_for_a_client_is_bounded_in_bytes_as_well_as_frames():
    class Unread:
        """A socket whose peer reads nothing: the kernel takes not one byte more."""

        owed = False
        closed = None
        close_sent = False

        def write(self, data: bytes) -> bool:
            return False

    conn = Connection(Unread(), queue_size=64, queue_bytes=512 << 10)  # type: ignore[arg-type]
    view = b"v" * 60_000  # a whole view of a table with a big deck
    sent = 0
    while conn.open and sent < 64:
        conn.send_frame(view)
        sent += 1
    assert not conn.open and sent == 9  # the ninth would make 540,000 bytes: dropped
    assert conn.closing is not None and conn.closing.reason.startswith("too slow")


async def test_at_shutdown_a_room_that_will_not_come_back_closes_for_good(start_server):
    """Found by a newcomer: a lobby's table told "this room had not started, so it will be
    gone" went on dialling the stopped server, and so did a finished game's. Their close is a
    normal one (1000), which a client takes as final; a game under way closes as going away
    (1001), and its clients come back once the server does."""
    server = await start_server()
    async with (
        open_table(server.url, ["Ann", "Bob", "Cy"]) as lobby,
        open_table(server.url, ["Xi", "Yu", "Zoe"], deck()) as playing,
    ):
        await start_game(playing)
        await server.aclose()
        code, _ = await lobby[0].wait_closed()
        assert code == 1000
        assert any(
            isinstance(x, m.Bye) and "had not started, so it will be gone" in x.reason
            for x in lobby[0].received
        )
        code, _ = await playing[0].wait_closed()
        assert code == 1001
