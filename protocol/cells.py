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


def head(text: str, width: int) -> str:
    """The longest start of ``text`` that fits ``width`` cells."""
    out, used = [], 0
    for ch in text:
        w = char_cells(ch)
        if used + w > width:
            break
        out.append(ch)
        used += w
    return "".join(out)


def wrap_words(
    text: str, width: int, indent: str = "", hang: str = "  ", *, break_long: bool = False
) -> list[str]:
    """One line of ``text`` as lines of at most ``width`` cells, broken only at spaces (a
    no-break space is not one). The first line starts with ``indent``, the others with
    ``hang``; the spaces between two words on one line stay as they were, those at a break go.

    A word longer than a whole line stays whole on a line of its own (a path in a report stays
    one piece to copy), or with ``break_long`` (a screen, where a line past the edge would
    wrap anywhere) is broken where it must, each piece on a line of its own.
    """
    lines: list[str] = []
    line, used, gap = indent, cells(indent), ""
    empty = True
    for chunk in re.findall(r"[^ ]+| +", text):
        if chunk[0] == " ":
            gap = "" if empty else chunk
            continue
        size = cells(chunk)
        if not empty and used + cells(gap) + size > width:
            lines.append(line)
            line, used, gap, empty = hang, cells(hang), "", True
        if break_long:
            # At least one cell a line, however narrow (a width under the hang's never ended).
            while chunk and size > max(1, width - used - cells(gap)):
                piece = head(chunk, max(1, width - used - cells(gap))) or chunk[:1]
                lines.append(line + gap + piece)
                chunk = chunk[len(piece) :]
                size = cells(chunk)
                line, used, gap = hang, cells(hang), ""
        line += gap + chunk
        used += cells(gap) + size
        gap, empty = "", False
    lines.append(line)
    return lines
