"""Whole games of both variants over real WebSockets, scored by hand, checked against the log.

Four players (Ann, Bob, Cy, Dee = seats 0-3) and a custom deck whose cards are all worth 2 stars, so
the deal's order cannot change a score. Round r's conjurer is seat r-1. The words are chosen so the
matches are obvious; the expected points are worked out beside each round.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from gamescripts import DARK, DARK_TOTALS, NAMES, STANDARD, STANDARD_TOTALS, STARS, RoundScript
from wsclient import Client, open_client, open_table, play_round, start_game

from conjure.protocol import messages as m
from conjure.protocol.deck import Card
from conjure.protocol.events import (
    GameStarted,
    ProposalMade,
    ProposalSettled,
    VoteCast,
    event_from_record,
)
from conjure.protocol.messages import RoomSettings
from conjure.protocol.receiptsig import verify
from conjure.server.logformat import read_log
from conjure.server.rules import fold


def deck(variant: str = "standard") -> RoomSettings:
    return RoomSettings(
        variant=variant,  # type: ignore[arg-type]
        deck="custom",
        custom_cards=[Card(text=f"Category {c}", stars=STARS) for c in "ABCD"],
    )


def run_review(actions: tuple) -> Callable[[dict[int, Client]], Awaitable[None]] | None:
    """The script's review actions as protocol messages, each sent once the last one shows."""
    if not actions:
        return None

    async def review(seats: dict[int, Client]) -> None:
        made = 0
        for action in actions:
            match action:
                case ("challenge", seat, target, rule):
                    await seats[seat].send(m.ChallengeWord(seat=target, rule=rule))
                    made += 1
                    await seats[seat].wait_view(lambda v, n=made: len(v.proposals) == n)
                case ("vote", seat, proposal, yes):
                    await seats[seat].wait_view(lambda v, p=proposal: len(v.proposals) > p)
                    await seats[seat].send(m.CastVote(proposal=proposal, yes=yes))
                    await seats[seat].wait_view(
                        lambda v, p=proposal, s=seat: s in v.proposals[p].votes
                    )

    return review


async def play_game(
    url: str, variant: str, script: list[RoundScript], tables: list, *, patches: bool = True
) -> list:
    """Play a whole scripted game; appends the table to ``tables``; returns the results.
    ``patches``: the clients ask for patches (the default of every client) or whole views."""
    async with open_table(url, NAMES, deck(variant), patches=patches) as table:
        tables.append(table)
        await start_game(table)
        results = []
        for rs in script:
            result = await play_round(
                table,
                rs.summons,
                rs.spells,
                rs.marks,
                review=run_review(rs.review),
            )
            results.append(result)
        for c in table:
            await c.wait_view(lambda v: v.phase == "over")
        return results


def check_results(results: list, script: list[RoundScript]) -> None:
    for number, (result, rs) in enumerate(zip(results, script, strict=True), 1):
        assert result.round == number
        assert result.conjurer == number - 1
        assert result.case == rs.case, (number, result)
        assert result.points == rs.points, (number, result)
        assert set(result.invalid) == rs.invalid, (number, result)
        assert result.words == rs.summons
        assert result.card is not None and result.card.stars == STARS
        for seat, pts in rs.points.items():  # every point comes with its reason
            assert sum(p.points for p in result.reasons.get(seat, [])) == pts


def check_log(server, table: list[Client], totals: dict[int, int]) -> None:
    """The log verifies, folds to the room's state, and matches every client's last receipt."""
    view = table[0].view
    assert view is not None and view.game_id is not None
    log = read_log(server.replays / f"{view.game_id}.jsonl")
    assert not log.torn
    events = [event_from_record(r.type, r.data) for r in log.records]
    assert isinstance(events[0], GameStarted)
    assert events[0].limits == deck().limits.to_limits()
    room = server.rooms[view.room]
    state = fold(events)
    assert state == room.game
    assert state.totals == totals
    last = log.records[-1]
    for c in table:  # the receipt that ends the game is the server's, signed
        r = c.receipt
        assert r is not None and (r.seq, r.hash) == (last.seq, last.hash)
        assert r.key is not None and r.sig is not None
        assert verify(r.key, r.sig, view.game_id, r.seq, r.hash)
    raw = log.path.read_text()
    for c in table:  # only token hashes are logged
        assert c.token is not None and c.token not in raw


async def test_standard_game(server, caplog):
    caplog.set_level(logging.INFO, logger="conjure.server")
    tables: list = []
    results = await play_game(server.url, "standard", STANDARD, tables)
    check_results(results, STANDARD)
    table = tables[0]
    # the operator's log says the game ended, as it said it started (it said nothing at the end)
    gid = table[0].view.game_id
    said = [r.getMessage() for r in caplog.records]
    assert any(m.endswith(f"game {gid} started (4 players)") for m in said)
    assert any(m.endswith(f"game {gid} finished") for m in said)
    for c in table:
        v = c.view
        assert {p.seat: p.score for p in v.players} == STANDARD_TOTALS
        assert v.winners == [0]
        assert v.you == c.seat
    check_log(server, table, STANDARD_TOTALS)
    # Round 4's review: Ann challenged Cy's 'candy' (her challenge is her yes); Bob agreed, Dee
    # did not, and Cy, who wrote it, had no vote: carried 2-1.
    log = read_log(server.replays / f"{table[0].view.game_id}.jsonl")
    events = [event_from_record(r.type, r.data) for r in log.records]
    made = [e for e in events if isinstance(e, ProposalMade)]
    votes = [(e.seat, e.yes) for e in events if isinstance(e, VoteCast)]
    settled = [e for e in events if isinstance(e, ProposalSettled)]
    assert [(e.round, e.by, e.kind, e.seats, e.rule) for e in made] == [
        (4, 0, "challenge", (2,), "category")
    ]
    assert votes == [(0, True), (1, True), (3, False)]
    assert [(e.carried, e.yes, e.no) for e in settled] == [(True, 2, 1)]
    # The review's ruling is explained in Cy's points.
    why = [p.why for p in results[3].reasons[2]]
    assert any("ruled" in w for w in why), why


async def test_dark_magic_game(server):
    tables: list = []
    results = await play_game(server.url, "dark-magic", DARK, tables)
    check_results(results, DARK)
    table = tables[0]
    for c in table:
        assert {p.seat: p.score for p in c.view.players} == DARK_TOTALS
        assert c.view.winners == [0]
    check_log(server, table, DARK_TOTALS)


async def test_feed_tells_the_story(server):
    """The feed names actions in plain sentences and reveals words only once published."""
    tables: list = []
    await play_game(server.url, "standard", STANDARD[:1] + STANDARD[1:], tables)
    ann = tables[0][0]
    lines = [line for msg in ann.received if isinstance(msg, m.Update) for line in msg.feed]
    text = "\n".join(lines)
    assert "Bob wrote the spell word 'mountain'." in text
    assert "Cy has locked in." in text
    assert "All words are revealed:" in text
    assert "Round 1 scored: the conjurer was matched." in text
    assert "The game is over: Ann wins with 9 points." in text


async def test_an_abandoned_game_has_one_line_in_the_server_log(start_server, caplog):
    """Found by review: the game's end and its abandonment each logged a line for one event."""
    from clienthelpers import wait_until

    from conjure.protocol.messages import InLimits

    caplog.set_level(logging.INFO, logger="conjure.server")
    server = await start_server(abandon_after=0.5)
    no_clocks = InLimits(choose=None, spell=None, mark=None, commit=None, reveal=None, review=None)
    async with open_table(server.url, ["Ann", "Bob", "Cy"], RoomSettings(limits=no_clocks)) as t:
        await t[0].send(m.StartGame())
        await t[0].wait_view(lambda v: v.round == 1)
    await wait_until(lambda: not server.rooms, timeout=20, what="the room to close")
    said = [r.getMessage() for r in caplog.records if ": game " in r.getMessage()]
    ended = [s for s in said if " abandoned" in s or " finished" in s]
    assert len(ended) == 1 and "abandoned (no player for" in ended[0], said


async def test_a_step_of_the_wall_clock_is_not_time_nobody_was_connected(start_server, caplog):
    """Found by review: the wall clock stepped 31 minutes forward (NTP after boot; a laptop
    that wakes from sleep does the same) and every game nobody was connected to was abandoned
    at once, for good. The room's own waits move with such a step; time that does pass still
    counts."""
    import time

    from clienthelpers import wait_until

    from conjure.protocol.messages import InLimits

    step = [0.0]
    server = await start_server(
        abandon_after=3.0, clock=lambda: time.time() + step[0], steady_clock=time.monotonic
    )
    no_clocks = InLimits(choose=None, spell=None, mark=None, commit=None, reveal=None, review=None)
    async with open_table(server.url, ["Ann", "Bob", "Cy"], RoomSettings(limits=no_clocks)) as t:
        await t[0].send(m.StartGame())
        await t[0].wait_view(lambda v: v.round == 1)
        code = t[0].room
    room = server.rooms[code]
    await wait_until(lambda: room.no_player_since is not None, what="everyone to be gone")
    with caplog.at_level(logging.WARNING, logger="conjure"):
        step[0] = 31 * 60.0
        async with open_client(server.url, "Eve") as eve:  # the room wakes for her, and looks
            await eve.watch(code)
            v = await eve.wait_view(lambda v: v.round == 1)
            assert not v.abandoned and v.phase != "over", "abandoned by a step of the clock"
        assert "the wall clock stepped +1860.0 s" in caplog.text
    await wait_until(lambda: room.game is not None and room.game.over, timeout=10, what="abandon")
    assert room.game is not None and room.game.abandoned  # the time that did pass still counts


async def test_a_step_back_of_the_wall_clock_leaves_the_chat_budgets_as_they_were(start_server):
    """A step back of an hour emptied every seat's chat budget for an hour (each refills by the
    wall clock): it moves with the step, as the room's waits do."""
    import time

    step = [0.0]
    server = await start_server(clock=lambda: time.time() + step[0], steady_clock=time.monotonic)
    async with open_table(server.url, ["Ann", "Bob", "Cy"], RoomSettings()) as (ann, _bob, _cy):
        await ann.send(m.SendChat(text="before"))
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "before")
        step[0] = -3600.0
        await ann.send(m.SendChat(text="after"))
        got = await ann.recv_until(
            lambda x: isinstance(x, m.Error) or (isinstance(x, m.Chat) and x.text == "after")
        )
        assert isinstance(got, m.Chat) and got.text == "after", got
