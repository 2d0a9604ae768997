"""The computer players' word data: loading ``client/bots/data/`` once, and looking words up.

A vocabulary of common nouns with unit-length MiniLM vectors, the deck categories' members,
WordNet hypernym links and the stop-list (see `client/bots/databuild/build_data.py`).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources

import numpy as np

from conjure.client.bots.stoplist import parse_stoplist, stopped
from conjure.protocol.words import normalize


def _words(text: str) -> list[str]:
    return text.split()


# words that say nothing about what a custom category is
_FILLER = frozenset(
    _words(
        "a an the of and or in on at to for with from by that which who is are be can "
        "thing things kind kinds type types sort sorts something someone some any "
        "you your my our their it its"
    )
)

# ------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class Data:
    words: tuple[str, ...]
    index: dict[str, int]
    vecs: np.ndarray  # (N, D) float32, unit rows
    zipf: np.ndarray  # (N,) float32
    spellable: np.ndarray  # indices of common single nouns a bot may write as spell words
    common: np.ndarray  # deck members, most frequent first (fallback for unknown categories)
    categories: dict[str, tuple[str, np.ndarray]]  # casefolded text -> (text, member indices)
    cat_vecs: dict[str, np.ndarray]  # casefolded text -> (D,) unit vector
    anc_ptr: np.ndarray
    anc_idx: np.ndarray
    stop: frozenset[str]
    adjectives: frozenset[str]  # words mostly used as adjectives or adverbs ("yellow", "big")

    def ancestors(self, i: int) -> np.ndarray:
        return self.anc_idx[self.anc_ptr[i] : self.anc_ptr[i + 1]]


# "Things in a drawer", "Something you find in a garden": what goes with what follows
_THINGS = frozenset(_words("thing things something stuff item items object objects"))
_PREPOSITIONS = frozenset(_words("in on at inside into under near from for with around by"))

# deck categories of everyday things: their members stand in for a category nobody knows
_CONCRETE = frozenset(
    _words(
        "animal vehicle food fruit vegetable drink tool furniture clothing building toy weapon "
        "container bird fish flower"
    )
) | {"musical instrument", "body part"}

FLAG_COMMON_NOUN = 1
FLAG_PROPER = 2
FLAG_SPELL = 4


@functools.cache
def load_data() -> Data:
    """Load the committed word data once per process (about 0.1 s)."""
    base = resources.files("conjure.client.bots").joinpath("data")
    with base.joinpath("vectors.npz").open("rb") as fh, np.load(fh) as z:
        words = tuple(z["words"].tolist())
        vecs = z["vecs"].astype(np.float32)
        zipf = z["zipf"].astype(np.float32)
        flags = z["flags"]
        cat_texts = z["cat_texts"].tolist()
        cat_vecs = z["cat_vecs"].astype(np.float32)
        anc_ptr = z["anc_ptr"]
        anc_idx = z["anc_idx"].astype(np.int32)
        adjectives = frozenset(z["adjectives"].tolist())
    doc = json.loads(base.joinpath("categories.json").read_text(encoding="utf-8"))
    stop = parse_stoplist(base.joinpath("stoplist.txt").read_text(encoding="utf-8"))
    index = {w: i for i, w in enumerate(words)}
    ok = np.array([not stopped(w, stop) for w in words])
    spellable = np.flatnonzero(ok & ((flags & FLAG_SPELL) > 0))
    categories = {}
    for text, entry in doc["categories"].items():
        idx = np.array([index[w] for w in entry["members"] if not stopped(w, stop)], np.int32)
        categories[text.casefold()] = (text, idx)
    concrete = [idx for key, (_, idx) in categories.items() if key in _CONCRETE]
    everyday = np.intersect1d(np.unique(np.concatenate(concrete)), spellable)
    common = everyday[np.argsort(-zipf[everyday], kind="stable")]
    return Data(
        words=words,
        index=index,
        vecs=vecs,
        zipf=zipf,
        spellable=spellable,
        common=common,
        categories=categories,
        cat_vecs={t.casefold(): v for t, v in zip(cat_texts, cat_vecs, strict=True)},
        anc_ptr=anc_ptr,
        anc_idx=anc_idx,
        stop=stop,
        adjectives=adjectives,
    )


def is_stopped(word: str) -> bool:
    """Whether the stop-list forbids the word (whole, or any part of a compound)."""
    return stopped(word, load_data().stop)


def _lookup(word: str) -> int | None:
    """Vocabulary index of a written word: case, articles and plurals ignored."""
    data = load_data()
    text = normalize(word)
    if not text:
        return None
    for form in (text, text.replace("-", " "), text.replace(" ", ""), text.replace(" ", "-")):
        if form in data.index:
            return data.index[form]
    from conjure.protocol.words import base_forms

    for form in sorted(base_forms(text)):
        if form in data.index:
            return data.index[form]
    return None


def _vector(word: str) -> np.ndarray | None:
    """A written word's vector; a phrase the data lacks gets the mean of its known parts."""
    data = load_data()
    i = _lookup(word)
    if i is not None:
        return data.vecs[i]
    parts = [
        j for p in re.split(r"[\s\-]+", normalize(word)) if p and (j := _lookup(p)) is not None
    ]
    if not parts:
        return None
    v = data.vecs[parts].mean(0)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else None


def similarity(a: str, b: str) -> float | None:
    """Cosine of two words in the bot's space, or None when one is unknown."""
    va, vb = _vector(a), _vector(b)
    if va is None or vb is None:
        return None
    return round(float(va @ vb), 4)
