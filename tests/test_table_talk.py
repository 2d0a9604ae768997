"""The table talk a connection's first view carries (``update.earlier``), as a player who comes
back with an empty screen meets it: seen with friends, a terminal closed and opened again found
the table talk gone."""

from __future__ import annotations

import contextlib

import pytest
import trio
from wsclient import by_seat, open_client, open_table, play_round, start_game

from conjure.protocol import messages as m


def talk(client) -> list[str]:
    """Every feed line ``client`` has received, in order."""
    return [line for x in client.received if isinstance(x, m.Update) for line in x.feed]


def updates(client) -> list[m.Update]:
    return [x for x in client.received if isinstance(x, m.Update)]


@pytest.mark.parametrize("patches", [True, False], ids=["patches", "full views"])
async def test_a_player_back_on_a_new_connection_gets_the_table_talk_before_it(server, patches):
    async with open_table(server.url, ["Ann", "Bob", "Cy"], patches=patches) as table:
        view = await start_game(table)
        ann, bob, _cy = table
        await by_seat(table)[view.conjurer].choose(0)
        await ann.wait_view(lambda v: v.phase == "spell")
        heard = talk(ann)  # everything said in the room so far: Ann has been there throughout
        assert bob.token is not None and ann.room is not None
        async with open_client(server.url, "Bob again", patches=patches) as back:
            await back.resume(ann.room, bob.token)
            await back.wait_view(lambda v: v.phase == "spell")
            got = updates(back)
            assert got[0].earlier == heard, (got[0].earlier, heard)
            assert any("chose the category" in line for line in got[0].earlier)
            await by_seat(table)[view.conjurer].spell("wheel")
            await back.wait_view(lambda v: bool(v.players[view.conjurer].spell))
            assert all(u.earlier == [] for u in updates(back)[1:])  # only the first view


async def test_a_spectators_first_view_has_it_and_it_keeps_the_newest_lines(start_server):
    server = await start_server(rate=1000.0, burst=1000)  # one host changing settings fast
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        ann = table[0]
        for i in range(m.EARLIER_LINES + 5):  # more lines than are kept
            limit = 30 + i
            settings = m.RoomSettings(limits=m.InLimits(spell=limit))
            await ann.send(m.ChangeSettings(settings=settings))
            await ann.wait_view(lambda v, s=limit: v.settings.limits.spell == s)
        heard = talk(ann)
        assert len(heard) > m.EARLIER_LINES
        assert ann.room is not None
        async with open_client(server.url, "Eve") as eve:
            await eve.watch(ann.room)
            await eve.wait_view(lambda v: v.you is None)
            first = updates(eve)[0]
            assert first.earlier == heard[-m.EARLIER_LINES :]  # the newest, oldest first


async def test_a_spectator_who_comes_while_lines_are_held_back_hears_each_line_once(start_server):
    """Spectators' updates are coalesced (``spectator_interval``): lines said since the last
    one still come in the next, so the first view's ``earlier`` leaves them out."""
    server = await start_server(spectator_interval=2.0)
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        ann = table[0]
        assert ann.room is not None
        async with open_client(server.url, "Eve") as eve, open_client(server.url, "Fay") as fay:
            await eve.watch(ann.room)  # a spectator: from now on spectators' lines are held
            await eve.wait_view(lambda v: v.you is None)
            settings = m.RoomSettings(limits=m.InLimits(spell=33))
            await ann.send(m.ChangeSettings(settings=settings))
            await ann.wait_view(lambda v: v.settings.limits.spell == 33)
            await fay.watch(ann.room)  # comes while "Ann changed the settings." is held back
            await fay.wait_view(lambda v: v.settings.limits.spell == 33)
            await fay.recv_until(
                lambda x: isinstance(x, m.Update) and "Ann changed the settings." in x.feed,
                timeout=5.0,
            )
            heard = [*updates(fay)[0].earlier, *talk(fay)]
            assert heard.count("Ann changed the settings.") == 1, heard


async def test_a_game_resumed_after_a_restart_has_its_table_talk_again(start_server, tmp_path):
    """Every make play that goes on with a game starts the server again: the table talk is
    rebuilt from the log's decisions, as the room said them, so a player back after the restart
    reads what happened before it."""
    replays = tmp_path / "replays"
    server = await start_server(replays=replays)
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        view = await start_game(table)
        conjurer = by_seat(table)[view.conjurer]
        await conjurer.choose(0)
        await table[0].wait_view(lambda v: v.phase == "spell")
        await conjurer.spell("wheel")
        await table[0].wait_view(lambda v: bool(v.players[view.conjurer].spell))
        heard = talk(table[0])
        room, token = table[1].room, table[1].token
    await server.aclose()
    assert room is not None and token is not None
    again = await start_server(replays=replays)
    async with open_client(again.url, "Bob again") as bob:
        await bob.resume(room, token)
        await bob.wait_view(lambda v: v.phase == "spell")
        earlier = updates(bob)[0].earlier
    said = [line for line in heard if "chose the category" in line or "spell word" in line]
    assert said and all(line in earlier for line in said), (said, earlier)
    assert earlier == [line for line in earlier if line in heard]  # nothing the room never said


async def test_after_the_game_nobody_leaving_is_told_as_news(server):
    """Seen: as the final standings came up, the table talk filled with "Cleo is away." for
    every computer player that left."""
    async with contextlib.AsyncExitStack() as stack:
        table = await stack.enter_async_context(open_table(server.url, ["Ann", "Bob", "Cy"]))
        await start_game(table)
        spells, summons = {0: "wheel", 1: "road", 2: "engine"}, {0: "car", 1: "car", 2: "bus"}
        for _ in range(3):
            await play_round(table, summons, spells, [1, 2])
        ann, bob, cy = table
        await ann.wait_view(lambda v: v.phase == "over")
        await bob.wait_view(lambda v: v.phase == "over")
        await cy.ws.aclose()  # Cy goes once the game is over
        await trio.sleep(0.3)
        await ann.send(m.SendChat(text="well played"))  # something after it, to wait for
        await ann.recv_until(lambda x: isinstance(x, m.Chat))
        assert not any("is away" in line for line in talk(ann)), talk(ann)
