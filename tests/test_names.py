"""Names people can tell apart, and the one rule for characters that are not shown.

Unit tests of protocol.text and protocol.names, then the same rules through a real server:
invisible names get ``bad_name``, look-alikes ``name_taken`` naming the original, chat and vote
reasons with formatting characters ``invalid_message``, and emoji chat is delivered.
"""

from __future__ import annotations

import json
import unicodedata

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from wsclient import open_client, open_table, start_game

from conjure.client.session import Session
from conjure.client.statefile import StateDir
from conjure.protocol import messages as m
from conjure.protocol.deck import DeckError, parse_deck
from conjure.protocol.errors import Refusal
from conjure.protocol.names import (
    MAX_NAME_LENGTH,
    NO_VISIBLE,
    BadName,
    enforce_name,
    look_alike,
    name_key,
    name_problem,
)
from conjure.protocol.text import (
    DEFAULT_IGNORABLE_RANGES,
    EMOJI_SHAPERS,
    describe,
    escape_unshown,
    first_unshown,
    has_visible,
    unshown_problem,
)
from conjure.protocol.words import validate_written
from conjure.server import lobby as lobby_module
from conjure.server.lobby import Lobby

# ---------------------------------------------------------------------------- protocol.text

#: One of each kind of unshown character: controls, formats, separators, private use,
#: unassigned, and every Default_Ignorable range's ends.
UNSHOWN = [
    "\x00",
    "\x1b",
    "\x7f",
    "\x85",
    "\x9b",
    "\u2028",
    "\u2029",
    "\ue000",
    "\U000f0000",
    "\u0378",  # unassigned
    "\u0600",  # ARABIC NUMBER SIGN (Cf)
    *sorted({chr(c) for lo, hi in DEFAULT_IGNORABLE_RANGES for c in (lo, hi)}),
]

SHOWN = ["a", "é", "e\u0301", "李", "Ж", "😀", "❤", " ", "\u00a0", "\u3000", "\u2800", "ﷺ"]


@pytest.mark.parametrize("ch", UNSHOWN, ids=lambda ch: f"U+{ord(ch):04X}")
def test_every_unshown_kind_is_found(ch: str) -> None:
    assert first_unshown(f"ab{ch}cd") == ch
    assert first_unshown(f"ab{ch}cd", emoji=True) == (None if ch in EMOJI_SHAPERS else ch)
    assert not has_visible(ch)


@pytest.mark.parametrize("text", SHOWN)
def test_ordinary_text_is_shown(text: str) -> None:
    assert first_unshown(text) is None
    assert first_unshown(f"x {text} y") is None


def test_emoji_mode_keeps_only_the_emoji_shapers() -> None:
    for text in ("❤️ nice", "👨\u200d👩\u200d👧", "☺\ufe0e"):
        assert first_unshown(text) is not None
        assert first_unshown(text, emoji=True) is None
    for ch in ("\u061c", "\u202e", "\u200b", "\u200c", "\u00ad", "\U000e0041"):
        assert first_unshown(f"❤️{ch}", emoji=True) == ch


@pytest.mark.parametrize(
    "text", ["", "   ", "\u3000", "\u2800", "\u2800 \u2800", "\u0301\u0301", "\u3164", "\u200d"]
)
def test_blank_text_has_nothing_visible(text: str) -> None:
    assert not has_visible(text)


@pytest.mark.parametrize("text", ["a", " a ", "😀", "李", "\u2800x", "e\u0301"])
def test_visible_text(text: str) -> None:
    assert has_visible(text)


def test_characters_are_named_for_people() -> None:
    assert describe("\u061c") == "U+061C ARABIC LETTER MARK"
    assert describe("\x1b") == "U+001B ESCAPE"
    assert describe("\x7f") == "U+007F DELETE"
    assert describe("\x85") == "U+0085"  # C1 controls have no name in unicodedata
    assert describe("\U000e0041") == "U+E0041 TAG LATIN CAPITAL LETTER A"
    assert unshown_problem("hi\u061c", "Chat text") == (
        "Chat text holds U+061C ARABIC LETTER MARK, a formatting character that is not shown"
    )
    assert unshown_problem("fine", "Chat text") is None


def test_escaping_keeps_json_valid_and_newlines_when_asked() -> None:
    text = "Bob\x1b[31m\u202e\U000e0041\n"
    escaped = escape_unshown(text, keep="\n")
    assert escaped == "Bob\\u001b[31m\\u202e\\udb40\\udc41\n"
    assert json.loads(json.dumps("x")[:-1] + escaped.strip() + '"') == "x" + text.strip()
    assert escape_unshown("plain ❤ text") == "plain ❤ text"


@given(
    st.text(st.sampled_from("ab\n\t\x1b\x7f\u202e\u061c\u00e9\U000e0041 ]\\^-")),
    st.text(st.sampled_from("\n\t]\\^-a"), max_size=3),
)
def test_escaping_escapes_every_unshown_character_but_the_kept_ones(text: str, keep: str) -> None:
    """Cutting a report at its newlines first is only quicker: each character is escaped
    exactly when it is unshown and not kept, whatever the kept characters are."""
    each = "".join(ch if ch in keep else escape_unshown(ch) for ch in text)
    assert escape_unshown(text, keep=keep) == each


def test_words_use_the_same_rule() -> None:
    assert "U+00AD SOFT HYPHEN" in (validate_written("rock\u00adet") or "")
    assert "U+200D ZERO WIDTH JOINER" in (validate_written("rock\u200det") or "")
    assert validate_written("\u0301\u0301") == "The word is empty: write at least one letter."
    assert validate_written("Zoë") is None


def test_deck_files_use_the_same_rule() -> None:
    raw = '[[card]]\ntext = "Vehicle"\nstars = 1\n[[card]]\ntext = "Ani\u202emal"\nstars = 2\n'
    with pytest.raises(DeckError, match=r"card 2's text holds U[+]202E RIGHT-TO-LEFT OVERRIDE"):
        parse_deck(raw, "my.toml")


def test_messages_refuse_unshown_text_on_decode_and_construction() -> None:
    bad = b'{"type": "chat", "text": "hi \\u061c"}'
    with pytest.raises(msgspec.ValidationError, match=r"U[+]061C ARABIC LETTER MARK"):
        m.client_decoder.decode(bad)
    with pytest.raises(ValueError, match=r"U[+]200B ZERO WIDTH SPACE"):
        m.CastVote(proposal=0, yes=True, reason="ok\u200b")
    assert m.client_decoder.decode('{"type": "chat", "text": "❤️ nice"}') == m.SendChat(
        text="❤️ nice"
    )
    # Names are only length-checked on decode: the server answers bad_name itself.
    assert m.client_decoder.decode('{"type": "create_room", "name": "\\u3164"}').name == "\u3164"


# ---------------------------------------------------------------------------- protocol.names

INVISIBLE_NAMES = [
    "\u3164",
    "\u00ad",
    "\u2800",
    "\u0301\u0301",
    "\u115f",
    "\u1160\u1160",
    "\uffa0",
    "\u200b",
    "\ufeff",
    "\u034f",
    "\U000e0041",
    " ",
    "\u3000",
    "\u2800 \u2800",
    "\U0001d159",
]


@pytest.mark.parametrize("name", INVISIBLE_NAMES, ids=lambda n: repr(n))
def test_invisible_names_are_refused(name: str) -> None:
    with pytest.raises(BadName):
        enforce_name(name)
    assert name_problem(name) is not None


def test_refusals_say_what_was_wrong() -> None:
    assert name_problem("\u2800") == NO_VISIBLE
    assert name_problem("\u0301\u0301") == NO_VISIBLE
    assert name_problem("Ann\u00ad") == (
        "Names cannot hold U+00AD SOFT HYPHEN, a formatting character that is not shown."
    )
    assert name_problem("\u3164") == (
        "Names cannot hold U+3164 HANGUL FILLER, a character that is not shown."
    )
    assert "U+2800 BRAILLE PATTERN BLANK" in (name_problem("Ann\u2800Lee") or "")
    assert "U+0301 COMBINING ACUTE ACCENT, a combining mark" in (name_problem("\u0301Ann") or "")
    assert "U+1100" in (name_problem("\u1100") or "")  # PRECIS: old Hangul jamo
    assert "U+FE0F VARIATION SELECTOR-16" in (name_problem("❤️") or "")  # emoji in chat only
    assert f"at most {MAX_NAME_LENGTH} characters" in (name_problem("ﷺﷺ") or "")  # NFKC grows


@pytest.mark.parametrize(
    ("name", "stored"),
    [
        ("José", "José"),
        ("Zoë", "Zoë"),
        ("Zoe\u0308", "Zoë"),  # composed
        ("李雷", "李雷"),
        ("Анна", "Анна"),
        ("Аnn", "Аnn"),  # mixed scripts alone are fine: only a look-alike of someone is not
        ("Ann 2", "Ann 2"),
        ("  Ann \u3000 Lee ", "Ann Lee"),
        ("Ａｎｎ", "Ann"),
        ("😀", "😀"),
        ("👍🏽", "👍🏽"),
        ("🇫🇷", "🇫🇷"),
        ("ﷺ", unicodedata.normalize("NFKC", "ﷺ")),
    ],
)
def test_ordinary_names_of_many_scripts(name: str, stored: str) -> None:
    assert enforce_name(name) == stored


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Аnn", "Ann"),
        ("rn", "m"),
        ("0", "O"),
        ("l", "I"),
        ("1", "l"),
        ("Ann", "  ANN "),
        ("Ｍ", "M"),
        ("Bоb", "Bob"),
        ("Zoë", "Zoe\u0308"),
    ],
)
def test_look_alikes_share_a_key(a: str, b: str) -> None:
    assert name_key(a) == name_key(b)
    assert look_alike(a, ["Cy", b]) == b


@pytest.mark.parametrize(("a", "b"), [("Ann", "Anne"), ("Ann", "Ann 2"), ("Анна", "Ann")])
def test_different_names_have_different_keys(a: str, b: str) -> None:
    assert name_key(a) != name_key(b)
    assert look_alike(a, [b]) is None


def test_lobby_refuses_look_alikes_naming_the_original() -> None:
    lobby = Lobby()
    lobby.join("Ann")
    with pytest.raises(Refusal) as caught:
        lobby.join("Аnn")
    assert caught.value.code == "name_taken"
    assert caught.value.message == "Аnn looks like Ann, who is already here."
    with pytest.raises(Refusal) as caught:
        lobby.join("Ann\u00ad")
    assert caught.value.code == "bad_name"
    seat, _ = lobby.join("  Zoe\u0308 ")
    assert [s.name for s in lobby.seats] == ["Ann", "Zoë"]
    assert seat.name == "Zoë"


def test_the_client_checks_a_typed_name_and_chat_before_sending(tmp_path) -> None:
    sent: list[m.ClientMsg] = []
    s = Session(server="ws://127.0.0.1:9", store=StateDir(tmp_path), send=sent.append, room="ABCD")
    s.connected = True
    assert not s.submit("Ann\u00ad")
    assert s.status is not None and "U+00AD SOFT HYPHEN" in s.status[1]
    assert sent == []
    assert s.submit("Ann")
    assert sent == [m.JoinRoom(room="ABCD", name="Ann")]
    s.joined = True
    me = m.PlayerView(seat=0, id="p0", name="Ann", colour="red", connected=True, you=True)
    s.on_message(m.Update(view=m.View(room="ABCD", you=0, host=0, players=[me])))
    assert not s.submit("/say hi \u202e")
    assert s.status is not None and "U+202E RIGHT-TO-LEFT OVERRIDE" in s.status[1]
    assert s.submit("/say ❤️ nice")
    assert sent[-1] == m.SendChat(text="❤️ nice")


# ---------------------------------------------------------------------------- a real server


async def test_invisible_names_get_bad_name(server) -> None:
    async with open_client(server.url, "Ann") as ann, open_client(server.url, "Bob") as bob:
        for name in ("\u3164", "\u00ad", "\u2800", "\u0301\u0301"):
            await ann.send({"type": "create_room", "name": name})
            err = await ann.expect_error("bad_name")
            assert err.ref == "create_room"
        code = await ann.create()
        for name in ("\u3164", "\u00ad", "\u2800", "\u0301\u0301"):
            await bob.send({"type": "join_room", "room": code, "name": name})
            await bob.expect_error("bad_name")
        assert [s.name for s in server.rooms[code].lobby.seats] == ["Ann"]


async def test_look_alike_names_are_refused_and_the_room_is_unchanged(server) -> None:
    async with open_client(server.url, "Ann") as ann, open_client(server.url, "Bob") as bob:
        code = await ann.create()
        await bob.send(m.JoinRoom(room=code, name="Аnn"))
        err = await bob.expect_error("name_taken")
        assert err.message == "Аnn looks like Ann, who is already here."
        await bob.send(m.JoinRoom(room=code, name="Ann\u00ad"))
        err = await bob.expect_error("bad_name")
        assert "U+00AD SOFT HYPHEN" in err.message
        await bob.send(m.JoinRoom(room=code, name="  ANN "))
        await bob.expect_error("name_taken")
        await bob.join(code)
        v = await ann.wait_view(lambda v: len(v.players) == 2)
        assert [p.name for p in v.players] == ["Ann", "Bob"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Strauß", "Strauss"),  # ß case folds to ss
        ("Σίσυφος", "Σίσυφοσ"),  # the final sigma case folds to σ
        ("ᏣᎳᎩ", "ꮳꮃꭹ"),  # Cherokee capitals and their small letters
    ],
)
async def test_names_the_rules_take_for_one_are_refused_at_the_door(server, first, second):
    """The rules engine refuses a game whose players' names are one name once case folded; the
    lobby seated such a pair, and the room's every start then failed after the deal opened."""
    assert look_alike(second, ["Bob", first]) == first
    async with open_table(server.url, [first, "Bob", "Cy"]) as table:
        (code,) = server.rooms
        async with open_client(server.url, second) as late:
            await late.send(m.JoinRoom(room=code, name=second))
            err = await late.expect_error("name_taken")
            assert err.message == f"{second} looks like {first}, who is already here."
        assert [s.name for s in server.rooms[code].lobby.seats] == [first, "Bob", "Cy"]
        await start_game(table)


async def test_a_start_the_engine_would_refuse_is_refused_before_the_deal_opens(
    server, monkeypatch
) -> None:
    """Should the lobby's checks ever let in what the engine refuses (here: the look-alike check
    switched off), the host's start is refused at once and nobody is told of a deal."""
    monkeypatch.setattr(lobby_module, "look_alike", lambda name, others: None)
    async with open_table(server.url, ["Strauß", "Bob", "Strauss"]) as table:
        (code,) = server.rooms
        await table[0].send(m.StartGame())
        err = await table[0].expect_error("name_taken")
        assert err.message == "Every player needs a different name."
        await table[1].send(m.SendChat(text="still here"))
        for c in table:
            await c.recv_until(lambda x: isinstance(x, m.Chat))
            assert not any(isinstance(x, m.DealOpen) for x in c.received)
            assert c.view is not None and c.view.phase == "lobby"
            told = [
                line for x in c.received if isinstance(x, m.Update | m.Patch) for line in x.feed
            ]
            assert not any("Dealing" in line for line in told), told
        assert server.rooms[code].lobby is not None


async def test_chat_with_formatting_characters_reaches_nobody(server) -> None:
    async with open_client(server.url, "Ann") as ann, open_client(server.url, "Bob") as bob:
        code = await ann.create()
        await bob.join(code)
        await ann.wait_view(lambda v: len(v.players) == 2)
        for bad in ("hi \u061c there", "\u202eereht ih"):
            await ann.send({"type": "chat", "text": bad})
            err = await ann.expect_error("invalid_message")
            assert err.ref == "chat"
            assert "a formatting character that is not shown" in err.message
        await ann.send(m.SendChat(text="❤️ nice"))
        chat = await bob.recv_until(lambda x: isinstance(x, m.Chat))
        assert chat == m.Chat(name="Ann", text="❤️ nice", seat=0)


async def test_vote_reason_with_a_zero_width_space_is_refused(server) -> None:
    async with open_client(server.url, "Ann") as ann:
        await ann.create()
        await ann.send({"type": "vote", "proposal": 0, "yes": True, "reason": "ok\u200b"})
        err = await ann.expect_error("invalid_message")
        assert "The vote reason holds U+200B ZERO WIDTH SPACE" in err.message


def test_stacked_combining_marks_are_refused_in_names_and_chat_but_real_writing_passes() -> None:
    """An attacker's run: "Z" with 23 strokes through it and 300 accents on nothing were a name
    and a chat line; screens draw such stacks over the lines around them."""
    from conjure.protocol.messages import chat_problem
    from conjure.protocol.names import name_problem

    for stacked in ("Z" + "\u0336" * 23, "a" + "\u0489" * 23, "e" + "\u0301" * 6):
        assert (
            name_problem(stacked) == "The name stacks more than 4 combining marks on one character."
        )
        assert (
            chat_problem(stacked) == "Chat text stacks more than 4 combining marks on one character"
        )
    assert chat_problem("\u0301" * 300) == "Chat text shows nothing: write at least one letter"
    for real in ("Nguyễn", "Tiếng Việt", "שָׁלוֹם", "क्षत्रिय", "Zoë"):
        assert name_problem(real) is None and chat_problem(real) is None


@pytest.mark.parametrize(
    ("message", "says"),
    [
        ({"type": "vote", "proposal": 0, "yes": True, "reason": "ok" + "\u0301" * 150},
         "The vote reason stacks more than 4 combining marks"),
        ({"type": "vote", "proposal": 0, "yes": False, "reason": "\u2800\u2800"},
         "The vote reason shows nothing"),
        ({"type": "create_room", "name": "Ann",
          "settings": {"deck": "custom", "custom_cards": [{"text": "Z" + "\u0336" * 50, "stars": 1}]}},
         "Custom card 1's text stacks more than 4 combining marks"),
        ({"type": "create_room", "name": "Ann",
          "settings": {"deck": "custom", "custom_cards": [{"text": "\u2800", "stars": 1}]}},
         "Custom card 1's text shows nothing"),
    ],
)  # fmt: skip
def test_vote_reasons_and_card_texts_are_shown_lines_as_chat_is(message, says) -> None:
    """Found by review: a card of "Z" and 50 strokes was dealt, a reason of 150 accents reached
    every feed, and a card of one braille blank was accepted, where chat refused each."""
    with pytest.raises(msgspec.ValidationError, match=says):
        m.client_decoder.decode(json.dumps(message))
    assert m.reason_problem("") is None  # a vote needs no reason


def test_a_zero_width_joiner_between_marks_does_not_end_the_stack() -> None:
    """An attacker's run: chat keeps U+200D for emoji, and 'a' + (4 accents + ZWJ) x 30 put
    120 marks on one letter past the limit."""
    from conjure.protocol.messages import chat_problem

    assert chat_problem("a" + "\u0301\u0302\u0303\u0304\u200d" * 30) is not None
    assert chat_problem("👩\u200d👩\u200d👧") is None  # a family: joined emoji, no marks
    assert chat_problem("❤\ufe0f") is None


def test_words_are_refused_padded_with_blank_lookalikes_or_stacked_marks() -> None:
    """An attacker's run: spell and summoning words with 30 marks on a letter, and revealed
    words padded with braille blanks (which str.strip keeps), reached every board."""
    from conjure.protocol.words import shape_problem

    stacked = "r" + "\u0301\u0302\u0303\u0300\u0308\u030a\u030b\u030c\u0327\u0328" * 3 + "ocket"
    for summon in (False, True):
        assert shape_problem(stacked, summon=summon) == (
            "The word stacks more than 4 combining marks on one character."
        )
        for padded in ("\u2800" * 20 + "rocket", "rocket" + "\u2800" * 30):
            assert "looks like a blank" in (shape_problem(padded, summon=summon) or "")
        assert shape_problem("café", summon=summon) is None
        assert shape_problem("cafe\u0301", summon=summon) is None  # a decomposed é ends it
    assert shape_problem(" rocket ", summon=False) is None  # the rules trim a spell word
    assert shape_problem(" rocket ", summon=True) is not None  # a summon is shown as revealed
