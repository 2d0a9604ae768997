"""The table talk a connection's first view carries (``update.earlier``), as a player who comes
back with an empty screen meets it: seen with friends, a terminal closed and opened again found
the table talk gone."""

from __future__ import annotations

import contextlib

import pytest
import trio
from polling import poll_until
from wsclient import by_seat, open_client, open_table, play_round, reset, start_game

from conjure.client import wire
from conjure.protocol import messages as m
from conjure.server import room as room_module


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
    server = await start_server(rate=1000.0, burst=1000, address_rate=1000.0)
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        ann = table[0]
        assert ann.room is not None
        for i in range(m.EARLIER_LINES // 2 + 3):  # "Guest3 joined.", "Guest3 left.": more
            # lines than are kept, each its own, so that their order shows; each guest from an
            # address of its own (one address's comings and goings are told within a budget)
            async with open_client(server.url, f"Guest{i}", source=f"127.0.0.{20 + i}") as guest:
                await guest.join(ann.room)
                await ann.wait_view(lambda v: len(v.players) == 4)
                await guest.send(m.Leave())
                await ann.wait_view(lambda v: len(v.players) == 3)
        heard = talk(ann)
        assert len(heard) > m.EARLIER_LINES and len(set(heard)) == len(heard)
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


#: Lines the room itself says about the lobby and people's comings and goings: they are not
#: sentences of the game's decisions, so the log cannot tell them again.
ROOM_LINES = (" joined.", " is away.", " is back.", " created room ", "Dealing: ", " left")


async def test_a_game_resumed_after_a_restart_has_its_table_talk_again(start_server, tmp_path):
    """Every make play that goes on with a game starts the server again: the table talk is
    rebuilt from the log's decisions, the very sentences the room said, in their order, the
    newest EARLIER_LINES, so a player back after the restart reads what happened before it;
    the last says the server restarted, and that the chat before it is not kept."""
    replays = tmp_path / "replays"
    server = await start_server(replays=replays)
    async with open_table(server.url, ["Ann", "Bob", "Cy", "Dee"]) as table:
        await start_game(table)
        spells = {0: "wheel", 1: "road", 2: "engine", 3: "horn"}
        summons = {0: "car", 1: "car", 2: "bus", 3: "banana"}

        async def review(seats) -> None:  # a challenge and its votes: sentences of their own
            await seats[1].send(m.ChallengeWord(seat=3, rule="category"))
            await seats[0].wait_view(lambda v: bool(v.proposals))
            await seats[0].send(m.CastVote(proposal=0, yes=True, reason="no fruit here"))
            await seats[2].send(m.CastVote(proposal=0, yes=False, reason=""))

        await play_round(table, summons, spells, [1, 2], review=review)
        await play_round(table, summons, spells, [2, 3])
        ann = table[0]
        await ann.wait_view(lambda v: v.round == 3)
        heard = talk(ann)
        room, token = table[1].room, table[1].token
    await server.aclose()
    assert room is not None and token is not None
    said = [line for line in heard if not any(part in line for part in ROOM_LINES)]
    assert len(said) > m.EARLIER_LINES  # more than are kept: the newest must be the ones
    assert any("challenges" in line for line in said) and any("votes" in line for line in said)
    again = await start_server(replays=replays)
    async with open_client(again.url, "Bob again") as bob:
        await bob.resume(room, token)
        await bob.wait_view(lambda v: v.round == 3)
        earlier = updates(bob)[0].earlier
    assert earlier == [*said, room_module.RESTARTED][-m.EARLIER_LINES :]  # and why no chat


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


async def test_a_spectator_who_comes_after_the_last_one_left_hears_each_line_once(start_server):
    """Found in review: lines held back for a spectator who then left were still held when the
    next spectator came, so that one heard a line twice and missed the next."""
    server = await start_server(spectator_interval=2.0)
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        ann = table[0]
        assert ann.room is not None
        async with open_client(server.url, "Eve") as eve:
            await eve.watch(ann.room)
            await eve.wait_view(lambda v: v.you is None)
            settings = m.RoomSettings(limits=m.InLimits(spell=33))
            await ann.send(m.ChangeSettings(settings=settings))  # held back for Eve
            await ann.wait_view(lambda v: v.settings.limits.spell == 33)
        room = server.rooms[ann.room]
        with trio.fail_after(5):
            await poll_until(lambda: not room.watchers)  # gone, no spectators' update since
        async with open_client(server.url, "Dan") as dan:  # said with nobody watching
            await dan.join(ann.room)
            await ann.wait_view(lambda v: len(v.players) == 4)
            async with open_client(server.url, "Fay") as fay:
                await fay.watch(ann.room)
                await fay.wait_view(lambda v: v.you is None and len(v.players) == 4)
                await trio.sleep(2.5)  # past the spectators' interval: anything held comes
                heard = [*updates(fay)[0].earlier, *talk(fay)]
    assert heard.count("Ann changed the settings.") == 1, heard
    assert heard.count("Dan joined.") == 1, heard


async def test_a_connection_that_resets_before_reading_its_first_view_leaves_the_room_sound(
    server,
):
    """The worst moment for this change: a seat taken again, then the TCP connection reset
    before its first view (the one carrying ``earlier``) is read. The room goes on, the others
    hear only that the player came and went, and the next connection for the seat gets the
    table talk whole, once."""
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        view = await start_game(table)
        ann, bob, _cy = table
        await by_seat(table)[view.conjurer].choose(0)
        await ann.wait_view(lambda v: v.phase == "spell")
        assert bob.room is not None and bob.token is not None
        async with trio.open_nursery() as nursery:
            stream = await wire.open_stream(server.url)
            ws = await wire.wrap(nursery, stream, server.url)
            link = wire.Link(ws)
            await link.hello("tests")
            await link.send(m.ResumeSeat(room=bob.room, token=bob.token))
            reset(stream)  # gone before the answer, or the view, was read
            nursery.cancel_scope.cancel()
        await ann.wait_view(lambda v: not v.players[1].connected)
        heard = talk(ann)
        async with open_client(server.url, "Bob again") as back:
            await back.resume(bob.room, bob.token)
            await back.wait_view(lambda v: v.players[1].connected)
            got = updates(back)
            assert got[0].earlier == heard  # whole, and the reset cost nothing
            assert all(u.earlier == [] for u in got[1:])
        await by_seat(table)[view.conjurer].spell("wheel")  # the game goes on
        await ann.wait_view(lambda v: bool(v.players[view.conjurer].spell))


async def test_a_player_back_on_a_new_connection_gets_the_chat_before_it_among_the_lines(
    start_server,
):
    """Seen: a player whose terminal was closed came back to the table talk but not to what
    the others had said. The first view carries the room's newest chat too, each line placed
    after the table talk said before it; later views carry none."""
    server = await start_server(chat_rate=100.0, chat_burst=100)
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        view = await start_game(table)
        ann, bob, cy = table
        await ann.send(m.SendChat(text="good luck all"))
        await ann.recv_until(lambda x: isinstance(x, m.Chat))
        before = len(talk(ann))
        await by_seat(table)[view.conjurer].choose(0)
        await ann.wait_view(lambda v: v.phase == "spell")
        await cy.send(m.SendChat(text="vehicles, easy"))
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.name == "Cy")
        heard = talk(ann)
        assert bob.token is not None and ann.room is not None
        async with open_client(server.url, "Bob again") as back:
            await back.resume(ann.room, bob.token)
            await back.wait_view(lambda v: v.phase == "spell")
            first = updates(back)[0]
            assert first.earlier == heard
            assert first.earlier_chat == [
                m.EarlierChat(name="Ann", text="good luck all", seat=0, after=before),
                m.EarlierChat(name="Cy", text="vehicles, easy", seat=2, after=len(heard)),
            ]
            assert before < len(heard)  # the category was chosen between the two
            await ann.send(m.SendChat(text="welcome back"))
            await back.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "welcome back")
            assert all(u.earlier_chat == [] for u in updates(back)[1:])


async def test_the_chat_a_first_view_carries_is_the_newest(start_server):
    server = await start_server(chat_rate=1000.0, chat_burst=1000, rate=1000.0, burst=1000)
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        ann = table[0]
        assert ann.room is not None
        said = [f"line {i}" for i in range(m.EARLIER_LINES + 5)]
        for text in said:
            await ann.send(m.SendChat(text=text))
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == said[-1])
        async with open_client(server.url, "Eve") as eve:
            await eve.watch(ann.room)  # a spectator hears the chat too
            await eve.wait_view(lambda v: v.you is None)
            chat = updates(eve)[0].earlier_chat
    assert [c.text for c in chat] == said[-m.EARLIER_LINES :]  # the newest, oldest first
    assert {(c.name, c.seat) for c in chat} == {("Ann", 0)}


async def test_chat_said_before_the_oldest_line_kept_is_left_out_with_it(start_server):
    """Found by a newcomer: once the table talk passed its 40 lines, the chat said among the
    lines cut came first in a first view, as if said just before the oldest line kept."""
    server = await start_server(
        rate=1000.0, burst=1000, address_rate=1000.0, chat_rate=100.0, chat_burst=100
    )
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        ann = table[0]
        assert ann.room is not None
        await ann.send(m.SendChat(text="long ago"))
        await ann.recv_until(lambda x: isinstance(x, m.Chat))
        for i in range(m.EARLIER_LINES // 2 + 3):  # more lines than are kept, after the chat
            async with open_client(server.url, f"Guest{i}", source=f"127.0.0.{20 + i}") as guest:
                await guest.join(ann.room)
                await ann.wait_view(lambda v: len(v.players) == 4)
                await guest.send(m.Leave())
                await ann.wait_view(lambda v: len(v.players) == 3)
        await ann.send(m.SendChat(text="just now"))
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "just now")
        async with open_client(server.url, "Eve") as eve:
            await eve.watch(ann.room)
            await eve.wait_view(lambda v: v.you is None)
            first = updates(eve)[0]
    assert len(first.earlier) == m.EARLIER_LINES
    assert [(c.text, c.after) for c in first.earlier_chat] == [("just now", m.EARLIER_LINES)]
