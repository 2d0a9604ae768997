"""The scripted games several server tests play: four players, every card worth 2 stars.

Ann, Bob, Cy and Dee are seats 0-3; round r's conjurer is seat r-1. The words are chosen so the
matches are obvious; the expected points are worked out beside each round. The same games are
played whole (tests/test_server_game.py), with secrecy checks (tests/test_server_security.py)
and with the server killed at many points (tests/test_server_crash.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NAMES = ["Ann", "Bob", "Cy", "Dee"]
STARS = 2


@dataclass(frozen=True)
class RoundScript:
    spells: dict[int, str]
    marks: list[int]
    summons: dict[int, str]
    case: str
    points: dict[int, int]
    invalid: set[int] = field(default_factory=set)
    #: review actions before everyone says done: ("challenge", seat, target, rule) / ("vote", ...)
    review: tuple[tuple[Any, ...], ...] = ()


STANDARD = [
    # Round 1, Ann conjures and marks Bob and Cy. Ann, Bob and Cy summon 'volcano': "conjured".
    # Ann 2 matchers x 2 stars = 4; Bob and Cy 2 (matched) + 1 (crystal) = 3; Dee 0.
    RoundScript(
        spells={0: "lava", 1: "mountain", 2: "smoke", 3: "island"},
        marks=[1, 2],
        summons={0: "volcano", 1: "volcano", 2: "volcano", 3: "glacier"},
        case="conjured",
        points={0: 4, 1: 3, 2: 3, 3: 0},
    ),
    # Round 2, Bob conjures. Everyone summons 'piano': "everyone", 1 point each but Bob.
    RoundScript(
        spells={1: "keys", 2: "music", 3: "bench", 0: "concert"},
        marks=[0, 3],
        summons={0: "piano", 1: "piano", 2: "piano", 3: "piano"},
        case="everyone",
        points={0: 1, 1: 0, 2: 1, 3: 1},
    ),
    # Round 3, Cy conjures 'lighthouse'; Ann and Bob match each other ('tornado') but not Cy:
    # "missed-conjurer", 2 points per star each = 4.
    RoundScript(
        spells={2: "sea", 3: "wind", 0: "storm", 1: "ship"},
        marks=[0, 1],
        summons={0: "tornado", 1: "tornado", 2: "lighthouse", 3: "harbor"},
        case="missed-conjurer",
        points={0: 4, 1: 4, 2: 0, 3: 0},
    ),
    # Round 4, Dee conjures; all words differ: "failed". Bob's 'paper plane' contains the written
    # word 'paper' (-3); the table rules Cy's 'candy' off-category 2-1 (-3).
    RoundScript(
        spells={3: "moon", 0: "river", 1: "paper", 2: "sugar"},
        marks=[0, 2],
        summons={0: "boat", 1: "paper plane", 2: "candy", 3: "kite"},
        case="failed",
        points={0: 0, 1: -3, 2: -3, 3: 0},
        review=(
            ("challenge", 0, 2, "category"),
            ("vote", 1, 0, True),
            ("vote", 3, 0, False),
        ),
        invalid={1, 2},
    ),
]
STANDARD_TOTALS = {0: 9, 1: 4, 2: 1, 3: 1}

DARK = [
    # Round 1, Ann secretly writes 'volcano' first; Bob and Cy (marked) match her: as standard r1.
    RoundScript(
        spells={1: "lava", 2: "ash", 3: "ice"},
        marks=[1, 2],
        summons={0: "volcano", 1: "volcano", 2: "volcano", 3: "glacier"},
        case="conjured",
        points={0: 4, 1: 3, 2: 3, 3: 0},
    ),
    # Round 2, Bob writes 'piano' and marks no board (allowed in Dark Magic); everyone matches.
    RoundScript(
        spells={2: "music", 3: "bench", 0: "concert"},
        marks=[],
        summons={0: "piano", 1: "piano", 2: "piano", 3: "piano"},
        case="everyone",
        points={0: 1, 1: 0, 2: 1, 3: 1},
    ),
    # Round 3, Cy writes 'lighthouse'; Ann and Bob match each other only.
    RoundScript(
        spells={3: "wind", 0: "storm", 1: "ship"},
        marks=[3],
        summons={0: "tornado", 1: "tornado", 2: "lighthouse", 3: "harbor"},
        case="missed-conjurer",
        points={0: 4, 1: 4, 2: 0, 3: 0},
    ),
    # Round 4, Dee writes 'river boat': the conjurer is exempt from the written-word rule in Dark
    # Magic, so it stands although Ann wrote 'river'. Bob's 'paper plane' does not (-3).
    RoundScript(
        spells={0: "river", 1: "paper", 2: "sugar"},
        marks=[0],
        summons={0: "canoe", 1: "paper plane", 2: "candy", 3: "river boat"},
        case="failed",
        points={0: 0, 1: -3, 2: 0, 3: 0},
        invalid={1},
    ),
]
DARK_TOTALS = {0: 9, 1: 4, 2: 4, 3: 1}
TOTALS = {"standard": STANDARD_TOTALS, "dark-magic": DARK_TOTALS}
SCRIPTS = {"standard": STANDARD, "dark-magic": DARK}
