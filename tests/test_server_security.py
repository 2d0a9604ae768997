"""Secrecy and hostile input: what a client may never see, and what it may never do.

Every frame every client receives in whole games is checked for other players' tokens, for any
summoning word before its round's publication, and for nonces and commitments. Then: acting out of
turn or for another seat, copying a commitment, revealing a different word, wrong passwords and
tokens; malformed frames of many kinds (an error, the connection stays usable); an oversized frame
and a flood close only the offending connection.
"""

from __future__ import annotations

import msgspec
import pytest
import trio
from test_server_game import DARK, NAMES, STANDARD, deck, play_game
from wsclient import Client, open_client, open_table, start_game

from conjure.client import wire
from conjure.protocol import messages as m
from conjure.protocol.messages import MAX_FRAME_BYTES, RoomSettings


def _published_at(client: Client, number: int) -> int:
    """Index of the first frame in which round ``number``'s words are public for this client."""
    for i, msg in enumerate(client.received):
        if isinstance(msg, m.Update):
            v = msg.view
            if len(v.results) >= number or (
                v.round == number and any(p.summon is not None for p in v.players)
            ):
                return i
    raise AssertionError(f"{client.name} never saw round {number} published")


@pytest.mark.parametrize("patches", [True, False], ids=["patches", "whole-views"])
@pytest.mark.parametrize(("variant", "script"), [("standard", STANDARD), ("dark-magic", DARK)])
async def test_no_payload_leaks_tokens_or_unrevealed_words(server, variant, script, patches):
    """Every frame, patches and whole views alike."""
    tables: list = []
    await play_game(server.url, variant, script, tables, patches=patches)
    table: list[Client] = tables[0]
    tokens = {c.seat: c.token for c in table}
    sent_secrets = [frame for c in table for frame in c.sent if '"reveal_summon"' in frame]
    nonces = [msgspec.json.decode(f)["nonce"] for f in sent_secrets]
    commitments = [
        msgspec.json.decode(f)["commitment"] for c in table for f in c.sent if "commit_summon" in f
    ]
    assert len(nonces) == 16 and len(commitments) == 16
    for c in table:
        assert len(c.frames) == len(c.received) > 20
        assert (c.link.patched > 0) == patches
        for frame in c.frames:
            assert isinstance(frame, str)
            for seat, token in tokens.items():
                if seat != c.seat:
                    assert token not in frame, f"{c.name} received seat {seat}'s token"
            for secret in nonces + commitments:
                assert secret not in frame
        for number, rs in enumerate(script, 1):
            cut = _published_at(c, number)
            words = {w.casefold() for w in rs.summons.values()}
            for frame in c.frames[:cut]:
                low = frame.casefold()
                for w in words:
                    assert w not in low, f"{c.name} saw {w!r} before round {number} was published"


async def test_acting_for_others_is_refused(server):
    async with open_table(server.url, NAMES, deck()) as table:
        ann, bob, cy, dee = table
        await start_game(table)
        # Ann conjures round 1: nobody else may choose, and nobody but the host may kick or skip.
        await bob.choose(0)
        await bob.expect_error("not_your_turn")
        await bob.send(m.KickPlayer(seat=2))
        await bob.expect_error("not_host")
        await cy.send(m.SkipPlayer(seat=0))
        await cy.expect_error("not_host")
        await cy.send(m.PauseGame())
        await cy.expect_error("not_host")
        # There is no way to name another seat as the actor: an extra field is refused.
        await bob.send({"type": "choose_card", "card": 0, "seat": 0})
        err = await bob.expect_error("invalid_message")
        assert "seat" in err.message
        await ann.choose(0)
        await ann.wait_view(lambda v: v.phase == "spell")
        await cy.spell("rocket")
        await cy.expect_error("not_your_turn")
        # Out of phase: marks and commitments now.
        await ann.mark([1, 2])
        await ann.expect_error("out_of_phase")
        # The refused actions changed nothing.
        v = await dee.wait_view(lambda v: v.phase == "spell")
        assert v.turn == 0 and all(p.spell is None for p in v.players)
        # An error goes to its sender only.
        assert not any(isinstance(x, m.Error) for x in dee.received)


async def to_the_summon(table) -> None:
    """Start, choose, write the spell words and mark two boards: the summon opens."""
    ann = table[0]
    await start_game(table)
    await ann.choose(0)
    for c, w in zip(table, ["lava", "mountain", "smoke", "island"], strict=True):
        await c.wait_view(lambda v, c=c: v.turn == c.seat and v.phase == "spell")
        await c.spell(w)
    await ann.wait_view(lambda v: v.phase == "mark")
    await ann.mark([1, 2])


async def test_commitments_cannot_be_copied_and_reveals_must_match(server):
    async with open_table(server.url, NAMES, deck()) as table:
        ann, bob, cy, dee = table
        await to_the_summon(table)
        await ann.wait_view(lambda v: v.phase == "commit")
        await bob.wait_view(lambda v: v.phase == "commit")
        # A reveal before the summon closes is refused.
        await bob.send(m.RevealSummon(word="volcano", nonce="00" * 32))
        await bob.expect_error("reveal_too_early")
        ann_c = await ann.commit("volcano")
        await ann.wait_view(lambda v: v.players[0].committed)
        await bob.send(m.CommitSummon(commitment=ann_c))  # copied, say, from a shoulder-surf
        await bob.expect_error("copied_commitment")
        # A malformed commitment fails on decode.
        await bob.send({"type": "commit_summon", "commitment": "XYZ"})
        await bob.expect_error("invalid_message")
        # So does a commitment with a newline after its 64 digits (a pattern's ``$`` passes it).
        await bob.send({"type": "commit_summon", "commitment": "ab" * 32 + "\n"})
        await bob.expect_error("invalid_message")
        # Replacing one's own commitment while the phase is open is allowed (and logged).
        await bob.commit("glacier")
        await bob.wait_view(lambda v: v.players[1].committed)
        await bob.commit("volcano")
        await cy.commit("volcano")
        await dee.commit("glacier")
        await dee.wait_view(lambda v: v.phase == "reveal")
        # A second commitment once the phase closed is refused.
        await dee.send(m.CommitSummon(commitment="ab" * 32))
        await dee.expect_error("commits_closed")
        # Revealing a different word, or the right word with another nonce, does not open it.
        word, nonce = dee.secrets[1]
        await dee.send(m.RevealSummon(word="volcano", nonce=nonce.hex()))
        await dee.expect_error("reveal_mismatch")
        await dee.send(m.RevealSummon(word=word, nonce="11" * 32))
        await dee.expect_error("reveal_mismatch")
        # The right nonce with a newline after it (bytes.fromhex would read the same bytes) is
        # refused as it is decoded, and opens nothing.
        await dee.send({"type": "reveal_summon", "word": word, "nonce": nonce.hex() + "\n"})
        await dee.expect_error("invalid_message")
        view = await ann.wait_view(lambda v: v.phase == "reveal")
        assert all(p.summon is None for p in view.players)
        for c in table:
            await c.reveal()
        view = await ann.wait_view(lambda v: v.phase == "review")
        assert [p.summon for p in view.players] == ["volcano", "volcano", "volcano", "glacier"]
        assert view.players[3].compared == "glacier" and view.players[3].valid is True


async def test_wrong_password_bad_token_unknown_room(server):
    async with open_client(server.url, "Ann") as ann, open_client(server.url, "Eve") as eve:
        code = await ann.create(password="sesame")
        await eve.send(m.JoinRoom(room=code, name="Eve", password="open"))
        await eve.expect_error("wrong_password")
        await eve.send(m.JoinRoom(room=code, name="Eve"))
        await eve.expect_error("password_required")  # not "wrong": none was given
        await eve.send(m.Watch(room=code))
        await eve.expect_error("password_required")
        await eve.send(m.Watch(room=code, password="open"))
        await eve.expect_error("wrong_password")
        await eve.send(m.ResumeSeat(room=code, token="A" * 43))
        await eve.expect_error("bad_token")
        other = "ZZZZ" if code != "ZZZZ" else "YYYY"
        await eve.send(m.JoinRoom(room=other, name="Eve"))
        await eve.expect_error("unknown_room")
        await eve.send(m.WriteSpell(word="rocket"))
        await eve.expect_error("not_in_room")
        seated = await eve.join(code.lower(), password="sesame")  # codes are case-insensitive
        assert seated.room == code and seated.seat == 1
        # Ann's token is hers alone; Eve's token opens only Eve's seat.
        assert eve.token != ann.token and len(eve.token) >= 43  # 256 bits, URL-safe
        v = await ann.wait_view(lambda v: len(v.players) == 2)
        assert ann.token not in msgspec.json.encode(v).decode()


MALFORMED: list[tuple[str | bytes, str]] = [
    ("not json at all", "malformed"),
    ("{", "malformed"),
    ('{"type": "chat", "text": "hi"', "malformed"),
    ("[]", "invalid_message"),
    ("null", "invalid_message"),
    ("42", "invalid_message"),
    ('{"text": "no type"}', "invalid_message"),
    ('{"type": "fly"}', "invalid_message"),
    ('{"type": "write_spell"}', "invalid_message"),
    ('{"type": "write_spell", "word": 5}', "invalid_message"),
    ('{"type": "write_spell", "word": "' + "x" * 201 + '"}', "invalid_message"),
    ('{"type": "chat", "text": ""}', "invalid_message"),
    ('{"type": "chat", "text": "hi", "extra": 1}', "invalid_message"),
    ('{"type": "choose_card", "card": -1}', "invalid_message"),
    ('{"type": "choose_card", "card": 1e300}', "invalid_message"),
    ('{"type": "join_room", "room": "AB", "name": "x"}', "invalid_message"),
    ('{"type": "chat", "text": "a\\u0000b"}', "invalid_message"),  # names: see test_names.py
    ('{"type": "chat", "text": "' + "\\u0301" * 300 + '"}', "invalid_message"),  # no letter
    ('{"type": "chat", "text": "Z' + "\\u0336" * 23 + '"}', "invalid_message"),  # "Zalgo"
    ('{"type": "vote", "proposal": 0, "yes": true, "reason": "\\u202e"}', "invalid_message"),
    ('{"type": "vote", "proposal": 0, "yes": "yes"}', "invalid_message"),
    ('{"type": "mark_boards", "boards": [0,1,2,3,4,5,6,7,0]}', "invalid_message"),
    ("[" * 3000 + "]" * 3000, "invalid_message"),
    (b'{"type": "chat", "text": "binary"}', "binary_frame"),
    ('{"type": "hello", "protocol": 1}', "already_greeted"),
]


async def test_malformed_frames_get_errors_and_the_connection_stays(server):
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as (ann, bob, cy):
        for frame, code in MALFORMED:
            await bob.send(frame)
            err = await bob.expect_error(code)
            assert err.message
        # Still usable: a chat goes through to everyone, nothing changed in the room.
        await bob.send(m.SendChat(text="still here"))
        chat = await ann.recv_until(lambda x: isinstance(x, m.Chat))
        assert chat == m.Chat(name="Bob", text="still here", seat=1)
        assert bob.closed is None
        assert not any(isinstance(x, m.Error) for x in ann.received + cy.received)


async def test_oversized_frame_closes_only_that_connection(server):
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as (ann, bob, cy):
        await bob.send('{"type": "chat", "text": "' + "x" * MAX_FRAME_BYTES + '"}')
        code, _ = await bob.wait_closed()
        assert code == 1009
        v = await ann.wait_view(lambda v: not v.players[1].connected)
        assert v.players[0].connected and v.players[2].connected
        await cy.send(m.SendChat(text="we carry on"))
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "we carry on")


async def test_flood_closes_only_that_connection(start_server):
    server = await start_server(rate=20, burst=40)
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as (ann, bob, cy):
        for _ in range(120):
            try:
                await bob.send(m.SendChat(text="spam"))
            except Exception:
                break
        code, reason = await bob.wait_closed()
        assert code == 1008 and "too many messages" in (reason or "")
        bye = [x for x in bob.received if isinstance(x, m.Bye)]
        assert bye and "too many messages" in bye[-1].reason
        await ann.wait_view(lambda v: not v.players[1].connected)
        await cy.send(m.SendChat(text="calm"))
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "calm")
        assert ann.closed is None and cy.closed is None


async def test_protocol_version_mismatch_is_refused_then_closed(server):
    async with open_client(server.url, "Old", hello=False) as old:
        err = await old.hello(protocol=99)
        assert isinstance(err, m.Error) and err.code == "protocol_version"
        code, _ = await old.wait_closed()
        assert code == 1008


async def test_hello_comes_first(server):
    async with open_client(server.url, "Rude", hello=False) as rude:
        await rude.send(m.CreateRoom(name="Rude"))
        await rude.expect_error("hello_required")
        assert isinstance(await rude.hello(), m.Welcome)
        code = await rude.create()
        assert len(code) == 4 and not set(code) & set("ILOUV")


async def test_raw_connection_cannot_crash_the_server(server):
    """Abrupt disconnects mid-handshake and mid-game leave the server serving."""
    for _ in range(3):
        stream = await trio.open_tcp_stream("127.0.0.1", server.port)
        await stream.send_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        await stream.aclose()
    async with wire.open_websocket(server.url) as ws:
        await ws.send_message('{"type": "hello", "protocol": 1}')
    async with open_table(server.url, ["Ann", "Bob", "Cy"], RoomSettings()) as table:
        await start_game(table)
        assert table[0].view.phase == "choose"


async def test_names_and_chat_that_could_drive_a_terminal_are_refused(server):
    """Names, card texts and chat reach other people's terminals: no control or bidi characters."""
    async with open_client(server.url, "Ann") as ann:
        for name in ("\x1b[31mAnn", "Ann\u202e", "\x9b31mAnn", "Ann\u200b"):
            await ann.send(m.CreateRoom(name=name))
            err = await ann.expect_error("bad_name")
            assert "Names cannot hold U+" in err.message and "not shown" in err.message
        await ann.create()
        # The messages refuse to be built with such text, so send them as the JSON a rogue
        # client would.
        await ann.send({"type": "chat", "text": "hi \x1b]0;pwned\x07"})
        err = await ann.expect_error("invalid_message")
        assert "U+001B ESCAPE, a control character" in err.message
        bad_card = {"text": "\x1b]0;x\x07Animal", "stars": 1}
        await ann.send({"type": "change_settings", "settings": {"custom_cards": [bad_card]}})
        err = await ann.expect_error("invalid_message")
        assert err.message.startswith("Custom card 1's text holds U+001B ESCAPE")


async def test_a_summoning_word_with_spaces_around_it_is_not_revealed(server):
    """A client committed 150 wide spaces and a word: revealed, it was published as it was,
    a line of 340 columns on everyone's board (the 40-character rule counts the word trimmed)."""
    async with open_table(server.url, NAMES, deck()) as table:
        ann, bob, _, _ = table
        await to_the_summon(table)
        padded = "\u3000" * 150 + "rocket" + " " * 40
        for c in table:
            await c.wait_view(lambda v: v.phase == "commit")
            await c.commit(padded if c is bob else "volcano")
        await bob.wait_view(lambda v: v.phase == "reveal")
        await bob.reveal()
        error = await bob.expect_error("bad_word")
        assert "without spaces before or after" in error.message
        view = await ann.wait_view(lambda v: v.phase == "reveal")
        assert view.players[1].summon is None  # nothing of it was shown


async def test_spell_words_stacked_with_marks_are_refused_at_the_door(server):
    """An attacker's run: a spell word with 30 marks on its first letter was on every board."""
    async with open_table(server.url, NAMES, deck()) as table:
        ann = table[0]
        await start_game(table)
        await ann.choose(0)
        await ann.wait_view(lambda v: v.turn == ann.seat and v.phase == "spell")
        await ann.spell("a" + "\u0301\u0302\u0303\u0300\u0308" * 6 + "b")
        error = await ann.expect_error("bad_word")
        assert "combining marks" in error.message
        await ann.spell("lava")  # the turn is still hers
        view = await ann.wait_view(lambda v: v.players[0].spell is not None)
        assert view.players[0].spell == "lava"
