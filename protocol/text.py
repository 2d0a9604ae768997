"""Which characters are not shown: the one rule for text that reaches other people's screens.

Names, chat, spell and summoning words, vote reasons, custom card texts and the audit report's
escaping all ask this module, so the rule is stated once. A character is *unshown* when it is

* of general category Cc (control), Cf (format), Zl / Zp (line and paragraph separators),
  Cs (surrogate), Co (private use) or Cn (unassigned in this Python's Unicode tables), or
* a Unicode Default_Ignorable_Code_Point (``DEFAULT_IGNORABLE``): soft hyphen, variation
  selectors, Hangul fillers, bidi marks, tags and the like, which renderers draw as nothing.

Such characters can drive a terminal, reorder or hide text, or make two different names look
the same, so text holding one is refused. Chat alone (``emoji=True``) keeps the zero-width
joiner and the text/emoji variation selectors (``EMOJI_SHAPERS``): keyboards send them inside
ordinary emoji such as "❤️" and "👨‍👩‍👧".

Separately, *blank-looking* characters (``BLANK_LOOKING``: U+2800 BRAILLE PATTERN BLANK and
friends) and whitespace (U+3000 and other spaces) are shown, as a blank: they are fine where a
space is, but they are not *visible* (:func:`has_visible`), and nor is a combining mark alone.
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = [
    "BLANK_LOOKING",
    "DEFAULT_IGNORABLE",
    "EMOJI_SHAPERS",
    "describe",
    "escape_unshown",
    "first_unshown",
    "has_visible",
    "is_hex64",
    "is_unshown",
    "is_visible",
    "kind_of",
    "shown_line_problem",
    "stacked_marks_problem",
    "unshown_problem",
]

_UNSHOWN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
_HEX_DIGITS = "0123456789abcdef"


def is_hex64(text: object) -> bool:
    """Exactly 64 lowercase hex digits: a SHA-256 digest or a 32-byte nonce as the project writes
    them (log hashes, commitments, nonces, seeds). Not a regex: ``^...$`` also matches before a
    final newline, and ``bytes.fromhex`` skips whitespace, so a digest with one appended would
    pass both and still be another string."""
    return isinstance(text, str) and len(text) == 64 and not text.strip(_HEX_DIGITS)


#: Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt), inclusive.
DEFAULT_IGNORABLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
DEFAULT_IGNORABLE = frozenset(
    chr(c) for lo, hi in DEFAULT_IGNORABLE_RANGES for c in range(lo, hi + 1)
)

#: Allowed in chat only: ZERO WIDTH JOINER and VARIATION SELECTOR-15/-16 shape emoji.
EMOJI_SHAPERS = frozenset("\u200d\ufe0e\ufe0f")

#: Shown, but as a blank although they are not whitespace (the Hangul fillers are unshown too).
BLANK_LOOKING = frozenset("\u2800\U0001d159\u115f\u1160\u3164\uffa0")

_NOTHING: frozenset[str] = frozenset()

#: Names of the C0 controls and DEL (Unicode gives them aliases only, which unicodedata lacks).
_C0_NAMES = (
    "NULL",
    "START OF HEADING",
    "START OF TEXT",
    "END OF TEXT",
    "END OF TRANSMISSION",
    "ENQUIRY",
    "ACKNOWLEDGE",
    "ALERT",
    "BACKSPACE",
    "CHARACTER TABULATION",
    "LINE FEED",
    "LINE TABULATION",
    "FORM FEED",
    "CARRIAGE RETURN",
    "SHIFT OUT",
    "SHIFT IN",
    "DATA LINK ESCAPE",
    "DEVICE CONTROL ONE",
    "DEVICE CONTROL TWO",
    "DEVICE CONTROL THREE",
    "DEVICE CONTROL FOUR",
    "NEGATIVE ACKNOWLEDGE",
    "SYNCHRONOUS IDLE",
    "END OF TRANSMISSION BLOCK",
    "CANCEL",
    "END OF MEDIUM",
    "SUBSTITUTE",
    "ESCAPE",
    "FILE SEPARATOR",
    "GROUP SEPARATOR",
    "RECORD SEPARATOR",
    "UNIT SEPARATOR",
)


def is_unshown(ch: str, *, emoji: bool = False) -> bool:
    """True if the single character ``ch`` is not shown (see the module docstring)."""
    if emoji and ch in EMOJI_SHAPERS:
        return False
    return ch in DEFAULT_IGNORABLE or unicodedata.category(ch) in _UNSHOWN_CATEGORIES


def first_unshown(text: str, *, emoji: bool = False) -> str | None:
    """The first unshown character of ``text``, or None when every character is shown."""
    if text.isascii():  # the common case: only C0 controls and DEL are unshown in ASCII
        if text.isprintable():
            return None
        return next(ch for ch in text if not ch.isprintable())
    allowed = EMOJI_SHAPERS if emoji else _NOTHING
    for ch in text:
        if ch not in allowed and (
            ch in DEFAULT_IGNORABLE or unicodedata.category(ch) in _UNSHOWN_CATEGORIES
        ):
            return ch
    return None


def is_visible(ch: str) -> bool:
    """A character that shows as something: not a blank, not unshown, not a lone combining mark."""
    return not (
        ch.isspace()
        or ch in BLANK_LOOKING
        or is_unshown(ch)
        or unicodedata.category(ch).startswith("M")
    )


def has_visible(text: str) -> bool:
    """True if at least one character of ``text`` is visible (combining marks alone are not)."""
    return any(is_visible(ch) for ch in text)


#: The most combining marks one character may carry. Writing needs few (Vietnamese two, Hebrew
#: with points and cantillation three or four); "Zalgo" text stacks dozens, which screens draw
#: over the lines above and below.
MAX_STACKED_MARKS = 4


def stacked_marks_problem(text: str, what: str) -> str | None:
    """A sentence (no final stop) if a character of ``text`` carries more than
    ``MAX_STACKED_MARKS`` combining marks, else None."""
    if text.isascii():
        return None
    run = 0
    for ch in text:
        category = unicodedata.category(ch)
        if category.startswith("M"):
            run += 1
        elif category != "Cf":  # a zero-width joiner between marks does not end the stack
            run = 0
        if run > MAX_STACKED_MARKS:
            return f"{what} stacks more than {MAX_STACKED_MARKS} combining marks on one character"
    return None


def describe(ch: str) -> str:
    """A character named for people: ``U+061C ARABIC LETTER MARK`` (just ``U+0085`` if nameless)."""
    code = ord(ch)
    if code < 0x20:
        name = _C0_NAMES[code]
    elif code == 0x7F:
        name = "DELETE"
    else:
        name = unicodedata.name(ch, "")
    return f"U+{code:04X} {name}" if name else f"U+{code:04X}"


def kind_of(ch: str) -> str:
    """Why an unshown character is refused, as the end of a sentence about it."""
    category = unicodedata.category(ch)
    if category == "Cc":
        return "a control character that is not shown"
    if category == "Cf":
        return "a formatting character that is not shown"
    if category in ("Zl", "Zp"):
        return "a line or paragraph separator"
    if ch in DEFAULT_IGNORABLE:
        return "a character that is not shown"
    if category == "Co":
        return "a private-use character that each screen shows differently"
    if category == "Cs":
        return "a lone surrogate, which is not text"
    if category == "Cn":
        return f"a character unassigned in Unicode {unicodedata.unidata_version}, so not shown"
    return "a character that is shown"


def unshown_problem(text: str, what: str, *, emoji: bool = False) -> str | None:
    """A sentence (no final stop) if ``text`` holds an unshown character, else None.

    ``what`` starts the sentence: "Chat text" gives "Chat text holds U+061C ARABIC LETTER MARK,
    a formatting character that is not shown".
    """
    ch = first_unshown(text, emoji=emoji)
    if ch is None:
        return None
    hint = _EMOJI_HINTS.get(ch)
    return f"{what} holds {describe(ch)}, {kind_of(ch)}" + (f" ({hint})" if hint else "")


#: What to do about the characters an emoji picker puts in a word: "heart❤️" was refused for a
#: character nobody typed, without saying what to do (found by review).
_EMOJI_HINTS = {
    "\ufe0f": "an emoji picker adds it after a heart and others: delete it, the emoji stays",
    "\u200d": "it joins emoji into one, as an astronaut is a person and a rocket: use a "
    "single emoji",
}


def shown_line_problem(text: str, what: str, *, emoji: bool = False) -> str | None:
    """A sentence (no final stop) if ``text`` cannot be shown to the table as it is written: an
    unshown character, nothing visible (blanks and marks alone), or more than
    ``MAX_STACKED_MARKS`` marks on one character, which screens draw over the lines around it.
    None if it can. Every line of text a player writes for the others passes through it (chat,
    vote reasons, card texts: the last two skipped the mark and blank checks; found by review).
    """
    if problem := unshown_problem(text, what, emoji=emoji):
        return problem
    if not has_visible(text):
        return f"{what} shows nothing: write at least one letter"
    return stacked_marks_problem(text, what)


def _escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells characters beyond the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def escape_unshown(text: str, *, keep: str = "") -> str:
    """``text`` with every unshown character (except those in ``keep``) written as ``\\uXXXX``.

    The escapes are valid inside JSON strings, so JSON output stays JSON.
    """
    if first_unshown(text) is None:
        return text
    if keep:
        # Cut at the kept characters first: most pieces (a report's lines) hold no unshown
        # character, and the check of a whole piece is one C call where this loop is many.
        pieces = _splitter(keep).split(text)
        return "".join(piece if i % 2 else escape_unshown(piece) for i, piece in enumerate(pieces))
    return "".join(_escape(ch) if is_unshown(ch) else ch for ch in text)


@functools.lru_cache(maxsize=8)
def _splitter(keep: str) -> re.Pattern[str]:
    """Splits a text at each character of ``keep``, keeping them (at the odd indexes)."""
    return re.compile("([" + re.escape(keep) + "])")
