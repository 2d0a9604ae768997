"""The lemma table answers exactly as lemminflect does, and only where it was built for it."""

from __future__ import annotations

import gzip
import subprocess
import sys
from importlib import resources

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lemminflect import getLemma

from conjure.protocol import lemmas

TOKENS = st.text(st.sampled_from("abcdefs-'é"), min_size=1, max_size=8).filter(
    lambda t: not t.startswith("[")
)
LEMMAS = st.lists(st.text(st.sampled_from("abcdefs "), min_size=1, max_size=6), max_size=2)


def _shipped() -> tuple[str, lemmas.LemmaTable]:
    data = resources.files("conjure.protocol.data").joinpath(lemmas.TABLE_FILE).read_bytes()
    return lemmas.parse(gzip.decompress(data).decode("utf-8"))


def test_the_shipped_table_is_for_the_installed_lemminflect() -> None:
    version, _ = _shipped()
    assert version == lemmas.installed_version(), (
        "rebuild the table: .venv/bin/python protocol/databuild/build_lemmas.py"
    )
    assert lemmas.packaged_table() is not None


def test_every_answer_in_the_table_is_lemminflects() -> None:
    _, table = _shipped()
    tokens = [*table.same, *table.guessed_same, *table.lemmas, *table.guessed]
    assert len(tokens) > 90_000
    wrong = [
        (token, guess)
        for token in tokens
        for guess in (False, True)
        if table.lookup(token, guess=guess)
        != tuple(getLemma(token, upos="NOUN", lemmatize_oov=guess))
    ]
    assert wrong == []


@pytest.mark.parametrize(
    ("token", "guess", "expected"),
    [
        ("rockets", True, ("rocket",)),  # a plural in lemminflect's dictionary
        ("geese", True, ("goose",)),
        ("rocket", False, ("rocket",)),
        ("paris", True, ("pari",)),  # the guess that the bare-"s" rule guards against
        ("paris", False, ()),  # not in the dictionary
    ],
)
def test_the_table_holds_the_words_a_game_compares(
    token: str, guess: bool, expected: tuple[str, ...]
) -> None:
    _, table = _shipped()
    assert table.lookup(token, guess=guess) == expected
    assert lemmas.noun_lemmas(token, guess=guess) == expected


def test_a_token_the_table_lacks_is_asked_of_lemminflect() -> None:
    _, table = _shipped()
    assert table.lookup("xyzzies", guess=True) is None
    assert lemmas.noun_lemmas("xyzzies", guess=True) == tuple(
        getLemma("xyzzies", upos="NOUN", lemmatize_oov=True)
    )
    assert lemmas.noun_lemmas("xyzzies", guess=False) == ()


def test_a_table_built_with_another_lemminflect_is_not_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(lemmas, "installed_version", lambda: "0.0.1")
    assert lemmas.packaged_table.__wrapped__() is None


@pytest.mark.parametrize("damage", ["cut", "garbage", "not gzip", "not utf-8", "empty"])
def test_a_damaged_table_is_not_used(damage: str) -> None:
    data = resources.files("conjure.protocol.data").joinpath(lemmas.TABLE_FILE).read_bytes()
    version = lemmas.installed_version()
    assert lemmas.read_table(data, version) is not None
    damaged = {
        "cut": data[: len(data) // 2],
        "garbage": data[:40] + bytes(range(256)) * 4 + data[40:],
        "not gzip": b"# lemminflect " + str(version).encode() + b"\n[same]\nrocket\n",
        "not utf-8": gzip.compress(b"# lemminflect 0.2.3\n[same]\n\xff\xfe\n"),
        "empty": b"",
    }[damage]
    assert lemmas.read_table(damaged, version) is None


@given(st.dictionaries(TOKENS, st.tuples(LEMMAS, LEMMAS), max_size=20), TOKENS)
def test_a_rendered_table_reads_back_as_the_answers_it_was_given(
    given_answers: dict[str, tuple[list[str], list[str]]], other: str
) -> None:
    # What a dictionary holds it gives the same with or without guessing (lemminflect's rule).
    answers = {
        token: (tuple(known), tuple(known) if known else tuple(guessed))
        for token, (known, guessed) in given_answers.items()
    }
    version, table = lemmas.parse(lemmas.render("1.2.3", answers))
    assert version == "1.2.3"
    for token, (known, guessed) in answers.items():
        assert table.lookup(token, guess=False) == known
        assert table.lookup(token, guess=True) == guessed
    if other not in answers:
        assert table.lookup(other, guess=True) is None


def test_a_table_cannot_hold_answers_that_differ_by_guessing_or_it_cannot_write() -> None:
    with pytest.raises(ValueError, match="guessing"):
        lemmas.render("1", {"leaves": (("leave",), ("leaf",))})
    with pytest.raises(ValueError, match="cannot hold"):
        lemmas.render("1", {"s": ((), ("",))})  # lemminflect's guess for "s"
    assert lemmas.noun_lemmas("s", guess=True) == ("",)  # so it is asked of lemminflect


def in_a_fresh_process(*lines: str) -> None:
    """Run the lines in a new interpreter (what it has imported is this test's question)."""
    subprocess.run([sys.executable, "-c", "import sys\n" + "\n".join(lines)], check=True)


def test_comparing_known_words_does_not_load_lemminflect() -> None:
    in_a_fresh_process(
        "from conjure.protocol.words import same_word",
        "assert same_word('rockets', 'rocket') and not same_word('gas', 'ga')",
        "assert same_word('Geese', 'goose') and same_word('fire trucks', 'fire truck')",
        "assert 'lemminflect' not in sys.modules, 'lemminflect was loaded'",
    )


def test_a_server_loads_lemminflect_before_a_room_meets_a_word_the_table_lacks() -> None:
    in_a_fresh_process(
        "from conjure.server.service import warm_up_words",
        "warm_up_words()",
        "assert 'lemminflect' in sys.modules",
        "from conjure.protocol.lemmas import packaged_table",
        "assert packaged_table.cache_info().currsize == 1",
    )
