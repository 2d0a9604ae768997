"""evolve(state, event) -> state: the only way a game's state changes.

Pure: the given state is never modified (the new state shares what the event leaves alone and
holds new copies of what it changes), no I/O, no clock. Replaying a log is ``fold(events)``.
Evolve applies facts and decides nothing: who votes on a proposal, whose commitment a skip drops
and the reasons behind every point are fields of the events ``decide`` emits (rules version 1
logs lack them: ``server.rules.legacy`` fills them in).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from conjure.protocol import events as ev
from conjure.server.rules.state import Game, Proposal, Round, RoundResultRecord

_T = TypeVar("_T")


def _copy(obj: _T, **changes: object) -> _T:
    """A shallow copy of a dataclass instance with ``changes`` applied.

    Not ``dataclasses.replace``: that re-runs ``__init__`` through field introspection, and
    states are copied for every event the server folds (a tenth of its time per action).
    """
    new = object.__new__(type(obj))
    fields = obj.__dict__.copy()
    fields.update(changes)
    new.__dict__ = fields
    return new


def evolve(state: Game | None, event: ev.Event) -> Game:
    """Apply one event. Events are facts already decided: no validation happens here.

    Copy-on-write: the new state shares every part the event leaves alone with ``state`` (a vote
    copies one proposal and the list that holds it, not the round's every proposal and set), so
    folding costs the same late in a long game as early. Nothing may change a state's parts in
    place, here or elsewhere: a changed part is always a new one.
    """
    if isinstance(event, ev.GameStarted):
        return Game(
            setup=event.setup,
            rules_version=event.rules_version,
            host=event.host,
            totals={p.seat: 0 for p in event.players},
        )
    if state is None:
        raise ValueError(f"{type(event).__name__} before game_started")
    apply = _APPLY.get(type(event))
    if apply is None:
        raise ValueError(f"unknown event {event!r}")
    g = _copy(state)
    apply(g, event)
    return g


def _round(g: Game) -> Round:
    r = g.round
    assert r is not None
    return r


def _round_started(g: Game, e: ev.RoundStarted) -> None:
    g.round = Round(number=e.round, conjurer=e.conjurer)


def _phase_started(g: Game, e: ev.PhaseStarted) -> None:
    g.phase = e.phase
    g.turn = e.turn
    g.deadline = e.deadline


def _card_chosen(g: Game, e: ev.CardChosen) -> None:
    g.round = _copy(_round(g), card=e.card)


def _spell_written(g: Game, e: ev.SpellWritten) -> None:
    r = _round(g)
    g.round = _copy(r, spells={**r.spells, e.seat: e.word})


def _turn_passed(g: Game, e: ev.TurnPassed) -> None:
    r = _round(g)
    g.round = _copy(r, passed=r.passed | {e.seat})


def _boards_marked(g: Game, e: ev.BoardsMarked) -> None:
    g.round = _copy(_round(g), marked=tuple(e.boards))


def _committed(g: Game, e: ev.Committed) -> None:
    r = _round(g)
    g.round = _copy(r, commits={**r.commits, e.seat: e.commitment})


def _revealed(g: Game, e: ev.Revealed) -> None:
    r = _round(g)
    g.round = _copy(r, reveals={**r.reveals, e.seat: (e.word, e.nonce)})


def _summons_published(g: Game, e: ev.SummonsPublished) -> None:
    g.round = _copy(_round(g), published=dict(e.words), unrevealed=tuple(e.unrevealed))


def _proposal_made(g: Game, e: ev.ProposalMade) -> None:
    if e.voters is None or e.reopened is None:
        raise ValueError("a rules version 1 proposal: fold it through server.rules.legacy")
    r = _round(g)
    p = Proposal(
        id=e.proposal,
        kind=e.kind,
        by=e.by,
        seats=tuple(e.seats),
        rule=e.rule,
        voters=frozenset(e.voters),
    )
    g.round = _copy(r, proposals=[*r.proposals, p], done=r.done - set(e.reopened))


def _vote_cast(g: Game, e: ev.VoteCast) -> None:
    r = _round(g)
    p = r.proposals[e.proposal]
    votes = {**p.votes, e.seat: e.yes}
    reasons = {**p.reasons, e.seat: e.reason} if e.reason else p.reasons
    g.round = _with_proposal(r, _copy(p, votes=votes, reasons=reasons))


def _proposal_settled(g: Game, e: ev.ProposalSettled) -> None:
    r = _round(g)
    g.round = _with_proposal(r, _copy(r.proposals[e.proposal], carried=e.carried))


def _player_done(g: Game, e: ev.PlayerDone) -> None:
    r = _round(g)
    g.round = _copy(r, done=r.done | {e.seat})


def _round_scored(g: Game, e: ev.RoundScored) -> None:
    r = _round(g)
    totals = dict(g.totals)
    for seat, pts in e.points.items():
        totals[seat] = totals.get(seat, 0) + pts
    g.totals = totals
    if r.card is not None:
        g.used = g.used | {r.card}
    record = RoundResultRecord(
        e.round,
        r.conjurer,
        r.card,
        e.case,
        dict(e.points),
        dict(e.invalid),
        reasons={s: tuple(p) for s, p in (e.reasons or {}).items()},
        words=dict(r.published or {}),
    )
    g.results = [*g.results, record]


def _round_voided(g: Game, e: ev.RoundVoided) -> None:
    r = _round(g)
    if r.card is not None:
        g.used = g.used | {r.card}
    record = RoundResultRecord(
        e.round, r.conjurer, r.card, "void", {}, {}, e.reason, words=dict(r.published or {})
    )
    g.results = [*g.results, record]


def _player_skipped(g: Game, e: ev.PlayerSkipped) -> None:
    r = _round(g)
    g.round = _copy(r, skipped=r.skipped | {e.seat})
    if e.dropped:
        g.round = _dropped(g.round, e.seat)


def _player_kicked(g: Game, e: ev.PlayerKicked) -> None:
    g.kicked = g.kicked | {e.seat}
    if g.round is not None and e.dropped:
        g.round = _dropped(g.round, e.seat)


def _presence_changed(g: Game, e: ev.PresenceChanged) -> None:
    g.away = g.away - {e.seat} if e.connected else g.away | {e.seat}


def _host_changed(g: Game, e: ev.HostChanged) -> None:
    g.host = e.seat


def _game_paused(g: Game, e: ev.GamePaused) -> None:
    g.paused = True
    g.paused_remaining = e.remaining
    g.deadline = None


def _game_resumed(g: Game, e: ev.GameResumed) -> None:
    g.paused = False
    g.paused_remaining = None
    g.deadline = e.deadline


def _review_extended(g: Game, e: ev.ReviewExtended) -> None:
    g.deadline = e.deadline


def _game_ended(g: Game, e: ev.GameEnded) -> None:
    g.phase = "over"
    g.turn = None
    g.deadline = None
    g.winners = tuple(e.winners)


def _game_abandoned(g: Game, e: ev.GameAbandoned) -> None:
    g.phase = "over"
    g.turn = None
    g.deadline = None
    g.paused = False
    g.paused_remaining = None
    g.winners = ()
    g.abandoned = True


#: How each kind of event changes the (already copied) state: looked up by the event's type, not
#: matched case by case, since every event the server or an audit folds passes through here.
_APPLY: dict[type, Callable[[Game, Any], None]] = {
    ev.RoundStarted: _round_started,
    ev.PhaseStarted: _phase_started,
    ev.CardChosen: _card_chosen,
    ev.SpellWritten: _spell_written,
    ev.TurnPassed: _turn_passed,
    ev.BoardsMarked: _boards_marked,
    ev.Committed: _committed,
    ev.Revealed: _revealed,
    ev.SummonsPublished: _summons_published,
    ev.ProposalMade: _proposal_made,
    ev.ReviewExtended: _review_extended,
    ev.VoteCast: _vote_cast,
    ev.ProposalSettled: _proposal_settled,
    ev.PlayerDone: _player_done,
    ev.RoundScored: _round_scored,
    ev.RoundVoided: _round_voided,
    ev.PlayerSkipped: _player_skipped,
    ev.PlayerKicked: _player_kicked,
    ev.PresenceChanged: _presence_changed,
    ev.HostChanged: _host_changed,
    ev.GamePaused: _game_paused,
    ev.GameResumed: _game_resumed,
    ev.GameEnded: _game_ended,
    ev.GameAbandoned: _game_abandoned,
}


def _with_proposal(r: Round, p: Proposal) -> Round:
    """The round with proposal ``p.id`` replaced by ``p`` (a new list; the others shared)."""
    proposals = list(r.proposals)
    proposals[p.id] = p
    return _copy(r, proposals=proposals)


def _dropped(r: Round, seat: int) -> Round:
    """The round without ``seat``'s commitment (A1)."""
    if seat not in r.commits:
        return r
    return _copy(r, commits={s: c for s, c in r.commits.items() if s != seat})


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
