"""The fair deal: the server commits to its seed, every seat adds a share, the log lets anyone deal
again; a log whose cards are not the seeded deal is caught, however well it chains."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import Counter
from collections.abc import Sequence

import msgspec
import trio
from wsclient import Client, open_client, open_table, start_game

from conjure.client.cli import main
from conjure.protocol import messages as m
from conjure.protocol.deal import combined_seed, commitment_of, seeded_deal, shuffled
from conjure.protocol.deck import Card
from conjure.protocol.events import DealRecord
from conjure.protocol.messages import RoomSettings
from conjure.server.logformat import GENESIS, build_record, encode_record, read_log
from conjure.server.redecide import redecide

CARDS = [Card(text=f"Category {i}", stars=1 + i % 3) for i in range(12)]


def settings() -> RoomSettings:
    return RoomSettings(deck="custom", custom_cards=CARDS)


def test_the_shuffle_is_a_pure_function_of_the_seed_and_looks_uniform():
    seed = combined_seed("11" * 32, {0: "22" * 32, 2: "33" * 32}, 3)
    assert shuffled(range(10), seed) == shuffled(range(10), seed)
    assert shuffled(range(10), seed) != shuffled(range(10), combined_seed("11" * 32, {}, 3))
    # a missing share is not the same as an empty one, and the order of seats matters
    assert combined_seed("11" * 32, {0: "22" * 32}, 2) != combined_seed(
        "11" * 32, {1: "22" * 32}, 2
    )
    # every card lands first about as often as any other (a sanity check of the sampling)
    firsts = Counter(
        shuffled(range(4), hashlib.sha256(i.to_bytes(4, "big")).digest())[0] for i in range(4000)
    )
    assert set(firsts) == {0, 1, 2, 3} and min(firsts.values()) > 800


async def test_every_seat_adds_a_share_and_the_log_deals_again(server, capsys):
    async with open_table(server.url, ["Ann", "Bob", "Cy"], settings()) as table:
        view = await start_game(table)
        shown = {c.link.deal_commitments[-1] for c in table}
        game_id = view.game_id
        cards = [(c.text, c.stars) for c in view.cards]
    log = server.replays / f"{game_id}.jsonl"
    start = read_log(log).records[0]
    deal = msgspec.convert(start.data["deal"], DealRecord, strict=False)
    assert shown == {deal.commitment}  # what every client was shown before it gave its share
    assert commitment_of(deal.server_seed) == deal.commitment
    assert sorted(deal.contributions) == [0, 1, 2]  # every seat gave one
    dealt = seeded_deal(deal.deck, 3, combined_seed(deal.server_seed, deal.contributions, 3))
    assert [(c.text, c.stars) for c in dealt] == cards
    assert main(["replay", str(log), "--no-state-dir"]) == 0
    out = capsys.readouterr().out
    assert "ok    the deal: the server's seed opens the commitment it announced" in out
    assert "the log holds a share for 3 of 3 seats" in out
    # ... but that it is each seat's own share, only the players' kept deals show
    assert "note  the deal: every seat's share in the log is the server's word" in out


async def start_three(
    stack: contextlib.AsyncExitStack, url: str, silent: Sequence[int]
) -> tuple[list[Client], str]:
    """Ann, Bob and Cy seated in a new room, the seats ``silent`` sending no share of their
    own, and the host's start sent: the deal is open (or about to be)."""
    table = [await stack.enter_async_context(open_client(url, n)) for n in "ABC"]
    for i in silent:
        table[i].link.contribute = False
    code = await table[0].create(settings())
    for c in table[1:]:
        await c.join(code)
    await table[0].wait_view(lambda v: len(v.players) == 3)
    await table[0].send(m.StartGame())
    return table, code


async def test_a_silent_seat_is_dealt_without_its_share(start_server):
    server = await start_server(deal_timeout=0.3)
    async with contextlib.AsyncExitStack() as stack:
        table, _ = await start_three(stack, server.url, [2])  # an old or broken client
        for c in table:
            await c.wait_view(lambda v: v.round == 1)
        log = server.replays / f"{table[0].view.game_id}.jsonl"
    deal = read_log(log).records[0].data["deal"]
    assert sorted(deal["contributions"]) == ["0", "1"]


async def test_the_table_is_fixed_while_it_is_dealt(start_server):
    server = await start_server(deal_timeout=5.0)
    async with contextlib.AsyncExitStack() as stack:
        table, code = await start_three(stack, server.url, [0, 1, 2])
        await table[0].recv_until(lambda x: isinstance(x, m.DealOpen))
        late = await stack.enter_async_context(open_client(server.url, "Late"))
        await late.send(m.JoinRoom(room=code, name="Late"))
        await late.expect_error("dealing")
        # A spectator changes no table: told what it may not do, and free to stop watching.
        eve = await stack.enter_async_context(open_client(server.url, "Eve"))
        await eve.watch(code)
        await eve.send(m.KickPlayer(seat=1))
        await eve.expect_error("spectator")
        await eve.send(m.Leave())
        await eve.wait_closed()
        await table[0].send(m.StartGame())
        await table[0].expect_error("dealing")
        for c in table:
            await c.send(m.DealSeed(seed="ab" * 32))
        await table[1].send(m.DealSeed(seed="cd" * 32))
        await table[1].expect_error("not_dealing")
        with trio.fail_after(5):
            await table[0].wait_view(lambda v: v.round == 1)


async def test_a_seat_that_comes_back_while_it_is_dealt_is_asked_for_its_share(start_server):
    """Found by review: a seat whose client reconnected as the deal was open got no deal_open
    on its new connection: the start waited the whole deal time, and the seat was dealt
    without its share (its client kept no commitment to check the log against)."""
    server = await start_server(deal_timeout=30.0)
    async with contextlib.AsyncExitStack() as stack:
        table, code = await start_three(stack, server.url, [2])  # its share: its next connection
        await table[2].recv_until(lambda x: isinstance(x, m.DealOpen))
        again = await stack.enter_async_context(open_client(server.url, "C again"))
        await again.resume(code, table[2].token)  # contributes, as a client does
        with trio.fail_after(10):  # (a hang guard: the deal's own wait is 30 s)
            await table[0].wait_view(lambda v: v.round == 1)
        log = server.replays / f"{table[0].view.game_id}.jsonl"
    deal = read_log(log).records[0].data["deal"]
    assert sorted(deal["contributions"]) == ["0", "1", "2"]


def other_cards_dealt(path) -> bytes:
    """The log at ``path`` as a server that wanted other cards would write it: three cards of the
    deck that are not on the table, put in the start command and the event alike, and every
    record chained again (so the hash chain alone cannot tell)."""
    records = read_log(path).records
    first = records[0]
    on_table = {c["text"] for c in first.data["cards"]}
    better = [c for c in first.data["deal"]["deck"] if c["text"] not in on_table][:3]
    forged, prev = [], GENESIS
    for r in records:
        data, cmd = r.data, r.cmd
        if r.seq == 0:
            data = {**data, "cards": better}
            cmd = {**cmd, "setup": {**cmd["setup"], "cards": better}}
        rec = build_record(prev, r.seq, r.ts, r.type, data, batch=r.batch, cmd=cmd)
        forged.append(rec)
        prev = rec.hash
    return b"".join(encode_record(r) for r in forged)


async def test_cards_that_are_not_the_seeded_deal_are_caught(server, tmp_path, capsys):
    async with open_table(server.url, ["Ann", "Bob", "Cy"], settings()) as table:
        view = await start_game(table)
        game_id = view.game_id
    path = tmp_path / "forged.jsonl"
    path.write_bytes(other_cards_dealt(server.replays / f"{game_id}.jsonl"))
    decided = redecide(read_log(path).records)
    assert decided.mismatch is not None and decided.mismatch.line == 1
    assert "not the seeded deal" in decided.mismatch.why
    assert main(["replay", str(path), "--no-state-dir", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert any(
        "the cards on the table are not the seeded deal" in p.lower() for p in doc["problems"]
    )


async def test_the_server_refuses_to_resume_a_game_whose_cards_are_not_the_seeded_deal(
    start_server, tmp_path, said
):
    first = await start_server(replays=tmp_path / "one")
    async with open_table(first.url, ["Ann", "Bob", "Cy"], settings()) as table:
        view = await start_game(table)  # unfinished: round 1 has just begun
    await first.aclose()
    replays = tmp_path / "two"
    replays.mkdir()
    log = replays / "forged.jsonl"
    log.write_bytes(other_cards_dealt(first.replays / f"{view.game_id}.jsonl"))
    before = log.read_bytes()
    second = await start_server(replays=replays)
    assert not second.rooms
    (line,) = [x for x in said if x.startswith(f"refused {log}:")]
    assert "line 1" in line and "not the seeded deal" in line
    assert log.read_bytes() == before


def small_deck_dealt(path) -> bytes:
    """The log at ``path`` as a server that shuffled a deck of its choosing would write it: five
    cards of the deck, dealt again with the same seed, every record chained again."""
    records = read_log(path).records
    first = records[0]
    deal = first.data["deal"]
    small = deal["deck"][:5]
    n = len(first.data["players"])
    record = msgspec.convert({**deal, "deck": small}, DealRecord, strict=False)
    cards = seeded_deal(record.deck, n, combined_seed(record.server_seed, record.contributions, n))
    chosen = msgspec.to_builtins(list(cards))
    forged, prev = [], GENESIS
    for r in records:
        data, cmd = r.data, r.cmd
        if r.seq == 0:
            data = {**data, "cards": chosen, "deal": {**deal, "deck": small}}
            setup = {**cmd["setup"], "cards": chosen, "deal": {**deal, "deck": small}}
            cmd = {**cmd, "setup": setup}
        rec = build_record(prev, r.seq, r.ts, r.type, data, batch=r.batch, cmd=cmd)
        forged.append(rec)
        prev = rec.hash
    return b"".join(encode_record(r) for r in forged)


async def test_a_deal_from_a_deck_the_settings_do_not_name_is_said(server, tmp_path, capsys):
    """An audit review: a five-card deck of the server's choosing dealt exactly the cards on
    the table and the report said 'ok the deal' with nothing more."""
    async with open_table(server.url, ["Ann", "Bob", "Cy"], RoomSettings()) as table:
        view = await start_game(table)
    honest = server.replays / f"{view.game_id}.jsonl"
    assert main(["replay", str(honest), "--no-state-dir", "--json"]) == 0
    assert not [n for n in json.loads(capsys.readouterr().out)["notes"] if "deck" in n]
    path = tmp_path / "forged.jsonl"
    path.write_bytes(small_deck_dealt(honest))
    main(["replay", str(path), "--no-state-dir", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["problems"] == []  # the deal itself checks: the deck is what is odd
    (note,) = [n for n in doc["notes"] if "deck" in n]
    assert note.startswith("the deal's deck (5 cards) is not this program's default deck")
