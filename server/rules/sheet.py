"""Turning a live round into a scoring sheet, so the engine scores exactly as ``conjure score``."""

from __future__ import annotations

from collections.abc import Iterable

from conjure.protocol.events import RULE_TEXT
from conjure.protocol.words import same_word
from conjure.server.rules.scoring import (
    RoundResult,
    RoundSheet,
    check_words,
    counted_as_one,
    score_round,
)
from conjure.server.rules.state import Game


def round_sheet(g: Game) -> RoundSheet[int]:
    r = g.round
    assert r is not None and r.card is not None
    published = r.published or {}
    players = [s for s in g.seats if g.active(s) or s in published or s in r.unrevealed]
    ruled_invalid: dict[int, str] = {}
    same: list[tuple[str, str]] = []
    for p in r.proposals:
        if not p.carried:
            continue
        if p.kind == "challenge":
            target = published[p.seats[0]]
            for s in players:
                if s in published and same_word(published[s], target):
                    ruled_invalid.setdefault(s, RULE_TEXT.get(p.rule or "", p.rule or ""))
        else:
            same.append((published[p.seats[0]], published[p.seats[1]]))
    return RoundSheet(
        variant=g.setup.variant,
        stars=g.setup.cards[r.card].stars,
        players=players,
        conjurer=r.conjurer,
        marked=frozenset(r.marked or ()),
        spell=dict(r.spells),
        summon={s: w for s, w in published.items() if s in players},
        ruled_invalid=ruled_invalid,
        same=same,
        unrevealed=frozenset(r.unrevealed),
        names={s: player.name for s, player in enumerate(g.setup.players)},  # g.name(s), each seat
        rules_version=g.rules_version,
    )


def current_checks(g: Game) -> tuple[dict, dict]:
    """Invalid words and flags as they stand now (automatic checks plus carried challenges).

    Memoized on everything :func:`round_sheet` reads (one entry): every challenge and "same
    thing" proposal of a review asks it again of a round that only its votes have changed,
    and in an audit that was a tenth of re-deciding a review (docs/PERFORMANCE.md). The key
    holds the parts themselves, so a changed part never meets a stale answer. Callers only
    read what it returns.
    """
    global _last_checks
    r = g.round
    assert r is not None
    key = (
        g.setup,
        g.rules_version,
        g.kicked,
        r.number,
        r.conjurer,
        r.card,
        r.marked,
        r.spells,
        r.published,
        r.unrevealed,
        r.skipped,
        tuple((p.kind, p.seats, p.rule) for p in r.proposals if p.carried),
    )
    last = _last_checks
    if last is not None and last[0] == key:
        return last[1]
    checks = check_words(round_sheet(g))
    _last_checks = (key, checks)
    return checks


_last_checks: tuple[tuple, tuple[dict, dict]] | None = None


def current_standing(g: Game) -> tuple[dict, dict, list[list[int]]]:
    """:func:`current_checks`, and the seats whose standing words count as one word now
    (``scoring.counted_as_one``)."""
    sheet = round_sheet(g)
    invalid, flags = check_words(sheet)
    return invalid, flags, counted_as_one(sheet, invalid)


def score_current(g: Game, house: Iterable[str] = frozenset()) -> RoundResult[int]:
    """The round scored as it stands; ``house`` names house rules (protocol.house) to score by."""
    return scored_sheet(g, house)[1]


#: The last round scored: the very state it was scored from, the house rules, the sheet and the
#: result. Why: an audit scores each round twice from one state object, deciding the round's
#: end again and then checking the logged score (docs/PERFORMANCE.md). A state is never changed
#: in place (``evolve``), so the same object means the same round.
_last_scored: tuple[Game, tuple[str, ...], RoundSheet[int], RoundResult[int]] | None = None


def scored_sheet(
    g: Game, house: Iterable[str] = frozenset()
) -> tuple[RoundSheet[int], RoundResult[int]]:
    """The round's sheet as it stands, and its score (``house``: as in :func:`score_current`)."""
    global _last_scored
    rules = tuple(house)
    last = _last_scored
    if last is not None and last[0] is g and last[1] == rules:
        return last[2], last[3]
    sheet = round_sheet(g)
    result = score_round(sheet, rules)
    _last_scored = (g, rules, sheet, result)
    return sheet, result
