"""Text that fits a terminal: widths in cells, shortening on purpose, wrapping on words.

Nothing on the screen is cut mid-word by accident. A text too long for its place is either
wrapped at spaces (:func:`wrap`) or shortened on purpose (:func:`shorten`): after a whole word
with "…", or, for a single word too long for its cell, with the "…" inside the word, so that its
start and end stay readable ("supercal…ocious").
"""

from __future__ import annotations

from conjure.protocol.cells import cells, head, wrap_words

ELLIPSIS = "…"
#: A space :func:`wrap` never breaks at ("review 120s" stays on one line).
NO_BREAK = "\u00a0"


def _tail(text: str, width: int) -> str:
    """The longest end of ``text`` that fits ``width`` cells."""
    return head(text[::-1], width)[::-1]


def shorten(text: str, width: int) -> str:
    """``text`` if it fits ``width`` cells, else shortened on purpose (never mid-word + "…")."""
    if cells(text) <= width:
        return text
    if width <= 1:
        return head(ELLIPSIS, width)
    words = text.split(" ")
    kept = ""
    for i in range(1, len(words)):
        candidate = " ".join(words[:i]).rstrip(" ,;:·-—(")
        if not candidate:
            continue  # (leading spaces: a text that began with one was cut mid-word)
        if cells(candidate) + 1 <= width:
            kept = candidate
        else:
            break
    if kept and cells(kept) * 2 >= width:
        return kept + ELLIPSIS
    # One word (or a first word) too long for its place: keep its start and its end.
    room = width - 1
    front = (room + 1) // 2 + room // 6
    return head(text, front) + ELLIPSIS + _tail(text, room - front)


def pad(text: str, width: int) -> str:
    """``text`` shortened on purpose to ``width`` cells, then padded with spaces to exactly that."""
    text = shorten(text, width)
    return text + " " * max(0, width - cells(text))


def wrap(text: str, width: int, indent: str = "", hang: str = "  ") -> list[str]:
    """``text`` as lines of at most ``width`` cells, broken at spaces, each of its own lines
    (``\\n``) begun anew.

    The first line starts with ``indent``, the others with ``hang``. A single word longer than a
    whole line (a long path, say) is broken where it must, each piece on a line of its own.
    """
    lines: list[str] = []
    for para in text.split("\n"):
        lines += wrap_words(para, width, hang if lines else indent, hang, break_long=True)
    return [line.rstrip() for line in lines]


def join_fitting(parts: list[str], width: int, sep: str = " · ") -> str:
    """As many of ``parts`` (most important first) as fit ``width``, in their given order."""
    chosen: list[str] = []
    for part in parts:
        if cells(sep.join([*chosen, part])) <= width:
            chosen.append(part)
    return sep.join(chosen)


def first_fitting(candidates: list[str], width: int) -> str:
    """The first of ``candidates`` (most to least said) that fits ``width``, else the last, shortened."""
    for text in candidates:
        if cells(text) <= width:
            return text
    return shorten(candidates[-1], width)


def wrap_items(
    items: list[str], width: int, sep: str = " · ", indent: str = "", hang: str = "  "
) -> list[str]:
    """``items`` joined by ``sep`` in lines of at most ``width`` cells, never breaking an item
    (unless one alone is longer than a line: then it is wrapped at its spaces). A line that
    goes on below ends with the separator's mark (" ·"), and room is kept for it."""
    mark = sep.rstrip()
    lines: list[str] = []
    line = indent
    start = True
    for i, item in enumerate(items):
        tail = mark if i < len(items) - 1 else ""
        joint = "" if start else sep
        if cells(line + joint + item + tail) <= width:
            line += joint + item
            start = False
            continue
        if not start:
            lines.append(line.rstrip() + mark)
            line = hang
        if cells(line + item + tail) > width:
            pieces = wrap(item, width - cells(tail), line, hang)
            lines += pieces[:-1]
            line = pieces[-1]
        else:
            line += item
        start = False
    lines.append(line.rstrip())
    return lines
