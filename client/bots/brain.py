"""The computer player's word sense: pure, seeded, numpy only.

Everything here works from the data committed under ``client/bots/data/`` (built once by
:mod:`client.bots.build_data`): a vocabulary of common nouns with 128-dimensional MiniLM
sentence embeddings (unit length, so a dot product is a cosine), each default-deck
category's members (best-known first), WordNet hypernym links for custom categories, and
the stop-list. Loading is lazy and happens once per process.

A :class:`Brain` is one bot's mind: a seed (so two bots with different seeds differ a little
and a replay with the same seed repeats itself) and a noise level. The protocol bot calls:

* :meth:`Brain.choose_card` - pick a category card as the conjurer;
* :meth:`Brain.spell_word` - write a spell word;
* :meth:`Brain.mark` / :meth:`Brain.plan` - as the conjurer, choose which spell words get
  crystals (and, in a standard round, the summoning word they point at: :attr:`Brain.target`);
* :meth:`Brain.dark_summon` - the Dark Magic conjurer's secret word, chosen first;
* :meth:`Brain.summon` - write a summoning word (never one that is or contains a written
  word, never a stop-listed word);
* :meth:`Brain.vote` - take a side on a challenge or a "same thing" proposal.

:func:`guess` ranks summoning words for ``conjure bot --guess CATEGORY WORD...``.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import NamedTuple

import numpy as np

from protocol.words import contains_written, hidden_inside, normalize, same_word, word_data

__all__ = [
    "Brain",
    "Category",
    "Plan",
    "Ranked",
    "guess",
    "is_stopped",
    "knows",
    "load_data",
    "resolve",
    "similarity",
    "unsafe_summon",
]

Ranked = list[tuple[str, float]]

# --- tuning (see bench/bot_hits.py) ------------------------------------------------------
MEAN_WEIGHT = 0.7  # summon score: this much of the mean similarity to the marked words ...
MIN_WEIGHT = 0.3  # ... and this much of the weakest one (the answer should fit every clue)
TYPICAL_WEIGHT = 0.04  # bonus for well-known members (first in the category's list)
ZIPF_WEIGHT = 0.01  # bonus per Zipf step above 4 for common words
UNMARKED_PENALTY = 0.35  # Dark Magic: an unmarked word close to the answer argues against it
DARK_MARK_THRESHOLD = 0.25  # Dark Magic conjurer marks spell words at least this close
SAME_THING_THRESHOLD = 0.82  # two words this close are the same thing ("sofa", "couch")
CATEGORY_FIT_THRESHOLD = 0.22  # a non-member this close to a category still fits it
HIDDEN_RELATED = 0.3  # "dogfish" hides "dog" (related); "carpet" does not hide "car"
PLAN_MARGIN = 1.0  # conjurer plan: how clearly the answer beats the runner-up ...
PLAN_MEAN = 1.0  # ... how close the marked words are to it on average ...
PLAN_MIN = 0.5  # ... and at worst ...
PLAN_TYPICAL = 1.0  # ... and how well-known a member it is
MIN_HEAD_MEMBERS = 6  # a custom category's head noun needs this many hyponyms to be used


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


def read_stoplist(text: str) -> frozenset[str]:
    words = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip().casefold()
        if line:
            words.add(line)
    return frozenset(words)


@functools.cache
def load_data() -> Data:
    """Load the committed word data once per process (about 0.1 s)."""
    base = resources.files("client.bots").joinpath("data")
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
    stop = read_stoplist(base.joinpath("stoplist.txt").read_text(encoding="utf-8"))
    index = {w: i for i, w in enumerate(words)}
    ok = np.array([not _stopped(w, stop) for w in words])
    spellable = np.flatnonzero(ok & ((flags & FLAG_SPELL) > 0))
    categories = {}
    for text, entry in doc["categories"].items():
        idx = np.array([index[w] for w in entry["members"] if not _stopped(w, stop)], np.int32)
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


def _stopped(word: str, stop: frozenset[str]) -> bool:
    w = word.casefold()
    if w in stop:
        return True
    if " " not in w and "-" not in w and "\t" not in w:
        return False
    return any(part in stop for part in re.split(r"[\s\-]+", w))


def is_stopped(word: str) -> bool:
    """Whether the stop-list forbids the word (whole, or any part of a compound)."""
    return _stopped(word, load_data().stop)


def _lookup(word: str) -> int | None:
    """Vocabulary index of a written word: case, articles and plurals ignored."""
    data = load_data()
    text = normalize(word)
    if not text:
        return None
    for form in (text, text.replace("-", " "), text.replace(" ", ""), text.replace(" ", "-")):
        if form in data.index:
            return data.index[form]
    from protocol.words import base_forms

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
    # the head noun is the last word that names a kind of thing ("sea CREATURE", "DOG breed")
    how, pool = "similar", data.spellable
    for t in reversed(tokens):
        j = _lookup(t)
        if j is None:
            continue
        deck_head = _deck_match(data.words[j])
        if deck_head is not None:  # "Wild animal": the members of Animal nearest "wild"
            how, pool = "deck-head", data.categories[deck_head][1]
            break
        kinds = np.array([i for i in range(len(data.words)) if j in data.ancestors(i)], np.int32)
        if len(kinds) >= MIN_HEAD_MEMBERS:
            how, pool = "hypernym", kinds
            break
    modifiers = [i for i in found if how == "similar" or i != j]
    if how == "deck-head" and modifiers:  # the deck knows the head: rank by what is added
        vec = data.vecs[modifiers].mean(0) + 0.5 * data.vecs[j]
    elif how == "hypernym":
        vec = vec + data.vecs[j]  # lean towards the head noun
    vec = vec / np.linalg.norm(vec)
    excluded = set(found)
    pool = np.array([i for i in pool if i not in excluded], np.int32)
    score = data.vecs[pool] @ vec + 0.02 * (data.zipf[pool] - 4.0)
    order = np.argsort(-score, kind="stable")[: 300 if how != "similar" else 200]
    members = pool[order]
    # a custom category is "known" when it is an easy variant of a deck category
    return Category(text, how == "deck-head", how, members, _typicality(len(members)), vec)


def knows(category: str) -> bool:
    """Whether the bot knows this category well (a deck category or a plain variant of one)."""
    return resolve(category).known


# ------------------------------------------------------------------------------------------
# Validity of a summoning word


def _looks_alike(a: str, b: str) -> bool:
    """Spelled alike ("bull"/"bully", "machine"/"machinery"): a poor clue for each other."""
    a, b = a.replace(" ", ""), b.replace(" ", "")
    n = min(len(a), len(b), 5)
    return n >= 4 and a[:n] == b[:n]


@functools.lru_cache(maxsize=65536)
def _clashes(candidate: str, written: str) -> bool:
    """The candidate is, contains, or seems to hide the written word (then it is unsafe)."""
    return contains_written(candidate, written) or hidden_inside(candidate, written)


def unsafe_summon(candidate: str, written: Iterable[str]) -> bool:
    """Whether a summoning word would break the rules against these written words, or is
    stop-listed. The bots also avoid words merely *hidden* inside (dogfish/dog)."""
    return is_stopped(candidate) or any(_clashes(candidate, w) for w in written if w.strip())


# ------------------------------------------------------------------------------------------
# The brain


class Plan(NamedTuple):
    marks: list[int]  # seat ids whose spell words get crystals
    summon: str  # the conjurer's summoning word ("" when no plan is possible)
    score: float


class Brain:
    """One computer player's word sense. Same seed and same calls, same answers."""

    def __init__(self, seed: int = 0, noise: float = 0.03) -> None:
        self.seed = seed
        self.noise = noise
        self.rng = np.random.default_rng(seed)
        # personality: how much it likes hard (many-star) cards, in [-1, 1]
        self.daring = float(np.random.default_rng([seed, 7]).uniform(-1.0, 1.0))
        self.target: str | None = None  # the summoning word of the last plan or dark summon

    # -- helpers --------------------------------------------------------------------------

    def _jitter(self, n: int, scale: float | None = None) -> np.ndarray:
        s = self.noise if scale is None else scale
        if s <= 0:
            return np.zeros(n, np.float32)
        return self.rng.normal(0.0, s, n).astype(np.float32)

    @staticmethod
    def _valid_members(cat: Category, written: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        data = load_data()
        keep = [k for k, i in enumerate(cat.members) if not unsafe_summon(data.words[i], written)]
        return cat.members[keep], cat.typical[keep]

    # -- choosing a card ------------------------------------------------------------------

    def knows(self, category: str) -> bool:
        return knows(category)

    def choose_card(self, cards: Sequence[tuple[str, int]]) -> int:
        """Index of the card to play: known categories first, stars by personality."""
        if not cards:
            raise ValueError("no cards to choose from")
        scores = []
        for text, stars in cards:
            s = 1.0 if knows(text) else (0.3 if resolve(text).how != "unknown" else 0.0)
            s += 0.25 * self.daring * (stars - 2)
            scores.append(s)
        scores = np.array(scores, np.float32) + self._jitter(len(cards), 0.3)
        return int(np.argmax(scores))

    # -- spell words ----------------------------------------------------------------------

    def spell_word(self, category: str, written: Sequence[str], *, dark_magic: bool = False) -> str:
        """A common noun pointing at some plausible summoning word of the category.

        Standard rounds aim at a member that suits the words already written (synergy);
        Dark Magic rounds aim away from them, to spread the table over the category. The
        word never repeats a written word and never rules out the member it aims at.
        """
        data = load_data()
        cat = resolve(category)
        written = [w for w in written if w.strip()]
        members, typical = self._valid_members(cat, written)
        if len(members) == 0:
            members, typical = cat.members, cat.typical
        top = min(len(members), 60)
        members, typical = members[:top], typical[:top]
        score = 0.15 * typical
        wvecs = [v for w in written if (v := _vector(w)) is not None]
        if wvecs:
            sims = data.vecs[members] @ np.stack(wvecs).T
            score = score + (-0.5 if dark_magic else 1.0) * sims.max(1)
        score = score + self._jitter(len(members), 0.08)
        for k in np.argsort(-score)[:5]:
            target = data.words[members[k]]
            word = self._clue_for(target, written, cat)
            if word:
                return word
        return self._fallback_word(written)

    def _clue_for(self, target: str, written: Sequence[str], cat: Category) -> str | None:
        data = load_data()
        t = data.index[target]
        pool = data.spellable
        sims = data.vecs[pool] @ data.vecs[t]
        order = np.argsort(-sims)[:80]
        inside = set(cat.members[:150].tolist())
        options, scores = [], []
        for k in order:
            i = int(pool[k])
            w = data.words[i]
            if i == t or _looks_alike(w, target):
                continue
            if any(same_word(w, x) or _clashes(w, x) or _clashes(x, w) for x in written):
                continue
            if _clashes(target, w) or _clashes(w, target):
                continue
            if w in _content_tokens(cat.text):
                continue
            # a good clue points at the target without being a synonym or another member
            s = float(sims[k]) - 0.15 * (i in inside) - 1.0 * max(0.0, float(sims[k]) - 0.6)
            options.append(w)
            scores.append(s)
            if len(options) >= 12:
                break
        if not options:
            return None
        s = np.array(scores, np.float32) + self._jitter(len(options), 0.04)
        return options[int(np.argmax(s))]

    def _fallback_word(self, written: Sequence[str]) -> str:
        data = load_data()
        for i in self.rng.permutation(data.common[:500]):
            w = data.words[int(i)]
            if not any(same_word(w, x) for x in written):
                return w
        return "thing"

    # -- summoning ------------------------------------------------------------------------

    def _scores(
        self,
        category: str,
        marked: Sequence[str],
        written: Sequence[str],
        *,
        dark_magic: bool,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(member indices, scores) for every valid summoning word of the round."""
        data = load_data()
        cat = resolve(category)
        everything = [w for w in (*marked, *written) if w.strip()]
        members, typical = self._valid_members(cat, everything)
        if len(members) == 0:
            return members, np.zeros(0, np.float32)
        score = TYPICAL_WEIGHT * typical + ZIPF_WEIGHT * np.clip(data.zipf[members] - 4, -2, 2)
        mvecs = [v for w in marked if (v := _vector(w)) is not None]
        if mvecs:
            sims = data.vecs[members] @ np.stack(mvecs).T
            score = score + MEAN_WEIGHT * sims.mean(1) + MIN_WEIGHT * sims.min(1)
        if dark_magic:
            marked_set = {normalize(w) for w in marked}
            unmarked = [w for w in written if normalize(w) not in marked_set]
            uvecs = [v for w in unmarked if (v := _vector(w)) is not None]
            if uvecs:
                score = score - UNMARKED_PENALTY * (data.vecs[members] @ np.stack(uvecs).T).max(1)
        return members, score.astype(np.float32)

    def rank_summons(
        self,
        category: str,
        marked: Sequence[str],
        written: Sequence[str] = (),
        k: int = 10,
        *,
        dark_magic: bool = False,
    ) -> Ranked:
        """The best summoning words for these marked words, best first, with their scores
        (no noise). Words that are or contain a written word are never listed."""
        data = load_data()
        members, score = self._scores(category, marked, written, dark_magic=dark_magic)
        order = np.argsort(-score, kind="stable")[:k]
        return [(data.words[members[i]], round(float(score[i]), 4)) for i in order]

    def summon(
        self,
        category: str,
        marked: Sequence[str],
        written: Sequence[str] = (),
        *,
        dark_magic: bool = False,
    ) -> str:
        """The summoning word this bot writes (best score plus a little seeded noise)."""
        data = load_data()
        members, score = self._scores(category, marked, written, dark_magic=dark_magic)
        if len(members) == 0:
            return self._fallback_summon(category, [*marked, *written])
        score = score + self._jitter(len(members))
        return data.words[members[int(np.argmax(score))]]

    def _fallback_summon(self, category: str, written: Sequence[str]) -> str:
        """Every member clashes with a written word: any common safe noun fitting the text."""
        data = load_data()
        cat = resolve(category)
        pool = (
            data.common
            if cat.vec is None
            else data.spellable[np.argsort(-(data.vecs[data.spellable] @ cat.vec))]
        )
        for i in itertools.chain(pool[:2000], data.common):
            w = data.words[int(i)]
            if not unsafe_summon(w, written):
                return w
        raise ValueError("every known word clashes with the written words")

    # -- the conjurer ---------------------------------------------------------------------

    def dark_summon(self, category: str) -> str:
        """Dark Magic: the secret summoning word, a common, guessable member."""
        data = load_data()
        cat = resolve(category)
        top = min(len(cat.members), 25)
        weights = cat.typical[:top] * np.exp(np.clip(data.zipf[cat.members[:top]] - 4, -2, 2))
        p = weights / weights.sum()
        word = data.words[int(self.rng.choice(cat.members[:top], p=p))]
        self.target = word
        return word

    def plan(self, category: str, spell_words: Mapping[int, str]) -> Plan:
        """Standard round: the target summon and the 2-4 spell words that point at it.

        Every subset of 2-4 spell words is tried; the subset's likely answer is the member a
        guesser would rank first (the same scoring as :meth:`summon`), and the plan kept is
        the one whose answer stands out most clearly from the runner-up.
        """
        data = load_data()
        seats = [s for s, w in spell_words.items() if w.strip()]
        words = [spell_words[s] for s in seats]
        if not seats:
            return Plan([], "", 0.0)
        members, base = self._scores(category, [], words, dark_magic=False)
        if len(members) < 2:
            return Plan(seats[:4], data.words[members[0]] if len(members) else "", 0.0)
        vecs = [_vector(w) for w in words]
        known = [k for k, v in enumerate(vecs) if v is not None]
        if len(known) < 2:
            return Plan(seats[: min(4, max(2, len(seats)))], data.words[members[0]], 0.0)
        if len(known) > 8:  # keep it small: the 8 words closest to some member
            sims_all = data.vecs[members] @ np.stack([vecs[k] for k in known]).T
            known = [known[k] for k in np.argsort(-sims_all.max(0))[:8]]
        sims = data.vecs[members] @ np.stack([vecs[k] for k in known]).T  # (M, W)
        best: tuple[float, list[int], int] | None = None
        jitter = self._jitter(1000, self.noise)
        n = 0
        for size in (2, 3, 4):
            for combo in itertools.combinations(range(len(known)), size):
                sub = sims[:, combo]
                score = base + MEAN_WEIGHT * sub.mean(1) + MIN_WEIGHT * sub.min(1)
                first, second = np.argsort(-score)[:2]
                margin = float(score[first] - score[second])
                strength = float(sub[first].mean()), float(sub[first].min())
                quality = (
                    PLAN_MARGIN * margin
                    + PLAN_MEAN * strength[0]
                    + PLAN_MIN * strength[1]
                    + PLAN_TYPICAL * float(base[first])
                    + jitter[n % 1000]
                )
                n += 1
                if best is None or quality > best[0]:
                    best = (quality, [seats[known[c]] for c in combo], int(first))
        assert best is not None
        quality, marks, first = best
        target = data.words[members[first]]
        self.target = target
        return Plan(sorted(marks), target, round(float(quality), 4))

    def mark(
        self,
        category: str,
        spell_words: Mapping[int, str],
        *,
        dark_magic_word: str | None = None,
    ) -> list[int]:
        """Seat ids to place crystals by. Standard: the best :meth:`plan` (its summoning word
        is kept in :attr:`target`). Dark Magic: every spell word close enough to the
        conjurer's secret word (0-4 of them)."""
        if dark_magic_word is None:
            return self.plan(category, spell_words).marks
        self.target = dark_magic_word
        tv = _vector(dark_magic_word)
        if tv is None:
            return []
        close = []
        for seat, word in spell_words.items():
            v = _vector(word) if word.strip() else None
            if v is not None:
                s = float(v @ tv)
                if s >= DARK_MARK_THRESHOLD:
                    close.append((s, seat))
        close.sort(reverse=True)
        return sorted(seat for _, seat in close[:4])

    # -- votes ----------------------------------------------------------------------------

    def vote(
        self,
        kind: str,
        word: str,
        *,
        category: str = "",
        written: Sequence[str] = (),
        other: str | None = None,
    ) -> tuple[bool, str]:
        """The bot's side on a challenge against ``word`` (kind is the broken rule: "noun",
        "no-adjectives", "category" or "written-word"), or on a proposal that ``word`` and
        ``other`` are the same thing (kind "same"). Returns (agrees, reason)."""
        if kind == "written-word":
            for w in written:
                if w.strip() and contains_written(word, w):
                    return True, f'"{word}" contains the written word "{w}"'
            for w in written:
                if w.strip() and hidden_inside(word, w):
                    related = similarity(word, w)
                    if related is None or related >= HIDDEN_RELATED:
                        return True, f'"{word}" hides the written word "{w}"'
                    return False, f'"{w}" only looks hidden in "{word}": they are unrelated'
            return False, f'"{word}" contains no written word'
        if kind == "noun":
            return _vote_noun(word)
        if kind == "no-adjectives":
            return _vote_adjectives(word)
        if kind == "category":
            return _vote_category(word, category)
        if kind == "same":
            if other is None:
                raise ValueError("a 'same' vote needs the other word")
            return _vote_same(word, other)
        raise ValueError(f"unknown vote kind {kind!r}")


def _is_noun_phrase(word: str) -> bool:
    from protocol.words import is_known_noun

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
    from protocol.words import is_known_noun

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
    i = _lookup(word)
    if i is not None and i in set(cat.members.tolist()):
        return False, f'"{word}" is a kind of {category}'
    if cat.how in ("hypernym", "deck-head") and i is not None:
        head = _lookup(_content_tokens(category)[-1]) if _content_tokens(category) else None
        if head is not None and head in data.ancestors(i):
            return False, f'"{word}" is a kind of {category}'
    v = _vector(word)
    if v is None or cat.vec is None:
        return False, f'I cannot tell whether "{word}" fits {category}'
    close = float(v @ cat.vec)
    nearest = float((data.vecs[cat.members[:100]] @ v).max()) if len(cat.members) else 0.0
    if close < CATEGORY_FIT_THRESHOLD and nearest < 0.6:
        return True, f'"{word}" does not look like a {category}'
    return False, f'"{word}" could be a {category}'


def _closed(text: str) -> str:
    return re.sub(r"[\s\-]+", "", normalize(text))


def _vote_same(a: str, b: str) -> tuple[bool, str]:
    if same_word(a, b) or _closed(a) == _closed(b):
        return True, f'"{a}" and "{b}" are the same word'
    va, vb = _vector(a), _vector(b)
    if va is not None and vb is not None:
        s = float(va @ vb)
        if s >= SAME_THING_THRESHOLD:
            return True, f'"{a}" and "{b}" mean the same thing'
    return False, f'"{a}" and "{b}" are different things'


@functools.cache
def _quiet_brain() -> Brain:
    return Brain(seed=0, noise=0.0)


def guess(category: str, words: Sequence[str], k: int = 10) -> Ranked:
    """The bot's best summoning words for a category and marked words, best first (for
    ``conjure bot --guess``). The marked words count as written: none of them is suggested."""
    return _quiet_brain().rank_summons(category, list(words), list(words), k)


def similarity(a: str, b: str) -> float | None:
    """Cosine of two words in the bot's space, or None when one is unknown."""
    va, vb = _vector(a), _vector(b)
    if va is None or vb is None:
        return None
    return round(float(va @ vb), 4)
