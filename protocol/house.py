"""House rules: named alternative readings of the rulebook's scoring (docs/RULES.md, H1-H3).

The registry lives in ``protocol`` because a set of house rules is wire vocabulary in the making: a
host will choose them in the room settings (client and server must agree on the names) and the log
header will record them, so a chosen set is always a list of these names (:func:`canonical`).
Scoring them is :func:`server.rules.scoring.score_round`'s job.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["HOUSE_RULES", "HouseRule", "UnknownHouseRule", "canonical", "parse_house_rules"]


@dataclass(frozen=True)
class HouseRule:
    """One reading: its name (as typed and logged), its ruling id, the ruling it replaces."""

    name: str
    ruling: str  #: its id in docs/RULES.md, "House rules"
    replaces: str  #: the official ruling it reads differently
    summary: str


HOUSE_RULES: dict[str, HouseRule] = {
    r.name: r
    for r in (
        HouseRule(
            "missed-per-match",
            "H1",
            "P3",
            "nobody matched the conjurer: each matching player scores 2 per star per player "
            "in their matching group",
        ),
        HouseRule(
            "crystal-others-only",
            "H2",
            "P2c",
            "the conjurer's own board earns no crystal point",
        ),
        HouseRule(
            "pairs-per-star",
            "H3",
            "P2d",
            "players sharing a word other than the conjurer's score 2 per star, not a flat 2",
        ),
    )
}


class UnknownHouseRule(ValueError):
    """A name that is not in :data:`HOUSE_RULES`; the message lists the known ones."""

    def __init__(self, name: str) -> None:
        known = ", ".join(sorted(HOUSE_RULES))
        super().__init__(f"unknown house rule {name!r}; the known house rules are {known}")
        self.name = name


def parse_house_rules(names: Iterable[str]) -> frozenset[str]:
    """Check names against the registry; raise :class:`UnknownHouseRule` for the first unknown."""
    if isinstance(names, str):  # one name passed bare would otherwise be read letter by letter
        names = (names,)
    chosen = frozenset(names)
    for name in sorted(chosen):
        if name not in HOUSE_RULES:
            raise UnknownHouseRule(name)
    return chosen


def canonical(names: Iterable[str]) -> list[str]:
    """A set of house rules as it travels (settings, log header, JSON): known names, sorted."""
    return sorted(parse_house_rules(names))
