"""What a mistyped word may have meant (client.typos): the slips players make, and the words a
person at the table would expect to be offered for them."""

from __future__ import annotations

import pytest

from conjure.client.typos import meant, slips


@pytest.mark.parametrize(
    ("typed", "first"),
    [
        ("eagel", "eagle"),  # two letters swapped: difflib offered evangel, easel, eagre
        ("hrose", "horse"),  # a swap goes before a letter dropped ("rose")
        ("baer", "bear"),
        ("wlof", "wolf"),
        ("feathre", "feather"),  # before "feature", a letter changed
        ("dgo", "dog"),
        ("tigre", "tiger"),
        ("shraks", "shark"),  # a plural's slip, found in its singular
        ("rlephant", "elephant"),  # the first letter mistyped
        ("umbrela", "umbrella"),  # a letter left out
        ("bananna", "banana"),  # one too many
        ("elefant", "elephant"),  # two slips in a row: the fallback finds it
        ("ancher", "anchor"),
    ],
)
def test_a_slip_is_offered_the_word_it_was_meant_for_first(typed, first):
    assert meant(typed)[0] == first


def test_nothing_unlikely_is_offered():
    assert meant("smartphone") == []  # (difflib alone offered "marathoner")
    assert meant("pikachu") == []
    assert "penn" not in meant("peny")  # a name is no slip for a word
    assert "dago" not in meant("dgo")  # nor a slur (offered by the whole of WordNet)
    assert meant("xy") == [] and meant("t-rex") == [] and meant("space ship") == []
    assert len(meant("peny")) <= 3


@pytest.mark.parametrize(
    ("typed", "name"),
    [("bethoven", "beethoven"), ("mozrt", "mozart"), ("einstien", "einstein"), ("londn", "london")],
)
def test_a_name_is_offered_when_no_common_noun_is_as_near(typed, name):
    """A newcomer's "bethoven" was asked about with no word offered (seen at 80x24)."""
    assert meant(typed)[0] == name


def test_slips_count_a_swap_of_neighbours_as_one():
    assert slips("eagel", "eagle") == 1
    assert slips("hrose", "horse") == 1
    assert slips("abc", "abc") == 0
    assert slips("elefant", "elephant") == 2
    assert slips("", "dog") == 3 and slips("dog", "") == 3
