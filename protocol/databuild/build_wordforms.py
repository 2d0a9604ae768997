"""Build ``protocol/data/wordnet_nouns.txt.gz`` from a local WordNet 3.0 install.

Playing must need no Debian package and no download, so the few WordNet facts that
:mod:`protocol.words` uses are extracted once, here, and committed as a small data file.
Building needs the Debian package ``wordnet-base`` (files under ``/usr/share/wordnet``)::

    apt-get install -y wordnet-base
    python protocol/databuild/build_wordforms.py [--wordnet DIR] [--out FILE]

(from a checkout: ``protocol/databuild/`` is no package of ``pyproject.toml``, so the
script is not installed).

The output is gzip-compressed UTF-8 text with five sections, one entry per line:

``[nouns]``
    every noun lemma of ``index.noun``, lower-case, underscores turned into spaces.
``[capitalised]``
    single-word noun lemmas that WordNet only ever writes with a capital letter
    (proper nouns and acronyms such as "GA" or "ENT"); they count as nouns but not as
    common words when judging a hidden-inside leftover.
``[other]``
    single-word lower-case adjectives, verbs and adverbs that are not noun lemmas
    ("hot", "blue"), so a leftover like the "hot" of "hotdog" counts as a real word.
``[exceptions]``
    ``noun.exc``: an irregular form, a tab, then its base form(s) separated by tabs.
``[sensecounts]``
    a lemma, a tab, and how many of its senses are tagged in WordNet's SemCor corpus
    (``tagsense_cnt`` in ``index.noun``), only for lemmas that differ from another lemma by
    a final "s" ("letter"/"letters", "physic"/"physics") and only when non-zero: the
    tie-breaker of the bare-"s" rule in :mod:`protocol.words`.

The file is written deterministically (sorted lines, gzip mtime 0), so rebuilding from
the same WordNet gives identical bytes.
"""

from __future__ import annotations

import argparse
import gzip
import io
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

DEFAULT_WORDNET_DIR = Path("/usr/share/wordnet")
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "data" / "wordnet_nouns.txt.gz"
HEADER = "# Conjure word forms v1, built by protocol/build_wordforms.py from WordNet 3.0"

_ADJ_MARKER = re.compile(r"\([a-z]+\)$")  # data.adj marks syntax like "galore(ip)"
_SINGLE_WORD = re.compile(r"[a-z]+")


def _lemma_text(raw: str) -> str:
    """WordNet writes spaces as underscores; the game compares lower-case text."""
    return raw.replace("_", " ").lower()


def _data_lines(path: Path) -> Iterator[str]:
    """Synset lines of a ``data.*`` file (the licence header lines start with spaces)."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.startswith(" "):
                yield line


def _synset_words(line: str) -> list[str]:
    """The words of one synset line, as written (case kept, markers removed)."""
    fields = line.split()
    count = int(fields[3], 16)
    return [_ADJ_MARKER.sub("", fields[4 + 2 * i]) for i in range(count)]


def read_noun_index(wordnet: Path) -> dict[str, int]:
    """Every noun lemma of ``index.noun`` with its SemCor tagged-sense count."""
    counts: dict[str, int] = {}
    with (wordnet / "index.noun").open(encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(" "):
                continue
            fields = line.split()
            pointer_count = int(fields[3])
            counts[_lemma_text(fields[0])] = int(fields[5 + pointer_count])
    return counts


def bare_s_sense_counts(counts: dict[str, int]) -> dict[str, int]:
    """Non-zero counts of lemmas that another lemma extends or shortens by a final "s"."""
    pairs = [
        (lemma, lemma[:-1]) for lemma in counts if lemma.endswith("s") and lemma[:-1] in counts
    ]
    wanted = {lemma for pair in pairs for lemma in pair}
    return {lemma: counts[lemma] for lemma in wanted if counts[lemma] > 0}


def read_lowercase_words(wordnet: Path, pos: str) -> set[str]:
    """Single words that ``data.<pos>`` writes in lower case at least once."""
    words: set[str] = set()
    for line in _data_lines(wordnet / f"data.{pos}"):
        for word in _synset_words(line):
            if _SINGLE_WORD.fullmatch(word):
                words.add(word)
    return words


def read_capitalised_nouns(wordnet: Path, nouns: set[str]) -> set[str]:
    """Single-word noun lemmas never written in lower case: names and acronyms."""
    lower = read_lowercase_words(wordnet, "noun")
    return {n for n in nouns if _SINGLE_WORD.fullmatch(n) and n not in lower}


def read_other_words(wordnet: Path, nouns: set[str]) -> set[str]:
    """Lower-case adjectives, verbs and adverbs that are not already noun lemmas."""
    words: set[str] = set()
    for pos in ("adj", "verb", "adv"):
        words |= read_lowercase_words(wordnet, pos)
    return words - nouns


def read_exceptions(wordnet: Path) -> dict[str, tuple[str, ...]]:
    """``noun.exc``: irregular noun forms and their base forms."""
    exceptions: dict[str, tuple[str, ...]] = {}
    with (wordnet / "noun.exc").open(encoding="utf-8") as handle:
        for line in handle:
            parts = [_lemma_text(p) for p in line.split()]
            if len(parts) >= 2:
                exceptions[parts[0]] = tuple(parts[1:])
    return exceptions


def render(
    nouns: Iterable[str],
    capitalised: Iterable[str],
    other: Iterable[str],
    exceptions: dict[str, tuple[str, ...]],
    sense_counts: dict[str, int],
) -> str:
    """The data file's text: header, then the five sorted sections.

    Every entry is one non-empty line that does not begin with ``[`` (``protocol.sections``
    would read that as a section's start); ValueError otherwise.
    """
    bases = [base for forms in exceptions.values() for base in forms]
    for entry in (*nouns, *capitalised, *other, *exceptions, *bases, *sense_counts):
        if not entry or entry.startswith("[") or "\n" in entry or "\t" in entry:
            raise ValueError(f"an entry the data file cannot hold: {entry!r}")
    lines = [HEADER, "[nouns]", *sorted(nouns), "[capitalised]", *sorted(capitalised)]
    lines += ["[other]", *sorted(other), "[exceptions]"]
    lines += ["\t".join((form, *bases)) for form, bases in sorted(exceptions.items())]
    lines += ["[sensecounts]", *(f"{lemma}\t{n}" for lemma, n in sorted(sense_counts.items()))]
    return "\n".join(lines) + "\n"


def write_gzip(text: str, out: Path) -> None:
    """Write reproducibly: fixed mtime and no file name inside the gzip header."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=buffer, mtime=0) as gz:
        gz.write(text.encode("utf-8"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buffer.getvalue())


def build(wordnet: Path, out: Path) -> str:
    """Read WordNet from ``wordnet`` and write the data file; return a one-line summary."""
    if not (wordnet / "index.noun").is_file():
        raise SystemExit(f"{wordnet}/index.noun not found: apt-get install -y wordnet-base")
    counts = read_noun_index(wordnet)
    nouns = set(counts)
    capitalised = read_capitalised_nouns(wordnet, nouns)
    other = read_other_words(wordnet, nouns)
    exceptions = read_exceptions(wordnet)
    sense_counts = bare_s_sense_counts(counts)
    write_gzip(render(nouns, capitalised, other, exceptions, sense_counts), out)
    return (
        f"{out}: {len(nouns)} nouns, {len(capitalised)} capitalised, {len(other)} other words, "
        f"{len(exceptions)} exceptions, {len(sense_counts)} sense counts, "
        f"{out.stat().st_size} bytes"
    )


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--wordnet", type=Path, default=DEFAULT_WORDNET_DIR)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    print(build(args.wordnet, args.out))


if __name__ == "__main__":
    main()
