"""The table talk's sentences (server/feed.py), as the rulebook's examples tell them."""

from __future__ import annotations

from conjure.protocol import events as ev
from conjure.server import feed
from conjure.server.rules import commands as c
from tests.rulestable import NAMES, Table


def test_the_reveal_names_whose_summon_closed_on_them_with_no_word():
    """Seen with friends: a summon that closed on Femi told the others nothing of her; the line
    that publishes the words now says who wrote none."""
    t = Table(4)
    ann, bob, cy, dee = NAMES[:4]
    t.choose(0)
    t.spell_by({ann: "wheel", bob: "road", cy: "engine", dee: "horn"})
    t.mark(bob, cy)
    t.commit(ann, "car")
    t.commit(bob, "car")
    t.commit(cy, "bus")  # Dee writes nothing: the clock closes the summon
    t.timeout()
    before = len(t.events)
    for name, word in ((ann, "car"), (bob, "car"), (cy, "bus")):
        t.reveal(name, word)
    lines = feed.describe(t.g, t.events[before:])
    published = next(line for line in lines if line.startswith("All words are revealed"))
    assert published == (
        f"All words are revealed: {ann} 'car', {bob} 'car', {cy} 'bus'. No word from {dee}."
    )


def test_the_reveal_says_nothing_more_when_everyone_wrote_a_word():
    t = Table(3)
    ann, bob, cy = NAMES[:3]
    t.choose(0)
    t.spell_by({ann: "wheel", bob: "road", cy: "engine"})
    t.mark(bob, cy)
    before = len(t.events)
    t.summon({ann: "car", bob: "car", cy: "bus"})
    lines = feed.describe(t.g, t.events[before:])
    published = next(line for line in lines if line.startswith("All words are revealed"))
    assert "No word from" not in published and "Never revealed" not in published


def reviewing(summons: dict[str, str]) -> Table:
    """Four players in round 1's review, Bob's and Cy's boards marked, with these words."""
    t = Table(4)
    ann, bob, cy, dee = NAMES[:4]
    t.choose(0)
    t.spell_by({ann: "wheel", bob: "road", cy: "engine", dee: "horn"})
    t.mark(bob, cy)
    t.summon(summons)
    return t


def told(t: Table, command: c.AnyCommand) -> list[str]:
    """The table talk of one command's events."""
    before = len(t.events)
    t.run(command)
    return feed.describe(t.g, t.events[before:])


def test_a_proposal_says_who_votes_on_it_and_the_proposers_own_vote_is_named_so():
    """Seen: "Vote!" told everyone, a newcomer with no vote to cast included, and the proposer's
    own yes read "root votes yes on proposal 2: 'proposed it'."."""
    ann, bob, cy, dee = NAMES[:4]
    t = reviewing({ann: "car", bob: "car", cy: "bus", dee: "banana"})
    lines = told(t, c.Challenge(now=t.now, seat=t.seat(ann), target=t.seat(dee), rule="category"))
    assert lines[0] == (
        f"Proposal 1: {ann} challenges {dee}'s 'banana': it must fit the category. "
        f"{ann}, {bob} and {cy} vote on it."  # the proposer too: their own vote comes next
    )
    assert lines[1] == f"{ann} votes yes on proposal 1 (the proposer's own vote)."
    said = told(t, c.Vote(now=t.now, seat=t.seat(bob), proposal=0, yes=False, reason="fruit"))
    assert said[0] == f"{bob} votes no on proposal 1: 'fruit'."


def test_a_same_thing_proposal_names_whose_words_they_are():
    """Seen: two boards held 'steel', and "'iron' and 'steel'" did not say which."""
    ann, bob, cy, dee = NAMES[:4]
    t = reviewing({ann: "car", bob: "steel", cy: "steel", dee: "iron"})
    line = told(t, c.ProposeSame(now=t.now, seat=t.seat(dee), a=t.seat(dee), b=t.seat(cy)))[0]
    assert line.startswith(
        f"Proposal 1: {dee} proposes that {dee}'s 'iron' and {cy}'s 'steel' are the same thing."
    ), line


def test_a_conjurer_who_marks_no_board_placed_no_crystals():
    """Dark Magic lets the conjurer mark none: it read "Ada placed crystals on the boards of
    nobody."."""
    t = Table(3)
    t.choose(0)
    marked = ev.BoardsMarked(round=1, seat=0, boards=())
    assert feed.describe(t.g, [marked]) == [f"{NAMES[0]} placed no crystals."]


def test_one_crystal_is_said_as_one():
    """It read "Ann placed crystals on the boards of Bob." of one board."""
    t = Table(3)
    t.choose(0)
    one = ev.BoardsMarked(round=1, seat=0, boards=(1,))
    assert feed.describe(t.g, [one]) == [f"{NAMES[0]} placed a crystal on {NAMES[1]}'s board."]
    two = ev.BoardsMarked(round=1, seat=0, boards=(1, 2))
    assert feed.describe(t.g, [two]) == [
        f"{NAMES[0]} placed crystals on the boards of {NAMES[1]} and {NAMES[2]}."
    ]


def test_a_challenge_names_every_board_its_ruling_reaches():
    """Seen: "Bob challenges Ada's 'paper'" also cost Cleo and Basil their 'paper'."""
    ann, bob, cy, dee = NAMES[:4]
    t = reviewing({ann: "paper", bob: "card", cy: "paper", dee: "papers"})
    line = told(t, c.Challenge(now=t.now, seat=t.seat(bob), target=t.seat(ann), rule="noun"))[0]
    assert line.startswith(
        f"Proposal 1: {bob} challenges {ann}'s 'paper' (and {cy}'s and {dee}'s): it "
    ), line
