"""Readable explanations of a scored round, shared by ``conjure score`` and ``conjure replay``."""

from __future__ import annotations

from typing import Any

from conjure.protocol.cells import cells, ljust
from conjure.protocol.wording import signed
from conjure.server.rules.scoring import P, RoundResult, RoundSheet

CASE_TEXT = {
    "everyone": "everyone summoned the same thing (P1)",
    "conjured": "at least one player matched the conjurer (P2)",
    "missed-conjurer": "players matched each other but nobody matched the conjurer (P3)",
    "failed": "no two players matched (P4)",
}


def explain_round(sheet: RoundSheet[Any], result: RoundResult[Any]) -> list[str]:
    """The words as written and compared, checks, the case and every point with its ruling."""
    name = sheet.name
    width = max((cells(name(p)) for p in sheet.players), default=4)
    lines = ["Spell words:"]
    words = {p: w if (w := sheet.spell.get(p)) is not None else "(none)" for p in sheet.players}
    # the crystals in one column (ragged after words of different lengths, seen by an organizer)
    word_w = max((cells(w) for p, w in words.items() if p in sheet.marked), default=0)
    for p in sheet.players:
        w = f"{ljust(words[p], word_w)}  ◆ crystal" if p in sheet.marked else words[p]
        lines.append(f"  {ljust(name(p), width)}  {w}")
    lines.append("Summoning words:")
    for p in sheet.players:
        w = sheet.summon.get(p)
        if w is None:
            status = "no word" + (" (committed, never revealed)" if p in sheet.unrevealed else "")
            lines.append(f"  {ljust(name(p), width)}  {status}")
            continue
        shown = f"{w!r}"
        if result.compared.get(p) and result.compared[p] != w:
            shown += f" (compared as {result.compared[p]!r})"
        status = f"INVALID: {result.invalid[p].reason}" if p in result.invalid else "valid"
        lines.append(f"  {ljust(name(p), width)}  {shown}: {status}")
        for flag in result.flags.get(p, []):
            lines.append(f"  {'':<{width}}  flag for the table: {flag}")
    if sheet.same:
        for a, b in sheet.same:
            unused = (
                " (unused: it applied to no two counted words)" if (a, b) in result.unused else ""
            )
            lines.append(f"Ruled the same thing: {a!r} = {b!r}{unused}")
    for g in result.groups:
        lines.append("Matched: " + ", ".join(name(p) for p in g))
        lines += [f"  {x}" for x in match_lines(sheet, result, g)]
    lines.append(f"Case: {result.case}: {CASE_TEXT[result.case]}")
    lines.append("Points:")
    for p in sheet.players:
        pts = result.reasons.get(p, [])
        total = result.scores.get(p, 0)
        lines.append(f"  {ljust(name(p), width)}  {signed(total):>3}")
        for pt in pts:
            lines.append(f"  {'':<{width}}     {signed(pt.points):>3}  {pt.why} [{pt.rule}]")
    return lines


def match_lines(sheet: RoundSheet[Any], result: RoundResult[Any], group: list[Any]) -> list[str]:
    """Why a group's words match, one line per link whose words are not written alike."""
    out = []
    for link in result.links:
        if link.a not in group:
            continue
        wa, wb = sheet.summon[link.a], sheet.summon[link.b]
        if wa == wb:
            continue
        why = link.reason
        if link.ruling is not None and set(link.ruling) != {wa, wb}:
            why += f": {link.ruling[0]!r} = {link.ruling[1]!r}"
        out.append(
            f"{sheet.name(link.a)} = {sheet.name(link.b)}: {wa!r} = {wb!r} ({why}) [{link.rule}]"
        )
    return out


def result_json(sheet: RoundSheet[P], result: RoundResult[P]) -> dict[str, Any]:
    """The machine-readable form of a scored round (keys are player names)."""
    name = sheet.name
    return {
        "case": result.case,
        "scores": {name(p): result.scores[p] for p in sheet.players},
        "invalid": {name(p): inv.reason for p, inv in result.invalid.items()},
        "flags": {name(p): f for p, f in result.flags.items()},
        "compared": {name(p): w for p, w in result.compared.items()},
        "reasons": {
            name(p): [{"points": x.points, "why": x.why, "rule": x.rule} for x in pts]
            for p, pts in result.reasons.items()
        },
        "groups": [[name(p) for p in g] for g in result.groups],
        "matches": [
            {
                "players": [name(x.a), name(x.b)],
                "words": [sheet.summon[x.a], sheet.summon[x.b]],
                "reason": x.reason,
                "rule": x.rule,
                "ruling": list(x.ruling) if x.ruling is not None else None,
            }
            for x in result.links
        ],
        "unused_rulings": [list(pair) for pair in result.unused],
    }
