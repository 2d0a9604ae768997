"""Category cards and decks.

A card is a category text with 1-3 stars. The default deck ships as TOML under
``protocol/data/default_deck.toml``; a host may load a custom deck file in the same format::

    [[card]]
    text = "Vehicle"
    stars = 1
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated

import msgspec

MAX_CARD_TEXT = 60

#: Regex class body of characters that must not reach a terminal beyond the C0 controls: DEL and
#: C1 (which could drive a terminal) and bidirectional or zero-width formatting (which could
#: disguise text).
UNSHOWN_BEYOND_C0 = r"\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
#: Text that ends up on other people's terminals: no control or formatting characters at all.
SHOWN_TEXT = rf"^[^\x00-\x1f{UNSHOWN_BEYOND_C0}]*$"

CardText = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_CARD_TEXT, pattern=SHOWN_TEXT)]
Stars = Annotated[int, msgspec.Meta(ge=1, le=3)]


class Card(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One category card: what may be summoned, and how many points per star it is worth."""

    text: CardText
    stars: Stars


class DeckError(ValueError):
    """A deck file that cannot be used, with a sentence that names the file and the card."""


class _DeckFile(msgspec.Struct, forbid_unknown_fields=True):
    card: list[Card]


def clean_card_text(text: str) -> str:
    """Cards are shown on one line: collapse whitespace so a hand-written deck cannot break the UI."""
    return " ".join(text.split())


def parse_deck(raw: bytes | str, source: str = "deck") -> tuple[Card, ...]:
    """Parse a TOML deck; raise DeckError naming ``source`` and the offending card."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DeckError(f"{source}: not UTF-8 text ({exc.reason})") from None
    try:
        doc = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        raise DeckError(f"{source}: not valid TOML ({exc})") from None
    try:
        deck = msgspec.convert(doc, _DeckFile)
    except msgspec.ValidationError as exc:
        raise DeckError(f"{source}: {exc}") from None
    cards = tuple(Card(text=clean_card_text(c.text), stars=c.stars) for c in deck.card)
    seen: set[str] = set()
    for i, c in enumerate(cards, 1):
        if not c.text:
            raise DeckError(f"{source}: card {i} has an empty text")
        key = c.text.casefold()
        if key in seen:
            raise DeckError(f"{source}: card {i} ({c.text!r}) appears twice")
        seen.add(key)
    if not cards:
        raise DeckError(f"{source}: the deck has no cards")
    return cards


def load_deck(path: str | Path) -> tuple[Card, ...]:
    """Read a custom deck file."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise DeckError(f"{p}: cannot read ({exc.strerror})") from None
    return parse_deck(raw, str(p))


@cache
def default_deck() -> tuple[Card, ...]:
    """The project's own deck of categories."""
    raw = resources.files("protocol.data").joinpath("default_deck.toml").read_bytes()
    return parse_deck(raw, "default deck")
