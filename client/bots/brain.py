"""The computer player's word sense: pure, seeded, numpy only.

Everything here works from the data committed under ``client/bots/data/`` (built once by
`client/bots/databuild/build_data.py`): a vocabulary of common nouns with 128-dimensional MiniLM
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

This module holds the :class:`Brain` itself; what it draws on lives beside it, and the names
callers use are re-exported here: :mod:`client.bots.tuning` (weights and thresholds),
:mod:`client.bots.worddata` (loading the data, looking words up), :mod:`client.bots.categories`
(what a category text means), :mod:`client.bots.safety` (which summoning words are safe),
:mod:`client.bots.votes` (taking sides) and :mod:`client.bots.darkmagic` (Dark Magic's
within-category association).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping, Sequence
from typing import NamedTuple, TypeVar

import numpy as np

from conjure.client.bots.categories import Category, _content_tokens, knows, resolve
from conjure.client.bots.darkmagic import (
    _association,
    _context,
    _dark_marks,
    _dark_scores,
    _distinctive,
    _log_prior,
    _marked_by,
    _narrower,
    _positions,
    _reference,
)
from conjure.client.bots.safety import _clashes, _looks_alike, unsafe_summon
from conjure.client.bots.tuning import (
    CLUE_CONTEXT,
    CLUE_MAX_CONTEXT,
    CLUE_MIN_CONTEXT,
    CLUE_MIN_SIM,
    CLUE_NAME,
    CLUE_SIM,
    CLUE_SPLIT,
    CLUE_Z,
    COMPOUND_PENALTY,
    DARK_AIM,
    DARK_COVERED,
    DARK_MARK_Z,
    DARK_NAT,
    DARK_SECRETS,
    DEFAULT_NOISE,
    HIDDEN_RELATED,
    MEAN_WEIGHT,
    MIN_WEIGHT,
    PLAN_EVERYONE,
    PLAN_EXPECT,
    PLAN_MEAN,
    PLAN_MIN,
    PLAN_MIN_SIM,
    PLAN_MIN_Z,
    PLAN_STARS,
    PLAN_TARGETS,
    PLAN_TYPICAL,
    SPELL_SHARP,
    SPELL_SYNERGY,
    SUMMON_CHOICES,
    TASTE,
    TYPICAL_WEIGHT,
    ZIPF_WEIGHT,
)
from conjure.client.bots.votes import _vote_adjectives, _vote_category, _vote_noun, _vote_same
from conjure.client.bots.worddata import Data, _vector, is_stopped, load_data, similarity
from conjure.protocol.words import contains_written, hidden_inside, same_word

__all__ = [
    "Brain",
    "Category",
    "Data",
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
