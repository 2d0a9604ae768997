"""Per-round results with the reason behind every point, kept beside the folded state.

The engine's ``RoundScored`` holds the case and the points; the explanations come from scoring the
round's sheet again, which is only possible on the state just before the round closes (the next
round replaces it). So the room folds events through :func:`apply`, which captures a ``ResultView``
whenever a round ends, both live and when a log is replayed at startup.
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol import events as ev
from protocol.messages import CardView, PointView, ResultView
from server.rules.evolve import evolve
from server.rules.sheet import score_current
from server.rules.state import Game


def card_view(g: Game, index: int | None) -> CardView | None:
    if index is None:
        return None
    card = g.cards[index]
    return CardView(index=index, text=card.text, stars=card.stars, used=index in g.used)


def round_result(before: Game, event: ev.RoundScored | ev.RoundVoided) -> ResultView:
    """The result of the round ``before`` is in, as ``event`` closes it."""
    r = before.round
    assert r is not None
    card = card_view(before, r.card)
    if card is not None:
        card.used = True
    words = dict(r.published or {})
    if isinstance(event, ev.RoundVoided):
        return ResultView(
            round=event.round,
            conjurer=r.conjurer,
            card=card,
            case="void",
            words=words,
            reason=event.reason,
        )
    scored = score_current(before)
    reasons = {
        seat: [PointView(points=p.points, why=p.why, rule=p.rule) for p in points]
        for seat, points in scored.reasons.items()
    }
    return ResultView(
        round=event.round,
        conjurer=r.conjurer,
        card=card,
        case=event.case,
        points=dict(event.points),
        reasons=reasons,
        invalid=dict(event.invalid),
        words=words,
    )


def apply(state: Game | None, events: Iterable[ev.Event], results: list[ResultView]) -> Game | None:
    """``fold`` that also appends a ResultView to ``results`` for every round that ends."""
    for e in events:
        if isinstance(e, ev.RoundScored | ev.RoundVoided) and state is not None:
            results.append(round_result(state, e))
        state = evolve(state, e)
    return state
