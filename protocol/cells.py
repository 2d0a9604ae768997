"""Widths of text on a terminal, in cells: a wide character or an emoji takes two, a combining
mark none. One measure for the client's screen and for the reports a terminal shows
(``conjure replay``, ``conjure score``): counted in characters, a name with an emoji pushed its
columns one cell out and wrapped report lines one cell past the edge (seen at 80 columns).
"""

from __future__ import annotations

import re

from wcwidth import wcwidth


def char_cells(ch: str) -> int:
    """The cells one character takes (0 for one that takes none, or is not printed)."""
    return max(wcwidth(ch), 0)


def cells(text: str) -> int:
    """The width of ``text`` on a terminal."""
    return sum(char_cells(ch) for ch in text)


def ljust(text: str, width: int) -> str:
    """``text`` and spaces after it up to ``width`` cells (``str.ljust`` counts characters)."""
    return text + " " * max(0, width - cells(text))


def wrap_words(text: str, width: int, indent: str = "", hang: str = "  ") -> list[str]:
    """One line of ``text`` as lines of at most ``width`` cells, broken only at spaces: a word
    longer than a line stays whole on a line of its own. The first line starts with ``indent``,
    the others with ``hang``; the spaces between two words on one line stay as they were, those
    at a break go."""
    lines: list[str] = []
    line, used, gap = indent, cells(indent), ""
    empty = True
    for chunk in re.findall(r"\S+|\s+", text):
        if chunk.isspace():
            gap = "" if empty else chunk
            continue
        size = cells(chunk)
        if not empty and used + cells(gap) + size > width:
            lines.append(line)
            line, used, gap, empty = hang, cells(hang), "", True
        line += gap + chunk
        used += cells(gap) + size
        gap, empty = "", False
    lines.append(line)
    return lines
