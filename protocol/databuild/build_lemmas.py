"""Build ``protocol/data/lemminflect_nouns.txt.gz``: lemminflect's answers, asked once here.

``protocol.lemmas`` answers the game's questions to lemminflect from this table, so that comparing
words does not wait for lemminflect to load its dictionary. It needs only the project's own
packages (the WordNet data file is already in ``protocol/data``)::

    .venv/bin/python protocol/databuild/build_lemmas.py [--out FILE]

Rebuild it whenever lemminflect's version changes: the table names the version it was built
with, and is not used under another (``tests/test_lemmas.py`` fails until it is rebuilt).

The tokens asked about: every token (split as the game splits words) of WordNet's noun lemmas,
its exception list's forms and bases, and its other words, in the game's normal form, and every
noun inflection lemminflect gives each of them. For each, ``getLemma(token, upos="NOUN")`` with
and without ``lemmatize_oov``. The file is written deterministically (sorted lines, gzip mtime
0), so rebuilding with the same lemminflect gives identical bytes.
"""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path

from lemminflect import getAllInflections, getLemma

from conjure.protocol import lemmas
from conjure.protocol.words import _tokens as tokens
from conjure.protocol.words import normalize, word_data

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "data" / lemmas.TABLE_FILE


def vocabulary() -> set[str]:
    """The tokens whose lemmas the table holds."""
    data = word_data()
    phrases = [*data.nouns, *data.capitalised, *data.other, *data.exceptions]
    phrases += [base for bases in data.exceptions.values() for base in bases]
    found = {token for phrase in phrases for token in tokens(normalize(phrase))}
    for token in list(found):
        for forms in getAllInflections(token, upos="NOUN").values():
            for form in forms:
                found.update(tokens(normalize(form)))
    return found


def answers(words: set[str]) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Each token's lemmas from lemminflect: (without guessing, with guessing). A token whose
    answer a line of the table cannot hold is left out: the game asks lemminflect about it."""
    found = {}
    for token in sorted(words):
        known = tuple(getLemma(token, upos="NOUN", lemmatize_oov=False))
        guessed = tuple(getLemma(token, upos="NOUN", lemmatize_oov=True))
        if lemmas.can_hold(token, known + guessed):
            found[token] = (known, guessed)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the table of lemminflect's noun lemmas.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    version = lemmas.installed_version()
    if version is None:
        parser.error("lemminflect is not installed")
    found = answers(vocabulary())
    text = lemmas.render(version, found)
    args.out.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    print(f"{args.out.name}: {len(found):,} tokens, lemminflect {version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
