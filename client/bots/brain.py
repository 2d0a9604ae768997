"""The computer player's word sense: pure, seeded, numpy only.

Everything here works from the data committed under ``client/bots/data/`` (built once by
:mod:`client.bots.build_data`): a vocabulary of common nouns with 128-dimensional MiniLM
sentence embeddings (unit length, so a dot product is a cosine), each default-deck
category's members (best-known first), WordNet hypernym links for custom categories, and
the stop-list. Loading is lazy and happens once per process.

A :class:`Brain` is one bot's mind: a seed (so two bots with different seeds differ a little
and a replay with the same seed repeats itself) and a noise level. Bots differ the way people
do, without losing the thread: each has a fixed *taste* (a small liking per word, drawn once
from its seed, so it is consistent but disagrees with another bot on close calls), and it
*draws* its summoning word from a softmax over its few best candidates at a temperature (the
noise), so a clear favourite is written most of the time and a close runner-up sometimes; the
ranking itself (:meth:`Brain.rank_summons`, :func:`guess`) stays deterministic. A conjurer
aims at a target some but not all of the table will find (:meth:`Brain.plan`), which makes
``conjured`` the common case and ``everyone`` a rare one. In Dark Magic a word's association
with a member is measured within the category (a z-score: "monkey" is banana's word, "peel"
any fruit's): spell words aim at likely secrets, the conjurer marks the words distinctive of
its secret, and guessers infer the secret from the marked and the unmarked words alike.

The protocol bot calls:

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
from typing import NamedTuple, TypeVar

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

# --- tuning (see bench/bot_hits.py and bench/bots.py) ------------------------------------
MEAN_WEIGHT = 0.7  # summon score: this much of the mean similarity to the marked words ...
MIN_WEIGHT = 0.3  # ... and this much of the weakest one (the answer should fit every clue)
TYPICAL_WEIGHT = 0.04  # bonus for well-known members (first in the category's list)
ZIPF_WEIGHT = 0.01  # bonus per Zipf step above 4 for common words
COMPOUND_PENALTY = 0.02  # people write "piano" rather than "grand piano" when both fit
SAME_THING_THRESHOLD = 0.82  # two words this close are the same thing ("sofa", "couch")
SAME_FAMILY_THRESHOLD = 0.74  # a kind of a small family this close names it ("cow", "cattle")
SAME_FAMILY_SIZE = 20  # ... a family of at most this many kinds ("animal" has hundreds)
CATEGORY_FIT_THRESHOLD = 0.22  # a non-member this close to a category still fits it
HIDDEN_RELATED = 0.3  # "dogfish" hides "dog" (related); "carpet" does not hide "car"
MIN_HEAD_MEMBERS = 6  # a custom category's head noun needs this many hyponyms to be used ...
HEAD_SENSE = 0.1  # ... the ten nearest the text's other words this close to them on average

# -- how bots differ: the four cases of bench/bots.py --------------------------------------
DEFAULT_NOISE = 0.02  # a bot's temperature: summoning words are drawn from a softmax ...
SUMMON_CHOICES = 6  # ... over this many best candidates (never from the long tail)
TASTE = 0.5  # a bot's fixed liking per word: N(0, TASTE * noise), drawn once per seed
SPELL_SYNERGY = 0.1  # standard spell words: a little pull towards members the written words
#                      suit (so 2-4 of them can agree), but mostly spread over the category ...
SPELL_SHARP = 0.2  # ... with clues not too distinctive of their aim (z above 2 costs this much
#                    per unit), so a subset of them leaves the table a choice between members
PLAN_EXPECT = 1.0  # conjurer plan: its expected lead (some but not all guessers find it) ...
PLAN_STARS = 2.0  # ... on a card of this many stars (a plan does not know the card's), where
PLAN_EVERYONE = 0.3  # "everyone" costs this (its exact cost, 1 point to every other player,
#                      would overlook that a target only some find leaves the rest matching
#                      each other: "missed-conjurer" is no better for the conjurer) ...
PLAN_MEAN = 1.0  # ... how close the marked words are to the target on average ...
PLAN_MIN = 0.5  # ... and at worst ...
PLAN_TYPICAL = 1.0  # ... and how well-known a member it is
PLAN_TARGETS = 6  # the target is one of the subset's best few for this bot, and ...
PLAN_MIN_Z = 0.5  # every marked word this distinctive of the target (z among the category)
PLAN_MIN_SIM = 0.25  # ... and at least this close to it

# -- Dark Magic: association is measured within the category, not in absolute terms --------
DARK_SECRETS = 25  # the secret is one of the first this many members; a word's association
#                    with a member is its z-score among them ("monkey" is banana's word,
#                    "peel" or "juice" any fruit's)
DARK_RARE = 3.0  # guessers' prior: a member past those is this many nats less likely
DARK_MARK_Z = 0.8  # the conjurer marks every spell word this distinctive of its secret ...
DARK_MARK_MIN_Z = 0.0  # ... or, when none is, the most distinctive one if it is at least this
DARK_MARK_MIN_SIM = 0.2  # ... and never a word this far from the secret in absolute terms
DARK_MARK_SOFT = 0.25  # guessers' model of the marking: a logistic of this width around the bar,
DARK_SLIP = 0.05  # ... and a conjurer who marks otherwise this often
DARK_NAT = 0.02  # Dark Magic summon scores: this much per nat of the guessers' posterior
DARK_COVERED = 1.0  # a spell word aims at a likely secret no written word is distinctive of,
DARK_AIM = 1.0  # ... drawn by prior weight (at this temperature), with a clue word that is:
CLUE_SIM = 3.0  # close to the aim,
CLUE_MIN_SIM = 0.35  # (at least this close)
CLUE_Z = 0.2  # distinctive of it (never below DARK_MARK_Z: it gets a crystal if it is the secret)
CLUE_SPLIT = 0.5  # marked for some likely secrets and not for others (bits of information),
CLUE_CONTEXT = 1.0  # about the category's world,
CLUE_MIN_CONTEXT = 0.15  # (at least this much)
CLUE_MAX_CONTEXT = 0.35  # (no reward for more ...)
CLUE_NAME = 3.0  # ... and not the category's own name ("alcohol", "pet"): penalty past 0.5


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

    def __init__(self, seed: int = 0, noise: float = DEFAULT_NOISE) -> None:
        self.seed = seed
        self.noise = noise
        self.rng = np.random.default_rng(seed)
        self._taste: np.ndarray | None = None
        # personality: how much it likes hard (many-star) cards, in [-1, 1]
        self.daring = float(np.random.default_rng([seed, 7]).uniform(-1.0, 1.0))
        self.target: str | None = None  # the summoning word of the last plan or dark summon

    # -- helpers --------------------------------------------------------------------------

    def _jitter(self, n: int, scale: float | None = None) -> np.ndarray:
        s = self.noise if scale is None else scale
        if s <= 0:
            return np.zeros(n, np.float32)
        return self.rng.normal(0.0, s, n).astype(np.float32)

    @property
    def taste(self) -> np.ndarray:
        """This bot's fixed liking for every vocabulary word (zero without noise): the same
        bot is consistent from round to round, two bots disagree on close calls."""
        if self._taste is None:
            n = len(load_data().words)
            if self.noise <= 0:
                self._taste = np.zeros(n, np.float32)
            else:
                gen = np.random.default_rng([self.seed, 11])
                self._taste = (gen.standard_normal(n) * TASTE * self.noise).astype(np.float32)
        return self._taste

    def _pick(self, scores: np.ndarray, k: int = SUMMON_CHOICES) -> int:
        """Index of a choice drawn from a softmax over the ``k`` best ``scores`` at this bot's
        temperature: a clear favourite is usually taken, a close runner-up now and then, and
        the long tail never (a global noise would swamp the ranking)."""
        if len(scores) == 0:
            raise ValueError("nothing to choose from")
        order = np.argsort(-scores, kind="stable")[:k]
        if self.noise <= 0 or len(order) == 1:
            return int(order[0])
        p = _softmax(scores[order], self.noise)
        return int(order[int(self.rng.choice(len(order), p=p))])

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

        Standard rounds aim at a member that suits the words already written (a little
        synergy, so the conjurer can find 2-4 words that agree). Dark Magic rounds aim at a
        likely secret that no written word points at yet, with a word distinctive of it (see
        :meth:`_dark_spell_word`). The word never repeats a written word and never rules out
        the member it aims at.
        """
        data = load_data()
        cat = resolve(category)
        written = [w for w in written if w.strip()]
        if dark_magic:
            word = self._dark_spell_word(cat, written)
            return word if word else self._fallback_word(written)
        members, typical = self._valid_members(cat, written)
        if len(members) == 0:
            members, typical = cat.members, cat.typical
        top = min(len(members), 60)
        members, typical = members[:top], typical[:top]
        score = 0.15 * typical
        wvecs = [v for w in written if (v := _vector(w)) is not None]
        if wvecs:
            sims = data.vecs[members] @ np.stack(wvecs).T
            score = score + SPELL_SYNERGY * sims.max(1)
        score = score + self._jitter(len(members), 0.08)
        for k in np.argsort(-score)[:5]:
            target = data.words[members[k]]
            word = self._clue_for(target, written, cat)
            if word:
                return word
        return self._fallback_word(written)

    def _dark_spell_word(self, cat: Category, written: Sequence[str]) -> str | None:
        """Dark Magic: nobody knows the secret yet, so a good spell word is one the conjurer
        will mark for *some* likely secrets and not for others. Aim at a common member that
        no written word is distinctive of (the table spreads over the category), and write a
        noun that is distinctive of that member among the category's likely secrets: a
        related noun ("monkey" for banana, "coffee" for mug), never the member itself."""
        members, _ = self._valid_members(cat, written)
        if len(members) == 0:
            return None
        prior = _log_prior(cat, members)
        wvecs = [v for w in written if (v := _vector(w)) is not None]
        if wvecs:
            covered = _association(cat, np.stack(wvecs)).max(0)
            covered = covered[_positions(cat, members)]
            prior = prior - DARK_COVERED * np.maximum(covered - 0.5 * DARK_MARK_Z, 0.0)
        top = np.argsort(-prior, kind="stable")[:DARK_SECRETS]
        p = _softmax(prior[top], DARK_AIM)
        for k in self.rng.choice(top, size=min(5, len(top)), replace=False, p=p):
            word = self._dark_clue(int(members[k]), written, cat)
            if word:
                return word
        return None

    def _dark_clue(self, t: int, written: Sequence[str], cat: Category) -> str | None:
        """A noun close to member ``t``, distinctive of it among the likely secrets, and
        about the category's world (so "monkey" for banana, "salad" for bowl, not a word for
        another sense of the member); never a likely secret itself, which nobody but the
        conjurer could then summon."""
        data = load_data()
        target = data.words[t]
        pool = data.spellable
        sims = _spell_vecs() @ data.vecs[t]
        order = _best(sims, 150)
        cand = pool[order]
        sims = sims[order]
        vecs = data.vecs[cand]
        z = _distinctive(cat, vecs, data.vecs[t])
        ctx = vecs @ _context(cat)
        # which likely secrets would get this word a crystal: a word that splits them well
        # (neither none nor all) tells the guessers most, whether it is marked or not
        ref = _reference(cat)
        would = _marked_by(_association(cat, vecs, ref), data.vecs[ref] @ vecs.T)  # (W, K)
        share = would @ _softmax(_log_prior(cat, ref), 1.0)
        share = np.clip(share, 1e-3, 1 - 1e-3)
        split = -(share * np.log2(share) + (1 - share) * np.log2(1 - share))
        score = (
            CLUE_SIM * sims
            + CLUE_SPLIT * split
            + CLUE_CONTEXT * np.minimum(ctx, CLUE_MAX_CONTEXT)
            - CLUE_NAME * np.maximum(ctx - 0.5, 0.0)  # "alcohol", "pet": the category, not a clue
            + CLUE_Z * z
            - 3.0 * np.maximum(sims - 0.7, 0.0)  # a synonym gives the game away
            - 0.5 * np.isin(cand, cat.members)  # a member rules itself out as an answer
        )
        score[(z < DARK_MARK_Z) | (sims < CLUE_MIN_SIM)] = -np.inf  # a weak or vague clue
        score[(ctx < CLUE_MIN_CONTEXT) | np.isin(cand, _reference(cat)) | (cand == t)] = -np.inf
        tokens = _content_tokens(cat.text)
        for k in np.argsort(-score)[:12]:  # check the rules only for the best few
            w = data.words[int(cand[k])]
            bad = (
                _looks_alike(w, target)
                or w in tokens
                or any(same_word(w, x) or _clashes(w, x) or _clashes(x, w) for x in written)
                or _clashes(target, w)
                or _clashes(w, target)
            )
            if bad:
                score[k] = -np.inf
        best = np.argsort(-score)[:12]
        best = best[np.isfinite(score[best])]
        if len(best) == 0:
            return None
        k = int(best[self._pick(score[best] * DARK_NAT, 4)])  # a few good clues; taste picks
        return data.words[int(cand[k])]

    def _clue_for(self, target: str, written: Sequence[str], cat: Category) -> str | None:
        """A standard round's spell word for member ``target``: close to it, not a synonym,
        not another member, not too distinctive of it (see :data:`SPELL_SHARP`)."""
        data = load_data()
        t = data.index[target]
        pool = data.spellable
        sims = _spell_vecs() @ data.vecs[t]
        order = _best(sims, 80)
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
        # a clue only the target fits leaves the conjurer no plan short of a certainty
        z = _distinctive(cat, data.vecs[[data.index[w] for w in options]], data.vecs[t])
        s = np.array(scores, np.float32) - SPELL_SHARP * np.maximum(z - 2.0, 0.0)
        s = s + self._jitter(len(options), 0.04)
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
        if dark_magic:
            return members, _dark_scores(cat, members, marked, written)
        score = TYPICAL_WEIGHT * typical + ZIPF_WEIGHT * np.clip(data.zipf[members] - 4, -2, 2)
        score = score - COMPOUND_PENALTY * _narrower(members)
        mvecs = [v for w in marked if (v := _vector(w)) is not None]
        if mvecs:
            sims = data.vecs[members] @ np.stack(mvecs).T
            score = score + MEAN_WEIGHT * sims.mean(1) + MIN_WEIGHT * sims.min(1)
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
        """The summoning word this bot writes: drawn from its best few candidates (its scores
        plus its fixed taste) by a softmax at its temperature (``noise``; 0 takes the best).
        A clear favourite is written most of the time, a close runner-up sometimes, so a
        table of bots does not always write the same word."""
        data = load_data()
        members, score = self._scores(category, marked, written, dark_magic=dark_magic)
        if len(members) == 0:
            return self._fallback_summon(category, [*marked, *written])
        return data.words[members[self._pick(score + self.taste[members])]]

    def _fallback_summon(self, category: str, written: Sequence[str]) -> str:
        """Every member clashes with a written word: any common safe noun fitting the text."""
        data = load_data()
        cat = resolve(category)
        pool = (
            data.common
            if cat.vec is None
            else data.spellable[np.argsort(-(_spell_vecs() @ cat.vec))]
        )
        for i in itertools.chain(pool[:2000], data.common):
            w = data.words[int(i)]
            if not unsafe_summon(w, written):
                return w
        raise ValueError("every known word clashes with the written words")

    # -- the conjurer ---------------------------------------------------------------------

    def dark_summon(self, category: str) -> str:
        """Dark Magic: the secret summoning word, a common, guessable member (one of the first
        :data:`DARK_SECRETS`, weighted by how well-known and common it is)."""
        data = load_data()
        cat = resolve(category)
        top = cat.members[:DARK_SECRETS]
        p = _softmax(_log_prior(cat, top), 1.0)
        word = data.words[int(self.rng.choice(top, p=p))]
        self.target = word
        return word

    def plan(self, category: str, spell_words: Mapping[int, str]) -> Plan:
        """Standard round: the target summon and the 2-4 spell words that point at it.

        Every subset of 2-4 spell words is tried, and for each the few members this bot
        would write for it (the scoring of :meth:`summon`, with its own taste). For each
        target the bot estimates how likely a guesser is to write it (the softmax a guesser
        draws from) and values the plan by its expected lead over the other players
        (:func:`_share_value`): a target every guesser finds gives the conjurer nothing and
        everyone else a point (the ``everyone`` case), one nobody finds gives nothing either,
        so the best plan is clear to most of the table but not a certainty for all of it.
        Every marked word must point at the target (be distinctive of it within the category
        and close to it): no unrelated word is marked just to muddy the water. Closeness of
        the marked words to the target and a well-known target break ties.
        """
        data = load_data()
        seats = [s for s, w in spell_words.items() if w.strip()]
        words = [spell_words[s] for s in seats]
        if not seats:
            return Plan([], "", 0.0)
        guessers = max(2, len(spell_words) - 1)  # every player wrote one spell word
        members, base = self._scores(category, [], words, dark_magic=False)
        if len(members) < 2:
            return Plan(seats[:4], data.words[members[0]] if len(members) else "", 0.0)
        vecs = {k: v for k, v in enumerate(map(_vector, words)) if v is not None}
        known = list(vecs)
        if len(known) < 2:
            return Plan(seats[: min(4, max(2, len(seats)))], data.words[members[0]], 0.0)
        if len(known) > 8:  # keep it small: the 8 words closest to some member
            sims_all = data.vecs[members] @ np.stack([vecs[k] for k in known]).T
            known = [known[k] for k in np.argsort(-sims_all.max(0))[:8]]
        wvecs = np.stack([vecs[k] for k in known])
        sims = data.vecs[members] @ wvecs.T  # (M, W)
        # how distinctive each word is of each member within the category (z-scores): every
        # marked word must really point at the target, not just make it harder to find
        ref = data.vecs[_reference(resolve(category))] @ wvecs.T  # (K, W)
        distinct = (sims - ref.mean(0)) / (ref.std(0) + 1e-6)
        taste = self.taste[members]
        temperature = self.noise if self.noise > 0 else DEFAULT_NOISE
        best: tuple[float, list[int], int] | None = None
        jitter = self._jitter(1000, self.noise)
        n = 0
        for size in (2, 3, 4):
            for combo in itertools.combinations(range(len(known)), size):
                sub = sims[:, combo]
                score = base + MEAN_WEIGHT * sub.mean(1) + MIN_WEIGHT * sub.min(1)
                top = np.argsort(-score, kind="stable")[:SUMMON_CHOICES]
                chances = _softmax(score[top], temperature)
                # the target: this bot's favourite or a close runner-up the words support
                for rank in np.argsort(-(score[top] + taste[top]), kind="stable")[:PLAN_TARGETS]:
                    first = int(top[rank])
                    honest = (
                        float(distinct[first, list(combo)].min()) >= PLAN_MIN_Z
                        and float(sub[first].min()) >= PLAN_MIN_SIM
                    )
                    quality = (
                        PLAN_EXPECT * _share_value(float(chances[rank]), guessers)
                        - 10.0 * (not honest)  # only when no plan is honest
                        + PLAN_MEAN * float(sub[first].mean())
                        + PLAN_MIN * float(sub[first].min())
                        + PLAN_TYPICAL * float(base[first])
                        + jitter[n % 1000]
                    )
                    n += 1
                    if best is None or quality > best[0]:
                        best = (quality, [seats[known[c]] for c in combo], first)
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
        is kept in :attr:`target`). Dark Magic: the spell words distinctive of the secret word
        (0-4 of them, see :func:`_dark_marks`)."""
        if dark_magic_word is None:
            return self.plan(category, spell_words).marks
        self.target = dark_magic_word
        return _dark_marks(category, spell_words, dark_magic_word)

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
    kind = _category_phrase(category)
    i = _lookup(word)
    if i is not None and i in set(cat.members.tolist()):
        return False, f'"{word}" is {kind}'
    if cat.how in ("hypernym", "deck-head") and i is not None:
        head = _lookup(_content_tokens(category)[-1]) if _content_tokens(category) else None
        if head is not None and head in data.ancestors(i):
            return False, f'"{word}" is {kind}'
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
    from protocol.words import base_forms, word_data

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


# ------------------------------------------------------------------------------------------
# Dark Magic


def _log_prior(cat: Category, members: np.ndarray) -> np.ndarray:
    """How likely a conjurer is to pick each member as a secret (log, up to a constant): the
    well-known and common ones among the first :data:`DARK_SECRETS` (the weights
    :meth:`Brain.dark_summon` draws with), anything else only rarely."""
    data = load_data()
    pos = _positions(cat, members)
    lp = np.log(np.maximum(cat.typical[pos], 1e-6)) + np.clip(data.zipf[members] - 4, -2, 2)
    return (lp - DARK_RARE * (pos >= DARK_SECRETS)).astype(np.float32)


def _positions(cat: Category, members: np.ndarray) -> np.ndarray:
    where = {int(i): k for k, i in enumerate(cat.members)}
    return np.array([where[int(i)] for i in members], np.int64)


def _reference(cat: Category) -> np.ndarray:
    """The category's likely secrets: what an association is measured against."""
    return cat.members[:DARK_SECRETS]


@functools.lru_cache(maxsize=256)
def _context_cached(text: str) -> np.ndarray:
    cat = resolve(text)
    ref = load_data().vecs[_reference(cat)].mean(0)
    v = ref / (np.linalg.norm(ref) + 1e-9)
    if cat.vec is not None:
        v = v + cat.vec
    return (v / (np.linalg.norm(v) + 1e-9)).astype(np.float32)


def _context(cat: Category) -> np.ndarray:
    """Where the category's world sits: its text and its likely members together."""
    return _context_cached(cat.text)


def _distinctive(cat: Category, vecs: np.ndarray, target: np.ndarray) -> np.ndarray:
    """For each row of ``vecs``: how much closer it is to ``target`` than to the category's
    likely secrets in general (a z-score). "monkey" is far more banana than fruit; "peel",
    "citrus" or "juice" are about any fruit."""
    ref = load_data().vecs[_reference(cat)] @ vecs.T  # (K, W)
    return (vecs @ target - ref.mean(0)) / (ref.std(0) + 1e-6)


def _association(cat: Category, vecs: np.ndarray, members: np.ndarray | None = None) -> np.ndarray:
    """(W, M) z-scores: how distinctive each word is of each member (default: all members)."""
    data = load_data()
    ref = data.vecs[_reference(cat)] @ vecs.T  # (K, W)
    sims = vecs @ data.vecs[cat.members if members is None else members].T  # (W, M)
    return (sims - ref.mean(0)[:, None]) / (ref.std(0)[:, None] + 1e-6)


def _marked_by(z: np.ndarray, sims: np.ndarray) -> np.ndarray:
    """The marking rule of :func:`_dark_marks` for one word at a time (1.0 = marked)."""
    return ((z >= DARK_MARK_Z) & (sims.T >= DARK_MARK_MIN_SIM)).astype(np.float32)


def _dark_marks(category: str, spell_words: Mapping[int, str], secret: str) -> list[int]:
    """The Dark Magic conjurer's crystals: every spell word distinctive of its secret word
    (z-score at least :data:`DARK_MARK_Z` among the category's likely secrets, and not far
    from it in absolute terms), at most 4, the most distinctive first; when none is, the single
    most distinctive near word, if it is closer to the secret than to the likely secrets on
    average (so one crystal whenever a word is reasonably related). Unrelated words (further
    than :data:`DARK_MARK_MIN_SIM`) never get one."""
    tv = _vector(secret)
    if tv is None:
        return []
    cat = resolve(category)
    found = []
    for seat, word in spell_words.items():
        v = _vector(word) if word.strip() else None
        if v is None:
            continue
        z = float(_distinctive(cat, v[None, :], tv)[0])
        if float(v @ tv) >= DARK_MARK_MIN_SIM:
            found.append((z, seat))
    found.sort(reverse=True)
    marks = [seat for z, seat in found if z >= DARK_MARK_Z][:4]
    if not marks and found and found[0][0] >= DARK_MARK_MIN_Z:
        marks = [found[0][1]]
    return sorted(marks)


def _dark_scores(
    cat: Category,
    members: np.ndarray,
    marked: Sequence[str],
    written: Sequence[str],
) -> np.ndarray:
    """Dark Magic summon scores: the log-posterior that each member is the secret, given
    which spell words got a crystal and which did not ("not being selected is also helpful
    information"). For every candidate secret the guesser works out which words a conjurer
    following :func:`_dark_marks` would have marked (softened near the bars, and allowing for
    a conjurer who marks differently now and then) and compares that with the table; in
    score units (:data:`DARK_NAT`)."""
    data = load_data()
    lp = _log_prior(cat, members).astype(np.float64)
    chosen = {normalize(w) for w in marked}
    words = list(dict.fromkeys(w for w in (*written, *marked) if w.strip()))
    known = [(w, v) for w in words if (v := _vector(w)) is not None]
    if not known or len(members) == 0:
        return (DARK_NAT * lp).astype(np.float32)
    vecs = np.stack([v for _, v in known]).astype(np.float64)
    is_marked = np.array([normalize(w) in chosen for w, _ in known])
    z = _association(cat, vecs.astype(np.float32))[:, _positions(cat, members)]  # (W, M)
    sims = vecs @ data.vecs[members].T.astype(np.float64)  # (W, M)
    near = _sigmoid((sims - DARK_MARK_MIN_SIM) / 0.05)
    passes = _sigmoid((z - DARK_MARK_Z) / DARK_MARK_SOFT) * near
    # when no word passes, the conjurer still marks the most distinctive near one if it is
    # distinctive enough
    zn = np.where(sims >= DARK_MARK_MIN_SIM, z, -np.inf)
    best = zn.argmax(0)
    cols = np.arange(zn.shape[1])
    fallback = np.zeros_like(passes)
    top = zn[best, cols]
    fallback[best, cols] = np.where(
        np.isfinite(top), _sigmoid((top - DARK_MARK_MIN_Z) / DARK_MARK_SOFT), 0.0
    )
    others_pass_none = np.prod(1.0 - passes, axis=0) / np.maximum(1.0 - passes, 1e-9)
    p = passes + (1.0 - passes) * others_pass_none * fallback
    p = np.clip(p, DARK_SLIP, 1.0 - DARK_SLIP)
    lp = lp + np.where(is_marked[:, None], np.log(p), np.log(1.0 - p)).sum(0)
    return (DARK_NAT * lp).astype(np.float32)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _narrower(members: np.ndarray) -> np.ndarray:
    """1 for a compound member whose head word is another member ("table tennis" when
    "tennis" is there too, "grand piano" next to "piano"), else 0."""
    words = load_data().words
    names = {words[i] for i in members}
    return np.array(
        [(" " in (w := words[i]) and w.rsplit(" ", 1)[1] in names) for i in members], np.float32
    )


@functools.cache
def _spell_vecs() -> np.ndarray:
    """The vectors of the words a bot may write as spell words (in ``Data.spellable`` order)."""
    data = load_data()
    return np.ascontiguousarray(data.vecs[data.spellable])


def _best(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest ``scores``, highest first."""
    if len(scores) <= k:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, k)[:k]
    return part[np.argsort(-scores[part], kind="stable")]


def _softmax(scores: np.ndarray, temperature: float) -> np.ndarray:
    z = (scores - scores.max()) / max(temperature, 1e-6)
    e = np.exp(z.astype(np.float64))
    return e / e.sum()


#: A share of the guessers (a probability), or a grid of them.
_Share = TypeVar("_Share", np.ndarray, float)


@functools.lru_cache(maxsize=64)
def _best_share(guessers: int, stars: float) -> float:
    grid = np.linspace(0.0, 1.0, 1001)
    return float(_edge(grid, guessers, stars).max())


def _edge(p: _Share, guessers: int, stars: float) -> _Share:
    g = max(guessers, 2)
    return stars * (g - 1) * (p - p**g) - PLAN_EVERYONE * p**g


def _share_value(p: float, guessers: int, stars: float = PLAN_STARS) -> float:
    """What a plan is worth to the conjurer when each of ``guessers`` writes its target with
    probability ``p``: its expected lead over the average other player. Each matcher scores
    ``stars`` for the conjurer and for themself, a lead of ``stars * (g - 1) / g`` each; when
    everyone matches, the conjurer scores nothing and the others a point each (weighted by
    :data:`PLAN_EVERYONE`). Scaled so that the best ``p`` gives 1: about 0.56 for 3 guessers
    (all three then match in about a sixth of the rounds), 0.43 for 2, 0.72 for 7."""
    return float(_edge(p, guessers, stars)) / _best_share(max(guessers, 2), stars)


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
