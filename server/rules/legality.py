"""Is a logged game legal under today's rules? ``first_illegal(events)`` says where it is not.

A log's chain proves nobody changed it after it was written, not that the server that wrote it
played by the rules: a hash-valid log can hold a spell word by seat 7 of a 5-seat table. Start-up
recovery refuses to resume such a log and ``conjure replay`` does not verify it.

Pure (no I/O, clock or randomness): the events are folded with ``evolve``, and each is checked
against the state just before it: every seat it names is a seat of the table; it belongs to the
round being played, in a phase that allows it, by the seat whose turn or role it is (a spell word
in the spell phase by the seat on turn, marks by the conjurer, commitments while the summon is
open, reveals in the reveal phase, proposals, votes and "done" in the review); rounds start in
order, each after the last one closed; words are written words within the rules' length; while
the game is paused only the host's resume (or a new host) happens; nothing follows the end.

Not checked here: that a reveal opens its commitment and that scores and totals are what the
rules give (``conjure replay`` recomputes those), nor deadlines. A later version replaces this
with deciding every command again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from conjure.protocol import events as ev
from conjure.protocol.counts import MAX_PLAYERS, MIN_PLAYERS
from conjure.protocol.events import AUDITABLE_RULES, COLOURS, RULE_TEXT, RULES_VERSION
from conjure.protocol.names import same_name_key
from conjure.protocol.text import is_hex64
from conjure.protocol.words import validate_written
from conjure.server.rules.decide import MAX_PROPOSALS_PER_PLAYER
from conjure.server.rules.evolve import evolve
from conjure.server.rules.state import Game, Round

__all__ = ["first_illegal"]

#: The phases of a round in the order they may start (any may be skipped; spell repeats per turn).
_PHASE_ORDER: tuple[str, ...] = (
    "choose",
    "dark-commit",
    "spell",
    "mark",
    "commit",
    "reveal",
    "review",
)
#: Fields that hold one seat, a list of seats, or a mapping keyed by seat.
_SEAT_FIELDS = ("seat", "by", "conjurer", "turn", "host")
_SEATS_FIELDS = ("seats", "boards", "unrevealed", "winners")
_BY_SEAT_FIELDS = ("words", "points", "totals", "invalid")
#: What may happen while the game is paused (the clock and the players wait).
_WHILE_PAUSED = (ev.GameResumed, ev.HostChanged, ev.GameAbandoned)


class _Illegal(Exception):
    """Why one event is not legal, as a sentence fragment."""


def first_illegal(events: Sequence[ev.Event]) -> tuple[int, str] | None:
    """``(index, why)`` of the first event that is not legal in the state the ones before it
    lead to, or None if every event is. ``why`` starts with the event's type."""
    state: Game | None = None
    phases: list[str] = []  #: the phases started in the current round, in order
    for i, event in enumerate(events):
        try:
            _check(state, phases, event, first=i == 0)
            try:
                state = evolve(state, event)
            except Exception as exc:  # a state the engine cannot take the event in
                raise _Illegal(f"the rules engine cannot apply it ({exc!r})") from None
        except _Illegal as why:
            return i, f"{ev.event_type(event)}: {why}"
        if isinstance(event, ev.RoundStarted):
            phases.clear()
        elif isinstance(event, ev.PhaseStarted):
            phases.append(event.phase)
    return None


def _check(g: Game | None, phases: list[str], e: ev.Event, *, first: bool) -> None:
    if isinstance(e, ev.GameStarted):
        if not first:
            raise _Illegal("a second game_started")
        _check_start(e)
        return
    if g is None:
        raise _Illegal("the log does not start with game_started")
    if g.over:
        raise _Illegal("after the game ended")
    _check_seats(g, e)
    if g.paused and not isinstance(e, _WHILE_PAUSED):
        raise _Illegal("while the game is paused")
    if isinstance(e, ev.RoundStarted):
        _check_round_start(g, e)
        return
    r = g.round
    if r is None:
        raise _Illegal("before the first round started")
    number = getattr(e, "round", None)
    if number is not None and number != r.number:
        raise _Illegal(f"for round {number}, while round {r.number} is on")
    if _closed(g, r) and not isinstance(e, ev.GameEnded):
        raise _Illegal(f"after round {r.number} was closed")
    phase = phases[-1] if phases else None
    if isinstance(e, ev.PhaseStarted):
        _check_phase(g, r, phase, e)
    elif isinstance(e, _PlayerAct):
        _check_act(g, r, phase, e)
    else:
        _check_table(g, r, phase, e)


def _check_start(e: ev.GameStarted) -> None:
    if e.rules_version not in AUDITABLE_RULES:
        raise _Illegal(
            f"the game was played under rules version {e.rules_version}; these rules are "
            f"version {RULES_VERSION}"
        )
    n = len(e.players)
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise _Illegal(f"{n} players; a game has {MIN_PLAYERS} to {MAX_PLAYERS}")
    if [p.seat for p in e.players] != list(range(n)):
        raise _Illegal(f"the players' seats are not 0 to {n - 1} in order")
    if len({same_name_key(p.name) for p in e.players}) != n:
        raise _Illegal("two players have the same name")
    if len({p.colour for p in e.players}) != n or any(p.colour not in COLOURS for p in e.players):
        raise _Illegal("the board colours are not different colours of the game")
    if len(e.cards) != n:
        raise _Illegal(f"{len(e.cards)} cards dealt to {n} players")
    if e.host not in range(n):
        raise _Illegal(f"host {e.host} is not a seat of this table (seats 0 to {n - 1})")


def _seat_values(e: ev.Event) -> Iterator[tuple[str, int]]:
    """Every seat number the event names, with the field it is in."""
    for name in _SEAT_FIELDS:
        value = getattr(e, name, None)
        if isinstance(value, int):
            yield name, value
    for name in _SEATS_FIELDS:
        for value in getattr(e, name, None) or ():
            yield name, value
    for name in _BY_SEAT_FIELDS:
        value = getattr(e, name, None)
        if isinstance(value, dict):
            for seat in value:
                yield name, seat


def _check_seats(g: Game, e: ev.Event) -> None:
    n = len(g.setup.players)
    for name, seat in _seat_values(e):
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < n:
            raise _Illegal(f"{name} {seat!r} is not a seat of this table (seats 0 to {n - 1})")


def _closed(g: Game, r: Round) -> bool:
    """The round has its result (scored or void): only the next round_started may follow."""
    return bool(g.results) and g.results[-1].round == r.number


def _check_round_start(g: Game, e: ev.RoundStarted) -> None:
    r = g.round
    expected = 1 if r is None else r.number + 1
    if e.round != expected:
        raise _Illegal(f"round {e.round} starts where round {expected} should")
    if r is not None and not _closed(g, r):
        raise _Illegal(f"round {e.round} starts before round {r.number} was closed")
    if e.round > len(g.setup.players):
        raise _Illegal(f"round {e.round} of a {len(g.setup.players)}-round game")
    if e.conjurer != e.round - 1:
        raise _Illegal(f"the conjurer of round {e.round} is seat {e.round - 1}, not {e.conjurer}")


def _check_phase(g: Game, r: Round, phase: str | None, e: ev.PhaseStarted) -> None:
    new = e.phase
    if new not in _PHASE_ORDER:
        raise _Illegal(f"{new!r} is not a phase a round can start")
    if new == "dark-commit" and g.setup.variant != "dark-magic":
        raise _Illegal("the dark-commit phase in a standard game")
    if phase is None:
        if new != "choose":
            raise _Illegal(f"round {r.number} starts with the {new} phase, not choose")
    elif _PHASE_ORDER.index(new) < _PHASE_ORDER.index(phase) or (new == phase and new != "spell"):
        raise _Illegal(f"the {new} phase after the {phase} phase")
    if new in ("choose", "dark-commit", "mark"):
        if e.turn != r.conjurer:
            raise _Illegal(f"the {new} phase is the conjurer's (seat {r.conjurer}), not {e.turn}")
    elif new == "spell":
        if e.turn is None or not g.active(e.turn):
            raise _Illegal(f"a spell turn for seat {e.turn}, who is not playing this round")
    elif e.turn is not None:
        raise _Illegal(f"the {new} phase has no turn, but names seat {e.turn}")


#: Events that are one seat's own action; the seat is ``seat``, or ``by`` for a proposal.
_PlayerAct = (
    ev.CardChosen
    | ev.SpellWritten
    | ev.BoardsMarked
    | ev.Committed
    | ev.Revealed
    | ev.ProposalMade
    | ev.VoteCast
    | ev.PlayerDone
)


def _need_phase(phase: str | None, *allowed: str) -> None:
    if phase not in allowed:
        now = f"the {phase} phase" if phase else "before the round's first phase"
        raise _Illegal(f"in {now}; it belongs to the {' or '.join(allowed)} phase")


def _word_problem(word: str) -> str | None:
    problem = validate_written(word)
    if problem is None:
        return None
    shown = word if len(word) <= 60 else word[:60] + "…"
    return f"{shown!r}: {problem}"


def _check_act(g: Game, r: Round, phase: str | None, e: _PlayerAct) -> None:
    actor = e.by if isinstance(e, ev.ProposalMade) else e.seat
    if not g.active(actor):
        raise _Illegal(f"by seat {actor}, who is not playing this round")
    match e:
        case ev.CardChosen(card=card):
            _need_phase(phase, "choose")
            if actor != r.conjurer:
                raise _Illegal(f"by seat {actor}; the conjurer, seat {r.conjurer}, chooses")
            if r.card is not None or card not in g.remaining_cards():
                raise _Illegal(f"card {card} is not on the table")
        case ev.SpellWritten(word=word):
            _need_phase(phase, "spell")
            if actor != g.turn:
                raise _Illegal(f"by seat {actor}, but it is seat {g.turn}'s turn")
            if actor in r.spells:
                raise _Illegal(f"seat {actor} already wrote a spell word this round")
            problem = _word_problem(word)
            if problem is not None:
                raise _Illegal(problem)
        case ev.BoardsMarked(boards=boards):
            _need_phase(phase, "mark")
            if actor != r.conjurer:
                raise _Illegal(f"by seat {actor}; the conjurer, seat {r.conjurer}, marks")
            if len(set(boards)) != len(boards) or any(s not in r.spells for s in boards):
                raise _Illegal("the marked boards are not different boards with spell words")
        case ev.Committed(commitment=commitment):
            _need_phase(phase, "commit", "dark-commit")
            if phase == "dark-commit" and actor != r.conjurer:
                raise _Illegal(f"by seat {actor}; only the conjurer commits now")
            if phase == "commit" and actor not in g.summoners():
                raise _Illegal(f"by seat {actor}, who does not summon in this phase")
            if not is_hex64(commitment):
                raise _Illegal("the commitment is not 64 lower-case hex digits")
        case ev.Revealed(word=word):
            _need_phase(phase, "reveal")
            if actor not in r.commits or actor in r.reveals:
                raise _Illegal(f"seat {actor} has no unopened commitment to reveal")
            problem = _word_problem(word)
            if problem is not None:
                raise _Illegal(problem)
        case ev.ProposalMade(proposal=pid, kind=kind, seats=seats, rule=rule):
            _need_phase(phase, "review")
            if pid != len(r.proposals):
                raise _Illegal(f"proposal {pid}, but the next one is {len(r.proposals)}")
            if sum(1 for p in r.proposals if p.by == actor) >= MAX_PROPOSALS_PER_PLAYER:
                raise _Illegal(f"seat {actor} made more than {MAX_PROPOSALS_PER_PLAYER} proposals")
            published = r.published or {}
            if any(s not in published for s in seats):
                raise _Illegal("it names a seat without a summoning word")
            if kind == "challenge" and (len(seats) != 1 or rule not in RULE_TEXT):
                raise _Illegal("a challenge names one word and one of the rules")
            if kind == "same" and (len(seats) != 2 or seats[0] == seats[1] or rule is not None):
                raise _Illegal("a 'same thing' proposal names two different words and no rule")
        case ev.VoteCast(proposal=pid):
            _need_phase(phase, "review")
            if not 0 <= pid < len(r.proposals) or not r.proposals[pid].open:
                raise _Illegal(f"a vote on proposal {pid}, which is not open")
            if actor not in r.proposals[pid].voters:
                raise _Illegal(f"seat {actor} does not vote on proposal {pid}")
        case ev.PlayerDone():
            _need_phase(phase, "review")
            if actor in r.done:
                raise _Illegal(f"seat {actor} was already done")


def _check_table(g: Game, r: Round, phase: str | None, e: ev.Event) -> None:
    """The events of the clock, the host and the table (no player's turn)."""
    match e:
        case ev.TurnPassed(seat=seat):
            _need_phase(phase, "spell")
            if seat != g.turn:
                raise _Illegal(f"seat {seat}'s turn passed, but it was seat {g.turn}'s turn")
        case ev.SummonsPublished():
            _need_phase(phase, "reveal")
            if r.published is not None:
                raise _Illegal("the words were already published")
        case ev.ProposalSettled(proposal=pid):
            _need_phase(phase, "review")
            if not 0 <= pid < len(r.proposals) or not r.proposals[pid].open:
                raise _Illegal(f"proposal {pid} is not open")
        case ev.RoundScored():
            _need_phase(phase, "review")
        case ev.ReviewExtended(proposal=pid, deadline=deadline):
            _need_phase(phase, "review")
            if g.rules_version < 3:
                raise _Illegal(f"rules version {g.rules_version} never extends the review")
            if not 0 <= pid < len(r.proposals) or not r.proposals[pid].open:
                raise _Illegal(f"proposal {pid} is not open")
            if g.deadline is None or deadline <= g.deadline:
                raise _Illegal("the review's deadline does not move later")
        case ev.PlayerSkipped(seat=seat, by=by):
            if by is not None and by != g.host:
                raise _Illegal(f"by seat {by}, who is not the host")
            if seat in g.kicked or seat in r.skipped:
                raise _Illegal(f"seat {seat} is not playing this round already")
        case ev.PlayerKicked(seat=seat, by=by):
            if by != g.host or seat == by or seat in g.kicked:
                raise _Illegal(f"seat {by} removed seat {seat}; only the host removes another")
        case ev.HostChanged(seat=seat):
            if seat == g.host or seat in g.kicked:
                raise _Illegal(f"seat {seat} cannot become the host")
        case ev.GamePaused(by=by):
            if by != g.host or g.paused:
                raise _Illegal(f"seat {by} paused; only the host pauses a running game")
        case ev.GameResumed(by=by):
            if by != g.host or not g.paused:
                raise _Illegal(f"seat {by} resumed; only the host resumes a paused game")
        case ev.GameEnded():
            if r.number != len(g.setup.players) or not _closed(g, r):
                raise _Illegal(
                    f"the game ends before its last round ({len(g.setup.players)}) closed"
                )
