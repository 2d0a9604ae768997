"""lemminflect's noun lemmas, answered from a table lemminflect itself built, where it has them.

Why: lemminflect loads its whole dictionary on its first question (~0.3 s with its import), and
every comparison of words asks it about their last tokens. ``conjure replay`` of a long game took
a third of its time there, and a server's or a bot's first comparison waited as long. The table
(``protocol/data/lemminflect_nouns.txt.gz``, built by `protocol/databuild/build_lemmas.py`)
holds lemminflect's answers, both with and without its guesses for words it does not know, for
every token of WordNet's words and every plural lemminflect gives them: about 100,000 tokens,
loaded in a few hundredths of a second.

It is a cache, not other data: each answer is what lemminflect says of that token, so the game
compares words exactly as it would without the table. A token the table lacks is asked of
lemminflect, and the table is not used at all unless it was built with the lemminflect version
that is installed (``tests/test_lemmas.py`` checks both the version and every answer).
"""

from __future__ import annotations

import functools
import gzip
import zlib
from dataclasses import dataclass
from importlib import resources

from conjure.protocol.sections import read_sections

TABLE_FILE = "lemminflect_nouns.txt.gz"
#: The table's first line, then the version of lemminflect it was built with.
HEADER = "# Conjure: lemminflect's noun lemmas, built by protocol/databuild/build_lemmas.py"
VERSION_LINE = "# lemminflect "

#: Sections of the table, one token a line (then, for the last two, a tab and its lemmas):
#: in lemminflect's dictionary, its own lemma; not in it, and guessed to be its own lemma; in the
#: dictionary, other lemmas; not in it, other lemmas guessed.
SAME, GUESSED_SAME, LEMMAS, GUESSED = "same", "guessed-same", "lemmas", "guessed"
SECTIONS = (SAME, GUESSED_SAME, LEMMAS, GUESSED)


@dataclass(frozen=True, slots=True)
class LemmaTable:
    """What lemminflect answers for the tokens it was asked about when the table was built."""

    same: frozenset[str]
    guessed_same: frozenset[str]
    lemmas: dict[str, str]  #: token -> its lemmas, tab-separated (split when asked)
    guessed: dict[str, str]

    def lookup(self, token: str, *, guess: bool) -> tuple[str, ...] | None:
        """``getLemma(token, upos="NOUN", lemmatize_oov=guess)``, or None if not in the table."""
        if token in self.same:
            return (token,)
        found = self.lemmas.get(token)
        if found is not None:
            return tuple(found.split("\t"))
        if token in self.guessed_same:
            return (token,) if guess else ()
        found = self.guessed.get(token)
        if found is not None:
            return (tuple(found.split("\t")) if found else ()) if guess else ()
        return None


def can_hold(token: str, lemmas: tuple[str, ...]) -> bool:
    """Whether a line of the table can say this: no empty text (lemminflect guesses "" for "s"),
    no tab or newline, no token that reads as a section's start."""
    return not token.startswith("[") and all(
        text and "\t" not in text and "\n" not in text for text in (token, *lemmas)
    )


def render(version: str, answers: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]) -> str:
    """The table's text for ``answers``: token -> (lemmas without guessing, with guessing).

    A token lemminflect's dictionary holds must get the same lemmas either way, and every answer
    must be one the table can hold (:func:`can_hold`); ValueError otherwise.
    """
    sections: dict[str, list[str]] = {name: [] for name in SECTIONS}
    for token, (known, guessed) in sorted(answers.items()):
        if not can_hold(token, known + guessed):
            raise ValueError(f"an answer the table cannot hold: {token!r}: {known}, {guessed}")
        if known and known != guessed:
            raise ValueError(f"{token!r}: {known} from the dictionary but {guessed} guessing")
        if known:
            name, lemmas = (SAME, ()) if known == (token,) else (LEMMAS, known)
        else:
            name, lemmas = (GUESSED_SAME, ()) if guessed == (token,) else (GUESSED, guessed)
        sections[name].append("\t".join((token, *lemmas)) if name in (LEMMAS, GUESSED) else token)
    lines = [HEADER, VERSION_LINE + version]
    for name in SECTIONS:
        lines += [f"[{name}]", *sections[name]]
    return "\n".join(lines) + "\n"


def parse(text: str) -> tuple[str, LemmaTable]:
    """The lemminflect version a table's text names, and the table."""
    head, blocks = read_sections(text)
    version = next(
        (line[len(VERSION_LINE) :] for line in head if line.startswith(VERSION_LINE)), ""
    )

    def pairs(name: str) -> dict[str, str]:
        found: dict[str, str] = {}
        for line in blocks.get(name, []):
            token, _, lemmas = line.partition("\t")
            found[token] = lemmas
        return found

    table = LemmaTable(
        same=frozenset(blocks.get(SAME, [])),
        guessed_same=frozenset(blocks.get(GUESSED_SAME, [])),
        lemmas=pairs(LEMMAS),
        guessed=pairs(GUESSED),
    )
    return version, table


def installed_version() -> str | None:
    """The installed lemminflect's version (None if it is missing)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lemminflect")
    except PackageNotFoundError:  # pragma: no cover - a dependency
        return None


@functools.cache
def packaged_table() -> LemmaTable | None:
    """The shipped table, if it was built with the installed lemminflect (else None)."""
    resource = resources.files("conjure.protocol.data").joinpath(TABLE_FILE)
    try:
        return read_table(resource.read_bytes(), installed_version())
    except OSError:  # missing or unreadable: it is only a cache
        return None


def read_table(data: bytes, version: str | None) -> LemmaTable | None:
    """The table in a table file's bytes if it was built with lemminflect ``version``; None if it
    was not, or if the file is damaged (it is only a cache: lemminflect answers instead)."""
    try:
        built_with, table = parse(gzip.decompress(data).decode("utf-8"))
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError):
        return None
    return table if built_with and built_with == version else None


@functools.lru_cache(maxsize=8192)
def noun_lemmas(token: str, *, guess: bool) -> tuple[str, ...]:
    """lemminflect's noun lemmas of ``token``; ``guess`` allows its out-of-vocabulary rules."""
    table = packaged_table()
    if table is not None:
        found = table.lookup(token, guess=guess)
        if found is not None:
            return found
    from lemminflect import getLemma  # imported lazily: with its first answer, ~0.3 s

    return tuple(getLemma(token, upos="NOUN", lemmatize_oov=guess))


def warm_up() -> None:
    """Load the table and lemminflect's dictionary now: a server does, off its event loop, so
    that no room waits for them on a word the table lacks."""
    packaged_table()
    from lemminflect import getLemma

    getLemma("starships", upos="NOUN")
