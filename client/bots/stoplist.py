"""The stop-list: words the computer players never write, summon or suggest.

One parser and one test, used both when the word data is built (`client/bots/databuild/build_data.py`)
and at play time (:mod:`client.bots.brain`), so the two can never disagree.
"""

from __future__ import annotations

import re
from collections.abc import Container

_PARTS = re.compile(r"[\s\-]+")


def parse_stoplist(text: str) -> frozenset[str]:
    """The words of ``data/stoplist.txt``: one a line, ``#`` starts a comment, case folded."""
    words = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip().casefold()
        if line:
            words.add(line)
    return frozenset(words)


def stopped(word: str, stop: Container[str]) -> bool:
    """Whether ``stop`` forbids the word: whole, or any part of a compound (space or hyphen)."""
    w = word.casefold()
    if w in stop:
        return True
    if " " not in w and "-" not in w and "\t" not in w:
        return False
    return any(part in stop for part in _PARTS.split(w))
