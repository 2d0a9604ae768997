"""Computer players are marked on every board: a program says ``"computer"`` among its hello's
features (docs/PROTOCOL.md), and the seats its connection takes show ``computer: true`` to
everyone, players and spectators, patched views and whole ones, until a person's connection
takes the seat back. Why: a friend who joined a table ``make play`` had filled could not tell
the programs from the people."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from test_server_game import deck
from wsclient import Client, open_client, start_game

from conjure.protocol import messages as m


def marks(c: Client) -> list[bool]:
    assert c.view is not None
    return [p.computer for p in c.view.players]


async def test_a_computer_players_seat_is_marked_for_everyone_until_a_person_takes_it(server):
    async with (
        open_client(server.url, "Ann", patches=False) as ann,
        open_client(server.url, "Bob", hello=False, computer=True) as bob,
        open_client(server.url, "Cy") as cy,
        open_client(server.url, "Viv") as viv,
    ):
        welcome = await bob.hello()
        assert isinstance(welcome, m.Welcome) and m.COMPUTER in welcome.features
        code = await ann.create(deck())
        await bob.join(code)
        await cy.join(code)
        await viv.watch(code)
        for c in (ann, bob, cy, viv):
            await c.wait_view(lambda v: len(v.players) == 3)
            assert marks(c) == [False, True, False], c.name
        await start_game([ann, bob, cy])
        for c in (ann, bob, cy, viv):
            await c.wait_view(lambda v: v.round == 1)
            assert marks(c) == [False, True, False], c.name

        # A person takes the seat back with its token: the mark goes, for everyone.
        async with open_client(server.url, "Bob in person") as person:
            await person.resume(code, bob.token or "")
            for c in (ann, cy, person, viv):
                await c.wait_view(lambda v: v.players[1].connected and not v.players[1].computer)
        # Away, the seat keeps the last word said of it; a program taking it marks it again.
        await ann.wait_view(lambda v: not v.players[1].connected)
        assert marks(ann) == [False, False, False]
        async with open_client(server.url, "Bob again", computer=True) as again:
            await again.resume(code, bob.token or "")
            for c in (ann, cy, again, viv):
                await c.wait_view(lambda v: v.players[1].connected and v.players[1].computer)

            # Removed from the game, the seat stays on the board, and so does whose it was.
            await ann.send(m.KickPlayer(seat=1))
            await again.wait_closed()
            for c in (ann, cy, viv):
                await c.wait_view(lambda v: v.players[1].kicked)
                assert marks(c) == [False, True, False], c.name


async def test_a_client_that_says_nothing_is_no_computer_and_an_unknown_word_changes_nothing(
    server,
):
    async with (
        open_client(server.url, "Ann", hello=False) as ann,
        open_client(server.url, "Bob", hello=False) as bob,
        open_client(server.url, "Cy", hello=False) as cy,
    ):
        for c, features in ((ann, []), (bob, ["robot", "patches"]), (cy, ["computer", "computer"])):
            await c.send(m.Hello(protocol=m.PROTOCOL_VERSION, client="tests", features=features))
        answers = []
        for c in (ann, bob, cy):
            w = await c.recv_until(lambda x: isinstance(x, m.Welcome))
            assert isinstance(w, m.Welcome)
            answers.append(w.features)
        assert answers == [[], ["patches"], ["computer"]]
        code = await ann.create(deck())
        await bob.join(code)
        await cy.join(code)
        await ann.wait_view(lambda v: len(v.players) == 3)
        assert marks(ann) == [False, False, True]
        # A computer seat that leaves the lobby takes its mark with it (the room keeps no mark
        # of a seat that is gone: seats come and go in a lobby without end).
        await cy.send(m.Leave())
        await ann.wait_view(lambda v: len(v.players) == 2)
        assert server.rooms[code].members.computers == frozenset()
        async with open_client(server.url, "Dee") as dee:
            await dee.join(code)
            await ann.wait_view(lambda v: [p.name for p in v.players] == ["Ann", "Bob", "Dee"])
            assert marks(ann) == [False, False, False]


@contextlib.asynccontextmanager
async def ann_bob_cy(url: str) -> AsyncIterator[tuple[Client, Client, Client, str]]:
    """Ann's new room with Bob, a program, and Cy seated: the three clients and its code."""
    async with (
        open_client(url, "Ann") as ann,
        open_client(url, "Bob", computer=True) as bob,
        open_client(url, "Cy") as cy,
    ):
        code = await ann.create(deck())
        await bob.join(code)
        await cy.join(code)
        await ann.wait_view(lambda v: len(v.players) == 3)
        yield ann, bob, cy, code


async def test_the_mark_follows_its_player_through_a_new_seating_order_and_the_start(server):
    async with ann_bob_cy(server.url) as (ann, bob, cy, _code):
        await ann.send(m.SeatOrder(order=[1, 2, 0]))
        lobby = await ann.wait_view(lambda v: v.players[0].name == "Bob")
        seated = [("Bob", True), ("Cy", False), ("Ann", False)]
        assert [(p.name, p.computer) for p in lobby.players] == seated
        game = await start_game([ann, bob, cy])
        assert [(p.name, p.computer) for p in game.players] == seated


async def test_after_a_restart_a_seat_is_marked_again_when_its_program_comes_back(
    tmp_path, start_server
):
    """The mark is the connection's word, not logged: a restarted server knows it again only
    when the program takes its seat back (PROTOCOL.md says so)."""
    replays = tmp_path / "replays"
    first = await start_server(replays=replays)
    async with ann_bob_cy(first.url) as (ann, bob, cy, code):
        await start_game([ann, bob, cy])
        tokens = ann.token or "", bob.token or ""
    await first.aclose()
    second = await start_server(replays=replays)
    async with open_client(second.url, "Ann") as ann:
        await ann.resume(code, tokens[0])
        await ann.wait_view(lambda v: v.round == 1)
        assert marks(ann) == [False, False, False]
        async with open_client(second.url, "Bob", computer=True) as bob:
            await bob.resume(code, tokens[1])
            await ann.wait_view(lambda v: v.players[1].connected and v.players[1].computer)
