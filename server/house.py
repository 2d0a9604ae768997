"""House rules beside the official score, for ``conjure score`` and ``conjure replay``.

The readings themselves are scored by :func:`server.rules.scoring.score_round` (registry:
:mod:`protocol.house`); this module re-scores a sheet or an audited log under them and lays the
official and the house points side by side, so a table sees what a dispute is worth. The official
score is never changed by it: the house points are shown beside it, not instead of it.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conjure.protocol.cells import cells, ljust
from conjure.protocol.house import HOUSE_RULES, UnknownHouseRule, canonical, parse_house_rules
from conjure.protocol.wording import signed
from conjure.server.rules.explain import result_json
from conjure.server.rules.scoring import P, RoundResult, RoundSheet, score_round

if TYPE_CHECKING:  # `conjure score` needs none of the audit machinery
    from conjure.server.audit_verify import Audit

__all__ = [
    "HouseScores",
    "add_house_argument",
    "audit_house",
    "house_json",
    "house_round_lines",
    "house_title",
    "house_totals_lines",
]


_HOUSE_IDS = frozenset(r.ruling for r in HOUSE_RULES.values())


def _house_rule_name(text: str) -> str:
    """argparse ``type``: an unknown name is a usage error that lists the known ones."""
    try:
        parse_house_rules((text,))
    except UnknownHouseRule as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_house_argument(parser: argparse.ArgumentParser) -> None:
    known = ", ".join(f"{r.name} ({r.ruling})" for r in HOUSE_RULES.values())
    parser.add_argument(
        "--house-rule",
        action="append",
        default=[],
        type=_house_rule_name,
        metavar="NAME",
        help=f"also score by this house rule, beside the official score (repeatable): {known}; "
        "see docs/RULES.md, House rules",
    )


def house_title(rules: Iterable[str]) -> str:
    """ "House rules missed-per-match (H1), pairs-per-star (H3)"."""
    chosen = set(canonical(rules))
    names = [n for n in HOUSE_RULES if n in chosen]  # in the order of their ids
    word = "House rule" if len(names) == 1 else "House rules"
    return f"{word} " + ", ".join(f"{n} ({HOUSE_RULES[n].ruling})" for n in names)


def _table(rows: Sequence[tuple[str, int, int]], *, sign: bool) -> list[str]:
    """``name  official  house  difference`` rows, aligned."""
    width = max((cells(n) for n, _, _ in rows), default=4)
    fmt = signed if sign else str
    out = [f"{'':<{width}}  {'official':>8}  {'house':>6}  {'difference':>10}"]
    for n, official, house in rows:
        out.append(
            f"{ljust(n, width)}  {fmt(official):>8}  {fmt(house):>6}  {signed(house - official):>10}"
        )
    return out


def house_round_lines(
    sheet: RoundSheet[Any], official: RoundResult[Any], house: RoundResult[Any]
) -> list[str]:
    """One round under the house rules, beside the official points, and every house point's why."""
    # a reading changes points, never the case (docs/RULES.md, House rules)
    out = [f"{house_title(house.house)}, beside the official score: case {house.case}"]
    rows = [(sheet.name(p), official.scores[p], house.scores[p]) for p in sheet.players]
    table = _table(rows, sign=True)
    out.append(f"  {table[0]}")
    width = max(cells(sheet.name(p)) for p in sheet.players)
    for p, line in zip(sheet.players, table[1:], strict=True):
        out.append(f"  {line}")
        for pt in house.reasons.get(p, []):
            if pt.rule in _HOUSE_IDS:
                out.append(f"  {'':<{width}}     {signed(pt.points):>3}  {pt.why} [{pt.rule}]")
    return out


@dataclass(frozen=True)
class HouseScores:
    """A whole audited game re-scored under house rules (the audit's own scores untouched)."""

    rules: frozenset[str]
    rounds: dict[int, RoundResult[int]]  #: by round number, for every round the audit scored
    totals: dict[int, int]  #: by seat
    winners: tuple[int, ...]  #: by T6 on the house totals (none for an abandoned game, A7)


def audit_house(a: Audit, rules: Iterable[str]) -> HouseScores:
    """Re-score each round the audit scored, from the very sheet it scored (``RoundAudit.sheet``)."""
    chosen = parse_house_rules(rules)
    rounds: dict[int, RoundResult[int]] = {}
    totals = {seat: 0 for seat in a.totals}
    for r in a.rounds:
        if r.sheet is None or r.result is None:
            continue  # void, never scored, or not scorable: no points either way
        res = score_round(r.sheet, chosen)
        rounds[r.number] = res
        for seat, pts in res.scores.items():
            totals[seat] = totals.get(seat, 0) + pts
    winners = dataclasses.replace(a, totals=totals).winners()  # T6 stated once, in the audit
    return HouseScores(chosen, rounds, totals, winners)


def house_totals_lines(a: Audit, h: HouseScores) -> list[str]:
    """The game's totals, official and under the house rules, and the winners by each."""
    rows = [(a.name(seat), a.totals.get(seat, 0), h.totals.get(seat, 0)) for seat in a.totals]
    out = [f"{house_title(h.rules)}, beside the official totals:"]
    out += [f"  {line}" for line in _table(rows, sign=False)]
    if a.finished and a.abandoned is None:
        names = ", ".join(a.name(w) for w in h.winners) or "nobody"
        same = " (the same)" if h.winners == a.winners() else ""
        out.append(f"Under the house rules the win goes to: {names}{same}")
    return out


def house_json(sheet: RoundSheet[P], house: RoundResult[P]) -> dict[str, Any]:
    """A house result in the official scoring's own JSON fields."""
    return result_json(sheet, house)
