"""Scoring one round: the automatic checks, the matching and the four cases.

Pure and shared: the live engine, the tabletop scorer (``conjure score``) and the replay auditor all
call :func:`score_round`, so a point is always explained the same way. Players are opaque keys
(seats in the engine, names on a tabletop sheet); ``names`` turns them into sentences.

House rules (docs/RULES.md H1-H3, registry :data:`protocol.house.HOUSE_RULES`) are named
alternative readings: ``score_round(sheet, house={"pairs-per-star"})`` scores by them instead of
the official reading, so a table can see what a dispute is worth.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from conjure.protocol.events import RULES_VERSION
from conjure.protocol.house import HOUSE_RULES, parse_house_rules
from conjure.protocol.words import (
    PLURAL,
    SAME_LETTERS,
    contains_written,
    hidden_inside,
    made_of_written,
    normalize,
    same_word,
    same_word_reason,
)

P = TypeVar("P", bound=Hashable)

Case = Literal["everyone", "conjured", "missed-conjurer", "failed"]
CASES: tuple[str, ...] = ("everyone", "conjured", "missed-conjurer", "failed")

INVALID_PENALTY = -3

TABLE_RULING = "a table ruling"
"""Why two words matched: the table ruled them the same thing (C7)."""

#: The ruling behind each reason two words match.
MATCH_RULINGS: dict[str, str] = {SAME_LETTERS: "W2", PLURAL: "W3", TABLE_RULING: "C7"}


@dataclass(frozen=True)
class RoundSheet(Generic[P]):
    """Everything scoring needs to know about one round, however it was played."""

    variant: Literal["standard", "dark-magic"]
    stars: int
    players: Sequence[P]
    conjurer: P
    marked: frozenset[P]
    spell: Mapping[P, str]
    summon: Mapping[P, str]
    ruled_invalid: Mapping[P, str] = field(default_factory=dict)
    same: Sequence[tuple[str, str]] = ()
    unrevealed: frozenset[P] = frozenset()
    names: Mapping[P, str] = field(default_factory=dict)
    #: The rules version the round is scored by (a game's own: docs/RULES.md, "Rules versions").
    rules_version: int = RULES_VERSION

    def name(self, p: P) -> str:
        return self.names.get(p, str(p))


@dataclass(frozen=True)
class Point:
    """Points and the ruling behind them (``rule`` is an id from docs/RULES.md)."""

    points: int
    why: str
    rule: str


@dataclass(frozen=True)
class Invalid:
    rule: str
    reason: str


@dataclass(frozen=True)
class Link(Generic[P]):
    """Why two players of a matching group match: one edge of the group's spanning tree."""

    a: P
    b: P
    reason: str  #: SAME_LETTERS, PLURAL or TABLE_RULING
    ruling: tuple[str, str] | None = None  #: the table's pair, for TABLE_RULING

    @property
    def rule(self) -> str:
        return MATCH_RULINGS[self.reason]


@dataclass(frozen=True)
class RoundResult(Generic[P]):
    case: Case
    scores: dict[P, int]
    reasons: dict[P, list[Point]]
    invalid: dict[P, Invalid]
    flags: dict[P, list[str]]
    compared: dict[P, str]
    groups: list[list[P]]
    #: why each group holds together: word comparisons first, a table ruling only where needed
    links: list[Link[P]] = field(default_factory=list)
    #: "same thing" rulings that applied to no two counted words of the round
    unused: list[tuple[str, str]] = field(default_factory=list)
    house: frozenset[str] = frozenset()  #: the house rules it was scored by (none: official)


@functools.lru_cache(maxsize=4096)
def _against_spells(word: str, spells: tuple[str, ...]) -> tuple[int | None, bool, tuple[int, ...]]:
    """One summoning word against a round's spell words, in order: the first it is or contains
    (C1), whether it is that very word, and the others hidden inside it.

    Memoized: pure in its strings (and the immutable word data), and asked again with the same
    words for every challenge and "same thing" proposal of a round and at its scoring.
    """
    first: int | None = None
    same = False
    hidden: list[int] = []
    for i, written in enumerate(spells):
        if contains_written(word, written):
            if first is None:
                first, same = i, same_word(word, written)
        elif hidden_inside(word, written):
            hidden.append(i)
    return first, same, tuple(hidden)


def check_words(sheet: RoundSheet[P]) -> tuple[dict[P, Invalid], dict[P, list[str]]]:
    """The automatic checks: binding written-word invalidity, advisory hidden-word flags."""
    invalid: dict[P, Invalid] = {}
    flags: dict[P, list[str]] = {}
    writers = tuple(sheet.spell)
    spells = tuple(sheet.spell.values())
    for p in sheet.players:
        word = sheet.summon.get(p)
        if word is None:
            continue
        if sheet.variant == "dark-magic" and p == sheet.conjurer:
            continue  # D5: written before any spell word existed
        # C1: every spell word of the round counts, also one whose writer has left it.
        first, same, hidden = _against_spells(word, spells)
        made_of = made_of_written(word, spells) if sheet.rules_version >= 3 else ()
        if first is not None:
            what = "is" if same else "contains"
            invalid[p] = Invalid(
                "C1",
                f"{word!r} {what} the written word {spells[first]!r} "
                f"({sheet.name(writers[first])}'s spell word)",
            )
        elif made_of:
            parts = " and ".join(
                f"{spells[i]!r} ({sheet.name(writers[i])}'s)" for i in dict.fromkeys(made_of)
            )
            invalid[p] = Invalid("C1", f"{word!r} is the written words {parts} joined")
            hidden = tuple(i for i in hidden if i not in made_of)
        if hidden:
            flags[p] = [
                f"{spells[i]!r} ({sheet.name(writers[i])}'s spell word) is hidden inside {word!r}"
                for i in hidden
            ]
    for p in sheet.players:
        if p in sheet.unrevealed and p not in invalid:
            invalid[p] = Invalid("C6", "committed a word but never revealed it")
    for p, rule in sheet.ruled_invalid.items():
        if p not in invalid and p in sheet.summon:
            why = f"the table ruled it invalid: it {rule}" if rule else "the table ruled it invalid"
            invalid[p] = Invalid("C3", why)
    return invalid, flags


def _groups(
    sheet: RoundSheet[P], counted: dict[P, str]
) -> tuple[list[list[P]], list[Link[P]], list[tuple[str, str]]]:
    """Matching classes: the same word, or ruled the same thing, closed transitively (C7).

    Also why: the links that joined the classes (same word first, so a ruling is cited only where
    the words alone do not match) and the rulings that applied to no two counted words.
    """
    keys = [p for p in sheet.players if p in counted]
    parent = {p: p for p in keys}
    links: list[Link[P]] = []
    applied: set[int] = set()

    def find(p: P) -> P:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    def ruling(a: str, b: str) -> int | None:
        found = None
        for i, (x, y) in enumerate(sheet.same):
            if (same_word(a, x) and same_word(b, y)) or (same_word(a, y) and same_word(b, x)):
                applied.add(i)
                found = i if found is None else found
        return found

    pairs = [(a, b) for i, a in enumerate(keys) for b in keys[i + 1 :]]
    ruled: list[tuple[P, P, int]] = []
    for a, b in pairs:
        wa, wb = counted[a], counted[b]
        why = same_word_reason(wa, wb)
        i = ruling(wa, wb)  # also for words already the same: the ruling still applied
        if why is not None:
            if find(a) != find(b):
                links.append(Link(b, a, why))  # the later seat's word, explained by the earlier
                parent[find(a)] = find(b)
        elif i is not None:
            ruled.append((a, b, i))
    for a, b, i in ruled:
        if find(a) != find(b):
            links.append(Link(b, a, TABLE_RULING, sheet.same[i]))
            parent[find(a)] = find(b)
    classes: dict[P, list[P]] = {}
    for p in keys:
        classes.setdefault(find(p), []).append(p)
    unused = [pair for i, pair in enumerate(sheet.same) if i not in applied]
    return list(classes.values()), links, unused


def counted_as_one(sheet: RoundSheet[P], invalid: Mapping[P, object]) -> list[list[P]]:
    """The players whose standing words count as one word (``_groups``: the same word, or ruled
    the same thing), each class of two or more, as scoring would group them now; for the table
    to see during the review, so that nobody proposes as one what already is."""
    return [g for g in _groups(sheet, _counted(sheet, invalid))[0] if len(g) >= 2]


def _counted(sheet: RoundSheet[P], invalid: Mapping[P, object]) -> dict[P, str]:
    """The summoning words that count: the players' own, none that is invalid."""
    return {p: w for p, w in sheet.summon.items() if p in sheet.players and p not in invalid}


def _n(k: int, noun: str) -> str:
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def _house_point(points: int, why: str, name: str) -> Point:
    """A point scored by a house rule: it cites the rule's id, and its sentence names the rule."""
    return Point(points, f"{why} (house rule {name})", HOUSE_RULES[name].ruling)


def _nothing(sheet: RoundSheet[P], case: Case, p: P, counted: bool) -> Point:
    """Why ``p`` scored nothing this round, as a 0-point line citing the case's ruling."""
    if not counted:
        rule = {"everyone": "P1", "conjured": "P2", "missed-conjurer": "P3"}.get(case, "P4")
        return Point(0, "no counted summoning word: no points", rule)
    if case == "everyone":
        return Point(0, "the conjurer scores nothing when everyone summoned the same thing", "P1")
    if case == "conjured":
        return Point(
            0, "matched neither the conjurer nor anyone else, and no crystal: no points", "P2"
        )
    if case == "missed-conjurer":
        why = (
            "the conjurer: nobody matched you, so no points"
            if p == sheet.conjurer
            else ("matched nobody: no points")
        )
        return Point(0, why, "P3")
    return Point(0, "no two words matched: the conjuration failed, nobody scores", "P4")


def score_round(sheet: RoundSheet[P], house: Iterable[str] = frozenset()) -> RoundResult[P]:
    """Score one round; exactly one case applies, then -3 per invalid word (P5).

    ``house`` names house rules to score by instead of the official reading (docs/RULES.md
    H1-H3); an unknown name raises :class:`protocol.house.UnknownHouseRule`.
    """
    rules = parse_house_rules(house)
    invalid, flags = check_words(sheet)
    compared = {p: normalize(w) for p, w in sheet.summon.items() if p in sheet.players}
    counted = _counted(sheet, invalid)
    groups, links, unused = _groups(sheet, counted)
    reasons: dict[P, list[Point]] = {p: [] for p in sheet.players}
    s = sheet.stars
    c = sheet.conjurer
    name = sheet.name
    group_of = {p: g for g in groups for p in g}
    case: Case

    # (P1 needs the conjurer's word since rules version 3: a round that went on without its
    # conjurer was scored "everyone", 1 point each, where nobody can have matched the conjurer)
    everyone = len(counted) == len(sheet.players) and len(groups) == 1
    if everyone and sheet.rules_version >= 3 and c not in counted:
        everyone = False
    if everyone:
        case = "everyone"
        for p in sheet.players:
            if p != c:
                reasons[p].append(Point(1, "everyone summoned the same thing", "P1"))
    elif c in counted and len(group_of[c]) >= 2:
        case = "conjured"
        matchers = [p for p in group_of[c] if p != c]
        who = ", ".join(map(name, matchers))
        reasons[c].append(
            Point(
                s * len(matchers),
                f"{_n(len(matchers), 'player')} matched you ({who}): {_n(s, 'point')} each",
                "P2a",
            )
        )
        for p in matchers:
            reasons[p].append(Point(s, f"matched the conjurer {name(c)}: {_n(s, 'star')}", "P2b"))
        for p in sheet.players:
            if p not in sheet.marked:
                continue
            if p == c and "crystal-others-only" in rules:
                why = "your own board held a crystal: the conjurer's earns no point"
                reasons[p].append(_house_point(0, why, "crystal-others-only"))
            else:
                reasons[p].append(Point(1, "your board held a crystal", "P2c"))
        for g in groups:
            if len(g) >= 2 and c not in g:
                for p in g:
                    others = ", ".join(name(q) for q in g if q != p)
                    why = f"shared a word other than the conjurer's with {others}"
                    if "pairs-per-star" in rules:
                        why += f": 2 x {_n(s, 'star')}"
                        reasons[p].append(_house_point(2 * s, why, "pairs-per-star"))
                    else:
                        reasons[p].append(Point(2, why, "P2d"))
    elif any(len(g) >= 2 for g in groups):
        case = "missed-conjurer"
        for g in groups:
            if len(g) >= 2:
                for p in g:
                    others = ", ".join(name(q) for q in g if q != p)
                    why = f"matched {others}, not the conjurer: 2 x {_n(s, 'star')}"
                    if "missed-per-match" in rules:
                        why += f" x {_n(len(g), 'player')} who matched"
                        pt = _house_point(2 * s * len(g), why, "missed-per-match")
                    else:
                        pt = Point(2 * s, why, "P3")
                    reasons[p].append(pt)
    else:
        case = "failed"

    # Nobody is left without a reason: a 0 is explained too (the case says why).
    for p in sheet.players:
        if not reasons[p] and p not in invalid:  # an invalid word's -3 line says why
            reasons[p].append(_nothing(sheet, case, p, p in counted))
    for p, why in invalid.items():
        reasons[p].append(Point(INVALID_PENALTY, f"invalid word: {why.reason}", "P5"))
    scores = {p: sum(pt.points for pt in reasons[p]) for p in sheet.players}
    return RoundResult(
        case=case,
        scores=scores,
        reasons=reasons,
        invalid=invalid,
        flags=flags,
        compared=compared,
        groups=[g for g in groups if len(g) >= 2],
        links=links,
        unused=unused,
        house=rules,
    )
