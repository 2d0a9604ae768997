"""evolve(state, event) -> state: the only way a game's state changes.

Pure: the given state is never modified (a shallow-but-sufficient copy is made first), no I/O,
no clock. Replaying a log is ``fold(events)``. Evolve applies facts and decides nothing: who votes
on a proposal, whose commitment a skip drops and the reasons behind every point are fields of the
events ``decide`` emits (rules version 1 logs lack them: ``server.rules.legacy`` fills them in).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from conjure.protocol import events as ev
from conjure.server.rules.state import Game, Proposal, Round, RoundResultRecord

_T = TypeVar("_T")


def _copy(obj: _T, **changes: object) -> _T:
    """A shallow copy of a dataclass instance with ``changes`` applied.

    Not ``dataclasses.replace``: that re-runs ``__init__`` through field introspection, and
    states are copied for every event the server folds (a tenth of its time per action).
    """
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new


def _clone_round(r: Round) -> Round:
    return _copy(
        r,
        spells=dict(r.spells),
        passed=set(r.passed),
        skipped=set(r.skipped),
        commits=dict(r.commits),
        reveals=dict(r.reveals),
        published=None if r.published is None else dict(r.published),
        proposals=[_copy(p, votes=dict(p.votes), reasons=dict(p.reasons)) for p in r.proposals],
        done=set(r.done),
    )


def clone(g: Game) -> Game:
    """A copy whose mutable parts are not shared with ``g``."""
    return _copy(
        g,
        kicked=set(g.kicked),
        away=set(g.away),
        used=set(g.used),
        totals=dict(g.totals),
        round=None if g.round is None else _clone_round(g.round),
        results=list(g.results),
    )


def evolve(state: Game | None, event: ev.Event) -> Game:
    """Apply one event. Events are facts already decided: no validation happens here."""
    if isinstance(event, ev.GameStarted):
        return Game(
            setup=event.setup,
            rules_version=event.rules_version,
            host=event.host,
            totals={p.seat: 0 for p in event.players},
        )
    if state is None:
        raise ValueError(f"{type(event).__name__} before game_started")
    g = clone(state)
    r = g.round
    match event:
        case ev.RoundStarted(round=n, conjurer=c):
            g.round = Round(number=n, conjurer=c)
        case ev.PhaseStarted(phase=phase, turn=turn, deadline=deadline):
            g.phase = phase
            g.turn = turn
            g.deadline = deadline
        case ev.CardChosen(card=card):
            assert r is not None
            r.card = card
        case ev.SpellWritten(seat=seat, word=word):
            assert r is not None
            r.spells[seat] = word
        case ev.TurnPassed(seat=seat):
            assert r is not None
            r.passed.add(seat)
        case ev.BoardsMarked(boards=boards):
            assert r is not None
            r.marked = tuple(boards)
        case ev.Committed(seat=seat, commitment=commitment):
            assert r is not None
            r.commits[seat] = commitment
        case ev.Revealed(seat=seat, word=word, nonce=nonce):
            assert r is not None
            r.reveals[seat] = (word, nonce)
        case ev.SummonsPublished(words=words, unrevealed=unrevealed):
            assert r is not None
            r.published = dict(words)
            r.unrevealed = tuple(unrevealed)
        case ev.ProposalMade():
            assert r is not None
            _add_proposal(g, r, event)
        case ev.VoteCast(proposal=pid, seat=seat, yes=yes, reason=reason):
            assert r is not None
            p = r.proposals[pid]
            p.votes[seat] = yes
            if reason:
                p.reasons[seat] = reason
        case ev.ProposalSettled(proposal=pid, carried=carried):
            assert r is not None
            r.proposals[pid].carried = carried
        case ev.PlayerDone(seat=seat):
            assert r is not None
            r.done.add(seat)
        case ev.RoundScored(round=n, case=case, points=points, invalid=invalid):
            assert r is not None
            for seat, pts in points.items():
                g.totals[seat] = g.totals.get(seat, 0) + pts
            if r.card is not None:
                g.used.add(r.card)
            g.results.append(
                RoundResultRecord(
                    n,
                    r.conjurer,
                    r.card,
                    case,
                    dict(points),
                    dict(invalid),
                    reasons={s: tuple(p) for s, p in (event.reasons or {}).items()},
                    words=dict(r.published or {}),
                )
            )
        case ev.RoundVoided(round=n, reason=reason):
            assert r is not None
            if r.card is not None:
                g.used.add(r.card)
            g.results.append(
                RoundResultRecord(
                    n, r.conjurer, r.card, "void", {}, {}, reason, words=dict(r.published or {})
                )
            )
        case ev.PlayerSkipped(seat=seat, dropped=dropped):
            assert r is not None
            r.skipped.add(seat)
            if dropped:
                r.commits.pop(seat, None)
        case ev.PlayerKicked(seat=seat, dropped=dropped):
            g.kicked.add(seat)
            if r is not None and dropped:
                r.commits.pop(seat, None)
        case ev.PresenceChanged(seat=seat, connected=connected):
            if connected:
                g.away.discard(seat)
            else:
                g.away.add(seat)
        case ev.HostChanged(seat=seat):
            g.host = seat
        case ev.GamePaused(remaining=remaining):
            g.paused = True
            g.paused_remaining = remaining
            g.deadline = None
        case ev.GameResumed(deadline=deadline):
            g.paused = False
            g.paused_remaining = None
            g.deadline = deadline
        case ev.GameEnded(winners=winners):
            g.phase = "over"
            g.turn = None
            g.deadline = None
            g.winners = tuple(winners)
        case ev.GameAbandoned():
            g.phase = "over"
            g.turn = None
            g.deadline = None
            g.paused = False
            g.paused_remaining = None
            g.winners = ()
            g.abandoned = True
        case _:
            raise ValueError(f"unknown event {event!r}")
    return g


def _add_proposal(g: Game, r: Round, e: ev.ProposalMade) -> None:
    if e.voters is None or e.reopened is None:
        raise ValueError("a rules version 1 proposal: fold it through server.rules.legacy")
    p = Proposal(
        id=e.proposal,
        kind=e.kind,
        by=e.by,
        seats=tuple(e.seats),
        rule=e.rule,
        voters=frozenset(e.voters),
    )
    r.proposals.append(p)
    r.done -= set(e.reopened)


def concerned_seats(g: Game, r: Round, seats: Iterable[int]) -> set[int]:
    """Everyone who wrote one of the words in question: they do not vote on it (V1)."""
    from conjure.protocol.words import same_word

    assert r.published is not None
    words = [r.published[s] for s in seats]
    return {s for s, w in r.published.items() if any(same_word(w, x) for x in words)}


def fold(events: Iterable[ev.Event], state: Game | None = None) -> Game | None:
    """The state after a sequence of events."""
    for e in events:
        state = evolve(state, e)
    return state
