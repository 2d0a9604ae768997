"""Per-round results as players see them: a projection of the finished rounds in the state.

Since rules version 2 a finished round's result, the reason behind every point included, is part of
the game state (``RoundScored`` carries the reasons; ``evolve`` keeps them in ``Game.results``), so
the result view is built from the state alone, live or after a restart.
"""

from __future__ import annotations

from conjure.protocol.messages import CardView, PointView, ResultView
from conjure.server.rules.state import Game, RoundResultRecord


def card_view(g: Game, index: int | None) -> CardView | None:
    if index is None:
        return None
    card = g.setup.cards[index]
    return CardView(index=index, text=card.text, stars=card.stars, used=index in g.used)


def result_view(g: Game, rec: RoundResultRecord) -> ResultView:
    card = card_view(g, rec.card)
    if card is not None:
        card.used = True
    if rec.case == "void":
        return ResultView(
            round=rec.round,
            conjurer=rec.conjurer,
            card=card,
            case="void",
            words=dict(rec.words),
            reason=rec.reason,
        )
    return ResultView(
        round=rec.round,
        conjurer=rec.conjurer,
        card=card,
        case=rec.case,
        points=dict(rec.points),
        reasons={
            seat: [PointView(points=p.points, why=p.why, rule=p.rule) for p in points]
            for seat, points in rec.reasons.items()
        },
        invalid=dict(rec.invalid),
        words=dict(rec.words),
    )


def extend_views(g: Game | None, views: list[ResultView]) -> list[ResultView]:
    """``views`` grown to cover every finished round of ``g`` (results are only ever appended)."""
    if g is not None:
        for rec in g.results[len(views) :]:
            views.append(result_view(g, rec))
    return views
