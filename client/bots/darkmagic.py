"""Dark Magic for the computer players: association measured within the category (z-scores),
the conjurer's marks and the guessers' inference of the secret."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np

from conjure.client.bots.categories import Category, resolve
from conjure.client.bots.tuning import (
    DARK_MARK_MIN_SIM,
    DARK_MARK_MIN_Z,
    DARK_MARK_SOFT,
    DARK_MARK_Z,
    DARK_NAT,
    DARK_RARE,
    DARK_SECRETS,
    DARK_SLIP,
)
from conjure.client.bots.worddata import _vector, load_data
from conjure.protocol.words import normalize

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
