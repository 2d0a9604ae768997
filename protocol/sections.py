"""The packaged data files' one layout: comment lines, then ``[name]`` sections of one entry a line.

Both the WordNet data (``protocol.words``) and the lemma table (``protocol.lemmas``) are read at
the first word comparison of every ``conjure replay`` and server start. Split by ``str.split`` in
C rather than looked at line by line in Python: the word data's 160,000 lines took 0.10 s to
parse that way and take 0.065 s so (most of it now building the sets), of a short replay's ~0.4 s.
"""

from __future__ import annotations


def read_sections(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """The non-empty lines before the first section, and each section's, in order.

    A section starts at a line beginning with ``[``, named up to its ``]``; so no entry may begin
    with ``[`` (the data builders refuse one). A name given twice keeps both sections' lines.
    """
    head, *parts = ("\n" + text).split("\n[")
    sections: dict[str, list[str]] = {}
    for part in parts:
        name, _, body = part.partition("]")
        sections.setdefault(name, []).extend(filter(None, body.split("\n")))
    return list(filter(None, head.split("\n"))), sections
