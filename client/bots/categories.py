"""What a computer player makes of a category text: its members and its place in the space."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from conjure.client.bots.tuning import HEAD_SENSE, MIN_HEAD_MEMBERS
from conjure.client.bots.worddata import _FILLER, _PREPOSITIONS, _THINGS, _lookup, load_data
from conjure.protocol.words import normalize, same_word

# ------------------------------------------------------------------------------------------
# Categories


@dataclass(frozen=True)
class Category:
    text: str
    known: bool  # a default-deck category (or a plain variant of one, like "Animals")
    how: str  # "deck", "deck-head", "hypernym", "similar", "unknown"
    members: np.ndarray  # vocabulary indices, most typical first
    typical: np.ndarray  # (len(members),) in [0, 1], 1 for the most typical
    vec: np.ndarray | None  # where the category sits in the embedding space


def _typicality(n: int) -> np.ndarray:
    return np.exp(-np.arange(n) / 40.0).astype(np.float32)


def _content_tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z][a-z'\-]*", text.casefold()) if t not in _FILLER]


def _deck_match(text: str) -> str | None:
    data = load_data()
    key = " ".join(text.split()).casefold()
    if key in data.categories:
        return key
    norm = normalize(text)
    for cat in data.categories:
        if norm and same_word(norm, cat):
            return cat
    return None


@functools.lru_cache(maxsize=512)
def resolve(text: str) -> Category:
    """What the bot makes of a category text: its members and its place in the space."""
    data = load_data()
    deck = _deck_match(text)
    if deck is not None:
        name, members = data.categories[deck]
        return Category(name, True, "deck", members, _typicality(len(members)), data.cat_vecs[deck])
    # "Things in a kitchen drawer", "Something you find in a garden": not kinds of drawer or
    # garden but what goes with them; only the words after the preposition say what
    words = re.findall(r"[a-z][a-z'\-]*", text.casefold())
    about = len(words) > 1 and words[0] in _THINGS
    if about:
        after = next((k for k, w in enumerate(words) if w in _PREPOSITIONS), None)
        tail = " ".join(words[after + 1 :]) if after is not None else ""
        tokens = _content_tokens(tail) or _content_tokens(text)
    else:
        tokens = _content_tokens(text)
    found: list[int] = []
    for a, b in itertools.pairwise(tokens):
        if (j := _lookup(f"{a} {b}")) is not None:
            found.append(j)
    for t in tokens:
        if (j := _lookup(t)) is not None:
            found.append(j)
    if not found:
        common = data.common[:300]
        return Category(text, False, "unknown", common, _typicality(len(common)), None)
    vec = data.vecs[found].mean(0)
    # the head noun is the last word that names a kind of thing ("sea CREATURE", "DOG breed"),
    # in the sense its other words suit: "Car BRAND" is not a sword, a drawer not an artist
    how, pool, head = "similar", data.spellable, -1  # head: the head noun's index, once found
    for t in [] if about else reversed(tokens):
        j = _lookup(t)
        if j is None:
            continue
        deck_head = _deck_match(data.words[j])
        if deck_head is not None:  # "Wild animal": the members of Animal nearest "wild"
            how, pool, head = "deck-head", data.categories[deck_head][1], j
            break
        kinds = _kinds(j)
        if len(kinds) >= MIN_HEAD_MEMBERS and _suits(kinds, [i for i in found if i != j]):
            how, pool, head = "hypernym", kinds, j
            break
    modifiers = [i for i in found if how == "similar" or i != head]
    if how == "deck-head" and modifiers:  # the deck knows the head: rank by what is added
        vec = data.vecs[modifiers].mean(0) + 0.5 * data.vecs[head]
    elif how == "hypernym":
        vec = vec + data.vecs[head]  # lean towards the head noun
    vec = vec / np.linalg.norm(vec)
    excluded = set(found)
    pool = np.array([i for i in pool if i not in excluded], np.int32)
    score = data.vecs[pool] @ vec + 0.02 * (data.zipf[pool] - 4.0)
    order = np.argsort(-score, kind="stable")[: 300 if how != "similar" else 200]
    members = pool[order]
    # a custom category is "known" when it is an easy variant of a deck category
    return Category(text, how == "deck-head", how, members, _typicality(len(members)), vec)


@functools.lru_cache(maxsize=1024)
def _kinds(j: int) -> np.ndarray:
    """Vocabulary words listed in WordNet as kinds of word ``j`` (its hyponym closure)."""
    data = load_data()
    where = np.flatnonzero(data.anc_idx == j)
    return np.unique(np.searchsorted(data.anc_ptr, where, side="right") - 1).astype(np.int32)


def _suits(kinds: np.ndarray, others: Sequence[int]) -> bool:
    """Whether a head noun's kinds are in the sense the rest of the text suggests: the kinds
    nearest the other words must be reasonably near them ("dog breed": poodles; "kitchen
    drawer": cartoonists are nowhere near a kitchen)."""
    if not others:
        return True
    data = load_data()
    context = data.vecs[list(others)].mean(0)
    fit = np.sort(data.vecs[kinds] @ context)[-10:]
    return float(fit.mean()) >= HEAD_SENSE


def knows(category: str) -> bool:
    """Whether the bot knows this category well (a deck category or a plain variant of one)."""
    return resolve(category).known
