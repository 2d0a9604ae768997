"""What a mistyped word may have meant: the common nouns spelled nearly so, likeliest first.

Advisory only: the client names them when it asks whether to send a word no dictionary of the
game knows (``client.inputs``). Why not ``difflib``: its similarity ratio does not take two
swapped letters for one slip, the commonest typo, and it offered "evangel, easel or eagre" for
"eagel", not "eagle" (seen at 80x24).

The candidates are the computer players' vocabulary of common nouns (``client/bots/data``,
stop-listed words left out), found through an index of each word with one letter deleted (the
"symmetric delete" method): a word and a typo of it within two slips share an entry. They are
ranked by the optimal string alignment distance (a swap of two neighbours counts one), then by
how common the word is (its Zipf frequency).
"""

from __future__ import annotations

import difflib
import functools

from conjure.client.bots.stoplist import stopped
from conjure.client.bots.worddata import load_data
from conjure.protocol.words import word_data

#: Slips at most between a typo and a word offered for it.
MOST_SLIPS = 2


def _deletes(word: str) -> set[str]:
    """The word and every form of it with one letter left out."""
    return {word} | {word[:i] + word[i + 1 :] for i in range(len(word))}


@functools.cache
def _index() -> tuple[dict[str, list[int]], tuple[str, ...], tuple[float, ...], frozenset[int]]:
    """Each one-letter-deleted form -> the vocabulary words it comes from (built once, ~0.1 s),
    and which of those words are names (not common nouns: offered only when nearer, below)."""
    data, wordnet = load_data(), word_data()
    zipf = tuple(float(z) for z in data.zipf)
    index: dict[str, list[int]] = {}
    names: set[int] = set()
    for i, word in enumerate(data.words):
        if not word.isalpha() or stopped(word, data.stop):
            continue
        if not wordnet.is_common(word):
            names.add(i)
        for form in _deletes(word):
            index.setdefault(form, []).append(i)
    return index, data.words, zipf, frozenset(names)


def slips(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions, and swaps of
    two neighbouring letters, each one slip."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def meant(typed: str, most: int = 3) -> list[str]:
    """The common nouns ``typed`` (one word, lower case) may be a slip for, likeliest first:
    fewest slips, then the same letters in another order (a swap: "hrose" is "horse" before
    "rose"), then a letter left out before one too many ("peny": penny before pen), then the
    commoner. A plural's slips are looked for in its singular too ("shraks":
    shark). Failing those, the words ``difflib`` finds alike ("elefant": elephant).

    A name (Beethoven, Paris) is offered only when it is fewer slips away than every common
    noun: "bethoven" is one slip from beethoven and from no common noun, but "penn" is no slip
    for "peny" (penny is as near)."""
    if not typed.isalpha() or len(typed) < 3:
        return []
    index, words, zipf, names = _index()
    forms = {typed, typed[:-1]} if typed.endswith("s") and len(typed) > 3 else {typed}
    found = {i for form in forms for d in _deletes(form) for i in index.get(d, ())}
    letters = sorted(typed)
    ranked = sorted(
        (n, sorted(words[i]) != letters, len(words[i]) < len(typed), -zipf[i], words[i], i)
        for i in found
        if words[i] not in forms and (n := min(slips(f, words[i]) for f in forms)) <= MOST_SLIPS
    )
    common = [r for r in ranked if r[-1] not in names]
    nearest = common[0][0] if common else MOST_SLIPS + 1
    offered = [r for r in ranked if r[-1] not in names or r[0] < nearest]
    if offered:
        return [r[4] for r in offered[:most]]
    return difflib.get_close_matches(typed, _alike_pool(typed[0], len(typed)), most, 0.8)


@functools.cache
def _alike_pool(first: str, length: int) -> tuple[str, ...]:
    """The vocabulary's words that begin with ``first`` and are within two letters of
    ``length`` long, commonest first ("smartphone" is no slip for "marathoner")."""
    index, words, zipf, names = _index()
    usable = {i for ids in index.values() for i in ids} - names
    near = [i for i in usable if words[i][0] == first and abs(len(words[i]) - length) <= 2]
    return tuple(words[i] for i in sorted(near, key=lambda i: -zipf[i]))
