"""Rules version 1 logs: their events leave consequences for ``evolve`` to work out; fill them in.

Version 1 of the engine let ``evolve`` decide who votes on a proposal, whose commitment a skip or a
kick drops, and (outside the engine) the reasons behind every point. Version 2 events carry those as
fields. ``upgrade`` turns a version 1 event into its version 2 form on the state just before it,
exactly as the version 1 engine worked them out, so old logs still fold and audit (they hold no
commands, so they cannot be re-decided). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from conjure.protocol import events as ev
from conjure.server.rules.evolve import concerned_seats, evolve
from conjure.server.rules.sheet import score_current
from conjure.server.rules.state import Game


def upgrade(state: Game | None, event: ev.Event) -> ev.Event:
    """``event`` with the fields version 1 left out, worked out on ``state`` as v1 did."""
    g, r = state, None if state is None else state.round
    match event:
        case ev.ProposalMade(voters=None) if g is not None and r is not None:
            concerned = concerned_seats(g, r, event.seats)
            voters = tuple(s for s in g.active_seats() if s not in concerned)
            reopened = tuple(s for s in voters if s in r.done)
            return msgspec.structs.replace(event, voters=voters, reopened=reopened)
        case ev.PlayerSkipped(dropped=None) | ev.PlayerKicked(dropped=None) if g is not None:
            dropped = (
                r is not None
                and g.phase in ("dark-commit", "spell", "mark", "commit")
                and event.seat in r.commits
                and event.seat not in r.reveals
            )
            return msgspec.structs.replace(event, dropped=dropped)
        case ev.RoundScored(reasons=None) if g is not None and r is not None:
            scored = score_current(g)
            reasons = {
                s: tuple(ev.Point(points=p.points, why=p.why, rule=p.rule) for p in points)
                for s, points in scored.reasons.items()
            }
            return msgspec.structs.replace(event, reasons=reasons)
    return event


def fold_v1(events: Iterable[ev.Event], state: Game | None = None) -> Game | None:
    for e in events:
        state = evolve(state, upgrade(state, e))
    return state
