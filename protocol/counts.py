"""How many: players at a table, crystals a conjurer places (docs/RULES.md), stated once."""

from __future__ import annotations

from conjure.protocol.events import Variant

MIN_PLAYERS = 3
MAX_PLAYERS = 8
#: A conjurer has this many crystals, one a board at most.
MAX_CRYSTALS = 4


def crystal_range(variant: Variant) -> tuple[int, int]:
    """How many boards a conjurer marks: 2 to 4 in a standard round, 0 to 4 in Dark Magic."""
    return (0 if variant == "dark-magic" else 2, MAX_CRYSTALS)
