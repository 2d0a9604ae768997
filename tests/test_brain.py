"""The computer players' word sense (client/bots/brain.py and its committed data)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from client.bots import brain
from client.bots.brain import Brain, guess, is_stopped, knows, load_data, resolve, unsafe_summon
from protocol.deck import default_deck
from protocol.words import contains_written, same_word

DECK = [card.text for card in default_deck()]


@pytest.fixture(scope="module")
def data() -> brain.Data:
    return load_data()


def test_data_loads_fast_and_is_consistent() -> None:
    load_data.cache_clear()
    start = time.perf_counter()
    data = load_data()
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"loading took {elapsed:.2f} s"
    n, dims = data.vecs.shape
    assert n == len(data.words) == len(data.zipf) and 64 <= dims <= 192
    norms = np.linalg.norm(data.vecs, axis=1)
    assert np.allclose(norms, 1.0, atol=0.01)
    assert len(data.anc_ptr) == n + 1
    assert len(data.spellable) > 3000


def test_every_deck_category_has_enough_members(data: brain.Data) -> None:
    assert len(DECK) >= 66
    for text in DECK:
        cat = resolve(text)
        assert cat.known and cat.how == "deck", text
        assert len(cat.members) >= 20, (text, len(cat.members))
        assert len(set(cat.members.tolist())) == len(cat.members), text


def test_stoplist_is_respected_everywhere(data: brain.Data) -> None:
    assert is_stopped("penis") and is_stopped("Bullshit") and is_stopped("hot sex")
    assert not is_stopped("cat")
    for text in DECK:
        assert not any(is_stopped(data.words[i]) for i in resolve(text).members), text
    assert not any(is_stopped(data.words[i]) for i in data.spellable)
    bot = Brain(3)
    for text in DECK[:20]:
        assert not is_stopped(bot.spell_word(text, []))
        assert not is_stopped(bot.dark_summon(text))
    assert unsafe_summon("cocktail", []) is False
    assert unsafe_summon("cock", []) is True


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    category=st.sampled_from(DECK),
    seed=st.integers(0, 2**16),
    picks=st.lists(st.integers(0, 10**9), min_size=1, max_size=7),
    from_members=st.lists(st.integers(0, 10**9), max_size=4),
    split=st.integers(1, 4),
)
def test_summon_never_contains_a_written_word(
    category: str, seed: int, picks: list[int], from_members: list[int], split: int
) -> None:
    data = load_data()
    members = resolve(category).members
    # random vocabulary words, plus some of the category's own members (the hard case:
    # the best answers are then often ruled out)
    written = [data.words[p % len(data.words)] for p in picks]
    written += [data.words[members[p % len(members)]] for p in from_members]
    marked = written[: min(split, len(written))]
    word = Brain(seed).summon(category, marked, written)
    assert word
    for w in written:
        assert not contains_written(word, w), (word, w)
    assert not is_stopped(word)
    for dark in (False, True):
        for w, _ in Brain(seed).rank_summons(category, marked, written, k=5, dark_magic=dark):
            assert not any(contains_written(w, x) for x in written), (w, written)


def test_summon_avoids_words_hidden_inside() -> None:
    # "dogfish" hides "dog": the table may rule it out, so a bot never risks it
    ranked = guess("Fish", ["dog", "shark", "sea"], k=40)
    assert all(w != "dogfish" for w, _ in ranked)
    ranked = guess("Vehicle", ["fire", "ladder", "siren"], k=40)
    assert all(not contains_written(w, "fire") for w, _ in ranked)


def test_guess_finds_the_spaceship() -> None:
    ranked = guess("Vehicle", ["freighter", "hydrogen", "rocket"])
    top3 = [w for w, _ in ranked[:3]]
    assert "spaceship" in top3
    assert all(w not in ("rocket", "freighter") for w, _ in ranked)
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)


def test_plural_and_case_are_understood() -> None:
    assert guess("vehicles", ["Freighters", "HYDROGEN", "rockets"])[0][0] == "spaceship"


def test_seeds_differ_sometimes_but_repeat_exactly() -> None:
    marked = ["keys", "concert", "pedal"]
    said = {Brain(seed).summon("Musical instrument", marked, marked) for seed in range(30)}
    assert len(said) > 1
    words = {Brain(seed).spell_word("Animal", []) for seed in range(10)}
    assert len(words) > 1
    a, b = Brain(42), Brain(42)
    for _ in range(3):
        assert a.spell_word("Food", ["cheese"]) == b.spell_word("Food", ["cheese"])
        assert a.summon("Food", ["italy", "cheese"], ["italy", "cheese"]) == b.summon(
            "Food", ["italy", "cheese"], ["italy", "cheese"]
        )


def test_spell_words_are_new_common_nouns(data: brain.Data) -> None:
    bot = Brain(5)
    written: list[str] = []
    for _ in range(6):
        word = bot.spell_word("Animal", written)
        assert word in data.index
        assert not any(same_word(word, w) for w in written)
        written.append(word)
    dark = bot.spell_word("Vehicle", ["rocket", "bus"], dark_magic=True)
    assert not any(same_word(dark, w) for w in ("rocket", "bus"))


def test_plan_marks_two_to_four_words_pointing_at_a_valid_member() -> None:
    bot = Brain(1)
    table = {1: "freighter", 2: "hydrogen", 3: "rocket", 4: "banana", 5: "pillow"}
    plan = bot.plan("Vehicle", table)
    assert 2 <= len(plan.marks) <= 4 and set(plan.marks) <= set(table)
    assert plan.summon in {bot_word for bot_word, _ in guess("Vehicle", [], k=500)}
    assert not unsafe_summon(plan.summon, table.values())
    assert bot.target == plan.summon
    assert bot.mark("Vehicle", table) == Brain(1).plan("Vehicle", table).marks
    # the conjurer's own guessers agree with the plan
    marked = [table[s] for s in plan.marks]
    assert Brain(0, noise=0).summon("Vehicle", marked, list(table.values())) == plan.summon


def test_dark_magic_conjurer() -> None:
    bot = Brain(2)
    secret = bot.dark_summon("Fruit")
    assert secret in {load_data().words[i] for i in resolve("Fruit").members[:25]}
    marks = bot.mark("Fruit", {1: "monkey", 2: "yellow", 3: "tractor"}, dark_magic_word="banana")
    assert marks == [1, 2]
    assert bot.mark("Fruit", {1: "tractor", 2: "sock"}, dark_magic_word="banana") == []
    many = {i: w for i, w in enumerate(["peel", "monkey", "yellow", "split", "bunch", "smoothie"])}
    assert len(bot.mark("Fruit", many, dark_magic_word="banana")) <= 4


def test_dark_magic_summon_prefers_words_away_from_unmarked_ones() -> None:
    bot = Brain(0, noise=0)
    marked, written = ["yellow"], ["yellow", "citrus"]
    plain = dict(bot.rank_summons("Fruit", marked, written, k=50))
    dark = dict(bot.rank_summons("Fruit", marked, written, k=50, dark_magic=True))
    # an unmarked "citrus" argues against the citrus fruits, not against the banana
    assert plain["orange"] - dark["orange"] > plain["banana"] - dark["banana"] + 0.05


def test_custom_categories_fall_back_gracefully(data: brain.Data) -> None:
    assert knows("Animal") and knows("animals") and not knows("Kind of cheese")
    breed = resolve("Dog breed")
    assert breed.how == "hypernym"
    assert "poodle" in {data.words[i] for i in breed.members[:20]}
    wild = resolve("Wild animal")
    assert wild.how == "deck-head" and wild.known
    nonsense = resolve("Xyzzy qwrtp")
    assert nonsense.how == "unknown" and not nonsense.known and len(nonsense.members) >= 100
    bot = Brain(9)
    for text in ("Dog breed", "Xyzzy qwrtp", "Things in a kitchen", "Planet"):
        word = bot.summon(text, ["moon", "cheese"], ["moon", "cheese", "rocket"])
        assert word and not unsafe_summon(word, ["moon", "cheese", "rocket"])
        assert bot.spell_word(text, ["moon"])
    assert bot.choose_card([("Xyzzy qwrtp", 1), ("Animal", 1)]) == 1


def test_choose_card_returns_an_index() -> None:
    cards = [(text, 1 + i % 3) for i, text in enumerate(DECK[:5])]
    picks = {Brain(seed).choose_card(cards) for seed in range(20)}
    assert picks <= set(range(5)) and len(picks) > 1
    with pytest.raises(ValueError):
        Brain(0).choose_card([])


@pytest.mark.parametrize(
    ("kind", "word", "kwargs", "expected"),
    [
        ("category", "spaghetti", {"category": "Animal"}, True),
        ("category", "cow", {"category": "Animal"}, False),
        ("category", "Cows", {"category": "Animal"}, False),
        ("written-word", "hydrogen bomb", {"written": ["hydrogen", "cat"]}, True),
        ("written-word", "fire trucks", {"written": ["truck"]}, True),
        ("written-word", "dogfish", {"written": ["dog"]}, True),
        ("written-word", "carpet", {"written": ["car"]}, False),
        ("written-word", "spaceship", {"written": ["rocket"]}, False),
        ("noun", "happy", {}, True),
        ("noun", "dog", {}, False),
        ("no-adjectives", "yellow sunflower", {}, True),
        ("no-adjectives", "hot dog", {}, False),
        ("no-adjectives", "fire truck", {}, False),
        ("same", "sofa", {"other": "couch"}, True),
        ("same", "space ship", {"other": "spaceship"}, True),
        ("same", "Rockets", {"other": "rocket"}, True),
        ("same", "cat", {"other": "dog"}, False),
    ],
)
def test_votes(kind: str, word: str, kwargs: dict, expected: bool) -> None:
    agrees, reason = Brain(0).vote(kind, word, **kwargs)
    assert agrees is expected, reason
    assert isinstance(reason, str) and reason


def test_vote_rejects_unknown_kinds() -> None:
    with pytest.raises(ValueError):
        Brain(0).vote("colour", "red")
    with pytest.raises(ValueError):
        Brain(0).vote("same", "red")
