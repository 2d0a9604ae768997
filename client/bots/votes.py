"""How a computer player takes a side on a challenge or a "same thing" proposal."""

from __future__ import annotations

import functools
import re

import numpy as np

from conjure.client.bots.categories import _content_tokens, resolve
from conjure.client.bots.tuning import (
    CATEGORY_FIT_THRESHOLD,
    SAME_FAMILY_SIZE,
    SAME_FAMILY_THRESHOLD,
    SAME_THING_THRESHOLD,
)
from conjure.client.bots.worddata import _PREPOSITIONS, _THINGS, _lookup, _vector, load_data
from conjure.protocol.words import normalize, same_word, word_data


def _is_noun_phrase(word: str) -> bool:
    from conjure.protocol.words import is_known_noun

    return _lookup(word) is not None or is_known_noun(word)


def _vote_noun(word: str) -> tuple[bool, str]:
    if _is_noun_phrase(word):
        return False, f'"{word}" is a noun'
    tokens = normalize(word).replace("-", " ").split()
    other = word_data().other
    if tokens and tokens[-1] in other and not _is_noun_phrase(tokens[-1]):
        return True, f'"{tokens[-1]}" is not a noun'
    return False, f'I do not know "{word}", so I give it the benefit of the doubt'


def _vote_adjectives(word: str) -> tuple[bool, str]:
    tokens = normalize(word).replace("-", " ").split()
    if len(tokens) < 2 or _lookup(word) is not None:
        return False, f'"{word}" is the name of a thing'
    from conjure.protocol.words import is_known_noun

    if is_known_noun(word):
        return False, f'"{word}" is the name of a thing'
    other = word_data().other
    adjectives = load_data().adjectives
    for t in tokens[:-1]:
        if t in adjectives or (t in other and not _is_noun_phrase(t)):
            return True, f'"{t}" describes the {tokens[-1]}'
    return False, f'"{word}" reads as a compound name'


def _vote_category(word: str, category: str) -> tuple[bool, str]:
    data = load_data()
    cat = resolve(category)
    kind = _category_phrase(category)
    # Only a category of the game's deck is one the bot knows member by member; of any other
    # ("Board Games": the deck's games, ranked by "board") it does not speak as if it did: it
    # defended its own wild guesses ('"basketball" is one of the Board Games'; seen).
    if cat.how == "deck":
        member = f'"{word}" is {kind}'
    else:
        member = f'"{word}" may be {kind}: I know this category only roughly'
    i = _lookup(word)
    if i is not None and i in set(cat.members.tolist()):
        return False, member
    if cat.how in ("hypernym", "deck-head") and i is not None:
        head = _lookup(_content_tokens(category)[-1]) if _content_tokens(category) else None
        if head is not None and head in data.ancestors(i):
            return False, member
    v = _vector(word)
    if v is None or cat.vec is None:
        return False, f'I cannot tell whether "{word}" is {kind}'
    close = float(v @ cat.vec)
    nearest = float((data.vecs[cat.members[:100]] @ v).max()) if len(cat.members) else 0.0
    if close < CATEGORY_FIT_THRESHOLD and nearest < 0.6:
        return True, f'"{word}" does not look like {kind}'
    return False, f'"{word}" could be {kind}'


_AN_EXCEPTIONS = ("uni", "use", "usu", "eu", "one", "once", "u.", "ur")
_AN_SILENT_H = ("hour", "honest", "honour", "honor", "heir")


def _article(phrase: str) -> str:
    """ "a" or "an" before ``phrase`` (by its sound, near enough: an animal, a unicorn, an
    hour, a U.S. state)."""
    low = phrase.casefold()
    if low.startswith(_AN_SILENT_H):
        return "an"
    if low[:1] in set("aeiou") and not low.startswith(_AN_EXCEPTIONS):
        return "an"
    return "a"


@functools.lru_cache(maxsize=256)
def _category_phrase(category: str) -> str:
    """How a sentence names a category: lower case where natural ("Animal" -> "an animal",
    but "U.S. state" -> "a U.S. state"); a plural one is "one of the ..." ("Things in a kitchen
    drawer" -> "one of the things in a kitchen drawer")."""
    from conjure.protocol.words import base_forms, word_data

    text = " ".join(category.split())
    words = text.split(" ")
    first = words[0] if words else ""
    proper = len(words) > 1 and words[1][:1].isupper()  # "Harry Potter character"
    natural = first[:1].isupper() and first[1:].islower() and not proper
    if natural and any(word_data().is_common(f) for f in base_forms(first.casefold())):
        text = first.casefold() + text[len(first) :]
    low = [w.casefold() for w in words]
    head = (
        low[0]
        if len(low) > 1 and (low[0] in _THINGS or low[1] in _PREPOSITIONS | {"of"})
        else (low[-1] if low else "")
    )
    plural = bool(head) and any(f != head for f in base_forms(head))
    if plural:
        return f"one of the {text}"
    return f"{_article(text)} {text}"


def _closed(text: str) -> str:
    return re.sub(r"[\s\-]+", "", normalize(text))


def _kind_of_other(a: str, b: str) -> str | None:
    """Why two words are kinds of a thing rather than names for one: one is the other with a
    word in front ("polar bear"/"bear", "catfish"/"fish"), or both are one head with different
    words in front ("brown bread"/"white bread"). None when neither holds."""
    x, y = normalize(a).replace("-", " ").split(), normalize(b).replace("-", " ").split()
    if not x or not y:
        return None
    if len(x) > 1 and len(y) > 1 and same_word(x[-1], y[-1]) and x[:-1] != y[:-1]:
        return f'"{a}" and "{b}" are different kinds of {y[-1]}'
    (short, s_text), (long, l_text) = sorted(((x, a), (y, b)), key=lambda p: len("".join(p[0])))
    s, t = "".join(short), "".join(long)
    if len(t) > len(s) + 2 and (t.endswith(s) or (len(long) > 1 and same_word(long[-1], s))):
        return f'"{l_text}" is a particular thing, not another name for "{s_text}"'
    return None


@functools.cache
def _family_sizes() -> np.ndarray:
    """For every vocabulary word, how many vocabulary words WordNet lists as kinds of it."""
    data = load_data()
    return np.bincount(data.anc_idx, minlength=len(data.words))


def _vote_same(a: str, b: str) -> tuple[bool, str]:
    """Whether two summoning words name the same thing. The same word (W2-W4) or spelling
    ("space ship"/"spaceship"); two words very close in the bot's space ("sofa"/"couch",
    "car"/"automobile", "sea"/"ocean": everyday speech uses them for the same water); or a word
    WordNet files as a kind of the other when that other is a small family, not a whole class,
    and the two are still close ("cow"/"cattle", "spaceship"/"spacecraft", "bunny"/"rabbit",
    but not "dog"/"animal" nor "blue"/"colour"). A compound naming a kind of the other word
    ("polar bear"/"bear", "catfish"/"fish", "brown"/"white bread") is a different thing."""
    if same_word(a, b) or _closed(a) == _closed(b):
        return True, f'"{a}" and "{b}" are the same word'
    if (why := _kind_of_other(a, b)) is not None:
        return False, why
    va, vb = _vector(a), _vector(b)
    if va is not None and vb is not None:
        s = float(va @ vb)
        if s >= SAME_THING_THRESHOLD:
            return True, f'"{a}" and "{b}" mean the same thing'
        ia, ib = _lookup(a), _lookup(b)
        if ia is not None and ib is not None and s >= SAME_FAMILY_THRESHOLD:
            data = load_data()
            for x, y in ((ia, ib), (ib, ia)):  # x is filed under y
                if y in data.ancestors(x) and _family_sizes()[y] <= SAME_FAMILY_SIZE:
                    return True, (
                        f'"{data.words[x]}" is the everyday name for "{data.words[y]}": '
                        "the same thing"
                    )
    return False, f'"{a}" and "{b}" are different things'
