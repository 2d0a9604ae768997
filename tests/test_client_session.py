"""The client's pure logic: prompts per phase, input parsing, local checks, secrets and receipts."""

from __future__ import annotations

import json
import os
import stat

import msgspec
import pytest

from conjure.client import screen
from conjure.client.session import Session, SetupForm, parse_card, parse_limits
from conjure.client.statefile import StateDir
from conjure.protocol.commitment import check_reveal
from conjure.protocol.messages import (
    CardView,
    CastVote,
    ChallengeWord,
    Chat,
    ChooseCard,
    CommitSummon,
    CreateRoom,
    EarlierChat,
    Error,
    JoinRoom,
    MarkBoards,
    PlayerView,
    PointView,
    ProposalView,
    ProposeSame,
    Receipt,
    ResultView,
    ResumeSeat,
    RevealSummon,
    ReviewDone,
    RoomSettings,
    Seated,
    SeatOrder,
    SendChat,
    StartGame,
    Update,
    View,
    Watch,
    Watching,
    WriteSpell,
)
from conjure.protocol.wording import join_command

URL = "ws://127.0.0.1:9"
NAMES = ["Ann", "Bob", "Cat", "Dan"]
COLOURS = ["red", "blue", "green", "yellow"]


def players(you: int | None = 0, **per_seat) -> list[PlayerView]:
    out = []
    for i, name in enumerate(NAMES):
        fields = dict(
            seat=i,
            id=f"p{i}",
            name=name,
            colour=COLOURS[i],
            connected=True,
            you=i == you,
            host=i == 0,
        )
        fields.update(per_seat.get(name, {}))
        out.append(PlayerView(**fields))
    return out


def view(phase: str, *, you: int | None = 0, conjurer: int = 0, variant="standard", **kw) -> View:
    base = dict(
        room="ABCD",
        game_id="g1",
        phase=phase,
        you=you,
        host=0,
        settings=RoomSettings(variant=variant),
        players=players(you),
        round=1,
        rounds=4,
        conjurer=conjurer,
        cards=[
            CardView(index=i, text=t, stars=i % 3 + 1)
            for i, t in enumerate(["Vehicle", "Animal", "Food", "Tool"])
        ],
        card=CardView(index=0, text="Vehicle", stars=1),
        remaining=42.0,
    )
    base.update(kw)
    return View(**base)


class Harness:
    def __init__(self, tmp_path, **kw) -> None:
        self.store = StateDir(tmp_path / "state")
        self.sent: list = []
        self.session = Session(
            server=URL,
            store=self.store,
            send=self.sent.append,
            name=kw.pop("name", "Ann"),
            room=kw.pop("room", "ABCD"),
            **kw,
        )
        self.session.connected = True
        self.session.joined = True

    def show(self, v: View, feed=(), receipt=None) -> None:
        self.session.on_message(Update(view=v, feed=list(feed), receipt=receipt))


@pytest.fixture
def h(tmp_path):
    return Harness(tmp_path)


def spells(**words) -> dict:
    return {n: {"spell": w} for n, w in words.items()}


# ------------------------------------------------------------------ prompts


def test_prompts_follow_the_phases(h):
    s = h.session
    h.show(view("lobby"))
    assert s.prompt().startswith("Lobby: s=start") and s.wants_keys()
    h.show(view("choose"))
    assert s.prompt() == "Choose a category (1-4): "
    h.show(view("choose", conjurer=1))
    assert s.prompt() == "Waiting for Bob to choose a category › "
    h.show(view("spell", turn=0))
    assert s.prompt() == "Your spell word: "
    h.show(view("spell", turn=1))
    assert "Waiting for Bob's spell word" in s.prompt()
    v = view(
        "mark",
        players=players(0, **spells(Ann="FREIGHTER", Bob="HYDROGEN", Cat="ROCKET", Dan="MOON")),
    )
    h.show(v)
    assert s.prompt() == "Toggle boards 1-4, Enter to confirm (2-4 crystals): "
    assert s.wants_keys()
    h.show(view("commit"))
    assert s.prompt() == "Your summoning word: "
    h.show(view("reveal", players=players(0, Bob={"committed": True})))
    assert "Waiting for Bob to reveal" in s.prompt()
    h.show(view("review"))
    assert s.prompt() == "Review: c=challenge s=same d=done: "  # nothing to vote on yet
    h.show(view("over", winners=[0]))
    assert s.prompt().startswith("Game over") and "Enter send" not in s.key_help()


def test_dark_magic_prompts(tmp_path):
    h = Harness(tmp_path)
    s = h.session
    h.show(view("dark-commit", variant="dark-magic"))
    assert s.prompt() == "Your secret summoning word: "
    h.show(
        view(
            "mark",
            variant="dark-magic",
            players=players(0, **spells(Bob="SEA", Cat="FIN", Dan="SALT")),
        )
    )
    assert s.prompt() == "Toggle boards 2-4, Enter to confirm (0-3 crystals): "  # 3 boards
    h.show(view("commit", variant="dark-magic"))
    assert "Waiting for Bob, Cat and Dan to lock in" in s.prompt()
    h2 = Harness(tmp_path / "b", name="Bob")
    h2.show(view("dark-commit", variant="dark-magic", you=1))
    assert h2.session.prompt() == "Waiting for Ann to write a secret summoning word › "


def test_spectator_sees_what_the_table_waits_for(tmp_path):
    h = Harness(tmp_path, spectator=True, name=None)
    h.show(view("spell", you=None, turn=2))
    assert h.session.prompt() == "watching: waiting for Cat's spell word › "
    assert not h.session.wants_keys()


# ------------------------------------------------------------------ input


def test_choose_card_by_number(h):
    h.show(
        view(
            "choose",
            cards=[
                CardView(index=0, text="A", stars=1, used=True),
                CardView(index=1, text="B", stars=2),
                CardView(index=2, text="C", stars=3),
            ],
        )
    )
    assert h.session.prompt() == "Choose a category (1-2): "
    assert h.session.submit("3") is True and h.sent == []  # refused, and the line let go
    assert "1-2" in h.session.status[1]
    assert h.session.submit("2")
    assert h.sent == [ChooseCard(card=2)]


def test_spell_word_validated_locally(h):
    h.show(view("spell", turn=0))
    assert not h.session.submit("x" * 41)
    assert h.sent == []
    assert h.session.submit("  rocket ")
    assert h.sent == [WriteSpell(word="rocket")]


def test_text_typed_out_of_turn_stays_on_the_line_and_nothing_is_sent(h):
    """Seen at 80x24: 'Waiting for Cleo's spell word ladle' read as one sentence, and the
    refusal still named Cleo once the table waited for Ada. The prompt now ends with a mark,
    Enter is not offered as sending anything, and the refusal stays true while the wait goes on."""
    s = h.session
    h.show(view("spell", turn=1))
    assert s.prompt().endswith(" › ") and "Enter send" not in s.key_help()
    assert s.submit("rocket") is False  # the line keeps it
    assert h.sent == []
    said = s.status
    assert said is not None and "nothing was sent" in said[1] and "Bob" not in said[1]
    h.show(view("spell", turn=2))  # the wait goes on, for someone else now
    assert s.settle_input("rocket") is None and s.status == said
    h.show(view("spell", turn=0))  # a question of this player's own: the key is offered
    assert "Enter send" in s.key_help()


def test_a_spectator_typing_is_told_that_spectators_do_not_play(tmp_path):
    h = Harness(tmp_path, spectator=True, name=None)
    h.show(view("spell", turn=1, you=None))
    assert h.session.submit("rocket") is True  # let go of: the next text was added to it
    assert h.session.status is not None and "watching" in h.session.status[1]
    assert h.sent == []


def test_mark_toggling_limits_standard(h):
    s = h.session
    h.show(view("mark", players=players(0, **spells(Ann="A", Bob="B", Cat="C", Dan="D"))))
    s.key("2")
    s.key("enter")
    assert h.sent == [] and "at least 2" in s.status[1]
    for k in "1345":
        s.key(k)
    assert s.marks == {0, 1, 2, 3}
    assert "There is no board 5" in s.status[1]
    s.key("1")
    s.key("enter")
    assert h.sent == [MarkBoards(boards=[1, 2, 3])]


def test_mark_at_most_four(tmp_path):
    h = Harness(tmp_path)
    names = ["Ann", "Bob", "Cat", "Dan"]
    h.show(view("mark", players=players(0, **spells(**{n: n.upper() for n in names}))))
    s = h.session
    s.marks = {0, 1, 2, 3}
    s.marks.add(1)
    # Five boards cannot happen with four players; check the crystal count guard directly.
    s.marks = {0, 1, 2}
    s.key("4")
    assert len(s.marks) == 4


def test_a_full_lobby_says_it_is_full(tmp_path):
    h = Harness(tmp_path)
    four = players(0)
    more = [
        PlayerView(seat=i, id=f"p{i}", name=f"Guest{i}", colour=COLOURS[i % len(COLOURS)])
        for i in range(len(four), 8)
    ]
    h.show(view("lobby", round=0, players=[*four, *more]))
    assert "Lobby: 8 players seated (full: 8 can play)" in screen.plain(screen.panel(h.session))


def test_a_dark_magic_lobby_says_what_the_variant_changes_to_everyone(tmp_path):
    """Found by a newcomer: a player who had played before joined a Dark Magic room, and the
    lobby said only "variant: Dark Magic" (what it changes was for first-timers alone)."""
    h = Harness(tmp_path)
    h.session.first_time = False  # played before
    h.show(view("lobby", round=0, settings=RoomSettings(variant="dark-magic")))
    text = " ".join(screen.plain(screen.panel(h.session, 80)).split())
    assert "This room plays Dark Magic: the conjurer writes the secret summoning word first" in text
    h.show(view("lobby", round=0))
    assert "Dark Magic" not in screen.plain(screen.panel(h.session, 80))


def test_a_player_whose_word_was_never_revealed_is_told_what_it_costs(tmp_path):
    """Found by a newcomer: back in the review after the words were opened without theirs,
    a player saw a ✗ on their board and nothing of the -3."""
    h = Harness(tmp_path)
    gone = {"committed": True, "revealed": False, "valid": False}
    h.show(view("review", players=players(0, Ann=gone, Bob={"summon": "rocket", "valid": True})))
    text = " ".join(screen.plain(screen.panel(h.session, 80)).split())
    assert "Your summoning word was never revealed" in text and "-3" in text
    h.show(view("review", players=players(0, Bob={"summon": "rocket", "valid": True})))
    assert "never revealed" not in screen.plain(screen.panel(h.session, 80))


def test_mark_dark_magic_allows_zero_and_a_typed_line(tmp_path):
    h = Harness(tmp_path)
    h.show(
        view(
            "mark",
            variant="dark-magic",
            players=players(0, **spells(Bob="SEA", Cat="FIN", Dan="SALT")),
        )
    )
    h.session.key("enter")  # a stray Enter gave the clue away at once (a newcomer): asked
    assert h.sent == [] and h.session.status == (
        "warn",
        "No crystal placed: Enter again places none; a board's number toggles one.",
    )
    h.session.key("enter")
    assert h.sent == [MarkBoards(boards=[])]
    h.sent.clear()
    h.show(
        view(
            "mark",
            variant="dark-magic",
            round=2,
            players=players(0, **spells(Bob="SEA", Cat="FIN", Dan="SALT")),
        )
    )
    assert h.session.submit("1 2") is False  # board 1 has no spell word
    assert h.sent == []
    assert h.session.submit("2 4")
    assert h.sent == [MarkBoards(boards=[1, 3])]


def test_local_word_warning_then_confirm(h):
    s = h.session
    v = view("commit", players=players(0, **spells(Ann="FREIGHTER", Bob="HYDROGEN", Cat="ROCKET")))
    h.show(v)
    assert s.submit("rocket ship") is True  # the word leaves the input line: a y/n question
    assert s.status[0] == "warn"
    assert "contains 'ROCKET' (Cat's spell word): it would be invalid, -3" in s.status[1]
    assert s.prompt().startswith("Lock in 'rocket ship' anyway? y = yes, n = change it")
    assert s.wants_keys() and h.sent == []
    s.key("x")  # neither yes nor no: nothing happens but a hint
    assert h.sent == [] and "Press y" in s.status[1]
    s.key("y")
    assert isinstance(h.sent[-1], CommitSummon)
    assert s.my_word() == "rocket ship"


def test_local_word_warning_can_be_changed(h):
    s = h.session
    h.show(view("commit", players=players(0, **spells(Bob="DOG"))))
    assert s.submit("dogfish") is True
    assert "hidden inside" in s.status[1]
    s.key("n")  # the word comes back to the input line, to be changed
    assert s.settle_input("") == "dogfish" and not s.wants_keys()
    assert s.submit("spaceship") is True
    assert len(h.sent) == 1


def test_a_word_of_spell_words_joined_is_warned_as_invalid(h):
    """C1 (rules version 3): 'Dog' and 'Fish' cannot summon 'Dogfish'; with only 'dog'
    written, 'dogfish' is a hint (above)."""
    s = h.session
    h.show(view("commit", players=players(0, **spells(Bob="DOG", Cat="fish"))))
    assert s.submit("Dogfish") is True
    assert s.status == (
        "warn",
        "Your word is the spell words 'DOG' and 'fish' joined: it would be invalid, -3.",
    )


def test_a_summoning_word_no_dictionary_knows_is_asked_about_with_what_it_may_mean(h):
    """Seen at 80x24: 'peny' (for penny) was locked in without a word, then shown with the
    valid word's tick, and matched nobody. A word of letters the game does not know is asked
    about first, with the known words spelled nearly so; a phrase is not judged."""
    s = h.session
    h.show(view("commit", players=players(0, **spells(Bob="coin", Cat="wallet", Dan="bank"))))
    assert s.submit("peny") is True
    assert s.status == (
        "warn",
        "'peny' is not a noun this game knows: did you mean penny, pony or peony?",
    )
    assert s.prompt().startswith("Lock in 'peny' anyway? y = yes, n = change it")
    assert h.sent == []
    s.key("n")  # back in the input line, to be put right
    assert s.settle_input("") == "peny"
    assert s.submit("penny") is True and isinstance(h.sent[-1], CommitSummon)  # no question
    h.sent.clear()
    assert s.submit("Pikachu") is True  # nothing close: still asked, and it can be kept
    assert s.status is not None and "(a typo?)" in s.status[1]
    s.key("y")
    assert isinstance(h.sent[-1], CommitSummon) and s.my_word() == "Pikachu"
    h.sent.clear()
    assert s.submit("space ship") is True and isinstance(h.sent[-1], CommitSummon)
    h.sent.clear()
    # Seen: "Épée" was asked about as no noun, while "epee" went without a word
    assert s.submit("Épée") is True and h.sent == []
    assert s.status == (
        "warn",
        "'Épée' is a noun this game knows without its accents ('epee'): only a word with the "
        "same accents matches it.",
    )


def test_the_dark_magic_conjurers_secret_word_is_asked_about_too_when_no_dictionary_knows_it(h):
    """A typo in the Dark Magic conjurer's secret word is the costliest of all: it is written
    before any spell word, and every board is played towards a thing nobody can match."""
    s = h.session
    h.show(view("dark-commit", variant="dark-magic"))
    assert s.submit("elefant") is True and h.sent == []
    assert s.status == ("warn", "'elefant' is not a noun this game knows: did you mean elephant?")
    assert s.prompt() == "Lock in 'elefant' anyway? y = yes, n = change it: " and s.wants_keys()
    s.key("n")
    assert s.settle_input("") == "elefant" and not s.wants_keys()
    assert s.submit("elephant") is True and isinstance(h.sent[-1], CommitSummon)


def test_a_spell_word_no_dictionary_knows_is_asked_about_before_the_table_sees_it(h):
    """Seen at 80x24: 'ancher' (for anchor) went on the board as everyone's clue."""
    s = h.session
    h.show(view("spell", turn=0))
    assert s.submit("ancher") is True and h.sent == []
    assert s.status is not None and "did you mean anchor, archer or rancher?" in s.status[1]
    assert s.prompt() == "Write 'ancher' anyway? y = yes, n = change it: " and s.wants_keys()
    assert "y write it" in s.key_help()
    s.key("n")
    assert s.settle_input("") == "ancher"
    assert s.submit("anchor") is True and h.sent == [WriteSpell(word="anchor")]
    h.sent.clear()
    assert s.submit("Pikachu") is True and h.sent == []
    s.key("y")
    assert h.sent == [WriteSpell(word="Pikachu")]
    h.sent.clear()
    assert s.submit("ancher") is True
    h.show(view("spell", turn=1))  # the turn went on (the clock): the question is over
    assert not s.wants_keys() and not s.prompt().startswith("Write")
    s.key("y")
    assert h.sent == []


def test_commitment_is_saved_before_it_is_sent(tmp_path):
    store = StateDir(tmp_path / "st")
    seen = []

    def send(msg):
        if isinstance(msg, CommitSummon):
            saved = store.load_summons("g1", 1, 0)
            assert saved and saved[0]["commitment"] == msg.commitment
            seen.append(saved[0])

    s = Session(server=URL, store=store, send=send, name="Ann", room="ABCD")
    s.connected = s.joined = True
    s.on_message(Update(view=view("commit")))
    assert s.submit("spaceship")
    assert seen and seen[0]["word"] == "spaceship"
    assert check_reveal(seen[0]["commitment"], "g1", 1, 0, seen[0]["nonce"], "spaceship")
    mode = stat.S_IMODE(os.stat(store.secrets_path).st_mode)
    assert mode == 0o600
    assert "Locked in 'spaceship'" in s.prompt() or s.prompt().startswith("Your summoning")


def test_reveal_happens_when_asked_even_after_restart(tmp_path):
    h = Harness(tmp_path)
    h.show(view("commit"))
    h.session.submit("spaceship")
    commit = h.sent[-1]
    # A new client process: same state dir, nothing in memory.
    h2 = Harness(tmp_path)
    me_committed = players(0, Ann={"committed": True})
    h2.show(view("commit", players=me_committed))
    assert "Locked in 'spaceship'" in h2.session.prompt()
    assert h2.sent == []
    h2.show(view("reveal", players=me_committed))
    reveal = h2.sent[-1]
    assert isinstance(reveal, RevealSummon) and reveal.word == "spaceship"
    assert check_reveal(commit.commitment, "g1", 1, 0, reveal.nonce, reveal.word)
    h2.show(view("reveal", players=me_committed))  # no second reveal for the same view
    assert len(h2.sent) == 1


def test_reveal_mismatch_falls_back_to_an_older_commitment(h):
    h.show(view("commit"))
    h.session.submit("comet")
    h.session.submit("meteor")  # replaced, but suppose that commitment was lost in transit
    committed = players(0, Ann={"committed": True})
    h.sent.clear()
    h.show(view("reveal", players=committed))
    assert h.sent[-1].word == "meteor"
    h.session.on_message(Error(code="reveal_mismatch", message="no", ref="reveal_summon"))
    assert h.sent[-1].word == "comet"


def test_dark_magic_conjurer_commits_without_word_check(tmp_path):
    h = Harness(tmp_path)
    h.show(view("dark-commit", variant="dark-magic"))
    assert h.session.submit("ocean")
    assert isinstance(h.sent[-1], CommitSummon)
    assert h.store.load_summons("g1", 1, 0)[0]["word"] == "ocean"


def test_review_flows(tmp_path):
    now = [0.0]
    h = Harness(tmp_path, clock=lambda: now[0])
    s = h.session
    published = players(
        0,
        Ann={"summon": "spaceship", "valid": True},
        Bob={"summon": "rocket", "valid": True},
        Cat={"summon": "space ship", "valid": True},
    )
    h.show(view("review", players=published))
    for k in "c3":
        s.key(k)
    assert s.prompt().startswith("Rule for 'space ship': 1-4")
    menu = screen.plain(screen.panel(s, 80))
    assert "Challenge Cat's 'space ship': which rule?" in menu
    assert "2 it must be a thing without adjectives or describing words" in menu
    assert "3 it must fit the category (Vehicle)" in menu
    s.key("2")
    assert h.sent[-1] == ChallengeWord(seat=2, rule="no-adjectives")
    for k in "s13":
        s.key(k)
    assert h.sent[-1] == ProposeSame(a=0, b=2)
    s.key("s")
    s.key("1")
    s.key("1")
    assert "another player's" in s.status[1]
    s.key("escape")
    assert s.sub == ()
    s.key("v")
    assert "no open proposal" in s.status[1]
    prop = ProposalView(
        id=0, kind="same", by=1, seats=[0, 2], words=["spaceship", "space ship"], voters=[1, 3, 0]
    )
    h.show(view("review", players=published, proposals=[prop]))
    now[0] += 5  # a while later: the refused key's burst is over
    s.key("v")
    assert s.prompt().startswith("Proposal 1: y=yes n=no")
    s.key("y")
    assert not s.wants_keys()
    assert s.submit("same thing, one word")
    assert h.sent[-1] == CastVote(proposal=0, yes=True, reason="same thing, one word")
    s.key("d")
    assert h.sent[-1] == ReviewDone()


def test_the_review_shows_the_words_that_already_count_as_one(h):
    """ "space ship" and "spaceship" already match: the panel says so, so nobody proposes them."""
    published = players(
        0,
        Ann={"summon": "spaceship", "valid": True},
        Bob={"summon": "rocket", "valid": True},
        Cat={"summon": "space ship", "valid": True},
        Dan={"summon": "Spaceships", "valid": True},
    )
    h.show(view("review", players=published))
    assert "Counted as one" not in screen.plain(screen.panel(h.session, 80))
    h.show(view("review", players=published, counted_as_one=[[0, 2, 3]]))
    panel = " ".join(screen.plain(screen.panel(h.session, 80)).split())
    assert "Counted as one: Ann 'spaceship', Cat 'space ship', Dan 'Spaceships'" in panel
    assert panel.index("Counted as one") < panel.index("No challenges or proposals yet")


def test_the_legend_explains_the_review_marks_on_the_board(h):
    """Found by review: ✓ was in the legend, ✗ and ⚑ (shown beside it) were not."""
    from conjure.client.screen import board_rows

    published = players(
        0,
        Ann={"summon": "cupcake", "valid": True, "flags": ["'cake' is hidden inside 'cupcake'"]},
        Bob={"summon": "rocket", "valid": False, "invalid_reason": "it holds a spell word"},
    )
    h.show(view("review", players=published))
    legend = " ".join(" ".join(p[1] for row in board_rows(h.session, 80)[-2:] for p in row.line)
                      .split())  # fmt: skip
    assert "✓ valid word" in legend and "✗ invalid: -3" in legend and "⚑ worth a look" in legend
    assert all(len(p[1]) <= 80 for row in board_rows(h.session, 80) for p in row.line)


def test_review_commands_as_a_typed_line(h):
    published = players(0, Bob={"summon": "rocket", "valid": True})
    h.show(view("review", players=published))
    assert h.session.submit("c 2 1")
    assert h.sent[-1] == ChallengeWord(seat=1, rule="noun")
    prop = ProposalView(
        id=0, kind="challenge", by=1, seats=[1], words=["rocket"], rule="noun", voters=[0, 2, 3]
    )
    h.show(view("review", players=published, proposals=[prop]))
    assert h.session.submit("v n not convinced")
    assert h.sent[-1] == CastVote(proposal=0, yes=False, reason="not convinced")


def test_review_keys_as_the_help_writes_them_with_spaces(tmp_path):
    """A newcomer typed the help's 'c 2 1' key by key, spaces too: the space was "'' is not a
    board number". And a stray key where y or n is asked did nothing and said nothing."""
    now = [0.0]
    h = Harness(tmp_path, clock=lambda: now[0])
    s = h.session
    published = players(0, Bob={"summon": "rocket", "valid": True})
    h.show(view("review", players=published))
    for k in "c 2 1":
        s.key(k)
    assert h.sent[-1] == ChallengeWord(seat=1, rule="noun")
    prop = ProposalView(
        id=0, kind="challenge", by=1, seats=[1], words=["rocket"], rule="noun", voters=[0, 2, 3]
    )
    h.show(view("review", players=published, proposals=[prop]))
    s.key("v")
    s.key(" ")
    s.key("x")
    assert s.status is not None and "y for yes, n for no" in s.status[1]
    now[0] += 5  # a while later: the refused key's burst is over
    s.key("n")
    assert s.submit("not convinced")
    assert h.sent[-1] == CastVote(proposal=0, yes=False, reason="not convinced")


def test_slash_commands(h):
    h.show(view("spell", turn=1))
    assert h.session.submit("/say hello there")
    assert h.sent[-1] == SendChat(text="hello there")
    assert h.session.submit("/pause")
    assert h.session.submit("/bogus") and "Unknown command /bogus" in h.session.status[1]
    h.show(view("lobby"))
    h.session.key("s")
    h.session.key("y")
    assert h.sent[-1] == StartGame()


def test_a_newcomers_lobby_says_how_the_rooms_variant_goes(tmp_path):
    """The lobby's first-time lines tell the standard order; a Dark Magic room adds its own."""
    from conjure.client.screen import lobby_rows

    def lobby_text(variant: str) -> str:
        h = Harness(tmp_path / variant)
        h.show(view("lobby", variant=variant))
        assert h.session.first_time
        return " ".join(
            " ".join(p[1] for row in lobby_rows(h.session, 80) for p in row.line).split()
        )

    standard, dark = lobby_text("standard"), lobby_text("dark-magic")
    assert "New here?" in standard and "Dark Magic" not in standard
    assert "New here?" in dark
    assert "Dark Magic: the conjurer writes the secret summoning word first" in dark


@pytest.mark.parametrize("width", [80, 60, 44])
def test_the_share_line_copied_from_a_narrow_terminal_runs_as_one_command(h, width):
    """Wrapped, its lines end in a shell's continuation: copied as the terminal shows it, the
    shell reads one command (its first line alone made a room of its own)."""
    import shlex

    from conjure.client.screen import lobby_rows

    h.show(view("lobby"))
    lines = ["".join(p[1] for p in row.line) for row in lobby_rows(h.session, width)]
    start = next(i for i, line in enumerate(lines) if line.startswith("  share: "))
    shown = [lines[start].removeprefix("  share: ")]
    while shown[-1].endswith(" \\"):
        shown.append(lines[start + len(shown)])
    assert all(len(line) <= width for line in lines[start : start + len(shown)])
    if width < 60:
        assert len(shown) > 1
    copied = "\n".join(shown)
    as_the_shell_reads_it = copied.replace("\\\n", "")  # a backslash-newline joins the lines
    assert shlex.split(as_the_shell_reads_it) == shlex.split(join_command(URL, room="ABCD"))


def test_host_reseats_the_lobby_with_order(h):
    h.show(view("lobby"))
    assert h.session.submit("/order 2 1 4 3")
    assert h.sent[-1] == SeatOrder(order=[1, 0, 3, 2])
    assert not h.session.submit("/order 1 1 2 3")  # every board exactly once
    assert not h.session.submit("/order 1 2")
    h.show(view("spell", turn=1))
    assert not h.session.submit("/order 2 1 3 4")  # only before the start


def test_lobby_start_needs_three_players(h):
    h.show(view("lobby", players=players(0)[:2]))
    h.session.key("s")
    assert "at least 3" in h.session.status[1]


def test_disconnected_input_is_kept(h):
    h.show(view("spell", turn=0))
    h.session.on_disconnected("connection refused", 2.0)
    assert h.session.submit("rocket") is False
    assert h.sent == []
    assert "reconnecting in 2 s" in h.session.banner_text()


# ------------------------------------------------------------------ joining


def test_join_then_resume_with_saved_token(tmp_path):
    store = StateDir(tmp_path)
    s = Session(server=URL, store=store, send=lambda m: None, name="Ann", room="abcd")
    assert s.on_connected() == [JoinRoom(room="ABCD", name="Ann")]
    s.on_message(Seated(room="ABCD", seat=2, player_id="p2", token="t" * 20))
    assert s.on_connected() == [ResumeSeat(room="ABCD", token="t" * 20)]
    again = Session(server=URL, store=store, send=lambda m: None, name="ann", room="ABCD")
    assert again.on_connected() == [ResumeSeat(room="ABCD", token="t" * 20)]
    other = Session(server=URL, store=store, send=lambda m: None, name="Zed", room="ABCD")
    assert other.on_connected() == [JoinRoom(room="ABCD", name="Zed")]


def test_a_seat_is_taken_back_from_the_same_server_at_another_port(tmp_path):
    """Found by a newcomer: the host's server came back on another port, and a friend who came
    back by its new address was told the game "has started without you". A seat saved for the
    room on the same host at another port is tried (never one of another host), and saved
    under the new address once it is taken."""
    store = StateDir(tmp_path)
    store.save_seat(
        "ws://127.0.0.1:43969", "ZCFE", seat=4, player_id="p4", token="a" * 20, name="Bob"
    )
    store.save_seat(
        "ws://10.0.0.9:8765", "QQQQ", seat=1, player_id="p1", token="b" * 20, name="Bob"
    )
    moved = Session(server="ws://127.0.0.1:45111", store=store, send=lambda m: None, room="zcfe")
    assert moved.on_connected() == [ResumeSeat(room="ZCFE", token="a" * 20)]
    moved.on_message(Seated(room="ZCFE", seat=4, player_id="p4", token="a" * 20))
    assert store.load_seat("ws://127.0.0.1:45111", "ZCFE")["seat"] == 4  # type: ignore[index]
    for url, room in (("ws://127.0.0.2:8765", "ZCFE"), ("wss://127.0.0.1:8765", "ZCFE"),
                      ("ws://127.0.0.1:8765", "QQQQ")):  # fmt: skip
        other = Session(server=url, store=store, send=lambda m: None, name="Bob", room=room)
        assert other.on_connected() == [JoinRoom(room=room, name="Bob")]


def test_a_full_room_is_tried_again_with_enter_and_can_be_watched(tmp_path):
    """Found by a newcomer: "The room is full (8 players)." asked for the room's code again,
    which cannot help, and said nothing of watching."""
    sent = []
    s = Session(server=URL, store=StateDir(tmp_path), send=sent.append, name="Ann", room="ABCD")
    assert s.on_connected() == [JoinRoom(room="ABCD", name="Ann")]
    s.on_message(Error(code="room_full", message="The room is full (8 players)."))
    assert s.join_field == "again"
    assert s.prompt() == "Enter tries again, w watches instead, Ctrl-Q quits: "
    assert s.watch_instead is not None and "--room ABCD" in s.watch_instead  # said on quitting
    s.submit("")
    assert sent[-1] == JoinRoom(room="ABCD", name="Ann")
    s.on_message(Error(code="room_full", message="The room is full (8 players)."))
    assert s.status == ("error", "Tried again: the room is full (8 players).")  # (seen: as if
    # Enter had done nothing, the screen the same)
    s.submit("w")  # watching meanwhile, on the same connection
    assert sent[-1] == Watch(room="ABCD") and s.spectator and s.join_field is None
    s.on_message(Watching(room="ABCD"))
    assert s.joined and s.watch_instead is None


def test_failed_resume_joins_anew(tmp_path):
    store = StateDir(tmp_path)
    store.save_seat(URL, "ABCD", seat=1, player_id="p", token="x" * 20, name="Ann")
    sent = []
    s = Session(server=URL, store=store, send=sent.append, name="Ann", room="ABCD")
    assert s.on_connected() == [ResumeSeat(room="ABCD", token="x" * 20)]
    s.on_message(Error(code="bad_token", message="That token does not match a seat."))
    assert sent == [JoinRoom(room="ABCD", name="Ann")]
    assert store.load_seat(URL, "ABCD") is None


def test_name_taken_asks_for_another_name(tmp_path):
    sent = []
    s = Session(server=URL, store=StateDir(tmp_path), send=sent.append, name="Ann", room="ABCD")
    s.on_connected()
    s.on_message(Error(code="name_taken", message="Someone in this room is already called 'Ann'."))
    assert "already called" in s.status[1]
    assert s.prompt().startswith("Another name")
    assert s.on_connected() == []  # no loop of refused joins
    assert s.submit("Annie")
    assert sent == [JoinRoom(room="ABCD", name="Annie")]


def test_create_with_settings_form(tmp_path):
    sent = []
    s = Session(server=URL, store=StateDir(tmp_path), send=sent.append, name="Ann", create=True)
    assert s.on_connected() == []  # the form comes first
    for answer in [
        "2",
        "spell=30 review=off",
        "2",
        "Famous bridge **",
        "Sea creature 3",
        "",
        "n",
        "",
    ]:
        assert s.submit(answer), (answer, s.status)
    msg = sent[-1]
    assert isinstance(msg, CreateRoom)
    st = msg.settings
    assert st.variant == "dark-magic" and st.deck == "default+custom" and not st.spectators
    assert st.limits.spell == 30 and st.limits.review is None and st.limits.choose == 90
    assert [(c.text, c.stars) for c in st.custom_cards] == [
        ("Famous bridge", 2),
        ("Sea creature", 3),
    ]


def test_settings_form_loads_a_deck_file(tmp_path):
    deck = tmp_path / "deck.toml"
    deck.write_text('[[card]]\ntext = "Planet"\nstars = 2\n[[card]]\ntext = "Tree"\nstars = 1\n')
    form = SetupForm()
    for answer in ["", "", "3", f"@{deck}"]:
        assert form.answer(answer) is None
    assert form.answer("") is not None  # only your own: at least 3
    assert form.answer("Bird *") is None
    assert form.answer("") is None
    assert form.step == "spectators"
    assert [c.text for c in form.settings.custom_cards] == ["Planet", "Tree", "Bird"]
    assert form.notice is None
    form.step = "cards"
    refused = form.answer("@/nonexistent/deck.toml")
    assert refused is not None and "cannot read" in refused
    assert form.answer(f"@{deck}") is None
    assert (
        form.notice == "Added 0 categories from the file (2 already there or over the 200 allowed)."
    )


def test_a_category_given_no_stars_or_typed_twice_is_said_so(tmp_path):
    """A review: 'Tree' became a one-star category, and a second 'tree' was dropped, in
    silence."""
    form = SetupForm(step="cards")
    assert form.answer("Famous bridge **") is None and form.notice is None
    assert form.answer("Tree") is None
    assert (
        form.notice
        == "'Tree' is worth ★ (1 star); type 'Tree **' or 'Tree 2' to make it worth more."
    )
    assert form.answer("tree 2") is None
    assert form.notice == "'tree' is one of your categories already."
    assert [(c.text, c.stars) for c in form.settings.custom_cards] == [
        ("Famous bridge", 2),
        ("Tree", 1),
    ]
    full = SetupForm(step="cards")
    for i in range(200):
        assert full.answer(f"Category {i} 2") is None
    assert full.answer("One more") is None and len(full.cards) == 200
    assert full.notice == "'One more' is not added: a room takes at most 200 categories."
    s = Session(server=URL, store=StateDir(tmp_path), send=lambda m: None, name="Ann", create=True)
    s.form = SetupForm(step="cards")
    assert s.submit("Tree")
    assert s.status == (
        "info",
        "'Tree' is worth ★ (1 star); type 'Tree **' or 'Tree 2' to make it worth more.",
    )


def test_parsers():
    assert parse_card("Famous bridge ***").stars == 3
    assert parse_card("Sea creature ★★").stars == 2
    # the rulebook's own sign, with or without an emoji's variation selector (seen: a 1-star
    # card named "Board game ⭐⭐")
    assert (parse_card("Board game ⭐⭐").text, parse_card("Board game ⭐⭐").stars) == (
        "Board game",
        2,
    )
    assert parse_card("Board game \u2b50\ufe0f\u2b50\ufe0f\u2b50\ufe0f").stars == 3
    assert parse_card("Sea creature 1").text == "Sea creature"
    assert parse_card("Tree").stars == 1
    with pytest.raises(ValueError):
        parse_card("Tree 5")
    limits = parse_limits("off")
    assert all(v is None for v in msgspec.structs.asdict(limits).values())
    limits = parse_limits("10 20 off")
    assert (limits.choose, limits.spell, limits.mark, limits.commit) == (10, 20, None, 120)
    # One number is every phase's, as "off" is (a newcomer's "30" meant 30 s each).
    assert set(msgspec.structs.asdict(parse_limits("30")).values()) == {30}
    assert set(msgspec.structs.asdict(parse_limits("45s")).values()) == {45}
    with pytest.raises(ValueError):
        parse_limits("2")
    with pytest.raises(ValueError):
        parse_limits("foo=3")


# ------------------------------------------------------------------ receipts, countdown, screen


def test_receipts_are_kept_per_game(h, tmp_path):
    h.show(view("spell", turn=1), receipt=Receipt(5, "a" * 64))
    h.show(view("spell", turn=2), receipt=Receipt(7, "b" * 64))
    h.show(view("spell", turn=2), receipt=Receipt(6, "c" * 64))  # never goes backwards
    path = h.store.receipt_path("g1")
    data = json.loads(path.read_text())
    assert (data["seq"], data["hash"], data["server"], data["room"]) == (7, "b" * 64, URL, "ABCD")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert h.store.receipt_path("../evil").parent == h.store.path / "receipts"


def test_countdown_uses_remaining_and_the_local_clock(tmp_path):
    now = [100.0]
    store = StateDir(tmp_path)
    s = Session(
        server=URL,
        store=store,
        send=lambda m: None,
        name="Ann",
        room="ABCD",
        clock=lambda: now[0],
        wall=lambda: 5000.0,
    )
    s.on_message(Update(view=view("spell", turn=1, remaining=30.0, deadline=99999.0)))
    now[0] += 12
    assert s.remaining() == pytest.approx(18.0)
    assert "0:18" in screen.plain(screen.header(s))
    s.on_message(Update(view=view("spell", turn=1, remaining=None, deadline=5010.0)))
    assert s.remaining() == pytest.approx(10.0)


def test_screen_shows_boards_results_and_standings(h):
    ps = players(
        0,
        Ann={
            "spell": "FREIGHTER",
            "marked": True,
            "summon": "spaceship",
            "valid": True,
            "score": 3,
        },
        Bob={
            "spell": "HYDROGEN",
            "marked": True,
            "summon": "hydrogen bomb",
            "valid": False,
            "invalid_reason": "'hydrogen bomb' contains the written word 'HYDROGEN'",
            "connected": False,
        },
        Cat={
            "spell": "ROCKET",
            "summon": "spaceship",
            "valid": True,
            "flags": ["'ROCKET' is hidden inside 'rocketship'"],
        },
    )
    h.show(view("review", players=ps))
    text = screen.plain(screen.boards(h.session, 80))
    assert "▶1 Ann ✦ ♛" in text
    assert "FREIGHTER" in text and "◆" in text and "spaceship ✓" in text
    assert "hydrogen bomb ✗ invalid" in text and "away" in text
    assert "⚑ 'ROCKET' is hidden inside" in text
    result = ResultView(
        round=1,
        conjurer=0,
        card=CardView(index=0, text="Vehicle", stars=1),
        case="conjured",
        points={0: 1, 1: -3, 2: 1},
        words={0: "spaceship", 1: "hydrogen bomb", 2: "spaceship"},
        reasons={
            0: [PointView(points=1, why="1 player(s) matched your word (Cat)", rule="P2a")],
            1: [PointView(points=-3, why="invalid word: contains HYDROGEN", rule="P5")],
            2: [PointView(points=1, why="matched the conjurer Ann (1 star(s))", rule="P2b")],
        },
    )
    h.show(view("over", players=ps, results=[result], winners=[0]))
    text = screen.plain(screen.panel(h.session, 80))
    assert "Final standings" in text and "Ann wins!" in text
    assert "Cat matched the conjurer Ann" in text
    assert "Bob  -3  'hydrogen bomb': invalid word: contains HYDROGEN" in text


def test_no_color_style_has_no_colours(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    style = screen.make_style()
    for _, rule in style.style_rules:
        assert "fg:" not in rule and "bg:" not in rule and "#" not in rule


def test_command_line(tmp_path, monkeypatch):
    from conjure.client import app, cli

    monkeypatch.setenv("CONJURE_STATE_DIR", str(tmp_path))
    argv = [
        "play",
        "ws://127.0.0.1:1",
        "--name",
        "Ann",
        "--create",
        "--variant",
        "dark-magic",
        "--limits",
        "off",
        "--no-spectators",
        "--max-spectators",
        "5",
        "--house-rule",
        "pairs-per-star",
        "--quick",
    ]
    o = app.options_from_args(cli.parse(*cli.build_parsers(cli._available(), "play"), "play", argv))
    assert o.create and not o.ask_settings and o.state_dir == str(tmp_path)
    assert o.settings.variant == "dark-magic" and not o.settings.spectators
    assert o.settings.max_spectators == 5
    assert o.settings.house_rules == ["pairs-per-star"]
    assert o.settings.limits.choose is None
    watch = cli.build_parsers(cli._available(), "watch")
    o = app.options_from_args(
        cli.parse(*watch, "watch", ["watch", "ws://h:1", "--room", "abcd"]), spectator=True
    )
    assert o.spectator and o.room == "abcd"
    assert cli.main(["play", "ws://127.0.0.1:1", "--room", "ABC"]) == 2
    assert cli.main(["play", "http://x", "--room", "ABCD"]) == 2
    assert cli.main(["play", "ws://127.0.0.1:1"]) == 2


def test_name_is_asked_when_missing(tmp_path):
    sent = []
    s = Session(server=URL, store=StateDir(tmp_path), send=sent.append, room="ABCD")
    assert s.on_connected() == []
    assert s.prompt() == "Your name: "
    assert not s.submit("x" * 30)
    assert s.submit("Ann")
    assert sent == [JoinRoom(room="ABCD", name="Ann")]


def test_back_with_an_empty_screen_the_table_talk_so_far_is_shown_once(tmp_path):
    """A terminal closed and opened again: the first view's ``earlier`` lines go into the feed,
    under a line that says what they are; a client that kept its own feed (a reconnection in
    the same run) does not get them twice."""
    h = Harness(tmp_path)
    s = h.session
    earlier = ["Ann chose the category 'Vehicle' (1 star).", "Ann's turn to write a spell word."]
    own = ["Ann is away.", "Ann is back."]  # her own comings and goings: no news to her
    s.on_message(
        Update(view=view("spell", turn=0), feed=["Bob is back."], earlier=[*own, *earlier])
    )
    texts = [f.text for f in s.feed]
    assert texts[-4:] == ["earlier in room ABCD:", *earlier, "Bob is back."]
    s.on_message(Update(view=view("spell", turn=0), feed=[], earlier=earlier))  # reconnected
    assert [f.text for f in s.feed] == texts
    other = Harness(tmp_path / "other", name="Annie").session  # her seat is "Ann" all the same
    other.on_message(Update(view=view("spell", turn=0), feed=[], earlier=own))
    assert [f.text for f in other.feed] == []  # nothing left to tell: no heading either


def test_back_with_an_empty_screen_the_chat_so_far_is_shown_among_the_table_talk(tmp_path):
    """The first view's ``earlier_chat`` goes into the feed as chat, each line after the
    table talk said before it, under the one heading; chat alone gets the heading too."""
    s = Harness(tmp_path).session
    earlier = ["Bob joined.", "Ann chose the category 'Vehicle' (1 star).", "Bob is away."]
    chat = [
        EarlierChat(name="Bob", text="hi all", seat=1, after=1),
        EarlierChat(name="Cy", text="brb", seat=2, after=3),
        EarlierChat(name="Ann", text="ready?", seat=0, after=1),
    ]
    s.on_message(Update(view=view("spell", turn=0), feed=[], earlier=earlier, earlier_chat=chat))
    told = [(f.text, f.kind) for f in s.feed]
    assert told[-7:] == [
        ("earlier in room ABCD:", "me"),
        ("Bob joined.", "event"),
        ("Bob: hi all", "chat"),
        ("Ann: ready?", "chat"),  # said after the same line as Bob's, and after it
        ("Ann chose the category 'Vehicle' (1 star).", "event"),
        ("Bob is away.", "event"),
        ("Cy: brb", "chat"),
    ]
    other = Harness(tmp_path / "other").session
    other.on_message(Update(view=view("lobby"), feed=[], earlier_chat=chat[:1]))
    assert [(f.text, f.kind) for f in other.feed][-2:] == [
        ("earlier in room ABCD:", "me"),
        ("Bob: hi all", "chat"),
    ]


def test_the_earlier_lines_say_when_older_ones_were_not_kept_and_leave_out_your_own_room(
    tmp_path,
):
    """The server keeps the newest 40 lines: a full list says so in its heading. Your own
    creation of the room is no news (make play creates it before your client comes in), and a
    list longer than any server keeps is cut to what one keeps, at once (a hostile server's
    120,000 chat lines took the client a second)."""
    s = Harness(tmp_path).session  # seat 0 is Ann's
    full = [f"Guest{i} joined." for i in range(40)]
    s.on_message(Update(view=view("lobby"), feed=[], earlier=["Ann created room ABCD.", *full]))
    texts = [f.text for f in s.feed]
    assert "earlier in room ABCD (the newest 40 lines):" in texts
    assert "Ann created room ABCD." not in texts
    other = Harness(tmp_path / "other").session
    flood = [EarlierChat(name="Bob", text=f"{i}", seat=1, after=-i) for i in range(120_000)]
    other.on_message(
        Update(view=view("lobby"), feed=[], earlier=["Bob joined."], earlier_chat=flood)
    )
    chat = [f.text for f in other.feed if f.kind == "chat"]
    assert sorted(chat) == sorted(f"Bob: {i}" for i in range(120_000 - 40, 120_000))


def test_back_with_the_feed_kept_the_lines_said_meanwhile_are_added(tmp_path):
    """Found by a newcomer: a friend whose client kept its feed through a server restart was
    never told "Hal resumed the game" (the room's earlier lines were shown only to a client
    with an empty screen). What came after the last line it was told is added, once."""
    s = Harness(tmp_path).session  # seat 0 is Ann's
    s.on_message(Update(view=view("spell"), feed=["Bob wrote the spell word 'sea'."]))
    s.on_message(Update(view=view("spell"), feed=[], earlier=["Bob wrote the spell word 'sea'."]))
    before = [f.text for f in s.feed]
    s.on_message(Chat(name="Bob", text="brb", seat=1))
    meanwhile = ["Hal paused the game.", "The server restarted.", "Ann is back.", "Hal resumed."]
    s.on_message(
        Update(
            view=view("spell"),
            feed=[],
            earlier=["Ann joined.", "Bob wrote the spell word 'sea'.", *meanwhile],
            earlier_chat=[
                EarlierChat(name="Bob", text="brb", seat=1, after=2),  # heard before it went
                EarlierChat(name="Cat", text="back soon?", seat=2, after=4),
            ],
        )
    )
    added = [f.text for f in s.feed][len(before) + 1 :]
    assert added == [
        "while you were away:",
        "Hal paused the game.",
        "The server restarted.",
        "Cat: back soon?",
        "Hal resumed.",
    ]  # not "Ann is back.": one's own, and not Bob's "brb" again
    lost = Harness(tmp_path / "lost").session
    lost.on_message(Update(view=view("spell"), feed=["A line the room no longer keeps."]))
    lost.on_message(Update(view=view("spell"), feed=[], earlier=["Hal resumed."]))
    assert "while you were away:" not in [f.text for f in lost.feed]  # nothing to place it after


def test_back_in_a_game_the_feed_does_not_say_twice_that_you_are_back(tmp_path):
    """Seen after make play resumed a game: "back at board 1 in room ..." and then "Ann is
    back.", the room's line about the same return."""
    s = Harness(tmp_path).session
    s.joined, s.joined_once, s.joining = False, False, "resume"
    s.on_message(Seated(room="ABCD", seat=0, player_id="p0", token="t" * 43))
    s.on_message(Update(view=view("spell", turn=1), feed=["Ann is back.", "Bob is back."]))
    texts = [f.text for f in s.feed]
    assert "back at board 1 in room ABCD" in texts and "Bob is back." in texts
    assert "Ann is back." not in texts


def test_a_word_with_a_symbol_is_asked_about_for_it_matches_only_itself(h):
    """A newcomer's '🚀' and 'fièvre🤒' went on the board with no question: 'rocket🚀' is not
    'rocket' to the rules, so it matches only the same text, symbol and all."""
    s = h.session
    h.show(view("spell", turn=0))
    assert s.submit("🚀") is True and h.sent == []
    assert s.status == ("warn", "'🚀' has no letters: it matches only the very same text.")
    s.key("n")
    assert s.settle_input("") == "🚀"
    h.show(view("commit"))
    assert s.submit("rocket🚀") is True and h.sent == []
    assert s.status is not None and "holds a symbol (🚀)" in s.status[1]
    s.key("y")
    assert isinstance(h.sent[-1], CommitSummon) and s.my_word() == "rocket🚀"


@pytest.mark.parametrize("typed", ["line", "keys"])
def test_the_helps_v_1_y_votes_when_proposal_1_is_the_only_one(tmp_path, typed):
    """Found by review: with one open proposal, ``v`` goes straight to its y/n question, and
    the help's own example ``v 1 y`` had its ``1`` refused as a stray key (key by key, the
    refusal's pause then dropped the ``y``; as a typed line the whole was refused)."""
    now = [0.0]
    h = Harness(tmp_path, clock=lambda: now[0])
    s = h.session
    published = players(0, Bob={"summon": "rocket", "valid": True})
    prop = ProposalView(
        id=0, kind="challenge", by=1, seats=[1], words=["rocket"], rule="noun", voters=[0, 2, 3]
    )
    h.show(view("review", players=published, proposals=[prop]))
    if typed == "line":
        assert s.submit("v 1 y good")
        assert h.sent[-1] == CastVote(proposal=0, yes=True, reason="good")
    else:
        for k in "v 1 y":  # at typing speed: the clock does not move
            s.key(k)
        assert s.sub == ("vote", 0, True), (s.sub, s.status)


def test_a_refusal_said_during_a_pause_goes_when_the_pause_ends(h):
    """Seen: "The game is paused: your text is kept." stayed up after the host resumed."""
    s = h.session
    h.show(view("spell", turn=0, paused=True))
    assert not s.submit("glue")
    assert s.status is not None and "paused" in s.status[1]
    h.show(view("spell", turn=0, paused=False))
    assert s.status is None
    assert s.submit("glue") and h.sent[-1] == WriteSpell(word="glue")
