"""The room settings form and the parsers behind it: a few questions asked inside the app.

Used for ``--create`` (once the server has been reached) and by the host's ``e``/``/settings`` in
the lobby. Pure: answers in, settings and error sentences out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from conjure.client.textfit import NO_BREAK
from conjure.protocol.deck import Card, DeckError, card_text_problem, clean_card_text, load_deck
from conjure.protocol.house import HOUSE_RULES
from conjure.protocol.messages import InLimits, RoomSettings
from conjure.protocol.wording import stars

PHASES = ("choose", "spell", "mark", "commit", "reveal", "review")
LIMIT_DEFAULTS = InLimits()


#: What a star is typed as: the rulebook writes ⭐ (often followed by an emoji's variation
#: selector, U+FE0F); "Board game ⭐⭐" became a 1-star card named so (seen with friends).
STAR_SIGNS = "*★⭐"
_VARIATION_SELECTOR = "\ufe0f"


def parse_card(text: str) -> Card:
    """'Famous bridge ***', 'Famous bridge ★★', 'Famous bridge ⭐⭐' or 'Famous bridge 3' -> a
    Card (1 star when none is given)."""
    return _card_and_stars_given(text)[0]


def _card_and_stars_given(text: str) -> tuple[Card, bool]:
    raw = text.strip()
    count = 0
    while raw and (raw[-1] in STAR_SIGNS or raw[-1] == _VARIATION_SELECTOR):
        count += raw[-1] != _VARIATION_SELECTOR
        raw = raw[:-1].rstrip()
    given = count > 0
    if count == 0:
        head, _, tail = raw.rpartition(" ")
        if head and tail.isdecimal():  # (int() takes no "²", which isdigit() passes)
            count = int(tail)
            raw = head.strip()
            given = True
        else:
            count = 1
    raw = clean_card_text(raw)
    if not raw:
        raise ValueError("A category needs some text, e.g. 'Famous bridge **'.")
    if not 1 <= count <= 3:
        raise ValueError("A category is worth 1 to 3 stars.")
    if len(raw) > 60:
        raise ValueError("A category text has at most 60 characters.")
    if problem := card_text_problem(raw, "A category"):
        raise ValueError(problem + ".")
    return Card(text=raw, stars=count), given


#: The most custom categories a room's settings hold.
MAX_CARDS = 200


def _cards_notice(
    new: list[Card], added: list[Card], given: bool, from_file: bool, known: set[str]
) -> str | None:
    """What adding ``new`` did, when it was not just what was typed (None: nothing to say);
    ``known``: the categories there were before, by their folded text.

    Why: a category typed without stars became one worth a single star, and one already there
    was dropped, both without a word (a review)."""
    if from_file:
        dropped = len(new) - len(added)
        more = f" ({dropped} already there or over the {MAX_CARDS} allowed)" if dropped else ""
        return f"Added {len(added)} categories from the file{more}."
    (card,) = new
    if not added:
        if card.text.casefold() in known:
            return f"'{card.text}' is one of your categories already."
        return f"'{card.text}' is not added: a room takes at most {MAX_CARDS} categories."
    if not given:
        return (
            f"'{card.text}' is worth {stars(1)} (1 star); type '{card.text} **' or "
            f"'{card.text} 2' to make it worth more."
        )
    return None


def parse_limits(text: str, base: InLimits = LIMIT_DEFAULTS) -> InLimits:
    """'90 60 90 120 30 120', 'off', '30' (every phase), 'spell=30 review=off' or a mix ->
    per-phase limits."""
    values = msgspec.structs.asdict(base)
    tokens = text.replace(",", " ").split()
    if len(tokens) == 1 and tokens[0].lower() in ("off", "none"):
        return InLimits(**dict.fromkeys(PHASES))
    if len(tokens) == 1 and "=" not in tokens[0]:
        # One number is every phase's, as "off" is ("30" set the choice's alone, while the
        # newcomer who typed it meant 30 s each: found by review).
        tokens = [f"{name}={tokens[0]}" for name in PHASES]
    position = 0
    for token in tokens:
        if "=" in token:
            name, _, value = token.partition("=")
            name = name.strip().lower()
            if name not in values:
                raise ValueError(f"Unknown phase {name!r}: use {', '.join(PHASES)}.")
        else:
            if position >= len(PHASES):
                raise ValueError("Give at most six limits: choose spell mark commit reveal review.")
            name, value = PHASES[position], token
            position += 1
        value = value.strip().lower()
        if value in ("off", "none", "-", "0"):
            values[name] = None
            continue
        try:
            seconds = float(value.rstrip("s"))
        except ValueError:
            raise ValueError(f"{value!r} is not a number of seconds (or 'off').") from None
        if not 5 <= seconds <= 3600:
            raise ValueError("A time limit is 5 to 3600 seconds, or 'off'.")
        values[name] = seconds
    return InLimits(**values)


def limits_text(limits: InLimits) -> str:
    parts = []
    for name in PHASES:
        value = getattr(limits, name)
        parts.append(f"{name}{NO_BREAK}{'off' if value is None else f'{value:g}s'}")
    return ", ".join(parts)


def settings_lines(s: RoomSettings, *, yours: bool = True) -> list[str]:
    """The settings in words; ``yours``: read by the host who set them (the others read "the
    room's own categories": "your categories" was said to everyone, seen)."""
    variant = "Dark Magic" if s.variant == "dark-magic" else "standard"
    own = "your categories" if yours else "the room's own categories"
    deck = {
        "default": "the default deck",
        "default+custom": f"default deck + {own}",
        "custom": f"only {own}",
    }[s.deck]
    lines = [
        f"variant: {variant} · categories: {deck} · spectators: "
        f"{'allowed' if s.spectators else 'not allowed'}",
        f"time limits: {limits_text(s.limits)}",
    ]
    if s.custom_cards:
        cards = ", ".join(f"{c.text} {stars(c.stars)}" for c in s.custom_cards)
        lines.append(f"{own} ({len(s.custom_cards)}): {cards}")
    if s.house_rules:
        named = ", ".join(
            f"{n} ({HOUSE_RULES[n].ruling})" for n in s.house_rules if n in HOUSE_RULES
        )
        lines.append(f"house rules, the game is scored by them: {named}")
    return lines


@dataclass
class SetupForm:
    """The room settings as a short sequence of questions inside the app."""

    settings: RoomSettings = field(default_factory=RoomSettings)
    step: str = "variant"
    cards: list[Card] = field(default_factory=list)
    for_create: bool = True

    def __post_init__(self) -> None:
        self.cards = list(self.settings.custom_cards)
        #: What the last answer did that was not said in it (a category given no stars, a
        #: category already there): said on the status line.
        self.notice: str | None = None

    def prompt(self) -> str:
        s = self.settings
        if self.step == "variant":
            now = "2" if s.variant == "dark-magic" else "1"
            return f"Variant: 1 standard, 2 dark magic [{now}]: "
        if self.step == "limits":
            now = " ".join(
                "off" if getattr(s.limits, p) is None else f"{getattr(s.limits, p):g}"
                for p in PHASES
            )
            # (which number is which phase's: a newcomer could not tell from the list alone)
            return f"Seconds for {' '.join(PHASES)} [{now}]: "
        if self.step == "deck":
            now = {"default": "1", "default+custom": "2", "custom": "3"}[s.deck]
            return f"Categories: 1 default, 2 default + yours, 3 only yours [{now}]: "
        if self.step == "cards":
            return f"Add a category or @FILE.toml, Enter when done [{len(self.cards)} added]: "
        if self.step == "spectators":
            return f"Allow spectators? y/n [{'y' if s.spectators else 'n'}]: "
        verb = "Create the room" if self.for_create else "Apply these settings"
        return f"{verb}? Enter = yes, b = start over: "

    def help(self) -> str:
        """One line under the settings, about the current question."""
        return {
            "variant": "Dark Magic: the conjurer writes the summoning word first, in secret.",
            "limits": "Seconds for each phase: choose, spell (per turn), mark, commit, reveal, "
            "review. Six numbers, one for all, 'off' for no clock, or e.g. spell=30 review=off.",
            "deck": "Your own categories: typed one by one or loaded from a TOML deck file.",
            "cards": "Type 'Famous bridge **' or 'Famous bridge 2' (1-3 stars), or @deck.toml.",
            "spectators": "Spectators see the public table, never a word before the reveal.",
        }.get(self.step, "Enter goes ahead; b starts the questions over.") + (
            " Enter keeps the value in [brackets]." if self.step != "confirm" else ""
        )

    def answer(self, text: str) -> str | None:
        """Take one answer; returns an error sentence, or None (see ``step``, 'done' at the end)
        and perhaps a :attr:`notice` of what the answer did that the player might not expect."""
        self.notice = None
        t = text.strip()
        s = self.settings
        if self.step == "variant":
            if t in ("", "1", "2", "s", "standard", "d", "dark", "dark magic", "dark-magic"):
                if t:
                    variant = "standard" if t in ("1", "s", "standard") else "dark-magic"
                    self.settings = msgspec.structs.replace(s, variant=variant)
                self.step = "limits"
                return None
            return "Type 1 for standard or 2 for Dark Magic."
        if self.step == "limits":
            if t:
                try:
                    self.settings = msgspec.structs.replace(s, limits=parse_limits(t, s.limits))
                except ValueError as exc:
                    return str(exc)
            self.step = "deck"
            return None
        if self.step == "deck":
            decks = {"1": "default", "2": "default+custom", "3": "custom"}
            if t and t not in decks:
                return "Type 1, 2 or 3."
            if t:
                self.settings = msgspec.structs.replace(s, deck=decks[t])
            self.step = "spectators" if self.settings.deck == "default" else "cards"
            return None
        if self.step == "cards":
            if not t:
                if self.settings.deck == "custom" and len(self.cards) < 3:
                    return "Only your own categories: add at least 3 (one per player)."
                self.step = "spectators"
                return None
            given = True
            try:
                if t.startswith("@"):
                    new = list(load_deck(t[1:].strip()))
                else:
                    card, given = _card_and_stars_given(t)
                    new = [card]
            except (DeckError, ValueError) as exc:
                return str(exc)
            known = {c.text.casefold() for c in self.cards}
            added = [c for c in new if c.text.casefold() not in known]
            added = list({c.text.casefold(): c for c in added}.values())[: MAX_CARDS - len(known)]
            self.cards += added
            self.settings = msgspec.structs.replace(s, custom_cards=list(self.cards))
            self.notice = _cards_notice(new, added, given, t.startswith("@"), known)
            return None
        if self.step == "spectators":
            if t.lower() in ("", "y", "yes", "n", "no"):
                if t:
                    self.settings = msgspec.structs.replace(s, spectators=t.lower().startswith("y"))
                self.step = "confirm"
                return None
            return "Type y or n."
        if self.step == "confirm":
            if t.lower() in ("b", "back"):
                self.step = "variant"
                return None
            if t.lower() in ("", "y", "yes"):
                if self.settings.deck == "default":
                    self.settings = msgspec.structs.replace(self.settings, custom_cards=[])
                self.step = "done"
                return None
            return "Press Enter to go ahead, or b to start over."
        return None
