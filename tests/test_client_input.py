"""The screen half of issue 12, without a terminal: the input model, the join form, giving up
on a server, proposals' numbers and refusals, the results card, the texts.

Pure Session tests (``test_client_session.Harness``: no network, a state directory in tmp).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

import msgspec
import pytest
import trio
from screencheck import problems
from test_client_session import Harness, players, spells, view

from conjure.client import screen
from conjure.client.inputs import (
    CHOOSE_SEEN,
    HOST_QUITS,
    RECONNECTING_KEPT,
    SETTINGS_FOR_CREATE,
    pasted_line,
)
from conjure.client.prompts import SEAT_FREE
from conjure.client.session import CHAT_BACK, Session, parse_card
from conjure.client.statefile import StateDir
from conjure.client.tablestate import status_rows
from conjure.client.textfit import cells, shorten, wrap, wrap_items
from conjure.protocol.cells import wrap_words
from conjure.protocol.deck import Card
from conjure.protocol.messages import (
    Bye,
    CardView,
    CastVote,
    ChallengeWord,
    ChangeSettings,
    ChooseCard,
    CommitSummon,
    CreateRoom,
    Error,
    JoinRoom,
    KickPlayer,
    Leave,
    PauseGame,
    PlayerView,
    PointView,
    ProposalView,
    Receipt,
    ResultView,
    ResumeSeat,
    ReviewDone,
    RoomSettings,
    Seated,
    SendChat,
    SkipPlayer,
    StartGame,
    Update,
    View,
    Watch,
    Watching,
)
from conjure.protocol.program import program_here

URL = "ws://127.0.0.1:9"


def fresh(tmp_path, **kw) -> tuple[Session, list]:
    sent: list = []
    kw.setdefault("server", URL)
    s = Session(store=StateDir(tmp_path / "st"), send=sent.append, **kw)
    return s, sent


# ------------------------------------------------------------------ each prompt owns its text


def test_text_for_a_closed_summon_is_not_carried_into_the_review(tmp_path):
    h = Harness(tmp_path)
    s = h.session
    h.show(view("commit"))
    assert s.settle_input("") is None  # the commit question now owns the input line
    published = players(0, Bob={"summon": "rocket", "valid": True})
    h.show(view("review", players=published))
    assert s.settle_input("crimson") == ""  # emptied: never read as "c" for challenge
    assert s.feed[-1].text == "not sent, the summon closed: 'crimson'"
    # the feed keeps the text to type again; the status line says it where the eye is (in
    # the feed it went out of sight under the reveals within a second: found by review)
    assert s.status == ("warn", "Not sent, the summon closed: 'crimson'.")
    assert s.settle_input("") is None and h.sent == []


def test_text_left_behind_under_a_card_is_said_on_the_status_line_as_well(tmp_path):
    """A card hides the feed, so the status line says what was not sent, until it closes."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", turn=1))
    s.settle_input("")
    s.open_card("help")
    h.show(view("spell", turn=0))  # this player's turn: the text typed while waiting is dropped
    assert s.settle_input("rock") == ""
    assert s.feed[-1].text == "not sent, it was not your turn: 'rock'"
    assert s.status == ("warn", "Not sent, it was not your turn: 'rock'.")
    s.close_card()  # the feed is in view again: it alone says it
    assert s.status is None and s.feed[-1].text == "not sent, it was not your turn: 'rock'"


def test_a_refusal_made_while_waiting_goes_when_the_turn_comes(tmp_path):
    """Seen by a newcomer: "hello" typed while Ada wrote her word was refused ("Not your turn
    yet"), and that refusal still stood over the prompt asking for this player's word."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", turn=1))
    s.settle_input("")
    assert s.submit("hello") is False
    assert s.status is not None and s.status[1].startswith("Not your turn yet")
    h.show(view("spell", turn=0))
    assert s.settle_input("hello") == ""
    assert s.feed[-1].text == "not sent, it was not your turn: 'hello'"
    assert s.status == ("warn", "Not sent, it was not your turn: 'hello'.")  # not the refusal


def test_a_refusal_that_ends_a_sequence_of_keys_is_drawn_not_taken_for_a_new_question(tmp_path):
    """Seen by a newcomer: "s 1 2" (everyone else wrote "flu") and "k 1" (their own board) each
    ended their sequence with a refusal, and the screen showed nothing: the sequence's end
    changed the question, and a changed question cleared the status line before it was drawn.
    Keys go through ``settle_input`` between them, as the app does before each drawing."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("lobby"))
    s.settle_input("")
    for k in "k1":
        s.key(k)
        assert s.settle_input("") is None
    assert s.status == ("warn", "You cannot remove yourself.")
    flu = {"summon": "flu", "valid": True}
    published = players(0, Ann={"summon": "influenza", "valid": True}, Bob=flu, Cat=flu, Dan=flu)
    h.show(view("review", players=published))
    s.settle_input("")
    for k in "s12":
        s.key(k)
        s.settle_input("")
    assert s.status is not None and s.status[1].startswith("Nobody may vote on that"), s.status
    assert h.sent == []
    # A question that changes under the player still clears what was said about the last one.
    h.show(view("review", players=published, round=2))
    s.settle_input("")
    assert s.status is None


def test_text_typed_while_waiting_stays_while_the_wait_goes_on(tmp_path):
    """Waiting for the conjurer to choose, then to place the crystals: still nothing asked of
    this player, so what they typed stays; it goes when a question of their own comes."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("choose", you=1))
    assert s.settle_input("") is None
    h.show(view("mark", you=1))
    assert s.settle_input("robber") is None  # kept
    h.show(view("commit", you=1))
    assert s.settle_input("robber") == ""  # a question of its own: the text was not for it
    assert s.feed[-1].text == "not sent, it was not your turn: 'robber'"


def test_a_warning_is_over_once_the_player_has_moved_since(tmp_path):
    """A refusal stays on the status line until the next move; a later move that is sent ends it
    (it would read as being about that move), one that is refused replaces it."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", turn=0))
    assert s.submit("/foo")  # said, and the line cleared
    assert s.status is not None and "/foo" in s.status[1]
    assert s.submit("ruby") and h.sent  # a spell word, sent
    assert s.status is None


def test_a_refusal_is_said_once_on_the_status_line(tmp_path):
    """The server's refusal of a move: on the status line, not in the feed a second time; one too
    long for the status line's two rows at 80 columns goes to the feed whole as well."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", turn=1))
    before = list(s.feed)
    s.on_message(Error(code="not_your_turn", message="It is Bob's turn to write a spell word."))
    assert s.status == ("error", "It is Bob's turn to write a spell word.")
    assert list(s.feed) == before
    rows = screen.status_lines(s, 80)
    assert [t for row in rows for _, t in row] == [" It is Bob's turn to write a spell word."]
    long = "That word cannot be used here: " + "it is far too long to read " * 8
    s.on_message(Error(code="bad_word", message=long))
    assert s.feed[-1].text == long.strip() and s.feed[-1].kind == "error"
    assert len(screen.status_lines(s, 80)) == 2  # cut there; the feed holds it whole


def test_slash_commands_and_unchanged_questions_keep_their_text(tmp_path):
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", turn=1))
    s.settle_input("")
    h.show(view("spell", turn=2))  # still waiting, another writer: the same question
    assert s.settle_input("rock") is None
    h.show(view("spell", turn=0))  # now it is this player's turn: a new question
    assert s.settle_input("/say hello") is None  # a command is no answer: it stays
    h.show(view("mark"))
    assert s.settle_input("rock") == ""
    assert "your spell turn ended" in s.feed[-1].text


def test_a_lost_connection_keeps_the_typed_text(tmp_path):
    h = Harness(tmp_path)
    s = h.session
    h.show(view("choose"))
    s.settle_input("")
    s.on_disconnected("connection refused", 2.0)
    assert s.settle_input("1") is None
    s.on_connected()
    assert s.settle_input("1") is None


def test_the_confirmation_is_a_question_and_escape_gives_the_word_back(tmp_path):
    h = Harness(tmp_path)
    s = h.session
    h.show(view("commit", players=players(0, **spells(Bob="BREAD"))))
    assert s.submit("breads")  # the word leaves the input line
    assert s.prompt() == "Lock in 'breads' anyway? y = yes, n = change it: "
    assert s.key_help().startswith("y lock in · n change it")
    s.key("escape")
    assert s.settle_input("") == "breads" and s.confirm_word is None
    assert s.submit("breads")
    s.key("y")
    assert isinstance(h.sent[-1], CommitSummon) and s.my_word() == "breads"
    s.key("y")  # the "y" of "y Enter" is used; the Enter after it sends nothing
    assert not s.submit("")
    assert len(h.sent) == 1


# ------------------------------------------------------------------ joining


def test_each_refusal_brings_back_the_field_to_change(tmp_path):
    s, sent = fresh(tmp_path, name="Ann", room="QQQQ")
    assert s.on_connected() == [JoinRoom(room="QQQQ", name="Ann")]
    s.on_message(Error(code="unknown_room", message="There is no room QQQQ on this server."))
    assert s.join_field == "room" and s.prompt() == "Room code to join (4 letters): "
    assert s.on_connected() == []  # no loop of refused joins
    assert not s.submit("abc") and "4 letters" in s.status[1]
    assert s.submit("abcd")
    assert sent[-1] == JoinRoom(room="ABCD", name="Ann")
    s.on_message(Error(code="password_required", message="This room has a password."))
    assert s.prompt() == "Password for room ABCD: "
    assert not s.submit("")  # nothing typed: asked again, not sent
    assert s.submit("sesame")
    assert sent[-1] == JoinRoom(room="ABCD", name="Ann", password="sesame")
    s.on_message(Error(code="name_taken", message="Ann is already here."))
    assert s.prompt() == "Another name: " and s.status == ("error", "Ann is already here.")
    assert s.submit("Annie")
    assert sent[-1] == JoinRoom(room="ABCD", name="Annie", password="sesame")
    assert not s.joined_once
    s.on_message(Seated(room="ABCD", seat=1, player_id="p1", token="t" * 20))
    assert s.joined_once and s.join_field is None and s.status is None  # the refusal is over


def test_a_missing_password_is_not_called_wrong(tmp_path):
    s, _ = fresh(tmp_path, name="Ann", room="ABCD")
    s.on_connected()
    s.on_message(Error(code="wrong_password", message="Wrong password for this room."))
    assert "has a password" in s.status[1] and "Wrong" not in s.status[1]


def test_a_spectator_is_asked_the_room_again(tmp_path):
    s, sent = fresh(tmp_path, room="QQQQ", spectator=True)
    assert s.on_connected() == [Watch(room="QQQQ")]
    s.on_message(Error(code="unknown_room", message="There is no room QQQQ."))
    assert s.prompt() == "Room code to watch (4 letters): "
    assert s.submit("ABCD") and sent[-1] == Watch(room="ABCD")


def test_create_asks_the_settings_once_the_server_answered(tmp_path):
    s, sent = fresh(tmp_path, name="Ann", create=True)
    assert s.form is None and "New room settings" not in screen.plain(screen.panel(s))
    assert s.on_connected() == []
    assert s.form is not None and s.prompt().startswith("Variant:")
    for answer in ["", "", "", "", ""]:
        assert s.submit(answer)
    assert isinstance(sent[-1], CreateRoom)
    s.on_disconnected("closed", 1.0)
    assert s.on_connected()[0] == sent[-1]  # asked once, not again on a reconnection


def test_giving_up_offers_retry_or_quit_in_one_line(tmp_path):
    s, _ = fresh(tmp_path, name="Ann", room="ABCD")
    first = s.retry
    s.on_disconnected("connection refused", 1.0)
    s.on_gave_up("Cannot reach ws://127.0.0.1:9 (connection refused)")
    line = s.banner_text(79)
    assert line == "Cannot reach ws://127.0.0.1:9 (connection refused). r: try again, Ctrl-Q: quit"
    assert s.retry is not first and not s.retry.is_set()
    assert s.wants_keys() and s.prompt() == "r or Ctrl-Q: "
    panel = screen.plain(screen.panel(s, 80))
    assert "No answer from the server" in panel and "r tries again" not in panel  # said once
    s.key("x")
    assert not s.retry.is_set() and "Press r" in s.status[1]
    s.key("r")
    assert s.retry.is_set() and s.gave_up is None
    s.on_gave_up("connection refused")  # a bare reason works as well; a new Event each time
    assert not s.retry.is_set()
    long = Session(
        server="ws://127.0.0.1:9999", store=StateDir(tmp_path / "x"), send=lambda m: None
    )
    long.on_gave_up("Cannot reach ws://127.0.0.1:9999 (connection refused)")
    line = long.banner_text(79)
    assert len(line) <= 79 and line.endswith("r: try again, Ctrl-Q: quit")
    assert "(connection refused)" in line


def test_an_r_just_after_the_connection_came_back_by_itself_is_the_retry_key(tmp_path):
    """Only just after, only once, and not after a retry the player asked for."""
    now = [100.0]
    s = Session(
        server=URL, store=StateDir(tmp_path / "st"), send=lambda m: None, name="Ann",
        room="ABCD", clock=lambda: now[0],
    )  # fmt: skip
    s.on_gave_up("connection refused")
    s.on_connected()  # by itself
    now[0] += 2.9
    assert s.late_retry_key() and not s.late_retry_key()  # one r at most
    s.on_gave_up("connection refused")
    s.on_connected()
    now[0] += 3.0
    assert not s.late_retry_key()  # too late: a word's first letter
    s.on_gave_up("connection refused")
    s.key("r")  # asked
    s.on_connected()
    assert not s.late_retry_key()
    s.on_disconnected("reset", 1.0)
    s.on_connected()  # an ordinary reconnection: nothing was offered
    assert not s.late_retry_key()
    s.on_gave_up("connection refused")
    s.on_connected()  # by itself ...
    s.on_gave_up("connection refused")  # ... and gone again: an r now is the one asked for
    assert not s.late_retry_key()
    s.key("r")
    assert s.retry.is_set()


def test_a_goodbye_too_long_for_the_status_row_is_cut_between_its_clauses(tmp_path):
    """Found by a newcomer: a spectator's last line read "…so its room will…", cut at the edge."""
    s, _ = fresh(tmp_path, room="ABCD", spectator=True)
    s.ended = "the server is shutting down; this game is over, so its room will be gone"
    s.on_disconnected("closed", None)
    assert s.banner_text(79) == "disconnected: the server is shutting down (the feed says more)"
    assert s.banner_text(200) == f"disconnected: {s.ended}"


async def test_the_retry_event_wakes_a_waiting_connection(tmp_path):
    s, _ = fresh(tmp_path, name="Ann", room="ABCD")
    s.on_gave_up("connection refused")
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(s.retry.wait)
            await trio.sleep(0)
            s.key("r")


def test_a_first_seat_is_a_first_seat_even_when_resumed(tmp_path):
    """make play creates the room, then the client resumes that seat: not "back at"."""
    store = StateDir(tmp_path / "st")
    store.save_seat(URL, "ABCD", seat=0, player_id="p0", token="t" * 20, name="root")
    s = Session(server=URL, store=store, send=lambda m: None, name="root", room="ABCD")
    s.on_connected()
    s.on_message(Seated(room="ABCD", seat=0, player_id="p0", token="t" * 20))
    s.on_message(Update(view=view("lobby"), feed=["root is back."]))
    texts = [f.text for f in s.feed]
    assert "you sit at board 1 in room ABCD" in texts
    assert not any("back" in t for t in texts)


# ------------------------------------------------------------------ proposals and refusals


def review_with(*proposals, **per_seat):
    seats = {
        "Ann": {"summon": "moon", "valid": True},
        "Bob": {"summon": "rocket", "valid": True},
        "Cat": {"summon": "star", "valid": True},
        "Dan": {"summon": "comet", "valid": True},
    }
    published = players(0, **(seats | per_seat))
    return view("review", players=published, proposals=list(proposals))


def test_the_rest_of_a_mistyped_key_sequence_does_nothing(tmp_path):
    """'v 9 y good' typed in the review with no proposal to vote on: the v is refused, and the
    keys typed right after it do nothing (not 's', a proposal, nor 'd', the end of the review);
    after a pause, or after Esc, keys act again."""
    now = [0.0]
    h = Harness(tmp_path, clock=lambda: now[0])
    s = h.session
    h.show(view("review", players=players(0, Bob={"summon": "rocket", "valid": True})))
    for k in "v 9 y good":
        s.key(k)
        now[0] += 0.15
    assert h.sent == [] and s.sub == () and "no open proposal" in s.status[1]
    # ... and says so, once (a newcomer's next keys did nothing and said nothing)
    assert s.status[1].endswith("(The keys right after it did nothing: type again.)")
    assert s.status[1].count("did nothing") == 1
    now[0] += 1.5
    s.key("c")  # another question: the refusal of the vote is not about it
    assert s.status is None and s.prompt().startswith("Challenge whose word")
    s.key("escape")
    for k in "v sd":  # the same again, then a pause longer than KEYS_PAUSE
        s.key(k)
    now[0] += 1.5
    s.key("d")
    assert h.sent == [ReviewDone()]
    h2 = Harness(tmp_path / "2", clock=lambda: now[0])
    h2.show(view("review", players=players(0, Bob={"summon": "rocket", "valid": True})))
    h2.session.key("v")
    h2.session.key("escape")  # a deliberate key ends the burst at once
    h2.session.key("d")
    assert h2.sent == [ReviewDone()]
    # A person who read the refusal and types at their own pace is not a burst: 'c 2 1'
    # typed half a second apart from 0.7 s after it was lost whole (found by a newcomer).
    published = players(0, Bob={"summon": "rocket", "valid": True})
    h3 = Harness(tmp_path / "3", clock=lambda: now[0])
    h3.show(view("review", players=published))
    h3.session.key("x")
    for k in "c21":
        now[0] += 0.7 if k == "c" else 0.5
        h3.session.key(k)
    assert [type(x).__name__ for x in h3.sent] == ["ChallengeWord"], h3.session.status


def test_a_vote_about_your_own_word_says_why_not(tmp_path):
    now = [0.0]
    h = Harness(tmp_path, clock=lambda: now[0])
    mine = ProposalView(
        id=0, kind="challenge", by=1, seats=[0], words=["moon"], rule="noun", voters=[1, 2, 3]
    )
    h.show(review_with(mine))
    h.session.key("v")
    assert h.session.status[1] == (
        "Proposal 1 is about your word ('moon'): the players it does not concern vote on it."
    )
    other = ProposalView(id=1, kind="same", by=1, seats=[2, 3], words=["star", "comet"])
    other.voters = [0, 1]
    h.show(review_with(mine, other))
    now[0] += 5  # a while later: the refused key's burst is over
    h.session.key("v")
    assert h.session.prompt() == "Proposal 2: y=yes n=no (Esc cancels)? "
    h.session.key("y")
    assert h.session.submit("same sky")
    assert h.sent[-1] == CastVote(proposal=1, yes=True, reason="same sky")
    assert h.session.status[1] == "You voted yes on proposal 2."
    third = ProposalView(id=2, kind="same", by=2, seats=[1, 3], words=["rocket", "comet"])
    third.voters = [0, 2]
    h.show(review_with(mine, other, third, round=1))
    assert not h.session.submit("v 1 y")  # by its number: the same reason, V1
    assert "does not concern vote on it" in h.session.status[1] and h.session.sub == ()


def test_proposals_are_numbered_from_one_and_every_reason_shows(tmp_path):
    h = Harness(tmp_path)
    p = ProposalView(
        id=0,
        kind="challenge",
        by=1,
        seats=[2],
        words=["star"],
        rule="category",
        voters=[0, 1, 3],
        votes={1: True, 3: False},
        reasons={1: "proposed it", 3: "a star fits, look at the sky"},
    )
    h.show(review_with(p))
    text = screen.plain(screen.panel(h.session, 80))
    assert " 1. Bob challenges Cat's 'star': must fit the category" in text
    assert "Dan: a star fits, look at the sky" in text
    assert "Bob: proposed it" not in text  # the proposer's own yes goes without saying
    assert h.session.prompt() == "Review: v=vote c=challenge s=same d=done: "  # Ann votes
    voted = msgspec.structs.replace(p, votes={**p.votes, 0: True})
    h.show(review_with(voted))  # she has voted: v still changes it, but is not offered
    assert h.session.prompt() == "Review: c=challenge s=same d=done: "


def test_the_challenge_menu_reads_as_sentences(tmp_path):
    h = Harness(tmp_path)
    h.show(review_with())
    for k in "c2":
        h.session.key(k)
    text = screen.plain(screen.panel(h.session, 80))
    assert "Challenge Bob's 'rocket': which rule?" in text
    assert "1 it must be a noun" in text and "4 it cannot be or contain a written word" in text


# ------------------------------------------------------------------ the results card


def result(round_=1) -> ResultView:
    return ResultView(
        round=round_,
        conjurer=0,
        card=CardView(index=0, text="Vehicle", stars=2),
        case="conjured",
        points={0: 2, 1: 3, 2: 0, 3: -3},
        words={0: "spaceship", 1: "spaceship", 2: "moon", 3: "rocket ship"},
        reasons={
            0: [PointView(points=2, why="1 player matched you (Bob): 2 points each", rule="P2a")],
            1: [
                PointView(points=2, why="matched the conjurer Ann: 2 stars", rule="P2b"),
                PointView(points=1, why="your board held a crystal", rule="P2c"),
            ],
            3: [PointView(points=-3, why="invalid word: contains 'rocket'", rule="P5")],
        },
    )


def test_the_results_stay_until_closed_or_the_next_move(tmp_path):
    h = Harness(tmp_path)
    s = h.session
    h.show(view("review"))
    h.show(view("choose", round=2, results=[result()]))
    assert s.overlay is not None and s.overlay.kind == "results"
    shot = screen.middle(s, 80, 19)
    text = "\n".join("".join(t for _, t in line) for line in shot.lines)
    assert "Bob matched the conjurer Ann" in text
    assert "Bob  +3  'spaceship': +2 matched the conjurer Ann: 2 stars; +1 your board" in text
    assert "Dan  -3  'rocket ship': invalid word: contains 'rocket'" in text
    assert not problems(text, 80, 19)
    assert s.submit("/say well played")  # chatting is not a move: the card stays
    assert isinstance(h.sent[-1], SendChat) and s.overlay is not None
    # Choosing is the next move, but the card hides the categories: the first Enter shows them
    # and keeps the choice (seen: the next conjurer chose "1" blind under the results).
    sent = len(h.sent)
    assert s.submit("2") is False  # the line stays
    assert len(h.sent) == sent and s.overlay is None and s.status == ("info", CHOOSE_SEEN)
    shown = "\n".join(middle_text(s))
    assert "1. Vehicle ★" in shown and "Round 1:" not in shown  # the list, not the card
    assert s.submit("2")
    assert isinstance(h.sent[-1], ChooseCard) and s.overlay is None
    s.key("f3")  # and comes back on a key
    assert s.overlay is not None and s.overlay.round == 1
    s.key("escape")
    assert s.overlay is None


def middle_text(s: Session, height: int = 19) -> list[str]:
    return ["".join(t for _, t in line).rstrip() for line in screen.middle(s, 80, height).lines]


def test_a_card_never_hides_a_turn_whose_clock_runs(tmp_path):
    """The results open by themselves as the next round starts; a newcomer reading them lost a
    spell turn to the clock. Whatever card is open, its first line says whose turn it is."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("review"))
    h.show(view("choose", round=2, conjurer=1, results=[result()]))  # Bob chooses
    assert s.overlay is not None and middle_text(s)[0] == "Round 1: Vehicle ★★ · conjurer Ann"
    h.show(view("spell", round=2, conjurer=1, turn=0, results=[result()]))  # Ann's turn
    rows = middle_text(s)
    assert rows[0] == "▶ Your turn to write your spell word (0:42 left): Esc shows the table"
    assert rows[1] == "Round 1: Vehicle ★★ · conjurer Ann"
    assert not problems("\n".join(rows), 80, 19)
    s.key("pagedown", page=5)  # the card scrolls under it; the turn line stays
    assert middle_text(s, 6)[0].startswith("▶ Your turn to write your spell word")
    s.deadline_at = s.clock() + 4.2
    line = screen.turn_line(s, 80)
    assert line is not None and "countdown.low" in line[0][0] and "(0:05 left)" in line[0][1]
    s.key("escape")
    assert s.overlay is None and screen.turn_line(s, 80) is not None  # said only over a card
    s.key("f1")  # any card: the help too
    assert middle_text(s)[0].startswith("▶ Your turn to write your spell word")
    me = {"committed": True}
    h.show(view("commit", round=2, conjurer=1, players=players(0, Ann=me), results=[result()]))
    assert s.own_turn() is None  # locked in: changing it is up to Ann, nothing waits for her
    assert middle_text(s)[0] == "Help"
    h.show(view("spell", round=2, conjurer=1, turn=1, results=[result()]))
    assert s.own_turn() is None  # Bob's turn
    h.show(view("mark", round=2, conjurer=0, paused=True, results=[result()]))
    assert s.own_turn() is None  # a paused game asks nothing
    h.show(view("mark", round=2, conjurer=0, remaining=None, results=[result()]))
    assert middle_text(s)[0] == "▶ Your turn to place the crystals: Esc shows the table"


def test_over_the_results_a_spell_turn_shows_the_spell_words_so_far(tmp_path):
    """Seen at 80x24: the last round's results were still open when a newcomer's spell turn
    came, and the clue was written without the others' in sight. The results stay (they were
    being read); the turn line has the spell words written so far under it, in the order they
    were written (from the conjurer), and no more than two lines of them."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("review"))
    written = spells(Bob="bark", Cat="wood", Dan="forest")
    h.show(
        view(
            "spell", round=2, conjurer=1, turn=0, players=players(0, **written), results=[result()]
        )
    )
    rows = middle_text(s)
    assert rows[0].startswith("▶ Your turn to write your spell word")
    assert rows[1] == "  Spell words so far: bark · wood · forest"
    assert rows[2] == "Round 1: Vehicle ★★ · conjurer Ann"
    assert not problems("\n".join(rows), 80, 19)
    many = {n: {"spell": "extraordinarily-long-clue"} for n in ("Bob", "Cat", "Dan")}
    h.show(
        view("spell", round=2, conjurer=1, turn=0, players=players(0, **many), results=[result()])
    )
    assert len([r for r in middle_text(s, 19) if "extraordinarily" in r]) <= 2
    h.show(
        view(
            "spell", round=2, conjurer=1, turn=2, players=players(0, **written), results=[result()]
        )
    )
    assert not any("so far" in r for r in middle_text(s))  # Cat's turn: nothing asked of Ann
    h.show(view("spell", round=2, conjurer=1, turn=0, players=players(0), results=[result()]))
    assert middle_text(s)[1] == "Round 1: Vehicle ★★ · conjurer Ann"  # nothing written yet


def test_a_spectator_has_no_turn_over_a_card(tmp_path):
    h = Harness(tmp_path, spectator=True)
    s = h.session
    h.show(view("spell", you=None, turn=0))
    s.key("f1")
    assert s.own_turn() is None and middle_text(s)[0] == "Help"


def test_game_over_opens_the_last_breakdown_with_the_standings(tmp_path):
    h = Harness(tmp_path)
    h.show(view("review"))
    h.show(view("over", results=[result()], winners=[1]))
    lines = screen.middle(h.session, 80, 19).lines
    text = "\n".join("".join(t for _, t in line) for line in lines)
    assert "Final standings" in text and "Bob wins!" in text and "Round 1: Vehicle" in text


# ------------------------------------------------------------------ texts and help


def test_help_is_a_card_that_fits_and_scrolls(tmp_path):
    h = Harness(tmp_path)
    h.show(view("spell", turn=1))
    assert h.session.submit("/help")
    lines = screen.middle(h.session, 80, 15).lines
    assert len(lines) == 15
    last = "".join(t for _, t in lines[-1])
    assert "more lines: PgDn" in last
    h.session.key("pagedown", page=14)
    lines = screen.middle(h.session, 80, 15).lines
    assert "the end" in "".join(t for _, t in lines[-1])
    h.session.key("escape")
    assert h.session.overlay is None


def test_the_feed_scrolls_back_and_wraps_on_words(tmp_path):
    h = Harness(tmp_path)
    s = h.session
    for i in range(40):
        s.add_feed(f"Bob wrote the spell word 'guitar{i}', a long enough line to be wrapped here.")
    h.show(view("spell", turn=1))
    before = screen.middle(s, 80, 19)
    s.key("pageup", page=before.page)
    after = screen.middle(s, 80, 19)
    assert after.lines != before.lines and "older lines" in "".join(
        t for _, t in after.lines[-before.feed_height - 1]
    )
    for line in after.lines:
        text = "".join(t for _, t in line)
        assert not text.endswith("'guita"), text
    s.key("pagedown", page=100)
    assert s.feed_scroll == 0


def test_spectators_are_not_offered_what_they_cannot_do(tmp_path):
    h = Harness(tmp_path, spectator=True, name=None)
    h.show(view("spell", you=None, turn=2))
    assert "/say" not in h.session.key_help()
    # Refused and let go of: the line kept "/say hix" for the rest of the game (seen)
    assert h.session.submit("/say hi") and "Spectators cannot chat" in h.session.status[1]
    h.session.on_message(
        Bye(reason="the server is shutting down; reconnect with your token when it is back")
    )
    assert (
        h.session.feed[-1].text == "the server closed the connection: the server is shutting down"
    )


def test_small_texts(tmp_path):
    h = Harness(tmp_path)
    s = h.session
    last = [CardView(index=i, text=t, stars=1, used=i < 3) for i, t in enumerate("ABCD")]
    h.show(view("choose", cards=last))
    assert s.prompt() == "Choose the last category (type 1): "
    h.show(view("mark", players=players(0, **spells(Bob="B", Cat="C", Dan="D"))))
    assert s.key_help().startswith("2-4 toggle · Enter confirm")
    head = screen.plain(screen.header(s, 80))
    assert " ⏱ " in head and len(head) == 80
    h.show(view("lobby"))
    s.key("e")
    for _ in range(5):
        s.submit("")
    assert not any(isinstance(m, ChangeSettings) for m in h.sent)
    assert s.status == ("info", "Settings unchanged.")
    form = screen.plain(screen.form_panel(s, 80)) if s.form else ""
    assert form.count("Enter keeps the value") <= 1


def test_header_drops_whole_parts_and_shortens_on_purpose(tmp_path):
    h = Harness(tmp_path)
    card = CardView(index=0, text="A famous bridge over a very wide river somewhere far", stars=3)
    h.show(view("spell", turn=1, card=card, variant="dark-magic"))
    head = screen.plain(screen.header(h.session, 80))
    assert len(head) == 80 and "spell words" in head and "round 1/4" in head
    assert not problems(head, 80, 1)


@pytest.mark.parametrize("variant", ["standard", "dark-magic"])
@pytest.mark.parametrize("conjurer", ["Ann", "Bartholomew Fitzgerald X"])  # 24 characters
def test_a_long_category_gives_way_before_the_conjurer_and_keeps_its_stars(
    tmp_path, variant, conjurer
):
    """Seen at 80x24: a long category took the conjurer's and the room's places, and the
    shortening cut its stars (what a round is worth)."""
    h = Harness(tmp_path)
    card = CardView(index=0, text="Things you would find in a haunted kitchen", stars=3)
    h.show(
        view(
            "spell", turn=1, card=card, variant=variant, players=players(0, Ann={"name": conjurer})
        )
    )
    head = screen.plain(screen.header(h.session, 80))
    assert len(head) == 80 and not problems(head, 80, 1, words=[card.text, conjurer])
    assert "round 1/4" in head and "spell words" in head
    assert "Things you would find" in head and "… ★★★ ·" in head  # shortened, the stars whole
    # the conjurer stays unless keeping them would leave the category under 16 cells
    assert f"conjurer {conjurer}" in head or len(conjurer) > 20
    # a short category leaves room for the room code too
    h.show(view("spell", turn=1, card=CardView(index=0, text="Animals", stars=3)))
    head = screen.plain(screen.header(h.session, 80))
    assert "room ABCD" in head and "Animals ★★★" in head and "conjurer Ann" in head


def test_text_helpers():
    assert shorten("supercalifragilistic", 10) == "superc…tic"
    assert shorten("a famous bridge over a river", 20) == "a famous bridge…"
    assert wrap("one two three", 8) == ["one two", "  three"]
    # One wrapper for the screen and the reports: a no-break space holds, a word too long for
    # a line is broken on the screen and kept whole in a report (a path stays one piece).
    assert wrap("in review\u00a0120s", 13) == ["in", "  review\u00a0120s"]
    assert wrap("ab abcdefghij", 6, "", " ") == ["ab", " abcde", " fghij"]
    assert wrap_words("ab abcdefghij", 6, "", " ") == ["ab", " abcdefghij"]
    assert wrap("one\ntwo three", 7, "> ", "  ") == ["> one", "  two", "  three"]
    # narrower than the hang (a 9-column terminal, the lobby's share line): a cell a line, and
    # an end (it looped for ever, found by review)
    assert wrap("hello world", 1) == [
        "h",
        "  e",
        "  l",
        "  l",
        "  o",
        "  w",
        "  o",
        "  r",
        "  l",
        "  d",
    ]
    assert len(wrap("conjure play ws://h:1 --room ABCD", 8, "  share: ", " " * 11)) < 40
    assert wrap_items(["1. Ann 3", "2. Bob 2", "3. Cat 1"], 20, " · ", "", "") == [
        "1. Ann 3 ·",  # "· 2. Bob 2 ·" would be 21 cells: the item goes down whole
        "2. Bob 2 · 3. Cat 1",
    ]


def test_settings_of_a_new_room_fit(tmp_path):
    s, _ = fresh(tmp_path, name="Ann", create=True, settings=RoomSettings(variant="dark-magic"))
    s.on_connected()
    text = screen.plain(screen.form_panel(s, 80))
    assert "variant: Dark Magic" in text and not problems(text, 80, 24)


# ------------------------------------------------------------------ the host of make play quits


def test_the_host_is_asked_before_quitting_ends_the_game_for_other_people(tmp_path, monkeypatch):
    monkeypatch.setenv("CONJURE_LOCAL_SERVER", "1")
    h = Harness(tmp_path)
    s = h.session
    # two of the four are computer players (they said so: the board marks them)
    h.show(view("spell", players=players(0, Cat={"computer": True}, Dan={"computer": True})))
    assert s.request_quit() is False  # Bob (p1) is a person: ask first
    question = s.prompt()
    assert question == "Bob is playing: quitting pauses the game, stops the server. Quit? y/n: "
    assert s.wants_keys()
    s.key("n")
    assert s.quit_question is None and not s.quit_requested  # the game goes on
    assert s.request_quit() is False
    s.key("y")
    assert s.quit_requested
    # The game is paused on the host's own connection as the server stops with them (the
    # launcher did it with the seat's token after: "Ann is away. Ann is back.")
    assert isinstance(h.sent[-1], PauseGame)
    assert not problems(question)  # one line, whole, at 80 columns
    many = Harness(tmp_path / "many")
    names = {n: {"name": n * 5} for n in ("Bob", "Cat", "Dan")}
    many.show(view("spell", players=players(0, **names)))
    assert many.session.request_quit() is False
    said = many.session.prompt()
    assert said == "3 others are playing: quitting pauses the game, stops the server. Quit? y/n: "
    assert not problems(said)
    # in the lobby there is no game yet (a newcomer read "their game" as one under way)
    lobby = Harness(tmp_path / "lobby")
    lobby.show(view("lobby", round=0, players=players(0, Cat={"computer": True})))
    assert lobby.session.request_quit() is False
    said = lobby.session.prompt()
    assert said == "Bob and Dan are here: quitting stops the server and their room. Quit? y/n: "


def test_the_last_category_is_asked_for_as_the_last(tmp_path):
    """'Type the number of a category, 1-1, or its name.' read as a typo (seen by a newcomer)."""
    h = Harness(tmp_path)
    s = h.session
    last = [CardView(index=i, text=t, stars=1, used=i < 3) for i, t in enumerate("ABCD")]
    h.show(view("choose", cards=last))
    s.submit("7")
    assert s.status is not None and s.status[1] == "Type 1 for the last category, or its name."


def test_quitting_is_not_questioned_when_only_computer_players_remain(tmp_path, monkeypatch):
    monkeypatch.setenv("CONJURE_LOCAL_SERVER", "1")
    h = Harness(tmp_path)
    computers = {n: {"computer": True} for n in ("Bob", "Cat", "Dan")}
    h.show(view("spell", players=players(0, **computers)))
    assert h.session.request_quit() is True
    assert isinstance(h.sent[-1], PauseGame)  # paused as the server stops, said nowhere else
    monkeypatch.delenv("CONJURE_LOCAL_SERVER")  # not make play's own server: nothing stops
    h.show(view("spell"))  # and people at the table
    h.session.say("warn", "There is no open proposal to vote on.")
    assert h.session.request_quit() is False  # but the host of a game in play is asked
    assert h.session.prompt() == HOST_QUITS and cells(HOST_QUITS) <= 78
    assert h.session.status is None  # the refusal before is not about this question
    assert h.session.request_quit() is True  # a second Ctrl-Q is a yes
    # ... and the server is told the host left, so the role passes at once (a host who just
    # went was waited for as away for 30 s, nobody able to pause or skip: seen with friends)
    assert isinstance(h.sent[-1], Leave)
    guest = Harness(tmp_path / "guest")
    guest.show(view("spell", you=1))
    assert guest.session.request_quit() is True  # a player who is not the host: no question
    h.show(view("lobby", round=0))
    h.session.quit_question = None
    assert h.session.request_quit() is True  # nor in the lobby


def test_the_quit_question_over_a_card_shows_its_own_keys(tmp_path):
    """Found by review: with the results card open, Ctrl-Q's question stood over "Enter/Esc
    close", and Esc, taken as the question's no, did not close the card."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell"))
    s.open_card("help")
    assert s.key_help().startswith("Enter/Esc close")
    assert s.request_quit() is False and s.prompt() == HOST_QUITS
    assert s.key_help().startswith("y yes · n/Esc no")
    s.key("escape")
    assert s.quit_question is None and s.overlay is not None  # no, and the card stays
    assert s.key_help().startswith("Enter/Esc close")


def test_over_a_card_the_key_line_says_enter_sends_what_is_typed(tmp_path):
    """Found by review: 'lake' typed, F3, and the key line's "Enter/Esc close" read as a way to
    close the card; Enter locked 'lake' in. With a line typed it says what Enter does."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("commit", round=2, results=[result()]))
    s.key("f3")
    assert s.key_help(draft="").startswith("Enter/Esc close")
    assert s.key_help(draft="lake").startswith("Enter send · Esc close")
    assert s.key_help(draft="   ").startswith("Enter/Esc close")
    # where Enter shows the categories instead (the conjurer choosing under a card), it is said
    s.key("escape")
    h.show(view("choose", round=2, conjurer=0, results=[result()]))
    s.key("f3")
    assert s.overlay is not None and s.key_help(draft="2").startswith("Enter/Esc close")


def test_a_challenge_only_you_would_vote_on_asks_first(tmp_path):
    """Ada, Cleo and Basil wrote 'grape': challenging it, only the challenger votes (V1), so one
    key would make all three words invalid. The client asks before it sends."""
    h = Harness(tmp_path)
    s = h.session
    grape = {"summon": "grape", "valid": True}
    published = players(0, Ann={"summon": "plum", "valid": True}, Bob=grape, Cat=grape, Dan=grape)
    h.show(view("review", players=published))
    for key in ("c", "2", "3"):
        s.key(key)
    assert h.sent == []  # not yet
    assert s.prompt() == "Only you vote: Bob, Cat and Dan lose 3 each for 'grape'. Challenge? y/n: "
    s.key("n")
    assert h.sent == [] and s.sub == ()
    for key in ("c", "2", "3", "y"):
        s.key(key)
    assert [type(x).__name__ for x in h.sent] == ["ChallengeWord"]


def test_a_challenge_others_vote_on_is_sent_at_once(tmp_path):
    h = Harness(tmp_path)
    s = h.session
    published = players(
        0,
        Ann={"summon": "plum", "valid": True},
        Bob={"summon": "grape", "valid": True},
        Cat={"summon": "pear", "valid": True},
        Dan={"summon": "fig", "valid": True},
    )
    h.show(view("review", players=published))
    for key in ("c", "2", "3"):
        s.key(key)
    assert [type(x).__name__ for x in h.sent] == ["ChallengeWord"]


STARTED = Error(
    code="already_started",
    message="This room's game has started; players who left can resume with their token.",
)


def test_a_late_friend_watches_a_started_game_with_enter(tmp_path):
    """It was "quit (Ctrl-Q) and type: conjure watch …", a second program to start for a
    friend who came late: now Enter watches the game on the same connection."""
    s, sent = fresh(tmp_path, name="Bob", room="ABCD")
    assert s.on_connected() == [JoinRoom(room="ABCD", name="Bob")]
    s.on_message(STARTED)
    assert s.status == ("error", "The game in room ABCD has started without you.")
    assert s.join_field == "watch" and s.ended is None and not s.joined_once
    assert s.prompt() == "Enter watches the game here, Ctrl-Q quits: "
    # Not a dead end even if they quit: the command that watches is said then.
    assert s.watch_instead == f"{program_here()} watch {s.server} --room ABCD"  # (run here)
    assert s.submit("yes please") and not sent[1:]  # let go of (the next Enter sent it again)
    assert s.status == (
        "warn",
        "'yes please' is no room code (4 letters): Enter watches the game, or type another "
        "room's code.",
    )
    assert s.submit("")
    assert sent[-1] == Watch(room="ABCD") and s.spectator and s.token is None
    s.on_message(Watching(room="ABCD"))
    assert s.joined and s.joined_once and s.watch_instead is None
    s.on_message(Update(view=View(room="ABCD", phase="spell", round=1)))
    assert s.prompt_owner() == ("watch",)


def test_a_refused_one_word_answer_in_the_settings_form_is_let_go_of(tmp_path):
    """Found by a newcomer: a refused '3' stayed in the line, so Enter (which "keeps the value
    in [brackets]") sent it again; a longer answer is kept, to mend."""
    s, _ = fresh(tmp_path, name="Ann", create=True)
    s.on_connected()
    assert s.prompt().startswith("Variant:")
    assert s.submit("3") is True and s.status is not None and s.status[0] == "warn"
    assert s.prompt().startswith("Variant:")  # asked again, the line empty
    assert s.submit("dark magic please") is False  # kept
    assert s.submit("90,6o") is False  # (a list typed with commas is kept too, to mend)
    assert s.submit("") and not s.prompt().startswith("Variant:")  # Enter keeps [1]


def test_a_spectators_typed_line_is_let_go_of(tmp_path):
    """Found by a newcomer: kept after "nothing was sent", the next text was added to it."""
    s, sent = fresh(tmp_path, room="ABCD", spectator=True)
    assert s.on_connected() == [Watch(room="ABCD")]
    s.on_message(Watching(room="ABCD"))
    s.on_message(Update(view=View(room="ABCD", phase="spell", round=1)))
    assert s.submit("hello") is True  # the line is cleared
    assert sent == []
    assert s.status == ("warn", "You are watching: spectators do not play, so nothing was sent.")


def test_a_late_friend_may_type_another_rooms_code_instead(tmp_path):
    s, sent = fresh(tmp_path, name="Bob", room="ABCD")
    s.on_connected()
    s.on_message(STARTED)
    assert s.submit("wxyz")
    assert sent[-1] == JoinRoom(room="WXYZ", name="Bob") and not s.spectator
    s.on_message(STARTED)  # that one has started too: still offered, for its own code
    assert s.watch_instead is not None and s.watch_instead.endswith("--room WXYZ")
    assert s.submit("watch")
    assert sent[-1] == Watch(room="WXYZ")


def test_a_w_for_a_room_code_after_another_refusal_is_not_a_watch(tmp_path):
    """Found by a newcomer: after a wrong code, a 'w' typed at "Room code to join" watched
    the room of the wrong code, silently: the offer to watch ends with another refusal."""
    s, sent = fresh(tmp_path, name="Bob", room="ABCD")
    s.on_connected()
    s.on_message(STARTED)
    assert s.submit("wxyz")  # another room ...
    s.on_message(Error(code="unknown_room", message="There is no room WXYZ on this server."))
    assert s.join_field == "room" and s.watch_instead is None  # ... that is not there
    assert not s.submit("w") and not s.spectator
    assert sent[-1] == JoinRoom(room="WXYZ", name="Bob")


def test_the_offer_to_watch_ends_once_seated_and_watching_instead_ends_with_its_refusal(
    tmp_path,
):
    """Found by review: the offer outlived the join, so a seat's later refusal 'for now' took
    'w' for a watch (the seat given up for a look); and a player watching instead, refused
    by a room that takes no spectators, then typed a room to sit in and watched it."""
    from conjure.client.session import TRY_LATER

    s, sent = fresh(tmp_path, name="Bob", room="ABCD")
    s.on_connected()
    s.on_message(Error(code="room_full", message="The room is full (8 players)."))
    s.submit("")  # tried again: a seat came free
    s.on_message(Seated(room="ABCD", seat=7, player_id="p7", token="t" * 43))
    assert s.watch_instead is None
    s.on_disconnected("reset", 1.0)
    assert s.on_connected() == [ResumeSeat(room="ABCD", token="t" * 43)]
    s.on_message(Error(code=sorted(TRY_LATER)[0], message="Try again in a moment."))
    assert s.join_field == "again" and s.prompt() == "Enter tries again, Ctrl-Q quits: "
    s.submit("w")  # Enter tries again: the seat, not a look
    assert not s.spectator and sent[-1] == ResumeSeat(room="ABCD", token="t" * 43)
    late, sent = fresh(tmp_path / "late", name="Dee", room="ABCD")
    late.on_connected()
    late.on_message(STARTED)
    late.submit("")  # watch instead ...
    assert sent[-1] == Watch(room="ABCD")
    late.on_message(Error(code="no_spectators", message="This room takes no spectators."))
    assert not late.spectator and late.prompt() == "Room code to join (4 letters): "
    late.submit("wxyz")  # ... a room to sit in, not to watch
    assert sent[-1] == JoinRoom(room="WXYZ", name="Dee")


def test_a_late_friend_who_was_offered_to_watch_is_asked_again_after_a_reconnection(tmp_path):
    """Nothing is sent on its own after a reconnection: the question stands."""
    s, sent = fresh(tmp_path, name="Bob", room="ABCD")
    s.on_connected()
    s.on_message(STARTED)
    s.on_disconnected("reset", 1.0)
    assert s.on_connected() == [] and s.join_field == "watch"
    s.submit("")
    assert sent[-1] == Watch(room="ABCD")


def test_a_stray_key_in_the_lobby_says_which_keys_work(tmp_path):
    h = Harness(tmp_path)
    s = h.session
    h.show(view("lobby", round=0))
    assert s.wants_keys()  # the host: single keys act at once
    s.key("x")
    assert s.status == (
        "warn",
        "'x' does nothing in the lobby: s starts the game, e changes the settings, "
        "k removes a player.",
    )
    assert h.sent == []
    s.key("escape")  # not a stray key: nothing is said about it
    s.key("e")  # a key that works: the settings form, and the warning is over
    assert s.form is not None and s.status is None


def test_enter_alone_where_a_board_number_is_asked_says_what_is_asked(tmp_path):
    """Seen at 80x24: "'enter' is not a board number." named the key as the program does."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("lobby", round=0))
    s.key("k")
    assert s.prompt().startswith("Remove which player")
    s.key("enter")
    assert s.status == ("warn", "Type a board number first (Esc cancels).")
    assert s.sub == ("kick",) and h.sent == []
    s.key("escape")
    assert s.sub == ()


def test_a_moves_confirmation_is_over_once_the_feed_says_what_happened(tmp_path):
    """Seen at 80x24: " proposed the two words as the same thing" stayed on the status line
    after the feed said the proposal was rejected. A confirmation is a sentence about the
    player's move, and it goes once an update's feed, in sight, tells the table; under a card,
    which hides the feed, it stays."""
    h = Harness(tmp_path)
    s = h.session
    h.show(review_with())
    s.key("s")
    s.key("2")
    s.key("3")
    assert s.status == ("info", "You proposed that the two words name the same thing.")
    h.show(review_with(), feed=["Ann proposes that 'moon' and 'star' are the same thing."])
    assert s.status is None
    s.key("d")
    assert s.status == ("info", "You are done with the review.")
    s.key("f1")  # the feed is hidden: the status line is all there is
    h.show(review_with(), feed=["Ann is done reviewing."])
    assert s.status == ("info", "You are done with the review.")
    s.key("escape")
    h.show(review_with())  # an update that says nothing: it stays
    assert s.status == ("info", "You are done with the review.")


def test_what_a_newcomer_read_says_one_thing_at_80_columns(tmp_path):
    """From a newcomer's game at 80x24: the lobby left "120s" alone on a line, the conjurer
    was told to guess at their own word, and the help named challenge rules by numbers it never
    listed."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("lobby", round=0))
    rows = [screen.plain(r.line).rstrip() for r in screen.lobby_rows(s, 80)]
    assert all(cells(r) <= 80 for r in rows)
    assert not any(r.strip() in ("120s", "review", "review 120s") for r in rows), rows
    assert any("review\u00a0120s" in r for r in rows)
    h.show(view("commit", conjurer=0))  # Ann is the conjurer
    said = screen.plain(screen.panel(s, 80))
    assert "Summoning word: the thing you summon, written in secret" in unwrap_text(said)
    h.show(view("commit", conjurer=1))
    assert "Summoning word: your secret guess" in unwrap_text(screen.plain(screen.panel(s, 80)))
    assert s.submit("/help")
    text = unwrap_text("\n".join(middle_text(s, 60)))
    assert "1 it must be a noun; 2 it must be a thing without adjectives" in text
    assert "4 it cannot be or contain a written word." in text


def unwrap_text(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines())


def test_the_word_columns_stay_put_as_players_say_they_are_done(tmp_path):
    """Seen at 80x24: the spell and summoning words jumped sideways when the first player of
    the review said they were done (the presence column appeared only then)."""
    h = Harness(tmp_path)
    s = h.session

    def column_of(word: str) -> int:
        rows = [screen.plain(r.line) for r in screen.board_rows(s, 80)]
        return next(r.index(word) for r in rows if word in r)

    h.show(review_with())
    before = column_of("rocket"), column_of("comet")
    h.show(review_with(Bob={"summon": "rocket", "valid": True, "done": True}))
    assert (column_of("rocket"), column_of("comet")) == before
    h.show(review_with(Bob={"summon": "rocket", "valid": True, "connected": False}))
    assert (column_of("rocket"), column_of("comet")) == before


def test_a_spectators_results_give_way_when_the_next_phase_begins(tmp_path):
    """Seen with a friend watching: a spectator makes no move, so the results that open by
    themselves hid two rounds of play. They close as the next phase begins; results the
    spectator opens with F3 stay until closed."""
    h = Harness(tmp_path, spectator=True, name=None)
    s = h.session
    h.show(view("review", you=None))
    h.show(view("choose", you=None, round=2, conjurer=1, results=[result()]))
    assert s.overlay is not None and s.overlay.kind == "results"
    h.show(view("choose", you=None, round=2, conjurer=1, remaining=20.0, results=[result()]))
    assert s.overlay is not None  # the same phase: still there to read
    h.show(view("spell", you=None, round=2, conjurer=1, turn=1, results=[result()]))
    assert s.overlay is None
    s.key("f3")
    h.show(view("spell", you=None, round=2, conjurer=1, turn=2, results=[result()]))
    h.show(view("mark", you=None, round=2, conjurer=1, results=[result()]))
    assert s.overlay is not None and s.overlay.kind == "results"
    h.show(view("commit", you=None, round=2, conjurer=1, results=[result()]))
    s.key("escape")
    text = unwrap_text(screen.plain(screen.panel(s, 80)))
    assert "Summoning word: each player's secret guess" in text  # not "your" guess


def test_a_player_who_becomes_the_host_is_told_what_that_gives_them(tmp_path):
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", turn=1, host=1))
    assert s.status is None
    h.show(view("spell", turn=1, host=0))  # the host was away: the seat passed to Ann
    assert s.status == (
        "info",
        "You are the host now: /pause, /skip N and /kick N are yours (F1).",
    )


def test_the_share_lines_placeholder_name_is_asked_for_instead(tmp_path):
    """The lobby's share line says --name YOU; pasted as it is, a friend sat as "YOU"."""
    from argparse import Namespace

    from conjure.client.app import options_from_args
    from conjure.protocol.wording import NAME_PLACEHOLDER, join_command

    assert f"--name {NAME_PLACEHOLDER} " in join_command("ws://h:1", room="ABCD")
    pasted = Namespace(url="ws://h:1", name=NAME_PLACEHOLDER, room="ABCD")
    assert options_from_args(pasted).name is None  # the client asks "Your name: "
    assert options_from_args(Namespace(url="ws://h:1", name="Femi", room="ABCD")).name == "Femi"


def test_a_printed_command_runs_here_as_printed(tmp_path, monkeypatch):
    """A newcomer after ``make play`` copied "conjure play ..." and met "command not found": the
    command is ``conjure`` only when the shell finds this very program by that name."""
    from conjure.client.app import farewell
    from conjure.protocol.program import program_here
    from conjure.protocol.wording import not_on_path_note

    here = Path(sys.executable).parent
    monkeypatch.setenv("PATH", os.pathsep.join([str(here), os.environ.get("PATH", "")]))
    assert program_here() == "conjure" and not_on_path_note("conjure") is None
    monkeypatch.setenv("PATH", str(tmp_path))  # conjure is on no PATH
    monkeypatch.chdir(here.parent.parent)  # the project, as after make play
    assert program_here() == os.path.join(here.parent.name, "bin", "conjure")
    monkeypatch.chdir(tmp_path)
    assert program_here() == str(here / "conjure")
    (tmp_path / "conjure").write_text("#!/bin/sh\n")  # another conjure first on the PATH
    (tmp_path / "conjure").chmod(0o755)
    assert program_here() == str(here / "conjure")
    note = not_on_path_note(program_here())
    assert note is not None and str(here / "conjure") in note
    s = Harness(tmp_path).session
    s.token = "t" * 43
    s.room, s.name = "ABCD", "Ann"
    (line,) = farewell(s, local=False)[1:]
    assert line.startswith(f"  {here / 'conjure'} play ")


def test_leaving_says_how_to_come_back_only_when_one_can(tmp_path, monkeypatch):
    from conjure.client.app import farewell

    monkeypatch.setenv(
        "PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    )
    h = Harness(tmp_path)
    s = h.session
    s.token = "t" * 43
    h.show(view("spell", turn=1))
    lines = farewell(s, local=False)
    assert lines == [
        "Left room ABCD. Come back with:",
        f"  conjure play {URL} --room ABCD --name Ann",
    ]
    assert all(cells(line) <= 80 for line in lines)
    assert farewell(s, local=True) == []  # make play's server stops with the client
    h.show(view("over", winners=[0]))
    assert farewell(s, local=False) == [
        "Left room ABCD: its game is over.",
        "  Game over: Ann wins. Totals: Ann 0, Bob 0, Cat 0, Dan 0.",  # who won (named: no ★)
        "  Its log, in the server's replays folder: g1.jsonl",  # which of the server's logs
    ]
    assert farewell(s, local=True) == ["Left room ABCD: its game is over."]  # (make play's says)
    # the receipt it kept: what an organizer will ask for in a dispute
    h.show(view("over", winners=[0]), receipt=Receipt(9, "a" * 64))
    assert farewell(s, local=False)[3:] == [  # the path on a line of its own: copied whole
        "  Your receipt, for an audit of that log:",
        f"    {s.store.receipt_path('g1')}",
    ]

    from conjure.client.statefile import home_short as _home_short

    assert _home_short(Path.home() / ".local/state/conjure/receipts/g1.json") == (
        "~/.local/state/conjure/receipts/g1.json"
    )
    assert farewell(s, local=True) == ["Left room ABCD: its game is over."]  # make play says
    removed = Harness(tmp_path / "removed").session
    removed.token, removed.ended = "t" * 43, "the host removed you from the room"
    removed.room = "ABCD"
    # That seat is gone: no command that lies, but why it ended (a blank screen said nothing).
    assert farewell(removed, local=False) == ["Left room ABCD: the host removed you from the room."]
    watcher = Harness(tmp_path / "watcher", spectator=True, name=None)
    watcher.show(view("spell", you=None, turn=1))
    watcher.session.room = "ABCD"
    assert farewell(watcher.session, local=False) == ["Stopped watching room ABCD."]


def test_the_legend_says_what_the_check_mark_means_once_words_are_shown(tmp_path):
    """A newcomer saw 'moon ✓' beside words that scored nothing and wondered what it meant."""
    h = Harness(tmp_path)
    s = h.session

    def legend() -> str:
        return screen.plain(screen.board_rows(s, 80)[-1].line)

    h.show(view("spell", turn=1))
    assert "✓" not in legend()
    h.show(review_with())
    assert legend().endswith("◆ crystal · ✓ valid word") and cells(legend()) <= 80


def test_computer_players_are_marked_on_the_board_and_in_its_legend(tmp_path):
    """A friend who joined a table ``make play`` had filled could not tell the programs from the
    people. Their seats carry ⚙, the legend says what it means, and the columns keep their room
    (the mark stays with its seat, it does not move as the conjurer's ✦ does)."""
    h = Harness(tmp_path)
    s = h.session
    bots = {"Bob": {"computer": True}, "Dan": {"computer": True}}

    def rows() -> list[str]:
        return [screen.plain(r.line) for r in screen.board_rows(s, 80)]

    h.show(view("lobby", players=players(0)))
    assert "computer" not in rows()[-1] and "⚙" not in "".join(rows())
    for phase, kw in (("lobby", {}), ("spell", {"turn": 1}), ("review", {})):
        h.show(view(phase, players=players(0, **bots), **kw))
        board = rows()
        assert "⚙ computer" in board[-1], board[-1]
        named = {n: next(r for r in board if f" {n}" in r) for n in ("Ann", "Bob", "Cat", "Dan")}
        assert "Bob ⚙" in named["Bob"] and "Dan ⚙" in named["Dan"]
        assert "⚙" not in named["Ann"] + named["Cat"]
        assert all(cells(r) <= 80 for r in board), board
        assert not problems("\n".join(board), 80)
    # While the conjurer marks crystals the legend is at its longest: it still fits whole.
    words = spells(Bob="wheel", Cat="road", Dan="engine")
    marking = {n: {**bots.get(n, {}), **words[n]} for n in words}
    h.show(view("mark", players=players(0, **marking), conjurer=0))
    s.key("2")
    legend = rows()[-1]
    assert legend.endswith("⚙ computer · ◇ your pending crystal") and cells(legend) <= 80


def test_the_columns_stay_put_when_a_person_takes_a_computers_seat_back(tmp_path):
    """The ⚙ mark's room was kept only while someone carried it: the name column narrowed, and
    every word column moved, as a person came back to the seat a computer had kept."""
    h = Harness(tmp_path)

    def spell_column() -> int:
        return screen.plain(screen.board_rows(h.session, 80)[0].line).index("spell word")

    long = {"Cat": {"name": "Catherine Longname", "computer": True}}
    h.show(view("spell", turn=1, players=players(0, **long)))
    before = spell_column()
    h.show(view("spell", turn=1, players=players(0, Cat={"name": "Catherine Longname"})))
    assert spell_column() == before
    # a new game starts afresh: no room kept for a mark nobody has carried in it
    h.show(
        view("spell", turn=1, game_id="g2", players=players(0, Cat={"name": "Catherine Longname"}))
    )
    assert spell_column() == before - len(" ⚙")


def test_the_final_board_shows_nobody_away_and_no_conjurer_in_its_legend(tmp_path):
    """Seen at 80x24: once the game was over every computer player showed "away" (they go
    when it ends: nobody left the game), and the legend explained a ✦ nobody carried."""
    h = Harness(tmp_path)
    s = h.session
    gone = {"Bob": {"connected": False, "computer": True}, "Cat": {"kicked": True}}
    h.show(view("over", players=players(0, **gone), winners=[0]))
    rows = [screen.plain(r.line) for r in screen.board_rows(s, 80)]
    bob = next(r for r in rows if " Bob" in r)
    cat = next(r for r in rows if " Cat" in r)
    assert "away" not in bob and "removed" in cat  # the host removed them from the game
    standings = [screen.plain(r.line) for r in screen.standing_rows(s, 80)]
    assert any(r.strip().startswith("1. Bob ⚙ ") for r in standings), standings  # as on the board
    assert any("Cat (removed)" in r for r in standings)
    assert "conjurer" not in rows[-1] and "♛ host" in rows[-1]
    h.show(view("spell", turn=1, players=players(0, **gone)))
    rows = [screen.plain(r.line) for r in screen.board_rows(s, 80)]
    assert "away" in next(r for r in rows if " Bob" in r) and "✦ conjurer" in rows[-1]


def test_the_conjurer_is_told_what_the_crystals_are_for_before_being_asked_for_it(tmp_path):
    """A newcomer conjurer read "boards whose spell words lead to your idea", never having been
    asked for an idea: the summoning word is only asked after the crystals."""
    h = Harness(tmp_path)
    h.show(view("mark", players=players(0, **spells(Bob="wheel", Cat="road", Dan="engine"))))
    text = unwrap_text(screen.plain(screen.panel(h.session, 80)))
    assert "Think of a thing in the category and put crystals on the 2 to 3 boards" in text
    assert "you write it next, in secret." in text and "idea" not in text
    # In Dark Magic the secret word comes first: the line names it, and asks for no other.
    dark = Harness(tmp_path / "dark")
    dark.show(view("dark-commit", variant="dark-magic"))
    assert dark.session.submit("oak")
    marking = players(0, **spells(Bob="lumber", Cat="beaver", Dan="woodland"))
    dark.show(view("mark", variant="dark-magic", players=marking))
    text = unwrap_text(screen.plain(screen.panel(dark.session, 80)))
    assert "boards whose spell words you associate with your secret word 'oak'." in text
    assert "Think of" not in text and "write it next" not in text


def test_a_stray_key_in_the_review_says_which_keys_work(tmp_path):
    """Seen at 80x24: 'n' typed in the review did nothing at all, and said nothing."""
    h = Harness(tmp_path)
    s = h.session
    h.show(review_with())
    s.key("n")
    assert s.status == (
        "warn",
        "'n' does nothing in the review: c challenges a word, s proposes two words as the same "
        "thing, v votes, d says you are done.",
    )
    assert h.sent == [] and s.sub == ()


def test_the_lobbys_too_few_players_refusal_goes_once_more_have_joined(tmp_path):
    """Seen at 80x24: "A game needs at least 3 players; 1 seated so far." stayed on screen under
    "5 players seated", and the host took it for still true."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("lobby", players=players()[:1], round=0))
    s.key("s")
    assert s.status is not None and s.status[0] == "warn"
    said, whole = s.status[1], status_rows(s.status[1], 80)[1]
    assert said.startswith("A game needs at least 3 players; 1 seated so far.") and whole
    # ... and where more come from: a computer player, by the command that seats one here
    # (a host who had removed make play's computer players had no way back: found by review)
    assert said.endswith(f"A computer player: {program_here()} bot {URL} --room ABCD")
    h.show(view("lobby", players=players()[:1], round=0))  # nothing changed: it stays
    assert s.status is not None
    h.show(view("lobby", players=players()[:3], round=0))
    assert s.status is None


def test_the_host_is_asked_before_s_starts_the_game(tmp_path):
    """Seen: a host typed "sure" in the lobby (no Enter) and its s started the game before the
    friends had come; "help" typed there opened the settings with its e, and "lp" answered
    their first question. The start is asked first, and the rest of a mistyped burst does
    nothing."""
    now = [0.0]
    h = Harness(tmp_path, clock=lambda: now[0])
    s = h.session
    h.show(view("lobby", players=players()[:3], round=0))
    for k in "sure":
        s.key(k)
        now[0] += 0.15
    assert h.sent == [] and s.sub == ("start",)
    assert s.prompt() == "Start the game now, with these 3 players? y/n: "
    assert s.status is not None and s.status[1].startswith("Press y to start the game")
    now[0] += 1.5
    s.key("n")
    assert h.sent == [] and s.sub == () and s.status == ("info", "Not started: the room waits.")
    s.key("s")
    s.key("escape")
    assert s.sub == () and s.prompt().startswith("Lobby: s=start")
    assert s.status == ("info", "Not started: the room waits.")  # Esc says what n says
    s.key("s")
    s.key("y")
    assert h.sent == [StartGame()]
    h2 = Harness(tmp_path / "2", clock=lambda: now[0])
    h2.show(view("lobby", players=players()[:3], round=0))
    for k in "help":
        h2.session.key(k)
        now[0] += 0.15
    assert h2.session.form is None and h2.sent == []
    assert "does nothing in the lobby" in h2.session.status[1]


def test_esc_leaves_the_settings_unchanged_and_says_what_the_new_rooms_questions_are(tmp_path):
    """The help says "Esc: cancel a choice", yet a host who opened the settings had to answer
    all six questions to get out (seen)."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("lobby", players=players()[:3], round=0))
    s.key("e")
    assert s.form is not None and s.prompt().startswith("Variant:")
    assert "Esc keep settings" in s.key_help()  # said where the keys are listed
    s.submit("2")
    s.key("escape")
    assert s.form is None and h.sent == []
    assert s.status == ("info", "Settings unchanged.")
    assert s.prompt().startswith("Lobby: s=start")
    s.key("s")  # another question: what was said of the last is over (it stood under this one)
    assert s.prompt().startswith("Start the game now") and s.status is None
    new, _ = fresh(tmp_path / "new", name="Ann", create=True)
    new.on_connected()
    assert new.form is not None and new.form.for_create
    new.key("escape")
    assert new.form is not None and new.status == ("warn", SETTINGS_FOR_CREATE)
    assert cells(SETTINGS_FOR_CREATE) <= 80


@pytest.mark.parametrize("typed", ["?", "5", "!!", "help", "quit", "Exit"])
def test_a_word_with_no_letters_or_a_command_typed_as_a_word_is_asked_about(tmp_path, typed):
    """Seen: "?" and "5" went out as spell words and "!!" and "help" were locked in as secret
    words, all without a question (while "🚀" was asked about), and "quit" was asked about as
    a typo of "suit" with no word of Ctrl-Q."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", turn=0))
    assert s.submit(typed) is True and h.sent == []
    assert s.confirm_word == typed and s.status is not None
    if typed.casefold() in ("?", "help", "quit", "exit"):
        said = f"'{typed}' would be sent as your word: for help press F1, to quit Ctrl-Q."
        assert s.status[1] == said
    else:
        assert s.status[1] == f"'{typed}' has no letters: it matches only the very same text."
    assert cells(s.status[1]) <= 80
    s.key("y")
    assert [m.word for m in h.sent] == [typed]


def test_a_pasted_block_of_lines_is_one_line_to_mend_before_enter():
    assert pasted_line("kettle\r\nspoon\n\n  fork \n") == "kettle spoon fork"
    assert pasted_line("moon") == "moon" and pasted_line("\n\n") == ""


def test_an_unknown_command_is_said_and_leaves_the_line_empty(tmp_path):
    """Seen at 80x24: '/foo' stayed on the line and the next command typed was glued to it
    ("Unknown command /foo/say")."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", turn=1))
    assert s.submit("/foo") is True  # used: the line is cleared
    assert s.status == ("warn", "Unknown command /foo; /help lists them.")
    assert h.sent == []


def test_a_command_refused_for_who_you_are_leaves_the_line_and_one_to_mend_stays(tmp_path):
    """Seen with friends: "/kick 2" refused to a player who is not the host stayed on the line,
    and the "/pause" typed next went with it ("/kick 2/pause"). A chat to mend stays, and so
    does a board number mistyped."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", turn=1, host=2))
    assert s.submit("/kick 2") is True
    assert s.status == ("warn", "Only the host can do that.")
    assert s.submit("/say " + "\u202e") is False  # an unshown character: mend it
    h.show(view("spell", turn=1))
    assert s.submit("/kick 9") is False  # (the host: no board 9, to mend)
    s.connected = False
    assert s.submit("/say hello") is False and "your text is kept" in s.status[1]
    assert h.sent == []


def test_a_same_thing_proposal_only_you_would_vote_on_asks_first(tmp_path):
    """Seen at 80x24: 's 2 3' carried at once, 6 points each to two other players, when the
    other two seats had written the words in question (V1: only the proposer votes)."""
    h = Harness(tmp_path)
    s = h.session
    published = players(
        0,
        Ann={"summon": "plum", "valid": True},
        Bob={"summon": "ballet shoe", "valid": True},
        Cat={"summon": "running shoe", "valid": True},
        Dan={"summon": "ballet shoe", "valid": True},
    )
    h.show(view("review", players=published))
    for key in ("s", "2", "3"):
        s.key(key)
    assert h.sent == []  # not yet
    question = s.prompt()
    assert question == ("Only you vote, so 'ballet shoe' = 'running shoe' carries. Propose? y/n: ")
    assert cells(question) <= 80
    s.key("n")
    assert h.sent == [] and s.sub == ()
    for key in ("s", "2", "3", "y"):
        s.key(key)
    assert [type(x).__name__ for x in h.sent] == ["ProposeSame"]
    # With someone else to vote on it, the proposal goes at once.
    h.show(
        view(
            "review",
            players=players(
                0,
                **{
                    **{
                        n: {"summon": w, "valid": True}
                        for n, w in (
                            ("Ann", "plum"),
                            ("Bob", "ballet shoe"),
                            ("Cat", "running shoe"),
                            ("Dan", "fig"),
                        )
                    }
                },
            ),
        )
    )
    h.sent.clear()
    for key in ("s", "2", "3"):
        s.key(key)
    assert [type(x).__name__ for x in h.sent] == ["ProposeSame"]


def test_removing_a_player_from_the_lobby_asks_first(tmp_path):
    """Seen at 80x24: k and one wrong digit removed a friend at once."""
    now = [0.0]
    h = Harness(tmp_path, clock=lambda: now[0])
    s = h.session
    h.show(view("lobby", round=0))
    s.key("k")
    s.key("2")
    assert h.sent == [] and s.prompt() == "Remove Bob (board 2) from the room? y/n: "
    assert s.key_help().startswith("y yes · n/Esc no")  # the question's keys (seen at 80x24)
    s.key("x")
    assert h.sent == [] and s.status[1].startswith("Press y to remove them")
    s.key("y")  # right after the refused key: the rest of a mistyped burst, not an answer
    assert h.sent == [] and s.sub == ("kick", 1, "p1")
    now[0] += 1.5
    s.key("n")
    assert h.sent == [] and s.sub == ()
    for key in ("k", "2", "y"):
        s.key(key)
    # The player asked about is named, for the server to refuse the kick should the seat hold
    # someone else by the time it comes (someone left meanwhile).
    assert h.sent == [KickPlayer(seat=1, player_id="p1")]


def test_a_removed_player_is_named_so_in_the_final_standings(tmp_path):
    """Cal, removed in round 1, placed last as if he had played on ('replay' says removed)."""
    h = Harness(tmp_path)
    over = view("over", players=players(0, Cat={"kicked": True}), winners=[0])
    h.show(over)
    lines = [screen.plain(r.line) for r in screen.standing_rows(h.session, 80)]
    assert any("Cat (removed)" in line for line in lines), lines
    compact = [screen.plain(r.line) for r in screen.standing_rows(h.session, 80, compact=True)]
    assert any("Cat (removed)" in line for line in compact), compact


def test_question_mark_opens_the_help_where_keys_act_and_a_category_may_be_named(tmp_path):
    """A newcomer tried '?' for help in the lobby (it "did nothing"), and typed "footwear" to
    choose the Footwear card (refused: type a number)."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("lobby", round=0))
    s.key("?")
    assert s.overlay is not None and s.overlay.kind == "help"
    s.key("?")
    assert s.overlay is None
    h.show(view("choose"))
    assert s.submit("  animal ") and h.sent[-1] == ChooseCard(card=1)
    assert s.submit("veh") and h.sent[-1] == ChooseCard(card=0)  # the one card it begins
    assert not s.submit("zebra")
    assert s.status[1] == "Type the number of a category, 1-4, or its name."
    h.sent.clear()
    # A wrong number leaves the line (it stayed, to be deleted before the right one); a name
    # stays, to be mended.
    assert s.submit("7") is True and h.sent == []
    assert s.status[1] == "Type the number of a category, 1-4, or its name."


def test_the_word_columns_stay_put_as_the_conjurer_changes(tmp_path):
    """Seen at 80x24: the spell word column moved with the widest name-and-tags, so it jumped
    when the ✦ passed from a short name to a long one."""
    h = Harness(tmp_path)
    heads = []
    for conjurer in range(4):
        h.show(view("spell", turn=1, conjurer=conjurer))
        heads.append(screen.plain(screen.board_rows(h.session, 80)[0].line))
    assert len(set(heads)) == 1, heads


def test_a_proposal_nobody_may_vote_on_is_not_sent(tmp_path):
    """Seen at 80x24: you wrote 'blue', Ada 'indigo', Basil 'blue'; 's 1 3' asked "Only you vote,
    so 'blue' = 'indigo' carries" and the table then rejected it: you wrote one of the words
    too, so nobody votes (V1). The same for a challenge of a word everyone else wrote too."""
    h = Harness(tmp_path)
    s = h.session
    seats = {"Ann": "blue", "Bob": "indigo", "Cat": "blue", "Dan": "indigo"}
    h.show(
        view(
            "review",
            players=players(0, **{n: {"summon": w, "valid": True} for n, w in seats.items()}),
        )
    )
    for key in ("s", "1", "2"):
        s.key(key)
    assert h.sent == [] and s.sub == ()
    assert s.status[1].startswith("Nobody may vote on that")
    assert s.prompt().startswith("Review:")
    everyone = Harness(tmp_path / "2")  # all four wrote 'blue': a challenge nobody votes on
    same = {n: {"summon": "blue", "valid": True} for n in ("Ann", "Bob", "Cat", "Dan")}
    everyone.show(view("review", players=players(0, **same)))
    for key in ("c", "2"):  # said as the board is picked, not after a rule too (three keys)
        everyone.session.key(key)
    assert everyone.sent == [] and everyone.session.status[1].startswith("Nobody may vote")
    assert everyone.session.sub == ()


def test_kick_during_the_game_asks_first(tmp_path):
    """A re-check at 80x24: '/kick 2' removed a player for the whole game at once, while the
    lobby's removal now asked."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", turn=1))
    assert s.submit("/kick 2") and h.sent == []
    assert s.prompt() == "Remove Bob (board 2) from the game for good? y/n: "
    assert s.key_help().startswith("y yes · n/Esc no · ^Q quit") and "/say" not in s.key_help()
    s.key("n")
    assert h.sent == [] and s.kick_question is None and s.status[1] == "Nobody removed."
    assert s.submit("/kick 2")
    s.key("y")
    assert h.sent == [KickPlayer(seat=1, player_id="p1")] and s.kick_question is None
    assert s.submit("/skip 3") and h.sent[-1] == SkipPlayer(seat=2)  # this round only: at once


def test_a_small_table_is_not_offered_more_crystals_than_it_has_boards(tmp_path):
    """Seen at a 3-player table: "put crystals on the 2 to 4 boards" with three boards."""
    h = Harness(tmp_path)
    s = h.session
    three = spells(Ann="moon", Bob="wheel", Cat="road")  # Dan wrote none (skipped)
    h.show(view("mark", players=players(0, **three), conjurer=0))
    assert s.prompt() == "Toggle boards 1-3, Enter to confirm (2-3 crystals): "
    assert "on the 2 to 3 boards" in " ".join(screen.plain(screen.panel(s, 80)).split())
    h.show(view("mark", players=players(0, **three, **spells(Dan="engine")), conjurer=0))
    assert s.prompt().endswith("(2-4 crystals): ")
    two = spells(Ann="moon", Cat="road")  # Bob and Dan wrote none: exactly two boards
    h.show(view("mark", players=players(0, **two), conjurer=0))
    assert s.prompt() == "Toggle boards 1 3, Enter to confirm (2 crystals): "  # not "2-2"
    assert "on the 2 boards whose" in " ".join(screen.plain(screen.panel(s, 80)).split())


def test_nothing_moves_in_the_header_as_the_phases_change(tmp_path):
    """Seen at 80x24: the room code dropped in some phases and came back in the review, and the
    round, the conjurer and the category jumped ten columns with it."""
    h = Harness(tmp_path)
    card = CardView(index=0, text="Household appliance", stars=2)
    starts = set()
    for phase, kw in (("spell", {"turn": 1}), ("mark", {}), ("commit", {}), ("review", {})):
        h.show(view(phase, card=card, variant="dark-magic", **kw))
        head = screen.plain(screen.header(h.session, 80))
        assert len(head) == 80 and "Household appliance ★★" in head, head
        starts.add(tuple(head.index(t) for t in ("round", "conjurer", "Household")))
    assert len(starts) == 1, starts


def test_done_is_not_read_as_part_of_a_spell_word(tmp_path):
    """Seen at 80x24 in the review: "3 Cleo ⚙      done breakfast  ◆ salad ✓"."""
    h = Harness(tmp_path)
    words = spells(Ann="moon", Bob="wheel", Cat="breakfast", Dan="engine")
    h.show(view("review", players=players(0, **{n: {**w, "done": True} for n, w in words.items()})))
    row = next(
        screen.plain(r.line) for r in screen.board_rows(h.session, 80) if " Cat" in r.line[0][1]
    )
    assert re.search(r"done {2,}breakfast", row), row


def test_the_word_columns_stay_put_as_a_player_is_skipped_or_removed(tmp_path):
    """Seen at 80x24: "spell word" moved three columns right while a player was skipped."""
    h = Harness(tmp_path)

    def column() -> int:
        return screen.plain(screen.board_rows(h.session, 80)[0].line).index("spell word")

    h.show(view("spell", turn=0))
    before = column()
    for change in ({"skipped": True}, {"kicked": True}):
        h.show(view("spell", turn=0, players=players(0, Bob=change)))
        assert column() == before, change


def test_the_conjurer_does_not_come_and_go_with_the_phase_name(tmp_path):
    """Found by review: at 80 columns "spell words" dropped the conjurer where "crystals" kept
    them, and the category jumped 25 columns between phases."""
    h = Harness(tmp_path)
    card = CardView(index=0, text="Things found in a kitchen", stars=3)
    heads = []
    for phase, kw in (("spell", {"turn": 1}), ("mark", {}), ("commit", {}), ("review", {})):
        h.show(view(phase, card=card, players=players(0, Ann={"name": "Alexandria"}), **kw))
        heads.append(screen.plain(screen.header(h.session, 80)))
    assert all("conjurer Alexandria" in head for head in heads), heads
    assert len({head.index("Things found") for head in heads}) == 1, heads
    h.show(view("review", card=card, paused=True, players=players(0, Ann={"name": "Alexandria"})))
    assert screen.plain(screen.header(h.session, 80)).index("Things found") == heads[0].index(
        "Things found"
    )


def test_a_status_too_long_for_its_rows_is_cut_after_a_whole_word():
    """Seen at 80x24: "(The k…did  nothing: type again.)": the status's last row was shortened
    from a text that began with the row's indent, and that space made shorten cut mid-word."""
    from conjure.client.inputs import KEYS_IGNORED, keys_ignored
    from conjure.client.tablestate import status_rows

    said = (
        "'M' does nothing in the review: c challenges a word, s proposes two words as the same "
        "thing, v votes, d says you are done."
    )
    rows, whole = status_rows(f"{said} {KEYS_IGNORED}", 80)
    assert not whole and rows[-1].endswith("right after it did…"), rows
    assert all(cells(r) <= 80 for r in rows)
    for text in (said, "There is no board 5.", "x" * 150):
        rows, whole = status_rows(keys_ignored(text), 80)
        assert keys_ignored(text).endswith(KEYS_IGNORED) and (whole or text.startswith("x"))
    assert keys_ignored(said) == f"'M' does nothing in the review. {KEYS_IGNORED}"
    assert shorten(" lead and more words here", 12) == " lead and…"


def test_the_summoning_words_stay_put_as_the_spell_words_come_in(tmp_path):
    """Seen at 80x24: the summoning word column moved from column 36 to 44 when the crystals
    phase began, the spell words having come in one by one."""
    h = Harness(tmp_path)
    s = h.session

    def column() -> int:
        head = screen.plain(screen.board_rows(s, 80)[0].line)
        return head.index("summoning word")

    h.show(view("spell", turn=0))
    before = column()
    h.show(view("spell", turn=1, players=players(0, Ann={"spell": "the big red rocket"})))
    assert column() == before
    words = spells(Ann="the big red rocket", Bob="sky", Cat="astronomy")
    h.show(view("mark", players=players(0, **words)))
    assert column() == before
    long = "a spell word of thirty cells.."
    h.show(view("mark", players=players(0, **spells(Ann=long, Bob="sky", Cat="astronomy"))))
    assert column() > before  # a longer word than the room kept still fits whole
    assert long in screen.plain(screen.board_rows(s, 80)[1].line)


def test_enter_alone_says_what_is_asked_when_the_table_waits_for_you(tmp_path):
    """A newcomer pressed Enter on an empty line at their spell turn: nothing happened and
    nothing was said."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", turn=0))
    assert not s.submit("   ") and "Type your spell word first" in s.status[1]
    h.show(view("commit"))
    assert not s.submit("") and "Type your summoning word first" in s.status[1]
    h.show(view("choose"))
    assert not s.submit("") and "Type a category's number or name first" in s.status[1]
    h.show(view("spell", turn=1))  # someone else's turn: Enter alone is nothing to say
    s.status = None
    assert not s.submit("") and s.status is None
    prompt = "You are done; still open: v=vote c=challenge s=same: "
    assert cells(prompt) <= 78


def _conjure_script(folder: Path) -> Path:
    folder.mkdir(parents=True)
    script = folder / "conjure"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    return script


def test_program_here_prints_a_path_with_a_space_as_one_word(tmp_path, monkeypatch):
    """Found by review: a venv in "my games" printed ``my games/.venv/bin/conjure play …``,
    which a shell runs as the command ``my``."""
    from conjure.protocol.program import program_here

    script = _conjure_script(tmp_path / "my games" / ".venv" / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    monkeypatch.setattr(sys, "argv", [str(script)])
    monkeypatch.chdir(tmp_path)
    printed = f"{program_here()} play ws://h:1 --room ABCD"
    assert shlex.split(printed)[0] == str(script.relative_to(tmp_path))


def test_leaving_with_a_deleted_working_folder_still_says_how_to_come_back(tmp_path, monkeypatch):
    """Found by review: with the working folder removed, making the command's path relative to
    it raised, and leaving a game ended in a traceback instead of the lines."""
    from conjure.client.app import farewell

    script = _conjure_script(tmp_path / "venv" / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    monkeypatch.setattr(sys, "argv", [str(script)])
    s = Harness(tmp_path).session
    s.token = "t" * 43
    s.room, s.name = "ABCD", "Ann"
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    lines = farewell(s, local=False)
    assert any("play" in line and "--room ABCD" in line for line in lines)


def test_a_long_name_is_not_cut_for_the_spell_columns_blank_room(tmp_path):
    """Found by review: the spell column's room for a long word was kept while the board took the
    cells it lacked from the name: a 22-cell name read "Bartholomew…" beside a spell column of
    "sky" and blank cells. The room comes only from slack now."""
    h = Harness(tmp_path)
    name = "Bartholomew Fitzgerald"
    seated = [
        PlayerView(
            seat=p.seat,
            id=p.id,
            name=name if p.seat == 0 else p.name,
            colour=p.colour,
            connected=True,
            you=p.seat == 0,
            host=p.seat == 0,
            spell=word,
        )
        for p, word in zip(players(0), ["sky", "moon", "star", None], strict=True)
    ]
    h.show(view("spell", turn=3, players=seated))
    rows = [screen.plain(r.line) for r in screen.board_rows(h.session, 80)]
    assert all(len(r) <= 80 for r in rows)
    assert name in rows[1], rows[1]


def test_final_standings_put_every_score_in_one_column_with_an_emoji_name(tmp_path):
    """Found by review: the standings measured names in cells but padded them in characters, so
    a name with an emoji put its score one cell right of the others."""
    from conjure.protocol.cells import cells

    h = Harness(tmp_path)
    seated = [
        PlayerView(
            seat=p.seat,
            id=p.id,
            name="Ann🚀" if p.seat == 0 else p.name,
            colour=p.colour,
            connected=True,
            you=p.seat == 0,
            host=p.seat == 0,
            score=10 - p.seat,
        )
        for p in players(0)
    ]
    h.show(view("over", players=seated, winners=[0]))
    rows = [screen.plain(r.line) for r in screen.standing_rows(h.session, 80)][1:]
    ends = {cells(r.split(" ★")[0].rstrip()) for r in rows if r.strip()[:1].isdigit()}
    assert len(ends) == 1, rows


def test_two_rounds_that_end_at_once_are_both_on_the_card(tmp_path):
    """Seen: round 3 was scored and round 4 void at once (its conjurer removed); the card showed
    round 4 alone and round 3's points were never on screen."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("review", round=3, results=[result(1), result(2)]))
    void = msgspec.structs.replace(result(4), case="void", reason="Cat was removed", points={})
    h.show(view("choose", round=5, conjurer=0, results=[result(1), result(2), result(3), void]))
    assert s.overlay is not None and s.overlay.kind == "results"
    shown = " ".join(screen.plain(r.line) for r in screen.overlay_rows(s, 80))
    assert "Round 3: Vehicle" in shown and "Round 4: Vehicle" in shown
    assert "Round 2:" not in shown  # (already shown when it ended)
    s.close_card()
    s.key("f3")  # F3 shows the last round's, as before
    again = " ".join(screen.plain(r.line) for r in screen.overlay_rows(s, 80))
    assert "Round 4:" in again and "Round 3:" not in again


def test_the_lobby_says_whose_categories_and_the_dark_conjurer_is_not_bound_by_spell_words(
    tmp_path,
):
    """Seen: every player and spectator read "your categories" of the host's; and the Dark Magic
    conjurer, word locked in before any spell word, read that it must not contain one (D5)."""
    h = Harness(tmp_path)
    s = h.session
    own = RoomSettings(deck="default+custom", custom_cards=[Card(text="Bridge", stars=2)])
    h.show(view("lobby", you=1, settings=own))
    lobby = screen.plain(screen.panel(s, 80))
    assert "the room's own categories (1): Bridge ★★" in lobby and "your categories" not in lobby
    h.show(view("lobby", you=0, settings=own))
    assert "your categories (1): Bridge ★★" in screen.plain(screen.panel(s, 80))
    h.show(view("commit", variant="dark-magic"))
    said = screen.plain(screen.panel(s, 80))
    assert "they do not bind it." in said and "It must not be or contain" not in said
    h.show(view("commit", you=1, variant="dark-magic"))
    assert "It must not be or contain a spell word (-3)." in screen.plain(screen.panel(s, 80))


def test_a_category_the_header_shortens_is_whole_in_the_panel(tmp_path):
    """Seen at 80x24: "Thing you find in a… ★★" in the header through every phase, and rule 3
    (off the category) turns on the whole of it."""
    h = Harness(tmp_path)
    s = h.session
    long = CardView(index=0, text="Thing you find in a grandmother's attic", stars=2)
    h.show(view("spell", turn=1, card=long))
    assert "Thing you find in a grandmother's attic ★★" not in screen.plain(screen.header(s, 80))
    assert "Category: Thing you find in a grandmother's attic ★★" in screen.plain(
        screen.panel(s, 80)
    )
    short = CardView(index=0, text="Vehicle", stars=2)
    h.show(view("spell", turn=1, card=short))
    assert "Category:" not in screen.plain(screen.panel(s, 80))  # (the header has it whole)


def test_the_dark_magic_conjurer_is_told_as_many_crystals_as_the_table_allows(tmp_path):
    """Seen at a table of four: "you mark those you associate with it (0 to 4)", then the
    crystals prompt said "0 to 3" (three spell words)."""
    h = Harness(tmp_path)
    h.show(view("dark-commit", variant="dark-magic"))
    text = " ".join(middle_text(h.session))
    assert "you mark those you associate with it (0 to 3)" in " ".join(text.split())


def test_enter_alone_at_the_name_question_says_what_is_asked(tmp_path):
    """Seen with a copied join line: "Your name:" and Enter did nothing, and said nothing."""
    s, sent = fresh(tmp_path, name=None, room="ABCD")
    assert s.submit("") is False
    assert s.status == ("warn", "Type the name to play under (the others see it), then Enter.")
    assert sent == []


def test_the_dark_magic_conjurers_word_that_holds_a_spell_word_says_why_it_stands(tmp_path):
    """Seen by a newcomer: their "high heels" invalid for holding "heel", and the Dark Magic
    conjurer's own "high heels" ✓ beside it, with nothing to say why (D5)."""
    h = Harness(tmp_path)
    table = players(
        1,
        Ann={"summon": "high heels", "valid": True},
        Bob={"spell": "heel", "summon": "high heels", "valid": False,
             "invalid_reason": "'high heels' contains the written word 'heel'"},
        Cat={"spell": "shoe"},
    )  # fmt: skip
    h.show(view("review", you=1, variant="dark-magic", players=table))
    text = screen.plain(screen.boards(h.session, 80))
    assert "✓ written before the spell words, so they do not bind it" in text
    assert "(D5)" not in text  # a bare rule id, unexplained (seen by a newcomer)
    h.show(view("review", you=1, variant="standard", players=table))
    assert "(D5)" not in screen.plain(screen.boards(h.session, 80))


def test_a_chat_line_the_server_is_too_busy_for_comes_back_to_the_input(tmp_path):
    """Seen with friends: the 11th quick /say was refused after it had left the input line,
    with a sentence saying to say it again, and the line was gone."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", turn=1))
    assert s.submit("/say hello 11")
    s.on_message(Error(code="chat_busy", message="You are chatting faster than a player may."))
    assert s.settle_input("") == "/say hello 11"
    assert s.status == ("error", CHAT_BACK) and cells(CHAT_BACK) <= 2 * 78
    s.on_message(Error(code="chat_busy", message="You are chatting faster than a player may."))
    assert s.status == ("error", CHAT_BACK)  # a burst's second refusal says the same


@pytest.mark.parametrize("height", [24, 20, 16, 12])
def test_the_first_how_to_play_is_shown_in_order_and_says_when_lines_are_hidden(tmp_path, height):
    """Seen by a newcomer at 80x24: the how-to before the first join ended at step 5, with rows
    to spare and no sign that the scoring was left out (a later, shorter paragraph could have
    shown where an earlier one did not)."""
    from conjure.client.texts import HOWTO

    s, _sent = fresh(tmp_path, name="Ann", room="ZMQX")
    assert s.first_time
    lines = [screen.plain([*line]) for line in screen.middle(s, 80, height).lines]
    text = " ".join(" ".join(lines).split())
    shown = [para for para in HOWTO if " ".join(para.split()) in text]
    assert shown == HOWTO[: len(shown)], "paragraphs in their order, none after a gap"
    hidden = len(shown) < len(HOWTO)
    assert hidden == any("more line" in line and "F4" in line for line in lines), lines
    if height == 24:
        assert "How to play" in text


@pytest.mark.parametrize("code", ["too_many_guesses", "rate_limited"])
def test_a_resume_refused_for_now_keeps_the_saved_seat_for_enter_to_try_again(tmp_path, code):
    """A refusal that says "not now" (the address's budget of wrong room codes, say, spent by
    a friend at the same router) must not cost a player their saved seat."""
    from conjure.protocol.messages import Error, ResumeSeat

    store = StateDir(tmp_path / "st")
    store.save_seat(URL, "ABCD", seat=1, player_id="p1", token="T" * 43, name="Bob")
    s, sent = fresh(tmp_path, name="Bob", room="ABCD")
    assert s.token == "T" * 43
    s.connected = True
    assert s.join_messages() == [ResumeSeat(room="ABCD", token="T" * 43)]
    s.on_message(Error(code=code, message="Too many wrong room codes; try again in 4 s."))
    assert s.token == "T" * 43 and store.load_seat(URL, "ABCD") is not None
    assert s.join_field == "again" and "try again in 4 s" in (s.status or ("", ""))[1]
    s.submit("")
    assert s.join_field is None and sent[-1] == ResumeSeat(room="ABCD", token="T" * 43)


def test_a_line_typed_in_the_lobby_is_refused_as_the_lobby_not_as_a_turn(tmp_path):
    """Found by review: "Not your turn yet" in a lobby, where nobody has a turn."""
    h = Harness(tmp_path)
    h.show(view("lobby", you=1, round=0))
    assert h.session.submit("hello everyone") is False and h.sent == []
    assert h.session.status == (
        "warn",
        "The game has not started (the host starts it): nothing was sent (/say sends a chat).",
    )


def test_a_digit_that_is_no_number_is_no_board_and_no_proposal(tmp_path):
    """'²' is a key of French keyboards, and a digit to ``str.isdigit``, which ``int`` refuses:
    pressed while boards or proposals are picked by number, it was an internal error."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("mark", players=players(0, **spells(Bob="B", Cat="C", Dan="D"))))
    for k in "²³¹":
        s.key(k)
    assert h.sent == [] and s.status is None
    s.key("2")
    s.key("٣")  # an Arabic-Indic three is a number: board 3
    s.key("enter")
    assert [x.boards for x in h.sent] == [[1, 2]]
    same = ProposalView(
        id=0, kind="same", by=1, seats=[1, 2], words=["rocket", "star"], voters=[0, 3]
    )
    other = ProposalView(
        id=1, kind="same", by=2, seats=[1, 3], words=["rocket", "comet"], voters=[0, 2]
    )
    h.show(review_with(same, other))
    s.key("v")
    assert s.sub == ("vote",)  # which proposal?
    s.key("²")
    assert len(h.sent) == 1 and s.status is not None and "by its number" in s.status[1]
    assert parse_card("Tree ²").stars == 1  # not a count of stars (int() refuses it)


@pytest.mark.parametrize("where", ["joining", "review"])
def test_whatever_the_height_a_panel_line_left_out_is_said(tmp_path, where):
    """Found twice by newcomers at 80x24: the first how-to ended at step 5, the scoring gone,
    and an 8-player review's vote reasons went, both without a word, whenever what was shown
    filled its rows exactly."""
    h = Harness(tmp_path)
    s = h.session
    if where == "joining":
        s.first_time = True
    else:
        words = {n: {"summon": n.lower(), "valid": True} for n in ["Bob", "Cat", "Dan"]}
        reasons = {0: "a noun", 2: "it is a noun", 3: "fine by me"}
        challenge = ProposalView(
            id=0, kind="challenge", by=0, seats=[1], words=["bob"], rule="noun",
            voters=[0, 2, 3], votes={0: False, 2: False, 3: False}, reasons=reasons,
        )  # fmt: skip
        h.show(review_with(challenge, **words))
    for height in range(6, 40):
        top = screen.board_rows(s, 80) + screen.panel_rows(s, 80)
        shown = ["".join(t for _, t in line) for line in screen.middle(s, 80, height).lines]
        said = [line for line in shown if "more line" in line and "F4 shows them" in line]
        rule = next(i for i, line in enumerate(shown) if line.startswith("──"))
        hidden = len(top) - (rule - len(said))
        assert bool(said) == (hidden > 0), (height, hidden, shown)
        if said:
            assert said[0].startswith(f"… {hidden} more line")


def test_a_challenge_made_again_is_refused_here_and_the_keys_after_it_do_nothing(tmp_path):
    """Found by a newcomer: 'c 2 1 d' with Bob's word challenged under rule 1 already was sent,
    refused by the server after the 'd' had said done. Refused here, the 'd' does nothing."""
    now = [0.0]
    h = Harness(tmp_path, clock=lambda: now[0])
    s = h.session
    noun = ProposalView(
        id=0, kind="challenge", by=2, seats=[1], words=["rocket"], rule="noun", voters=[0, 3]
    )
    h.show(review_with(noun))
    for k in "c21d":
        s.key(k)
        now[0] += 0.1
    assert h.sent == [] and s.sub == ()
    assert s.status is not None and "'rocket' is already challenged" in s.status[1]
    assert "proposal 1; vote on it instead" in s.status[1]
    now[0] += 2.0
    for k in "c22":  # another rule is another challenge
        s.key(k)
    assert [type(x) for x in h.sent] == [ChallengeWord]


def test_a_line_typed_before_a_yes_no_question_waits_aside_until_it_is_answered(
    tmp_path, monkeypatch
):
    """Found by a newcomer: Ctrl-Q with 'cot' typed showed "Quit? y/n: cot", as if that were
    the answer, and a y went into the line instead of answering."""
    monkeypatch.setenv("CONJURE_LOCAL_SERVER", "1")
    h = Harness(tmp_path)
    s = h.session
    h.show(view("spell", players=players(0, Cat={"computer": True})))
    assert s.request_quit() is False
    assert s.settle_input("cot") == ""  # the line is the question's now
    assert s.wants_keys()
    s.key("n")
    assert s.quit_question is None
    assert s.settle_input("") == "cot"  # given back, whole
    assert s.settle_input("cot") is None


def test_while_reconnecting_enter_sends_nothing_and_says_the_text_waits(tmp_path):
    """Found by review: while the client came back, the key line said "Enter send" (to a
    spectator too, who never sends a line) and Enter said "Not in a room yet" to a player in
    the middle of a game."""
    h = Harness(tmp_path)
    s = h.session
    s.on_message(Seated(room="ABCD", seat=0, player_id="p0", token="t" * 43))
    h.show(view("commit"))
    assert "Enter send" in s.key_help(200)
    s.on_disconnected("reset", 1.0)
    assert "Enter send" not in s.key_help(200) and "^Q quit" in s.key_help(200)
    assert s.submit("volcano") is False  # kept on the input line
    assert s.status == ("warn", RECONNECTING_KEPT)
    assert not any(isinstance(m, CommitSummon) for m in h.sent)
    s.on_connected()
    s.on_message(Seated(room="ABCD", seat=0, player_id="p0", token="t" * 43))
    h.show(view("commit"))
    assert s.settle_input("volcano") is None  # the same question: the text stays
    assert "Enter send" in s.key_help(200)

    w = Harness(tmp_path / "w", spectator=True, name=None)
    ws = w.session
    ws.on_message(Watching(room="ABCD"))
    w.show(view("commit", you=None))
    ws.on_disconnected("reset", 1.0)
    assert "Enter send" not in ws.key_help(200)
    assert ws.submit("hello") is True  # let go of, as while watching
    assert ws.status is not None and "You are watching" in ws.status[1]


def lobby_of(n: int, you: int | None = None) -> View:
    """A lobby of ``n`` seats (more than the four the helpers name)."""
    seats = [
        PlayerView(
            seat=i,
            id=f"p{i}",
            name=f"P{i}",
            colour=i % 8,
            connected=True,
            you=i == you,
            host=i == 0,
        )
        for i in range(n)
    ]
    return view("lobby", round=0, you=you, players=seats, game_id=None)


def test_one_who_watches_a_full_lobby_instead_is_offered_a_seat_that_comes_free(tmp_path):
    """They could only quit and join again when a seat came free: now Enter takes it."""
    s, sent = fresh(tmp_path, name="Viv", room="ABCD")
    s.on_connected()
    s.on_message(Error(code="room_full", message="The room is full (8 players)."))
    s.submit("w")
    assert sent[-1] == Watch(room="ABCD")
    s.on_message(Watching(room="ABCD"))
    s.on_message(Update(view=lobby_of(8), feed=[]))
    assert s.prompt().startswith("watching") and "take the seat" not in s.key_help(200)
    s.on_message(Update(view=lobby_of(7), feed=["P7 left."]))
    assert s.prompt() == SEAT_FREE and "Enter take the seat" in s.key_help(200)
    assert s.submit("hello") is True and not isinstance(sent[-1], JoinRoom)  # let go of
    assert s.submit("") and sent[-1] == JoinRoom(room="ABCD", name="Viv")
    # Another took it first: still watching, told why, and offered again when one frees.
    s.on_message(Error(code="room_full", message="The room is full (8 players)."))
    assert s.spectator and s.status is not None and "full" in s.status[1]
    s.on_message(Update(view=lobby_of(8), feed=[]))
    assert s.prompt().startswith("watching")
    s.on_message(Update(view=lobby_of(7), feed=[]))
    assert s.submit("") and sent[-1] == JoinRoom(room="ABCD", name="Viv")
    s.on_message(Seated(room="ABCD", seat=7, player_id="p7", token="t" * 43))
    s.on_message(Update(view=lobby_of(8, you=7), feed=["Viv joined."]))
    assert not s.spectator and not s.watching_instead and s.token == "t" * 43
    assert s.prompt() != SEAT_FREE and "/say chat" in s.key_help(200)
    assert any("you took board 8" in line.text for line in s.feed)
    s.on_disconnected("reset", 1.0)
    assert s.on_connected() == [ResumeSeat(room="ABCD", token="t" * 43)]  # a seat, not a look


def test_the_share_and_come_back_lines_of_a_pinned_server_carry_its_pin(tmp_path, monkeypatch):
    """Seen with friends: the lobby's share line, pasted into a group chat, had no --pin, so
    every friend met the certificate unpinned (trust on first use)."""
    from conjure.client.app import farewell
    from conjure.client.screen import lobby_rows

    monkeypatch.setenv(
        "PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    )
    pin = "sha256:" + ":".join(["AB"] * 32)
    s, _ = fresh(tmp_path, name="Ann", room="ABCD", server="wss://127.0.0.1:8765")
    s.connected = s.joined = True
    s.pin = pin
    s.token = "t" * 43
    s.on_message(Update(view=view("lobby", round=0), feed=[]))
    shown = " ".join("".join(p[1] for p in row.line) for row in lobby_rows(s, 200))
    assert f"share: conjure play wss://127.0.0.1:8765 --pin {pin} --name YOU --room ABCD" in shown
    s.on_message(Update(view=view("spell", turn=1), feed=[]))
    come_back = farewell(s, local=False)[1]
    assert f"play wss://127.0.0.1:8765 --pin {pin} --room ABCD --name Ann" in come_back
    s.pin = None  # signed by an authority: nothing to pin
    assert "--pin" not in farewell(s, local=False)[1]


@pytest.mark.parametrize("width", [80, 60, 45])
def test_a_long_name_gives_way_to_the_reasons_on_the_results_card(tmp_path, width):
    """Found by review: the name column was as wide as the longest name, so a name of 24 wide
    characters left the reasons three cells at 60 columns (a card of 167 lines)."""
    h = Harness(tmp_path)
    dragon = "🐉🦄🐙🦀🐝🦋🐢🦊🐺🦁🐯🐻🐼🐨🐸🐵🦉🦅🦆🐧🐦🐤🐣🐥"
    seats = players(0, Bob={"name": dragon})
    h.show(view("choose", round=2, players=seats, results=[result()]))
    rows = screen.result_rows(h.session, result(), width)
    text = ["".join(t for _, t in row.line) for row in rows]
    assert all(cells(line) <= width for line in text)
    assert len(rows) <= 14, "\n".join(text)  # a reason takes a line or three, not dozens
    bob = next(line for line in text if "🐉" in line and "+3" in line)
    assert "…" in bob and "'spaceship'" in bob  # the name cut, the word on its line


def test_leave_asks_first_and_says_the_seat_is_given_up(tmp_path):
    """Found by review: /leave mid-game gave the seat up for good at once, and the terminal
    was left blank. It asks first (n keeps the seat, Ctrl-Q then quits without giving it up),
    and the goodbye says so."""
    from conjure.client.app import farewell
    from conjure.client.inputs import LEAVE_GAME

    h = Harness(tmp_path)
    s = h.session
    s.on_message(Seated(room="ABCD", seat=0, player_id="p0", token="t" * 43))
    h.show(view("spell", turn=1))
    assert s.submit("/leave") and s.quit_question == LEAVE_GAME
    assert not any(isinstance(m, Leave) for m in h.sent) and not s.quit_requested
    assert s.prompt() == LEAVE_GAME
    s.key("n")
    assert s.quit_question is None and s.token == "t" * 43
    s.submit("/leave")
    # Ctrl-Q over the question is a quit, not a yes: here the host's own question
    assert s.request_quit() is False and s.quit_question == HOST_QUITS
    assert s.token == "t" * 43 and not any(isinstance(m, Leave) for m in h.sent)
    s.key("n")
    s.submit("/leave")
    s.key("y")
    assert s.quit_requested and isinstance(h.sent[-1], Leave) and s.token is None
    assert h.store.load_seat(URL, "ABCD") is None
    assert farewell(s, local=False) == [
        "Left room ABCD: you gave up your seat in its game for good."
    ]


def test_a_move_key_on_a_card_in_the_review_closes_it_and_is_made(tmp_path):
    """Found by review: in the review, F1 (or F3, or ?) then d closed the card and did
    nothing else, with nothing said: the d was lost. Enter and Esc still only close it."""
    from conjure.protocol.messages import ReviewDone

    h = Harness(tmp_path)
    s = h.session
    h.show(view("review"))
    s.key("f1")
    assert s.overlay is not None
    s.key("escape")
    assert s.overlay is None and h.sent == []
    s.key("?")
    s.key("d")
    assert s.overlay is None and h.sent == [ReviewDone()]


def test_a_word_still_asked_about_when_the_summon_closes_is_said_not_sent(tmp_path):
    """Found by review: 'lollipopp' asked "Lock in anyway? y/n" and the clock ran out: the
    word was gone without a line, the row showed no word."""
    h = Harness(tmp_path)
    s = h.session
    h.show(view("commit"))
    assert s.settle_input("") is None
    assert s.submit("lollipopp") is True and s.confirm_word == "lollipopp"
    h.show(view("reveal"))
    s.settle_input("")
    assert s.confirm_word is None
    assert s.feed[-1].text == "not sent, the summon closed: 'lollipopp'"
    assert s.status == ("warn", "Not sent, the summon closed: 'lollipopp'.")


def test_in_a_dark_magic_room_how_to_play_starts_with_what_the_variant_changes(tmp_path):
    """Found by review: a joiner of a Dark Magic room read the standard steps ("starting with
    the conjurer", "crystals on 2 to 4 boards") as the room's."""
    from conjure.client.texts import HOWTO_DARK

    h = Harness(tmp_path)
    h.show(view("spell", variant="dark-magic"))
    h.session.key("f2")
    lines = screen.middle(h.session, 80, 19).lines
    text = " ".join("".join(t for _, t in line) for line in lines)
    first = "This room plays " + HOWTO_DARK
    assert " ".join(first.split()[:8]) in " ".join(text.split())
    assert text.index("This room plays Dark Magic") < text.index("1. Choose.")


def test_a_player_away_during_the_reveal_is_not_said_to_be_revealing(tmp_path):
    """Found by review: "away … locked in, revealing…" said of one who could not."""
    h = Harness(tmp_path)
    h.show(view("reveal", players=players(0, Bob={"committed": True, "connected": False},
                                           Cat={"committed": True})))  # fmt: skip
    bob = next(p for p in h.session.view.players if p.name == "Bob")
    cat = next(p for p in h.session.view.players if p.name == "Cat")
    assert screen._summon_cell(h.session, bob)[0] == "locked in, not revealed"
    assert screen._summon_cell(h.session, cat)[0] == "locked in, revealing…"


def test_a_removal_names_a_long_name_whole_on_one_line(tmp_path):
    """Found by review: "Remove Wolfeschleg…hausen (board 2) from the room? y/n:" with the
    whole line free; a name of 24 letters is named whole, the question still on one line."""
    h = Harness(tmp_path)
    s = h.session
    long = "Wolfeschlegelsteinhausen"
    h.show(view("spell", turn=1, players=players(0, Bob={"name": long})))
    assert s.submit("/kick 2")
    assert s.prompt() == f"Remove {long} (board 2) from the game for good? y/n: "
    assert cells(s.prompt()) <= 80
    wide = "東京都千代田区丸の内一丁目駅前広場の大きな"
    h.show(view("spell", turn=1, players=players(0, Bob={"name": wide})))
    s.key("n")
    assert s.submit("/kick 2") and cells(s.prompt()) <= 80
