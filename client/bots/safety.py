"""Whether a summoning word is safe to write: the rules against written words, and the stop-list."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from conjure.client.bots.worddata import is_stopped
from conjure.protocol.words import contains_written, hidden_inside

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
