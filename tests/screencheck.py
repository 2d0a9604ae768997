"""Reading a terminal screen as a person would, for the client tests (headless and tmux).

:func:`problems` lists what a reader would stumble on: a line wider than the terminal, more
lines than it has, a word cut mid-word (a word fragment followed by "…", where the fragment is
no word the program or the test knows), a word wrapped across two lines, or a symbol glued to a
word ("summoning⏱"). :func:`assert_readable` fails with the screen shown.

The vocabulary of known words is every word in the program's own texts (client, server,
protocol sources, the default deck, docs/RULES.md) plus the words a test passes (names, typed
words). "revie…" is a cut; "thinking…" and "your…" are whole words shortened on purpose.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.utils import get_cwidth

ROOT = Path(__file__).resolve().parent.parent
_WORD = re.compile(r"[A-Za-z]+")
#: A word fragment directly followed by "…" that ends the token ("revie…", not "super…ocious").
_CUT = re.compile(r"(?<![\w…])([A-Za-z][A-Za-z'-]*)…(?![\w])")
_GLUED = re.compile(r"[A-Za-z][⏱⏸]")


@functools.cache
def vocabulary() -> frozenset[str]:
    """Every word in the program's own texts, lower-cased."""
    words: set[str] = set()
    files = [*ROOT.glob("client/**/*.py"), *ROOT.glob("server/**/*.py")]
    files += [*ROOT.glob("protocol/**/*.py"), *ROOT.glob("protocol/data/*.toml")]
    files += ROOT.glob("client/bots/data/*.toml")  # the bots' category table
    files.append(ROOT / "docs" / "RULES.md")
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        words.update(w.lower() for w in _WORD.findall(text))
    return frozenset(words)


def cells(text: str) -> int:
    return sum(max(get_cwidth(ch), 0) for ch in text)


def problems(
    screen: str, width: int = 80, height: int = 24, words: Iterable[str] = ()
) -> list[str]:
    """What a reader of ``screen`` (rows joined by newlines) would stumble on."""
    known = vocabulary() | {w.lower() for text in words for w in _WORD.findall(text)}
    rows = screen.split("\n")
    out: list[str] = []
    if len(rows) > height:
        out.append(f"{len(rows)} rows on a screen of {height}")
    for i, row in enumerate(rows):
        if cells(row) > width:
            out.append(f"row {i + 1} is {cells(row)} cells wide: {row!r}")
        for m in _CUT.finditer(row):
            stem = m.group(1).strip("'-")
            last = _WORD.findall(stem)[-1].lower() if _WORD.findall(stem) else ""
            if last and last not in known:
                out.append(f"row {i + 1} cuts a word: {m.group(0)!r} in {row!r}")
        if _GLUED.search(row):
            out.append(f"row {i + 1} glues a symbol to a word: {row!r}")
        if i + 1 < len(rows):
            nxt = rows[i + 1]
            full = cells(row.rstrip()) >= width
            if full and row.rstrip()[-1:].isalpha() and nxt[:1].isalpha():
                out.append(f"rows {i + 1}-{i + 2} wrap a word: {row!r} / {nxt!r}")
    return out


def assert_readable(
    screen: str, width: int = 80, height: int = 24, words: Iterable[str] = ()
) -> None:
    found = problems(screen, width, height, words)
    assert not found, "\n".join(found) + "\nthe screen:\n" + screen


def unwrap(screen: str) -> str:
    """The screen's text with wrapped lines joined (continuations start with spaces)."""
    return re.sub(r"\n +", " ", screen)


def layout_problems(client, width: int = 80, height: int = 24) -> list[str]:
    """Region by region, what the app would draw at ``width`` x ``height`` and does not fit.

    Run on the app's own loop (``HeadlessClient._call``): it reads the live session.
    """
    from conjure.client import screen

    s = client.session
    out: list[str] = []

    def check(name: str, text: str) -> None:
        if cells(text) > width:
            out.append(f"{name} is {cells(text)} cells wide: {text!r}")

    check("the header", screen.plain(screen.header(s, width)))
    status = screen.status_lines(s, width)
    for line in status:
        check("the status line", "".join(t for _, t in line))
    check("the key help", screen.plain(screen.key_help(s, width)))
    typed = s.prompt() + client.buffer.text
    if cells(s.prompt()) > width - 10:
        out.append(f"the prompt leaves no room to type: {s.prompt()!r}")
    input_rows = min(3, max(1, -(-cells(typed) // width)))
    room = height - 1 - len(status) - input_rows - 1
    drawn = screen.middle(s, width, room)
    if len(drawn.lines) > room:
        out.append(f"the middle has {len(drawn.lines)} lines for {room} rows")
    for line in drawn.lines:
        check("a line of the middle", "".join(t for _, t in line))
    return out
