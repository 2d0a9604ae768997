"""decide(state, command) -> events | Refusal: every rule of the game lives here.

Pure: no I/O, clock or randomness; ``now`` and the dealt cards arrive inside commands. A handler
emits events through a builder that folds each one as it goes, so follow-up decisions (the next
turn, the end of a phase, the score) always look at the state the earlier events produced.
Rule ids in comments refer to docs/RULES.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from conjure.protocol import events as ev
from conjure.protocol.commitment import check_reveal
from conjure.protocol.counts import MAX_PLAYERS, MIN_PLAYERS, crystal_range
from conjure.protocol.deal import combined_seed, commitment_of, seeded_deal
from conjure.protocol.errors import Refusal
from conjure.protocol.events import (
    DECIDED_RULES,
    RULE_TEXT,
    RULES_VERSION,
    VOTE_TIME,
    already_challenged,
    is_rule,
)
from conjure.protocol.house import UnknownHouseRule, canonical
from conjure.protocol.names import same_name_key
from conjure.protocol.text import is_hex64
from conjure.protocol.words import same_word, validate_written
from conjure.server.rules import commands as cmd
from conjure.server.rules.evolve import concerned_seats, evolve
from conjure.server.rules.sheet import current_checks, score_current
from conjure.server.rules.state import Game, Proposal

MAX_PROPOSALS_PER_PLAYER = 10

#: The reason logged with the vote a proposer casts by proposing (they may vote on it).
PROPOSER_VOTE_REASON = "proposed it"


class _Builder:
    """Collects events and keeps the state they lead to."""

    def __init__(self, state: Game | None) -> None:
        self.state = state
        self.events: list[ev.Event] = []
        self.states: list[Game] = []  #: the state after each event

    @property
    def g(self) -> Game:
        assert self.state is not None
        return self.state

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)
        self.state = evolve(self.state, event)
        self.states.append(self.state)


def decide(state: Game | None, command: cmd.AnyCommand) -> list[ev.Event] | Refusal:
    """The events ``command`` produces on ``state``, or why it is refused."""
    decided = decide_and_fold(state, command)
    return decided if isinstance(decided, Refusal) else decided[0]


def decide_and_fold(
    state: Game | None, command: cmd.AnyCommand
) -> tuple[list[ev.Event], Game | None] | Refusal:
    """The events and the state they lead to: the room and the audit fold each command once."""
    b = _run(state, command)
    return b if isinstance(b, Refusal) else (b.events, b.state)


def decide_and_trace(
    state: Game | None, command: cmd.AnyCommand
) -> tuple[list[ev.Event], list[Game]] | Refusal:
    """The events and the state after each of them: the audit checks every logged event on the
    state it met without folding the log a second time."""
    b = _run(state, command)
    return b if isinstance(b, Refusal) else (b.events, b.states)


def _run(state: Game | None, command: cmd.AnyCommand) -> _Builder | Refusal:
    handler = _handler(command)
    if handler is None:
        return Refusal("unknown_command", f"Unknown command {type(command).__name__}.")
    b = _Builder(state)
    try:
        if not isinstance(command, cmd.StartGame):
            _require_game(state)
        handler(b)
    except Refusal as r:
        return r.with_traceback(None)  # a value now: keep no frames alive
    return b


# ---------------------------------------------------------------- guards


def _require_game(state: Game | None) -> None:
    if state is None:
        raise Refusal("not_started", "The game has not started yet.")


def _deadline(now: float, limit: float | None) -> float | None:
    return None if limit is None else now + limit


def _player_guard(g: Game, seat: int, *phases: str) -> None:
    """A seated, present player acting in one of ``phases`` of a running, unpaused game."""
    if seat not in g.seats:
        raise Refusal("unknown_seat", f"There is no seat {seat}.")
    if g.over:
        raise Refusal("game_over", "The game is over.")
    if g.paused:
        raise Refusal("paused", "The game is paused; wait for the host to resume it.")
    if seat in g.kicked:
        raise Refusal("kicked", "You have been removed from this game.")
    if not g.active(seat):
        raise Refusal("skipped", "You were skipped this round; you can play again next round.")
    if g.phase not in phases:
        raise Refusal(
            "out_of_phase",
            f"That is not possible now: the game is in the {g.phase} phase.",
        )


def _host_guard(g: Game, seat: int) -> None:
    if seat != g.host:
        raise Refusal("not_host", "Only the host can do that.")
    if g.over:
        raise Refusal("game_over", "The game is over.")


def _seat_guard(g: Game, target: int) -> None:
    if target not in g.seats:
        raise Refusal("unknown_seat", f"There is no seat {target}.")
    if target in g.kicked:
        raise Refusal("kicked", f"{g.name(target)} has already left the game.")


# ---------------------------------------------------------------- flow


def _start_round(b: _Builder, number: int, now: float) -> None:
    """T5: round r (counted from 1) is conjured by seat r - 1 (seats count from 0)."""
    conjurer = number - 1
    b.emit(ev.RoundStarted(round=number, conjurer=conjurer))
    if conjurer in b.g.kicked:
        b.emit(ev.RoundVoided(round=number, reason=f"{b.g.name(conjurer)} has left the game"))
        _next_round(b, now)
        return
    b.emit(
        ev.PhaseStarted(
            round=number,
            phase="choose",
            turn=conjurer,
            deadline=_deadline(now, b.g.setup.limits.choose),
        )
    )


def _next_round(b: _Builder, now: float) -> None:
    g = b.g
    assert g.round is not None
    if g.round.number >= len(g.setup.players):
        # T6: the highest total wins; ties share the win. Players who left cannot win.
        standing = {s: t for s, t in g.totals.items() if s not in g.kicked}
        best = max(standing.values())
        winners = tuple(s for s, t in sorted(standing.items()) if t == best)
        b.emit(ev.GameEnded(totals=dict(g.totals), winners=winners))
        return
    _start_round(b, g.round.number + 1, now)


def _void(b: _Builder, reason: str, now: float) -> None:
    """A2/A3: the round ends with no points (its card, if chosen, still leaves the table)."""
    assert b.g.round is not None
    b.emit(ev.RoundVoided(round=b.g.round.number, reason=reason))
    _next_round(b, now)


def _advance(b: _Builder, now: float) -> None:
    """Move on when the current phase has everything it waits for."""
    g = b.g
    r = g.round
    if g.over or r is None:
        return
    if g.phase == "spell":
        _next_spell_turn(b, now)
    elif g.phase == "commit":
        if all(s in r.commits for s in g.summoners()):
            _close_commits(b, now)
    elif g.phase == "reveal":
        if all(s in r.reveals for s in r.commits if g.active(s)):
            _publish(b, now)
    elif g.phase == "review" and all(s in r.done for s in g.active_seats()):
        _finish_review(b, now)


def _next_spell_turn(b: _Builder, now: float) -> None:
    """S2/D2: the next writer in seat order, or on to the marks when everyone has written."""
    g = b.g
    r = g.round
    assert r is not None
    order = [s for s in g.spell_order() if g.active(s)]
    pending = [s for s in order if s not in r.spells and s not in r.passed]
    if pending:
        if g.phase != "spell" or g.turn != pending[0]:
            b.emit(
                ev.PhaseStarted(
                    round=r.number,
                    phase="spell",
                    turn=pending[0],
                    deadline=_deadline(now, g.setup.limits.spell),
                )
            )
        return
    if g.setup.variant == "standard" and len(r.spells) < 2:
        _void(b, "fewer than two spell words were written", now)
        return
    b.emit(
        ev.PhaseStarted(
            round=r.number,
            phase="mark",
            turn=r.conjurer,
            deadline=_deadline(now, g.setup.limits.mark),
        )
    )


def _close_commits(b: _Builder, now: float) -> None:
    r = b.g.round
    assert r is not None
    b.emit(
        ev.PhaseStarted(
            round=r.number, phase="reveal", deadline=_deadline(now, b.g.setup.limits.reveal)
        )
    )
    _advance(b, now)


def _publish(b: _Builder, now: float) -> None:
    """S4/C6: every revealed word at once; a commitment never opened counts as invalid."""
    r = b.g.round
    assert r is not None
    words = {s: r.reveals[s][0] for s in sorted(r.reveals)}
    unrevealed = tuple(s for s in sorted(r.commits) if s not in r.reveals)
    b.emit(ev.SummonsPublished(round=r.number, words=words, unrevealed=unrevealed))
    b.emit(
        ev.PhaseStarted(
            round=r.number, phase="review", deadline=_deadline(now, b.g.setup.limits.review)
        )
    )
    _advance(b, now)


def _settle(b: _Builder, p: Proposal) -> None:
    """V2: a strict majority of the votes cast carries a proposal; a tie does not."""
    r = b.g.round
    assert r is not None
    yes = sum(1 for v in p.votes.values() if v)
    no = sum(1 for v in p.votes.values() if not v)
    b.emit(ev.ProposalSettled(round=r.number, proposal=p.id, carried=yes > no, yes=yes, no=no))


def _maybe_settle(b: _Builder, pid: int) -> None:
    g = b.g
    r = g.round
    assert r is not None
    p = r.proposals[pid]
    if p.open and all(v in p.votes for v in p.voters if g.active(v)):
        _settle(b, p)


def _finish_review(b: _Builder, now: float) -> None:
    r = b.g.round
    assert r is not None
    for p in list(r.proposals):
        if b.g.round is not None and b.g.round.proposals[p.id].open:
            _settle(b, b.g.round.proposals[p.id])
    result = score_current(b.g, b.g.setup.house_rules)  # H1-H3: the host's choice, if any
    b.emit(
        ev.RoundScored(
            round=r.number,
            case=result.case,
            points=dict(result.scores),
            invalid={s: i.reason for s, i in result.invalid.items()},
            reasons={
                s: tuple(ev.Point(points=p.points, why=p.why, rule=p.rule) for p in points)
                for s, points in result.reasons.items()
            },
        )
    )
    _next_round(b, now)


# ---------------------------------------------------------------- handlers


def _start(b: _Builder, c: cmd.StartGame) -> None:
    if b.state is not None:
        raise Refusal("already_started", "The game has already started.")
    n = len(c.setup.players)
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise Refusal(
            "player_count", f"A game needs {MIN_PLAYERS} to {MAX_PLAYERS} players, not {n}."
        )
    if [p.seat for p in c.setup.players] != list(range(n)):
        raise Refusal("bad_seats", "Seats must be numbered 0..n-1 in order.")
    if len({same_name_key(p.name) for p in c.setup.players}) != n:
        raise Refusal("name_taken", "Every player needs a different name.")
    if len({p.colour for p in c.setup.players}) != n or any(
        p.colour not in ev.COLOURS for p in c.setup.players
    ):
        raise Refusal("bad_colours", "Every player needs a different board colour.")
    if len(c.setup.cards) != n:
        raise Refusal("bad_deal", f"Deal one card per player: {n} cards, not {len(c.setup.cards)}.")
    if c.setup.host not in range(n):
        raise Refusal("unknown_seat", "The host must be one of the players.")
    if c.setup.deal is not None:
        _check_deal(c, n)
    try:
        if list(c.setup.house_rules) != canonical(c.setup.house_rules):
            raise Refusal("bad_settings", "House rules are named once each, in sorted order.")
    except UnknownHouseRule as exc:
        raise Refusal("bad_settings", str(exc)) from None
    if c.rules_version not in DECIDED_RULES:
        raise Refusal(
            "bad_rules",
            f"These rules play version {RULES_VERSION} (and go on with games of versions "
            f"{', '.join(map(str, DECIDED_RULES))}), not {c.rules_version}.",
        )
    b.emit(ev.GameStarted.of(c.setup, c.rules_version))
    _start_round(b, 1, c.now)


def _check_deal(c: cmd.StartGame, n: int) -> None:
    """The cards are the seeded deal: the server's seed opens its commitment, and shuffling the
    deck with the combined seed puts exactly these cards on the table (protocol.deal)."""
    d = c.setup.deal
    assert d is not None
    if not (is_hex64(d.server_seed) and is_hex64(d.commitment)):
        raise Refusal("bad_deal", "The deal's seed and commitment are 64 lower-case hex digits.")
    if commitment_of(d.server_seed) != d.commitment:
        raise Refusal("bad_deal", "The server's seed does not open the commitment it announced.")
    if any(s not in range(n) or not is_hex64(v) for s, v in d.contributions.items()):
        raise Refusal("bad_deal", "A deal contribution names no seat, or is not 64 hex digits.")
    dealt = seeded_deal(d.deck, n, combined_seed(d.server_seed, d.contributions, n))
    if tuple(c.setup.cards) != dealt:
        raise Refusal(
            "bad_deal",
            "The cards on the table are not the seeded deal: shuffling the deck with the "
            f"combined seed gives {', '.join(x.text for x in dealt)}.",
        )


def _choose(b: _Builder, c: cmd.ChooseCard) -> None:
    g = b.g
    _player_guard(g, c.seat, "choose")
    r = g.round
    assert r is not None
    if c.seat != r.conjurer:
        raise Refusal("not_your_turn", f"{g.name(r.conjurer)} is choosing the category.")
    if c.card not in g.remaining_cards():
        raise Refusal("bad_card", "That card is not on the table.")
    b.emit(ev.CardChosen(round=r.number, seat=c.seat, card=c.card))
    if g.setup.variant == "dark-magic":
        # D1: the conjurer commits to a summoning word at once.
        b.emit(
            ev.PhaseStarted(
                round=r.number,
                phase="dark-commit",
                turn=r.conjurer,
                deadline=_deadline(c.now, g.setup.limits.commit),
            )
        )
    else:
        _next_spell_turn(b, c.now)


def _spell(b: _Builder, c: cmd.WriteSpell) -> None:
    g = b.g
    _player_guard(g, c.seat, "spell")
    r = g.round
    assert r is not None
    if c.seat != g.turn:
        who = g.name(g.turn) if g.turn is not None else "someone else"
        raise Refusal("not_your_turn", f"It is {who}'s turn to write a spell word.")
    problem = validate_written(c.word)
    if problem:
        raise Refusal("bad_word", problem)
    b.emit(ev.SpellWritten(round=r.number, seat=c.seat, word=c.word.strip()))
    _advance(b, c.now)


def _mark(b: _Builder, c: cmd.MarkBoards) -> None:
    g = b.g
    _player_guard(g, c.seat, "mark")
    r = g.round
    assert r is not None
    if c.seat != r.conjurer:
        raise Refusal("not_your_turn", f"Only the conjurer, {g.name(r.conjurer)}, marks boards.")
    boards = tuple(c.boards)
    if len(set(boards)) != len(boards):
        raise Refusal("bad_marks", "Each board can hold only one crystal.")
    for s in boards:
        if s not in r.spells:
            raise Refusal("bad_marks", f"Seat {s} has no spell word to mark.")
    low, high = crystal_range(g.setup.variant)
    if not low <= len(boards) <= high:
        raise Refusal("bad_marks", f"Mark {low} to {high} boards, not {len(boards)}.")
    b.emit(ev.BoardsMarked(round=r.number, seat=c.seat, boards=tuple(sorted(boards))))
    b.emit(
        ev.PhaseStarted(
            round=r.number, phase="commit", deadline=_deadline(c.now, g.setup.limits.commit)
        )
    )
    _advance(b, c.now)


def _commit(b: _Builder, c: cmd.Commit) -> None:
    g = b.g
    if g.phase in ("reveal", "review") and c.seat in g.seats:
        raise Refusal("commits_closed", "Every commitment is in; the summon is closed.")
    _player_guard(g, c.seat, "commit", "dark-commit")
    r = g.round
    assert r is not None
    if g.phase == "dark-commit":
        if c.seat != r.conjurer:
            raise Refusal("not_your_turn", "The conjurer is choosing their word.")
    elif c.seat not in g.summoners():
        raise Refusal("commits_closed", "You have already summoned this round.")
    if not is_hex64(c.commitment):
        raise Refusal("bad_commitment", "A commitment is 64 lower-case hex digits.")
    for s, other in r.commits.items():
        if s != c.seat and other == c.commitment:
            raise Refusal("copied_commitment", "That commitment belongs to another player.")
    b.emit(
        ev.Committed(
            round=r.number, seat=c.seat, commitment=c.commitment, replaced=c.seat in r.commits
        )
    )
    if g.phase == "dark-commit":
        _next_spell_turn(b, c.now)
    else:
        _advance(b, c.now)


def _reveal(b: _Builder, c: cmd.Reveal) -> None:
    g = b.g
    if g.phase in ("commit", "dark-commit", "spell", "mark") and c.seat in g.seats:
        raise Refusal("reveal_too_early", "Reveals open once every commitment is in.")
    _player_guard(g, c.seat, "reveal")
    r = g.round
    assert r is not None
    if c.seat not in r.commits:
        raise Refusal("no_commitment", "You have no commitment to reveal this round.")
    if c.seat in r.reveals:
        raise Refusal("already_revealed", "You have already revealed your word.")
    if not check_reveal(r.commits[c.seat], g.setup.game_id, r.number, c.seat, c.nonce, c.word):
        raise Refusal("reveal_mismatch", "That word and nonce do not match your commitment.")
    problem = validate_written(c.word)
    if problem:
        raise Refusal("bad_word", problem)
    b.emit(ev.Revealed(round=r.number, seat=c.seat, word=c.word, nonce=c.nonce))
    _advance(b, c.now)


def _review_target(g: Game, seat: int) -> str:
    r = g.round
    assert r is not None and r.published is not None
    if seat not in r.published:
        raise Refusal("no_word", f"Seat {seat} has no summoning word this round.")
    invalid, _ = current_checks(g)
    if seat in invalid:
        raise Refusal("already_invalid", f"{g.name(seat)}'s word is already invalid.")
    return r.published[seat]


def _proposal_cap(g: Game, seat: int) -> None:
    r = g.round
    assert r is not None
    if sum(1 for p in r.proposals if p.by == seat) >= MAX_PROPOSALS_PER_PLAYER:
        raise Refusal("too_many_proposals", "You have made enough proposals this round.")


def _propose(
    b: _Builder,
    seat: int,
    kind: Literal["challenge", "same"],
    seats: tuple[int, ...],
    rule: ev.Rule | None,
    now: float,
) -> None:
    """V1: the proposer votes yes at once when they are not concerned by their own proposal.
    V7: a proposal still open with less than ``VOTE_TIME`` left gives its voters that time."""
    r = b.g.round
    assert r is not None
    pid = len(r.proposals)
    g = b.g
    concerned = concerned_seats(g, r, seats)
    voters = tuple(s for s in g.active_seats() if s not in concerned)
    b.emit(
        ev.ProposalMade(
            round=r.number,
            proposal=pid,
            by=seat,
            kind=kind,
            seats=seats,
            rule=rule,
            voters=voters,
            # A new question reopens the review for everyone who may vote on it.
            reopened=tuple(s for s in voters if s in r.done),
        )
    )
    assert b.g.round is not None
    if seat in b.g.round.proposals[pid].voters:
        b.emit(
            ev.VoteCast(
                round=r.number, proposal=pid, seat=seat, yes=True, reason=PROPOSER_VOTE_REASON
            )
        )
    _maybe_settle(b, pid)
    _time_to_vote(b, pid, now)


def _time_to_vote(b: _Builder, pid: int, now: float) -> None:
    """V7 (rules version 3 on): a proposal made as the review's time runs out carried on its
    proposer's vote alone, its voters never asked (found by review): the review's deadline
    moves to give them ``VOTE_TIME`` (or the review's whole limit, if that is shorter)."""
    g = b.g
    r = g.round
    limit = g.setup.limits.review
    if g.rules_version < 3 or r is None or g.deadline is None or limit is None:
        return
    if not r.proposals[pid].open:
        return  # settled at once: every voter has voted
    deadline = now + min(VOTE_TIME, limit)
    if deadline > g.deadline:
        b.emit(ev.ReviewExtended(round=r.number, proposal=pid, deadline=deadline))


def _challenge(b: _Builder, c: cmd.Challenge) -> None:
    g = b.g
    _player_guard(g, c.seat, "review")
    r = g.round
    assert r is not None
    if not is_rule(c.rule):
        raise Refusal("bad_rule", f"Unknown rule {c.rule!r}; use one of {', '.join(RULE_TEXT)}.")
    word = _review_target(g, c.target)
    published = r.published
    assert published is not None  # _review_target has checked it
    if c.rule == "written-word" and g.setup.variant == "dark-magic" and c.target == r.conjurer:
        raise Refusal(
            "exempt",
            "The Dark Magic conjurer wrote their word before any spell word existed (D5).",
        )
    _proposal_cap(g, c.seat)
    for p in r.proposals:
        if p.kind == "challenge" and p.rule == c.rule and same_word(published[p.seats[0]], word):
            raise Refusal("duplicate_proposal", already_challenged(word, c.rule, p.id))
    _propose(b, c.seat, "challenge", (c.target,), c.rule, c.now)


def _same(b: _Builder, c: cmd.ProposeSame) -> None:
    g = b.g
    _player_guard(g, c.seat, "review")
    r = g.round
    assert r is not None and r.published is not None
    if c.a == c.b:
        raise Refusal("bad_proposal", "Name two different players' words.")
    wa = _review_target(g, c.a)
    wb = _review_target(g, c.b)
    if same_word(wa, wb):
        raise Refusal("already_same", f"{wa!r} and {wb!r} are already the same word.")
    _proposal_cap(g, c.seat)
    for p in r.proposals:
        if p.kind == "same":
            x, y = (r.published[s] for s in p.seats)
            if (same_word(x, wa) and same_word(y, wb)) or (same_word(x, wb) and same_word(y, wa)):
                raise Refusal("duplicate_proposal", "Those words are already proposed as one.")
    _propose(b, c.seat, "same", (c.a, c.b), None, c.now)


def _vote(b: _Builder, c: cmd.Vote) -> None:
    g = b.g
    _player_guard(g, c.seat, "review")
    r = g.round
    assert r is not None
    if not 0 <= c.proposal < len(r.proposals):
        # People number proposals from 1 (the feed, the client, conjure replay); the wire from 0.
        raise Refusal("unknown_proposal", f"There is no proposal #{c.proposal + 1}.")
    p = r.proposals[c.proposal]
    if not p.open:
        raise Refusal("proposal_settled", "That proposal has already been settled.")
    if c.seat not in p.voters:
        raise Refusal("not_a_voter", "You wrote one of the words in question, so you do not vote.")
    b.emit(
        ev.VoteCast(round=r.number, proposal=p.id, seat=c.seat, yes=c.yes, reason=c.reason[:200])
    )
    _maybe_settle(b, p.id)


def _done(b: _Builder, c: cmd.Done) -> None:
    g = b.g
    _player_guard(g, c.seat, "review")
    r = g.round
    assert r is not None
    if c.seat in r.done:
        raise Refusal("already_done", "You have already said you are done.")
    b.emit(ev.PlayerDone(round=r.number, seat=c.seat))
    _advance(b, c.now)


def _tick(b: _Builder, c: cmd.Tick) -> None:
    """A3: what happens when a phase's time runs out (``c.deadline``: the one the clock saw)."""
    g = b.g
    if c.deadline is not None and (c.deadline != g.deadline or c.now < c.deadline):
        raise Refusal(
            "too_early",
            f"The clock acted at {c.now} on deadline {c.deadline}; the phase's deadline is "
            f"{g.deadline}.",
        )
    if g.clock_deadline is None or c.now < g.clock_deadline:
        return
    r = g.round
    assert r is not None
    if g.phase in ("choose", "dark-commit", "mark"):
        _void(b, f"{g.name(r.conjurer)}, the conjurer, ran out of time", c.now)
    elif g.phase == "spell":
        assert g.turn is not None
        b.emit(ev.TurnPassed(round=r.number, seat=g.turn, reason="ran out of time"))
        _advance(b, c.now)
    elif g.phase == "commit":
        _close_commits(b, c.now)
    elif g.phase == "reveal":
        _publish(b, c.now)
    elif g.phase == "review":
        _finish_review(b, c.now)


def _pause(b: _Builder, c: cmd.Pause) -> None:
    g = b.g
    _host_guard(g, c.seat)
    if g.paused:
        raise Refusal("paused", "The game is already paused.")
    remaining = None if g.deadline is None else max(0.0, g.deadline - c.now)
    b.emit(ev.GamePaused(by=c.seat, remaining=remaining))


def _resume(b: _Builder, c: cmd.Resume) -> None:
    g = b.g
    _host_guard(g, c.seat)
    if not g.paused:
        raise Refusal("not_paused", "The game is not paused.")
    remaining = g.paused_remaining
    b.emit(ev.GameResumed(by=c.seat, deadline=None if remaining is None else c.now + remaining))


def _after_absence(b: _Builder, seat: int, now: float) -> None:
    """A2: without its conjurer a round cannot be marked; otherwise play goes on without them."""
    g = b.g
    r = g.round
    if r is None or g.over:
        return
    if seat == r.conjurer and g.phase in ("choose", "dark-commit", "spell", "mark"):
        _void(b, f"{g.name(seat)}, the conjurer, is not playing this round", now)
        return
    if g.phase == "review":
        for p in list(r.proposals):
            _maybe_settle(b, p.id)
    _advance(b, now)


def _not_paused(g: Game) -> None:
    """A5: nothing happens while paused, so the clock cannot be started behind the pause."""
    if g.paused:
        raise Refusal("paused", "The game is paused; resume it first.")


def _skip(b: _Builder, c: cmd.Skip) -> None:
    g = b.g
    _host_guard(g, c.seat)
    _not_paused(g)
    _seat_guard(g, c.target)
    r = g.round
    assert r is not None
    if c.target in r.skipped:
        raise Refusal("already_skipped", f"{g.name(c.target)} is already skipped this round.")
    b.emit(ev.PlayerSkipped(round=r.number, seat=c.target, by=c.seat, dropped=_drops(g, c.target)))
    _after_absence(b, c.target, c.now)


def _kick(b: _Builder, c: cmd.Kick) -> None:
    g = b.g
    _host_guard(g, c.seat)
    _not_paused(g)
    _seat_guard(g, c.target)
    if c.target == c.seat:
        raise Refusal("cannot_kick_self", "The host cannot remove themselves.")
    b.emit(ev.PlayerKicked(seat=c.target, by=c.seat, dropped=_drops(g, c.target)))
    _after_absence(b, c.target, c.now)


def _drops(g: Game, seat: int) -> bool:
    """A1: leaving while the summon is open drops the commitment (no word, no penalty).

    Once reveals have begun the commitment stands: not opening it is C6 (-3) for anyone.
    """
    r = g.round
    return (
        r is not None
        and g.phase in ("dark-commit", "spell", "mark", "commit")
        and seat in r.commits
        and seat not in r.reveals
    )


def _presence(b: _Builder, c: cmd.Presence) -> None:
    g = b.g
    _seat_guard(g, c.seat)
    if g.over:
        raise Refusal("game_over", "The game is over.")
    b.emit(ev.PresenceChanged(seat=c.seat, connected=c.connected))


def _pass_host(b: _Builder, c: cmd.PassHost) -> None:
    g = b.g
    _seat_guard(g, c.to)
    if c.to == g.host:
        raise Refusal("already_host", f"{g.name(c.to)} is already the host.")
    b.emit(ev.HostChanged(seat=c.to, reason=c.reason))


def _abandon(b: _Builder, c: cmd.Abandon) -> None:
    """A7: nobody was connected for a while: the game ends with no winner, scores as they stand.

    Paused or not: a pause with nobody left to resume it is exactly what must not last forever.
    """
    g = b.g
    if g.over:
        raise Refusal("game_over", "The game is over.")
    r = g.round
    assert r is not None
    b.emit(
        ev.GameAbandoned(
            round=r.number,
            phase=g.phase,
            idle_since=c.idle_since,
            at=c.now,
            totals=dict(g.totals),
        )
    )


def _handler(c: cmd.AnyCommand) -> Callable[[_Builder], None] | None:
    """The handler of ``c``'s type, bound to it (None for a type the engine does not know).

    A ``match`` rather than a table, so the type checker sees each handler get its own command;
    the commonest commands of a game come first (votes and "done" are most of a review).
    """
    match c:
        case cmd.Vote():
            return lambda b: _vote(b, c)
        case cmd.Done():
            return lambda b: _done(b, c)
        case cmd.StartGame():
            return lambda b: _start(b, c)
        case cmd.ChooseCard():
            return lambda b: _choose(b, c)
        case cmd.WriteSpell():
            return lambda b: _spell(b, c)
        case cmd.MarkBoards():
            return lambda b: _mark(b, c)
        case cmd.Commit():
            return lambda b: _commit(b, c)
        case cmd.Reveal():
            return lambda b: _reveal(b, c)
        case cmd.Challenge():
            return lambda b: _challenge(b, c)
        case cmd.ProposeSame():
            return lambda b: _same(b, c)
        case cmd.Tick():
            return lambda b: _tick(b, c)
        case cmd.Pause():
            return lambda b: _pause(b, c)
        case cmd.Resume():
            return lambda b: _resume(b, c)
        case cmd.Skip():
            return lambda b: _skip(b, c)
        case cmd.Kick():
            return lambda b: _kick(b, c)
        case cmd.PassHost():
            return lambda b: _pass_host(b, c)
        case cmd.Abandon():
            return lambda b: _abandon(b, c)
        case cmd.Presence():
            return lambda b: _presence(b, c)
    return None
