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
from typing import Annotated, Any

import msgspec

from conjure.protocol.text import shown_line_problem

MAX_CARD_TEXT = 60

#: Lengths only: whether a card's characters are all shown is :func:`card_text_problem`'s
#: question, asked where cards come in (deck files, the messages that set custom cards).
CardText = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_CARD_TEXT)]
Stars = Annotated[int, msgspec.Meta(ge=1, le=3)]


class Card(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One category card: what may be summoned, and how many points per star it is worth."""

    text: CardText
    stars: Stars


class DeckError(ValueError):
    """A deck file that cannot be used, with a sentence that names the file and the card."""


class _DeckFile(msgspec.Struct, forbid_unknown_fields=True):
    card: list[Card]


def card_text_problem(text: str, what: str = "The card text") -> str | None:
    """Why a card text cannot be shown to the table as written, or None."""
    return shown_line_problem(text, what)


def clean_card_text(text: str) -> str:
    """Cards are shown on one line: collapse whitespace so a hand-written deck cannot break the UI."""
    return " ".join(text.split())


def _shape_problem(doc: dict[str, Any]) -> str | None:
    """What is wrong with a deck file's tables, said as a person writes them: cards counted
    from 1, a field by its name (a newcomer met "Expected `str` of length <= 60 - at
    `$.card[3].text`" for their fourth card's long name)."""
    extra = sorted(k for k in doc if k != "card")
    if extra:
        return f"unknown key {extra[0]!r}: a deck holds only [[card]] tables"
    cards = doc.get("card")
    if not isinstance(cards, list) or not cards:
        return "the deck has no cards (each is a [[card]] table with a text and stars)"
    for i, card in enumerate(cards, 1):
        if not isinstance(card, dict):
            return f"card {i} is not a [[card]] table"
        extra = sorted(k for k in card if k not in ("text", "stars"))
        if extra:
            return f"card {i} has an unknown key {extra[0]!r} (a card has a text and stars)"
        text, stars = card.get("text"), card.get("stars")
        if not isinstance(text, str):
            return f'card {i} needs a text in quotes (text = "Vehicle")'
        if not text.strip():
            return f"card {i} has an empty text"
        if len(text) > MAX_CARD_TEXT:
            return (
                f"card {i}'s text has {len(text)} characters; a category has at most "
                f"{MAX_CARD_TEXT} ({text[:24]!r}…)"
            )
        if isinstance(stars, bool) or not isinstance(stars, int) or not 1 <= stars <= 3:
            return f"card {i} needs stars = 1, 2 or 3 (found {stars!r})"
    return None


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
    if problem := _shape_problem(doc):
        raise DeckError(f"{source}: {problem}")
    try:
        deck = msgspec.convert(doc, _DeckFile)
    except msgspec.ValidationError as exc:  # (what ``_shape_problem`` does not word itself)
        raise DeckError(f"{source}: {exc}") from None
    for i, c in enumerate(deck.card, 1):
        if problem := card_text_problem(c.text, f"card {i}'s text"):
            raise DeckError(f"{source}: {problem}")
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
    raw = resources.files("conjure.protocol.data").joinpath("default_deck.toml").read_bytes()
    return parse_deck(raw, "default deck")
