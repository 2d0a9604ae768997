"""``conjure replay LOG``: verify a saved game log, then explain every round and every point.

    conjure replay replays/<game>.jsonl [LOG ...] [--round N] [--json] [--events]
                   [--receipt SEQ:HASH|FILE ...] [--state-dir DIR ...] [--no-state-dir]
                   [--house-rule NAME ...]

It verifies before it explains (``server.audit_verify``): the hash chain and sequence numbers, each
reveal against its commitment, every receipt (given with ``--receipt`` or found in the client
state directory), and every round's score recomputed by the rules engine against the log's. Then
it explains each round (or just ``--round N``) and the totals. ``--events`` lists the events one per
line, ``--json`` prints one JSON document instead of text. ``--house-rule NAME`` also re-scores
every round by that reading of the rulebook (docs/RULES.md, House rules), beside the official score.

Several logs are audited in turn, each report under a ``==> LOG <==`` line, then a summary (with
``--json``: one object of the reports and the summary); the exit status is the worst of theirs.

Exit status: 0 when everything verifies, 1 when anything does not (a torn tail included: the
game's last action was cut), 2 when the input cannot be audited at all (no such file, not a log,
unknown rules version, a malformed ``--receipt``). Procedure and examples: docs/LOG.md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import shutil
import sys
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conjure.protocol import events as ev
from conjure.protocol.cells import cells, ljust, wrap_words
from conjure.protocol.events import RULE_TEXT
from conjure.protocol.house import canonical
from conjure.protocol.names import skeleton
from conjure.protocol.receiptsig import is_key
from conjure.protocol.statedir import default_state_dir
from conjure.protocol.text import describe, escape_unshown
from conjure.protocol.wording import counted, names_list, signed, stars
from conjure.protocol.words import normalize
from conjure.server.audit_verify import (
    Audit,
    Receipt,
    ReceiptReads,
    RoundAudit,
    Step,
    Unusable,
    audit,
    one_line,
    parse_receipt_arg,
    path_text,
    short_key,
    whole_batches,
)
from conjure.server.feed import OWN_VOTE, duration, standings
from conjure.server.house import (
    HouseScores,
    add_house_argument,
    audit_house,
    house_json,
    house_round_lines,
    house_title,
    house_totals_lines,
)
from conjure.server.rules.decide import PROPOSER_VOTE_REASON
from conjure.server.rules.explain import explain_round, result_json
from conjure.server.rules.state import Game

__all__ = ["add_arguments", "audit", "render_json", "render_text", "run"]


# ---------------------------------------------------------------------------------------------
# Times


def utc(ts: float) -> datetime | None:
    """``ts`` as a date in UTC, or None for a time no calendar holds: a record's own time is
    checked when the log is read (``protocol.structs.Time``), but times inside events (an
    idle-since, a deadline a huge limit puts off) are only as the log says."""
    try:
        return datetime.fromtimestamp(ts, UTC)
    except (OverflowError, ValueError, OSError):
        return None


def clock(ts: float, *, date: bool = False, zone: bool = False) -> str:
    """A record's time in UTC (logs travel between machines: one zone for everyone), with the
    zone named when ``date`` or ``zone``."""
    t = utc(ts)
    if t is None:
        return f"{ts:g} s after 1970 (no date)"
    if date:
        return t.strftime("%Y-%m-%d %H:%M:%S UTC")
    return t.strftime("%H:%M:%S UTC" if zone else "%H:%M:%S")


def since(ts: float, start: float) -> str:
    """``+m:ss`` (or ``+h:mm:ss``) after ``start``; ``-m:ss`` before it (the server's clock is
    the wall clock, which can be set back: shown as logged, never as +0:00)."""
    gap = ts - start
    if not math.isfinite(gap):
        return "(no time)"
    d = round(gap)
    h, rest = divmod(abs(d), 3600)
    m, s = divmod(rest, 60)
    sign = "-" if d < 0 else "+"
    return f"{sign}{h}:{m:02d}:{s:02d}" if h else f"{sign}{m}:{s:02d}"


# ---------------------------------------------------------------------------------------------
# One line per event


def _actor_seat(e: ev.Event | None) -> int | None:
    by = getattr(e, "by", None)
    return by if by is not None else getattr(e, "seat", None)


def _actor(a: Audit, e: ev.Event | None) -> str:
    seat = _actor_seat(e)
    return a.name(seat) if seat is not None else "-"


def _card(a: Audit, index: int | None) -> str:
    if index is None or a.start is None or not 0 <= index < len(a.start.cards):
        return "(no card)"
    c = a.start.cards[index]
    return f"{one_line(c.text)} {stars(c.stars)}"


def _word_of(a: Audit, step: Step, seat: int) -> str:
    """A published word of the round ``step`` belongs to (for proposals)."""
    r = a.round(getattr(step.event, "round", -1))
    if r is not None and r.before is not None and r.before.round is not None:
        w = (r.before.round.published or {}).get(seat)
        if w is not None:
            return repr(w)
    return f"{a.name(seat)}'s word"


def summary(a: Audit, step: Step) -> str:
    """A short sentence for one event (``--events``)."""
    e = step.event
    if e is None:
        return f"(cannot be read: {step.error})"
    n = a.name
    number = getattr(e, "round", None)  # every event of a round has an int ``round``
    rnd = "" if number is None else f"round {number}: "
    match e:
        case ev.GameStarted():
            names = ", ".join(n(p.seat) for p in e.players)
            deck = ", ".join(_card(a, i) for i in range(len(e.cards)))
            return (
                f"game {one_line(e.game_id)} in room {one_line(e.room)}: {one_line(e.variant)}, "
                "rules version "
                f"{e.rules_version}, players {names}; host {n(e.host)}; cards {deck}"
            )
        case ev.RoundStarted():
            return f"round {e.round} begins; conjurer {n(e.conjurer)}"
        case ev.PhaseStarted():
            turn = f", {n(e.turn)}'s turn" if e.turn is not None else ""
            until = f", until {clock(e.deadline)}" if e.deadline is not None else ", no clock"
            return f"{rnd}{one_line(e.phase)} phase{turn}{until}"
        case ev.CardChosen():
            return f"{rnd}chose {_card(a, e.card)}"
        case ev.SpellWritten():
            return f"{rnd}spell word {e.word!r}"
        case ev.TurnPassed():
            return f"{rnd}spell turn passed ({one_line(e.reason)})"
        case ev.BoardsMarked():
            marked = ", ".join(n(s) for s in e.boards) or "no boards"
            return f"{rnd}crystals on {marked}"
        case ev.Committed():
            again = " (replaces the earlier one)" if e.replaced else ""
            return f"{rnd}commitment {e.commitment[:12]}…{again}"
        case ev.Revealed():
            return f"{rnd}revealed {e.word!r} (nonce {e.nonce[:8]}…)"
        case ev.SummonsPublished():
            words = ", ".join(f"{n(s)} {w!r}" for s, w in e.words.items()) or "no words"
            never = ", ".join(n(s) for s in e.unrevealed)
            return f"{rnd}published {words}" + (f"; never revealed: {never}" if never else "")
        case ev.ProposalMade():
            if e.kind == "challenge":
                rule = one_line(RULE_TEXT.get(e.rule or "", e.rule or ""))
                what = f"challenges {_word_of(a, step, e.seats[0])}: {rule}"
            else:
                words = " = ".join(_word_of(a, step, s) for s in e.seats)
                what = f"proposes {words} (the same thing)"
            return f"{rnd}#{e.proposal + 1} {what}"  # 1-based, as the table saw it
        case ev.VoteCast():
            why = f": {e.reason!r}" if e.reason else ""
            return f"{rnd}#{e.proposal + 1} votes {'yes' if e.yes else 'no'}{why}"
        case ev.ProposalSettled():
            verdict = "carried" if e.carried else "not carried"
            return f"{rnd}#{e.proposal + 1} {verdict}, {e.yes}-{e.no}"
        case ev.PlayerDone():
            return f"{rnd}done reviewing"
        case ev.PresenceChanged():  # (it printed the event's class name: an auditor's review)
            return f"{rnd}came back" if e.connected else f"{rnd}went away"
        case ev.RoundScored():
            pts = ", ".join(f"{n(s)} {signed(p)}" for s, p in e.points.items())
            return f"{rnd}{one_line(e.case)}; {pts}"
        case ev.ReviewExtended():
            return (
                f"{rnd}the review runs until {clock(e.deadline)}, so that proposal "
                f"{e.proposal + 1}'s voters can vote"
            )
        case ev.RoundVoided():
            return f"{rnd}void: {one_line(e.reason)}"
        case ev.PlayerSkipped():
            return f"{rnd}{n(e.seat)} is skipped this round"
        case ev.PlayerKicked():
            return f"{n(e.seat)} is removed from the game"
        case ev.HostChanged():
            return f"{n(e.seat)} is now the host ({one_line(e.reason)})"
        case ev.GamePaused():
            left = f" with {e.remaining:.0f} s on the clock" if e.remaining is not None else ""
            return f"game paused{left}"
        case ev.GameResumed():
            return "game resumed"
        case ev.GameEnded():
            totals = ", ".join(f"{n(s)} {t}" for s, t in e.totals.items())
            winners = ", ".join(n(s) for s in e.winners) or "nobody"
            return f"game over; totals {totals}; won by {winners}"
        case ev.GameAbandoned():
            totals = ", ".join(f"{n(s)} {t}" for s, t in e.totals.items())
            idle = duration(e.at - e.idle_since)
            return (
                f"{rnd}abandoned in the {one_line(e.phase)} phase: nobody connected since "
                f"{clock(e.idle_since)} ({idle}); totals {totals}; no winner"
            )
    return type(e).__name__


def event_lines(a: Audit, steps: list[Step]) -> list[str]:
    width = max((cells(one_line(s.record.type)) for s in steps), default=10)
    who = max((cells(_actor(a, s.event)) for s in steps), default=1)
    day = ""
    out = []
    for s in steps:
        t = utc(s.record.ts)
        if t is None:
            stamp = clock(s.record.ts)
        else:
            if t.strftime("%Y-%m-%d") != day:
                day = t.strftime("%Y-%m-%d")
                out.append(f"-- {day} (UTC)")
            stamp = t.strftime("%H:%M:%S.") + f"{t.microsecond // 1000:03d}"
        out.append(
            f"{s.record.seq:>5}  {stamp}  {ljust(one_line(s.record.type), width)}  "
            f"{ljust(_actor(a, s.event), who)}  {summary(a, s)}"
        )
    return out


def event_json(a: Audit, s: Step) -> dict[str, Any]:
    seat = _actor_seat(s.event)
    return {
        "seq": s.record.seq,
        "ts": s.record.ts,
        "time": clock(s.record.ts, date=True),
        "type": s.record.type,
        "actor": None if seat is None else a.logged_name(seat),
        "summary": summary(a, s),
    }


# ---------------------------------------------------------------------------------------------
# Rounds


def _proposal_lines(a: Audit, r: RoundAudit) -> list[str]:
    g = r.before
    if g is None or g.round is None or not g.round.proposals:
        return []
    published = g.round.published or {}
    made = {s.event.proposal: s.record.ts for s in r.steps if isinstance(s.event, ev.ProposalMade)}
    history: dict[int, dict[int, list[bool]]] = {}
    engines = _engine_votes(r)
    only_engines: set[tuple[int, int]] = set()  # (proposal, seat) whose one vote is the engine's
    for s in r.steps:
        if isinstance(s.event, ev.VoteCast):
            key = (s.event.proposal, s.event.seat)
            history.setdefault(key[0], {}).setdefault(key[1], []).append(s.event.yes)
            if id(s) in engines:
                only_engines.add(key)
            else:
                only_engines.discard(key)
    settled = {
        s.event.proposal: s.event for s in r.steps if isinstance(s.event, ev.ProposalSettled)
    }
    out = ["Challenges and proposals:"]
    for p in g.round.proposals:
        words = [repr(published.get(s, "?")) for s in p.seats]
        if p.kind == "challenge":
            rule = one_line(RULE_TEXT.get(p.rule or "", p.rule or ""))
            what = f"{a.name(p.by)} challenged {a.name(p.seats[0])}'s {words[0]}: it {rule}"
        else:
            what = f"{a.name(p.by)} proposed that {words[0]} and {words[1]} are the same thing"
        at = f" ({since(made[p.id], r.started)})" if p.id in made else ""
        done = settled.get(p.id)
        if done is not None:
            verdict = (
                f"CARRIED {done.yes}-{done.no}"
                if done.carried
                else (f"not carried {done.yes}-{done.no}")
            )
        else:
            verdict = "still open when the log ends"
        out.append(f"  #{p.id + 1} {what}{at}: {verdict}")
        votes = []
        for seat in sorted(p.votes):
            v = "yes" if p.votes[seat] else "no"
            why = p.reasons.get(seat)
            earlier = history.get(p.id, {}).get(seat, [])
            changed = " (changed their vote)" if len(set(earlier)) > 1 else ""
            said = _vote_reason(why, (p.id, seat) in only_engines)
            votes.append(f"{a.name(seat)} {v}" + (f" ({said})" if said else "") + changed)
        silent = [a.name(s) for s in sorted(p.voters) if s not in p.votes]
        out.append("      votes: " + ("; ".join(votes) if votes else "none"))
        if silent:
            out.append("      did not vote: " + ", ".join(silent))
    return out


def _commit_lines(a: Audit, r: RoundAudit) -> list[str]:
    if not r.commits:
        return []
    width = max(cells(a.name(s)) for s in r.commits)
    out = ["Commit-then-reveal (times from the round start):"]
    for seat in sorted(r.commits):
        c = r.commits[seat]
        parts = []
        if c.committed:
            parts.append(f"committed {since(c.committed[0], r.started)}")
            parts += [f"replaced {since(t, r.started)}" for t in c.committed[1:]]
        if c.revealed is not None:
            ok = "opens the commitment" if c.opens else "DOES NOT OPEN the commitment"
            parts.append(f"revealed {since(c.revealed, r.started)}, {ok}")
        elif (
            r.before is not None
            and r.before.round is not None
            and seat not in r.before.round.commits
        ):
            parts.append("left the round before revealing: the commitment was dropped (A1)")
        elif not r.finished and a.abandoned is not None and a.abandoned.round == r.number:
            phase = one_line(a.abandoned.phase)
            parts.append(f"not revealed: the game was abandoned in the {phase} phase")
        elif r.finished or (r.before is not None and r.before.phase not in ("commit", "reveal")):
            parts.append("never revealed")
        else:
            parts.append("not revealed when the log ends")
        out.append(f"  {ljust(a.name(seat), width)}  " + ", ".join(parts))
    return out


def _engine_votes(r: RoundAudit) -> set[int]:
    """The ids of the steps that are a proposer's vote cast by proposing: the yes the engine
    emits right after the proposal, in its batch, with its reason. Only those: a vote the
    proposer casts later is theirs, whatever its reason says (found by review)."""
    out: set[int] = set()
    for before, step in itertools.pairwise(r.steps):
        e, made = step.event, before.event
        if (
            isinstance(e, ev.VoteCast)
            and isinstance(made, ev.ProposalMade)
            and (e.proposal, e.seat) == (made.proposal, made.by)
            and e.yes
            and e.reason == PROPOSER_VOTE_REASON
            and before.record.batch > 0
            and step.record.seq == before.record.seq + 1
        ):
            out.add(id(step))
    return out


def _vote_reason(why: str | None, engines: bool) -> str:
    """A vote's reason as the report quotes it; the vote the engine casts for a proposer is
    named as such (it read as a reason the proposer had typed: 'proposed it')."""
    if engines:
        return OWN_VOTE
    return repr(why) if why else ""


def _summon_closed(a: Audit, r: RoundAudit, committed: set[int], clock: bool) -> str:
    """How the summon closed: every commitment in, or (its time ran out, or a player left) not.
    It said "every commitment in" of a summon that closed on its clock (found by an auditor's
    review)."""
    g = r.before
    missing = (
        [] if g is None or g.round is None else [x for x in g.summoners() if x not in committed]
    )
    if not missing:
        return "the summon closed: every commitment in, reveals open"
    names = names_list([a.name(x) for x in missing])
    why = "its time ran out" if clock else "the summon closed"
    return f"{why} with no word from {names}: reveals open"


#: Why every player of a game went away at once: no player quits for the others (the
#: report read "Ann went away (quit, or lost the connection)" five times over a restart, and
#: never said the server had stopped: found by friends playing over TLS).
EVERYONE_GONE = "the server stopped or restarted, or the network failed"


#: Seconds within which every player's going counts as one event (the room logs each seat's
#: presence as a decision of its own).
GONE_TOGETHER = 2.0


def _everyone_gone(r: RoundAudit) -> set[int]:
    """The records (by seq) of goings that, within ``GONE_TOGETHER`` seconds, took every player
    still in the game away, two or more of them."""
    g = r.before
    if g is None:
        return set()
    players = {p.seat for p in g.setup.players if p.seat not in g.kicked}
    goes = [
        (s.record.ts, s.record.seq, s.event.seat)
        for s in r.steps
        if isinstance(s.event, ev.PresenceChanged) and not s.event.connected
    ]
    together: set[int] = set()
    if len(players) < 2:
        return together
    for i, (first, _, _) in enumerate(goes):
        end = first + GONE_TOGETHER
        within = list(itertools.takewhile(lambda go, end=end: go[0] <= end, goes[i:]))
        if {seat for _, _, seat in within} >= players:
            together.update(seq for _, seq, _ in within)
    return together


def _other_lines(a: Audit, r: RoundAudit) -> list[str]:
    """Every step of the round in time order, presence and the host's actions included."""
    out = []
    engines = _engine_votes(r)
    committed: set[int] = set()
    kind = None  # the command of the batch a step is in (logs of rules version 2 on)
    batch = reveal_batch = -1  # the seq that starts that batch; the reveal phase's
    all_gone = _everyone_gone(r)
    said_gone = -GONE_TOGETHER - 1.0  # when the last such line was said
    for s in r.steps:
        e = s.event
        at = since(s.record.ts, r.started)
        if s.record.cmd is not None:
            kind, batch = s.record.cmd.get("kind"), s.record.seq
        if s.record.seq in all_gone:
            if s.record.ts - said_gone > GONE_TOGETHER:  # one line for them all
                said_gone = s.record.ts
                out.append(f"{at}  everyone's connection went at once ({EVERYONE_GONE})")
            continue
        match e:
            case ev.CardChosen():
                out.append(f"{at}  {a.name(e.seat)} chose {_card(a, e.card)}")
            case ev.SpellWritten():
                out.append(f"{at}  {a.name(e.seat)} wrote the spell word {shown(repr(e.word))}")
            case ev.BoardsMarked():
                boards = ", ".join(a.name(b) for b in e.boards) or "no board"
                out.append(f"{at}  {a.name(e.seat)} placed the crystals: {boards}")
            case ev.Committed():
                how = (
                    "replaced their summoning word" if e.replaced else "locked in a summoning word"
                )
                out.append(f"{at}  {a.name(e.seat)} {how}")
                committed.add(e.seat)
            case ev.PhaseStarted(phase="reveal"):
                reveal_batch = batch
                out.append(f"{at}  {_summon_closed(a, r, committed, kind == 'tick')}")
            case ev.Revealed():
                out.append(f"{at}  {a.name(e.seat)} revealed (it stays hidden until all are in)")
            case ev.PhaseStarted(phase="review"):
                # (not when nobody committed: the reveal then opened and closed in one batch)
                clocked = kind == "tick" and batch != reveal_batch
                ran_out = "the reveal's time ran out: " if clocked else ""
                out.append(f"{at}  {ran_out}the review opened")
            case ev.ProposalMade():
                words = " and ".join(a.name(x) for x in e.seats)
                what = (
                    f"challenged {words}'s word ({one_line(e.rule or '')})"
                    if e.kind == "challenge"
                    else f"proposed that {words} wrote the same thing"
                )
                out.append(f"{at}  proposal #{e.proposal + 1}: {a.name(e.by)} {what}")
            case ev.VoteCast():
                said = _vote_reason(e.reason, id(s) in engines)
                why = "" if not said else f" ({said})" if said == OWN_VOTE else f": {shown(said)}"
                vote = "yes" if e.yes else "no"
                out.append(f"{at}  {a.name(e.seat)} voted {vote} on #{e.proposal + 1}{why}")
            case ev.ProposalSettled():
                verdict = "carried" if e.carried else "did not carry"
                out.append(f"{at}  proposal #{e.proposal + 1} {verdict}, {e.yes}-{e.no}")
            case ev.PlayerDone():
                out.append(f"{at}  {a.name(e.seat)} said done")
            case ev.PresenceChanged():
                # (the log does not say how: "connection lost" was said of a player who quit)
                state = "came back" if e.connected else "went away (quit, or lost the connection)"
                out.append(f"{at}  {a.name(e.seat)} {state}")
            case ev.RoundScored():
                out.append(f"{at}  the round was scored: {one_line(e.case)}")
            case ev.TurnPassed():
                out.append(f"{at}  {a.name(e.seat)}'s spell turn passed: {one_line(e.reason)}")
            case ev.PlayerSkipped():
                by = f" by {a.name(e.by)}" if e.by is not None else ""
                out.append(f"{at}  {a.name(e.seat)} was skipped for this round{by}")
            case ev.PlayerKicked():
                out.append(f"{at}  {a.name(e.seat)} was removed from the game by {a.name(e.by)}")
            case ev.HostChanged():
                out.append(f"{at}  {a.name(e.seat)} became the host ({one_line(e.reason)})")
            case ev.GamePaused():
                out.append(f"{at}  {a.name(e.by)} paused the game")
            case ev.GameResumed():
                out.append(f"{at}  {a.name(e.by)} resumed the game")
            case ev.SummonsPublished():
                out.append(f"{at}  the summoning words were published together")
            case ev.ReviewExtended():
                out.append(
                    f"{at}  proposal {e.proposal + 1} came as the review's time ran out: "
                    f"it runs until {clock(e.deadline)}, so that its voters can vote (V7)"
                )
            case ev.GameAbandoned():
                idle = clock(e.idle_since)
                out.append(f"{at}  the game was abandoned: nobody had been connected since {idle}")
    return ["Timeline:", *(f"  {x}" for x in out)] if out else []


def _points(a: Audit, points: dict[int, int]) -> str:
    return ", ".join(f"{a.name(s)} {signed(p)}" for s, p in points.items()) or "no points"


#: Characters a look-alike line never names: two words alike only in these (``'modern'``,
#: ``'modem'``) are two words to anyone's eye.
ASCII = frozenset(chr(i) for i in range(128))


def _look_alikes(a: Audit, g: Game | None) -> list[str]:
    """Summoning words that look the same and are not (a Cyrillic 'а' in 'aunt'): shown as
    they are, four 'aunt's were scored as if one player had written another word, and
    nothing said why (found by an auditor's review). One line for each such group of words,
    with the characters that tell them apart."""
    words = g.round.published if g is not None and g.round is not None else None
    if not words:
        return []
    groups: dict[str, dict[str, list[int]]] = {}  # skeleton -> normal form -> its seats
    for seat, word in words.items():
        normal = normalize(word)
        groups.setdefault(skeleton(normal), {}).setdefault(normal, []).append(seat)
    out = []
    for forms in groups.values():
        if len(forms) < 2:
            continue
        shared = set.intersection(*(set(normal) for normal in forms))
        odd = sorted({ch for normal in forms for ch in normal if ch not in shared | ASCII})
        if not odd:
            continue
        said = [
            f"{names_list([a.name(x) for x in seats])}'s {shown(repr(words[seats[0]]))}"
            for seats in forms.values()
        ]
        chars = ", ".join(describe(ch) for ch in odd[:3])
        out.append(f"{' and '.join(said)} look alike but are different words ({chars})")
    return out


def round_lines(a: Audit, r: RoundAudit, house: HouseScores | None = None) -> list[str]:
    total = len(a.start.players) if a.start is not None else "?"
    g = r.before
    card = g.round.card if g is not None and g.round is not None else None
    title = f"Round {r.number} of {total}"
    if card is not None:
        title += f": {_card(a, card)}"
    out = [f"{title}, conjurer {a.name(r.conjurer)}"]
    out.append(f"  started {clock(r.started, zone=True)}")
    body: list[str] = []
    body += _other_lines(a, r)
    body += _commit_lines(a, r)
    body += _proposal_lines(a, r)
    if r.void_reason is not None:
        at = since(r.steps[-1].record.ts, r.started) if r.steps else "?"
        for st in r.steps:
            if isinstance(st.event, ev.RoundVoided):
                at = since(st.record.ts, r.started)
        body.append(f"VOID at {at}: {one_line(r.void_reason)}. Nobody scores this round.")
    elif r.sheet is not None and r.result is not None:
        # The engine's explanation quotes the log's words and names: each of its lines is one.
        body += [one_line(x) for x in explain_round(r.sheet, r.result)]
        body += [one_line(x) for x in _look_alikes(a, g)]
        if r.official is not None and a.start is not None:
            body.append(
                f"Played under {house_title(a.start.house_rules)}; the official reading would "
                f"give {r.official.case}: {_points(a, r.official.scores)}"
            )
        if house is not None and r.number in house.rounds:
            body += [
                one_line(x) for x in house_round_lines(r.sheet, r.result, house.rounds[r.number])
            ]
    if isinstance(r.recorded, ev.RoundScored):
        agree = "the same as the rules engine" if not r.problems else "DIFFERENT (see below)"
        body.append(
            f"The log recorded: {one_line(r.recorded.case)}; {_points(a, r.recorded.points)}: "
            f"{agree}"
        )
    gone = a.abandoned
    if r.recorded is None and gone is not None and gone.round == r.number:
        body.append(
            f"The game was abandoned during this round ({one_line(gone.phase)} phase): it was "
            "never scored (A7)."
        )
    elif r.recorded is None:
        phase = one_line(g.phase) if g is not None else "?"
        which = "verified part of the log" if a.corrupt or a.torn else "log"
        body.append(f"The {which} ends during this round ({phase} phase): it was never scored.")
    for p in r.problems:
        body.append(f"PROBLEM: {p}")
    if r.recorded is not None:
        body.append(
            "Running totals: " + ", ".join(f"{a.name(s)} {t}" for s, t in r.running.items())
        )
    out += [f"  {x}" for x in body]
    return out


def round_json(a: Audit, r: RoundAudit, house: HouseScores | None = None) -> dict[str, Any]:
    g = r.before
    rnd = g.round if g is not None else None
    card = None
    if rnd is not None and rnd.card is not None and a.start is not None:
        c = a.start.cards[rnd.card]
        card = {"index": rnd.card, "text": c.text, "stars": c.stars}
    doc: dict[str, Any] = {
        "round": r.number,
        "conjurer": a.logged_name(r.conjurer),
        "conjurer_seat": r.conjurer,
        "card": card,
        "started": r.started,
        "case": r.case,
        "scores": {},
    }
    if r.sheet is not None and r.result is not None:
        doc.update(result_json(r.sheet, r.result))
    if r.sheet is not None and r.official is not None:
        doc["official"] = result_json(r.sheet, r.official)
    if house is not None:
        h = house.rounds.get(r.number)
        doc["house"] = house_json(r.sheet, h) if r.sheet is not None and h is not None else None
    if r.void_reason is not None:
        doc["void_reason"] = r.void_reason
    if rnd is not None:
        doc["spells"] = {
            a.logged_name(s): {"word": w, "crystal": s in (rnd.marked or ())}
            for s, w in rnd.spells.items()
        }
        doc["summons"] = {a.logged_name(s): w for s, w in (rnd.published or {}).items()}
        doc["unrevealed"] = [a.logged_name(s) for s in rnd.unrevealed]
        doc["proposals"] = [
            {
                "id": p.id,
                "by": a.logged_name(p.by),
                "kind": p.kind,
                "players": [a.logged_name(s) for s in p.seats],
                "words": [(rnd.published or {}).get(s) for s in p.seats],
                "rule": p.rule,
                "votes": {
                    a.logged_name(s): {"yes": y, "reason": p.reasons.get(s, "")}
                    for s, y in sorted(p.votes.items())
                },
                "carried": p.carried,
            }
            for p in rnd.proposals
        ]
    doc["commitments"] = {
        a.logged_name(s): {"committed": c.committed, "revealed": c.revealed, "opens": c.opens}
        for s, c in sorted(r.commits.items())
    }
    rec = r.recorded
    if isinstance(rec, ev.RoundScored):
        doc["recorded"] = {
            "case": rec.case,
            "scores": {a.logged_name(s): p for s, p in rec.points.items()},
            "invalid": {a.logged_name(s): why for s, why in rec.invalid.items()},
        }
    elif isinstance(rec, ev.RoundVoided):
        doc["recorded"] = {"case": "void", "scores": {}, "reason": rec.reason}
    else:
        doc["recorded"] = None
    doc["finished"] = r.finished
    doc["agrees"] = r.finished and not r.problems
    doc["problems"] = list(r.problems)
    doc["running_totals"] = (
        {a.logged_name(s): t for s, t in r.running.items()} if r.finished else None
    )
    return doc


# ---------------------------------------------------------------------------------------------
# The whole report


def _check_lines(a: Audit) -> list[str]:
    k = a.kinds
    n = len(a.records)
    out = []

    def line(ok: bool | None, text: str) -> None:
        # A problem or a note is one line, whatever of the log it quotes.
        out.append(f"  {'ok  ' if ok else 'note' if ok is None else 'FAIL'}  {one_line(text)}")

    if "chain" not in k:
        last = f", last hash {a.records[-1].hash[:16]}…" if a.records else ""
        line(
            True,
            f"hash chain: {n} records (seq 0-{n - 1}), every hash, seq, link and batch checks{last}",
        )
    for p in k.get("chain", []):
        line(False, p)
    if a.start is not None:
        if "names" not in k:
            line(
                True,
                "player names: each one the server seats (as it stores names, no unshown "
                "character, none a look-alike of another player's)",
            )
        for p in k.get("names", []) + k.get("ids", []):
            line(False, p)
        part = " in the verified part" if a.corrupt is not None or a.torn is not None else ""
        if a.start.rules_version >= 2 and "rules" not in k:
            line(
                True,
                f"every move{part}: {counted(a.redecided, 'recorded command')} decided again by the "
                "rules engine, each giving exactly the events logged",
            )
            d = a.start.deal
            if d is not None and a.redecided:
                n = len(a.start.players)
                line(
                    True,
                    f"the deal: the server's seed opens the commitment it announced "
                    f"({d.commitment[:16]}…), the log holds a share for {len(d.contributions)} "
                    f"of {n} seats, and shuffling the {len(d.deck)}-card deck with the combined seed "
                    "deals exactly the cards on the table",
                )
        for p in k.get("rules", []):
            line(False, p)
        if "reveals" not in k:
            line(
                True,
                f"commit-then-reveal{part}: {counted(a.reveals_checked, 'reveal')}, each opens "
                "its commitment and came after the summon closed; the published words are the "
                "revealed ones"
                if a.reveals_checked
                else f"commit-then-reveal{part}: no reveal in the log yet, so none to check",
            )
        scored = [r for r in a.rounds if r.recorded is not None and r.void_reason is None]
        void = [r for r in a.rounds if r.void_reason is not None]
        if "scores" not in k and "replay" not in k:
            line(
                True,
                f"scores{part}: {counted(len(scored), 'scored round')} recomputed with rules "
                f"version {a.start.rules_version} agree with the log, case and every player's "
                "points" + (f"; {len(void)} void" if void else "")
                if scored
                else f"scores{part}: no scored round in the log yet, so none to check"
                + (f" ({len(void)} void)" if void else ""),
            )
        if a.ended is not None and "totals" not in k:
            line(True, "final totals and winners: as the rounds add up")
        if a.abandoned is not None and "totals" not in k:
            line(True, "final totals: as the rounds add up; the game was abandoned: no winner (A7)")
        if a.abandoned is not None and "end" not in k:
            line(
                True,
                "abandonment: in the phase the log is in, no player acted after the time the "
                "log says the last connection went, and no seat's logged presence has them "
                "connected then",
            )
        for kind in ("replay", "reveals", "scores", "totals", "end"):
            for p in k.get(kind, []):
                line(False, p)
    for r in a.receipts:
        if r.status == "on-chain":
            by = {
                "valid": f", signed with {short_key(r.key or '')}",
                "server": ", signed with the server's key (--server-key)",
            }.get(r.signature, "")
            line(True, f"{r.label()}: on the chain{by}")
        elif r.status == "unchecked":
            by = {
                "valid": f" (its signature verifies with {short_key(r.key or '')})",
                "server": " (signed with the server's key, --server-key)",
            }.get(r.signature, "")
            line(None, f"{r.label()}: unchecked: {r.detail}{by}")
    for p in k.get("receipts", []):
        line(False, p)
    for p in a.deal_kept:
        line(True, p)
    for p in k.get("deal", []):
        line(False, p)
    for note in a.notes:
        line(None, note)
    return out


def render_text(
    a: Audit,
    rounds: list[RoundAudit],
    events: bool,
    event_steps: list[Step],
    house: HouseScores | None = None,
) -> str:
    out = [f"Game log {path_text(a.path)} ({a.size} bytes, {len(a.records)} verified records)"]
    if (cut := len(a.records) - whole_batches(a.records)) > 0:
        # (a newcomer read "97 verified records", then a round that ignored record 97)
        last = "the last record belongs" if cut == 1 else f"the last {cut} records belong"
        out.append(
            f"  ({last} to a decision the log does not hold whole: the replay stops before it)"
        )
    s = a.start
    if s is not None:
        names = ", ".join(a.name(p.seat) for p in s.players)
        out.append(
            f"Game {one_line(s.game_id)} in room {one_line(s.room)}: {one_line(s.variant)}, "
            f"rules version {s.rules_version}, {len(s.players)} players: {names}"
        )
        out.append("Cards dealt: " + ", ".join(_card(a, i) for i in range(len(s.cards))))
        first, last = a.records[0].ts, a.records[-1].ts
        out.append(f"Started {clock(first, date=True)}; last record {clock(last, date=True)}")
    out.append("")
    out.append("Verification:")
    out += _check_lines(a)
    if a.verified:
        out.append("=> VERIFIED: everything above checks.")
    else:
        n = len(a.problems)
        out.append(f"=> NOT VERIFIED: {n} problem{'s' if n != 1 else ''}.")
    if events:
        out.append("")
        out.append("Events (seq, time UTC, type, actor, summary):")
        out += event_lines(a, event_steps)
    for r in rounds:
        out.append("")
        out += round_lines(a, r, house)
    if s is not None and a.abandoned is not None:
        out.append("")
        out.append(abandoned_text(a, a.abandoned))
    if s is not None:
        out.append("")
        final = a.finished
        out.append("Final totals (recomputed):" if final else "Totals so far (recomputed):")
        width = max(cells(a.name(p.seat)) for p in s.players)
        # By rank: the highest total first; a tie shares its rank (T6).
        ranked = sorted(s.players, key=lambda p: (-a.totals.get(p.seat, 0), p.seat))
        for p in ranked:
            total = a.totals.get(p.seat, 0)
            rank = 1 + sum(1 for q in s.players if a.totals.get(q.seat, 0) > total)
            gone = " (removed from the game)" if a.state and p.seat in a.state.kicked else ""
            out.append(f"  {rank}. {ljust(a.name(p.seat), width)}  {total:>4}{gone}")
        if s.house_rules:
            official: dict[int, int] = {p.seat: 0 for p in s.players}
            for r in a.rounds:
                if r.official is not None and r.recorded is not None:
                    for seat, pts in r.official.scores.items():
                        official[seat] = official.get(seat, 0) + pts
            out.append(
                f"Played under {house_title(s.house_rules)}; the official reading would total: "
                + ", ".join(f"{a.name(seat)} {t}" for seat, t in official.items())
            )
        if final and a.abandoned is not None:
            out.append("Winner: nobody: an abandoned game awards no win (A7).")
        elif final:
            winners = [a.name(w) for w in a.winners()]
            word = "Winner" if len(winners) == 1 else "Winners (a shared win)"
            out.append(f"{word}: {', '.join(winners) or 'nobody'}")
            if a.ended is not None and tuple(a.ended.winners) != a.winners():
                logged = ", ".join(a.name(w) for w in a.ended.winners) or "nobody"
                out.append(f"(the log names {logged})")
        else:
            out.append("The game is not over in this log.")
        if house is not None:
            out.append("")
            out += [one_line(x) for x in house_totals_lines(a, house)]
    if len(out) > VERDICT_AGAIN_AFTER:
        # A four-round game's report is some 280 lines: its verdict had scrolled 250 lines up
        # a 24-row terminal, and the last thing on screen was the winner (seen by a newcomer).
        n = len(a.problems)
        out.append("")
        out.append(
            "Verdict (the Verification block at the top says what was checked): "
            + ("VERIFIED." if a.verified else f"NOT VERIFIED, {n} problem{'s' if n != 1 else ''}.")
            + (" One round alone: --round N." if len(rounds) > 1 else "")  # (said after one)
        )
    return "\n".join(out)


#: A report longer than this many lines says its verdict again at its end (a terminal's height).
VERDICT_AGAIN_AFTER = 24


def last_finished_round(a: Audit) -> int | None:
    return max((r.number for r in a.rounds if r.finished), default=None)


def abandoned_text(a: Audit, e: ev.GameAbandoned) -> str:
    """When and where the game was abandoned, after which round, and the standings it ended on."""
    done = last_finished_round(a)
    after = f"after round {done}" if done is not None else "before any round was finished"
    return (
        f"The game was abandoned at {clock(e.at, date=True)} in round {e.round} "
        f"({one_line(e.phase)} phase), {after}: nobody had been connected since {clock(e.idle_since, zone=True)} "
        f"({duration(e.at - e.idle_since)}). Round {e.round} was never scored; the scores stand "
        f"as recorded: {standings(a.name, e.totals)} (A7)."
    )


def render_json(
    a: Audit,
    rounds: list[RoundAudit],
    events: bool,
    event_steps: list[Step],
    house: HouseScores | None = None,
) -> dict[str, Any]:
    s = a.start
    gone = a.abandoned
    last = a.ended or gone  # the game's last word on its totals
    doc: dict[str, Any] = {
        "log": str(a.path),
        "verified": a.verified,
        "problems": list(a.problems),
        "notes": list(a.notes),
        "game_id": s.game_id if s else None,
        "room": s.room if s else None,
        "variant": s.variant if s else None,
        "rules_version": s.rules_version if s else None,
        "players": [{"seat": p.seat, "name": p.name, "colour": p.colour} for p in s.players]
        if s
        else [],
        "records": len(a.records),
        "last_seq": len(a.records) - 1 if a.records else None,
        "last_hash": a.records[-1].hash if a.records else None,
        "chain": {"ok": a.corrupt is None and a.torn is None, "first_bad": a.first_bad},
        "torn": a.torn,
        "finished": a.finished,
        "receipts": [r.to_json() for r in a.receipts],
        "deal_kept": list(a.deal_kept),
        "rounds": [round_json(a, r, house) for r in rounds],
        "totals": {a.logged_name(seat): t for seat, t in a.totals.items()},
        "recorded_totals": {a.logged_name(seat): t for seat, t in last.totals.items()}
        if last
        else None,
        "winners": [a.logged_name(w) for w in a.winners()],
        "recorded_winners": [a.logged_name(w) for w in getattr(last, "winners", ())]
        if last
        else None,
        "abandoned": None
        if gone is None
        else {
            "round": gone.round,
            "phase": gone.phase,
            "at": gone.at,
            "idle_since": gone.idle_since,
            "after_round": last_finished_round(a),
            "explanation": abandoned_text(a, gone),
        },
    }
    if a.replay_stopped:
        doc["replay_stopped"] = a.replay_stopped
    if house is not None:
        doc["house_rules"] = canonical(house.rules)
        doc["house"] = {
            "totals": {a.logged_name(seat): t for seat, t in house.totals.items()},
            "winners": [a.logged_name(w) for w in house.winners],
        }
    if events:
        doc["events"] = [event_json(a, st) for st in event_steps]
    return doc


# ---------------------------------------------------------------------------------------------
# The command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "log",
        metavar="LOG",
        type=Path,
        nargs="+",
        help="a game log (replays/<game>.jsonl), or several: each is audited in turn",
    )
    parser.add_argument(
        "--round", type=int, metavar="N", help="explain only round N (everything is verified)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--events", action="store_true", help="also list every event, one per line")
    parser.add_argument(
        "--receipt",
        action="append",
        default=[],
        metavar="SEQ:HASH|FILE",
        help="a receipt a client kept: SEQ:HASH, or a receipt file (repeatable)",
    )
    parser.add_argument(
        "--state-dir",
        action="append",
        type=Path,
        metavar="DIR",
        help="a client state directory whose receipts/ to check (repeatable; default: "
        "$CONJURE_STATE_DIR, else this user's state directory)",
    )
    parser.add_argument(
        "--no-state-dir",
        action="store_true",
        help="do not look for receipts in this user's state directory (a --state-dir is still read)",
    )
    parser.add_argument(
        "--server-key",
        action="append",
        default=[],
        metavar="KEY",
        help="the key the server signs receipts with (ed25519:..., as `conjure serve` printed"
        " it; repeatable): a receipt signed with another key then counts as unsigned",
    )
    add_house_argument(parser)


def _fail(text: str) -> int:
    print(shown(f"conjure replay: {text}"), file=sys.stderr)  # it may quote a hostile name
    return 2


def run(args: argparse.Namespace) -> int:
    receipts: list[Receipt] = []
    files: list[Path] = []
    try:
        for item in args.receipt:
            path = Path(item)
            if ":" not in item and path.is_file():
                files.append(path)
            else:
                receipts.append(parse_receipt_arg(item))
    except Unusable as exc:
        return _fail(str(exc))
    for key in args.server_key:
        if not is_key(key):
            return _fail(
                f"--server-key {key!r}: expected ed25519: and 64 lowercase hex digits, "
                "as `conjure serve` prints it"
            )
    logs: list[Path] = args.log
    if receipts and len(logs) > 1:
        return _fail(
            "a SEQ:HASH receipt names no game, so it goes with one log: give that log alone, "
            "or the receipt file a client saved (it names its game)"
        )
    # --no-state-dir skips this user's own state directory; one given by name is always read.
    state_dirs: list[Path] = list(args.state_dir or [])
    if not state_dirs and not args.no_state_dir:
        state_dirs = [default_state_dir()]
    if len(logs) > 1:
        return _replay_many(args, logs, state_dirs, files)
    try:
        status, out, _ = _replay_one_safely(args, logs[0], receipts, state_dirs, files)
    except Unusable as exc:
        return _fail(str(exc))
    if args.json:
        print(shown(json.dumps(out, ensure_ascii=False, indent=2)))
    else:
        print_report(out)
    return status


def _replay_one_safely(args: argparse.Namespace, log: Path, *rest: Any) -> tuple[int, Any, Audit]:
    """``_replay_one``, with a fault of this program on one log made that log's Unusable: a
    report of several logs goes on to the others and its summary (docs/LOG.md), and one log
    ends with a sentence and exit 2, never a traceback taken for a verdict."""
    try:
        return _replay_one(args, log, *rest)
    except Unusable:
        raise
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        raise Unusable(
            f"{path_text(log)}: the audit itself failed on this log ({type(exc).__name__} at "
            f"{Path(where.filename).name}:{where.lineno}: {one_line(str(exc))[:200]}): a fault "
            "of this program, not a verdict on the log; please report it"
        ) from exc


def _replay_one(
    args: argparse.Namespace,
    log: Path,
    receipts: list[Receipt],
    state_dirs: list[Path],
    files: list[Path],
    reads: ReceiptReads | None = None,
) -> tuple[int, Any, Audit]:
    """One log's exit status (0 or 1), its report (text, or the JSON document) and audit. Raises
    Unusable. Alone (no ``reads``), a log without round ``--round N`` is unusable; among several
    (``reads`` given), it is still verified and reported, with a note that the round is not in
    it; and a receipt file's entries without a ``game_id`` count for none of them."""
    alone = reads is None
    a = audit(
        log,
        receipts,
        state_dirs,
        files,
        files_named_for_game=alone,
        reads=reads,
        server_keys=args.server_key,
    )
    rounds = a.rounds
    steps = a.steps
    if args.round is not None:
        r = a.round(args.round)
        if r is None:
            held = f"it holds rounds 1-{a.rounds[-1].number}" if a.rounds else "it holds no round"
            if alone:
                raise Unusable(f"{path_text(log)}: round {args.round} is not in this log ({held})")
            a.notes.append(f"round {args.round} is not in this log ({held}): nothing to explain")
            rounds, steps = [], []
        else:
            rounds = [r]
            steps = r.steps
    house = audit_house(a, args.house_rule) if args.house_rule else None
    if args.json:
        out: Any = render_json(a, rounds, args.events, steps, house)
    else:
        out = render_text(a, rounds, args.events, steps, house)
    return (0 if a.verified else 1), out, a


def _replay_many(
    args: argparse.Namespace, logs: list[Path], state_dirs: list[Path], files: list[Path]
) -> int:
    """Several logs in one run (``conjure replay replays/*.jsonl``): each report in turn under
    a ``==> LOG <==`` line, then a summary (the logs that did not verify, those that could not
    be audited, and any game held by two logs); or one JSON object of the reports and that
    summary. The exit status is the worst of theirs (2 if any could not be audited, else 1 if
    any did not verify), and 1 if two logs of one game part ways: each of those two verifies on
    its own, but one of them was written again, so neither counts as verified (the summary and
    the JSON say which and why)."""
    worst = 0
    docs: list[Any] = []
    by_log: dict[str, dict[str, Any]] = {}  #: each audited log's JSON document
    failed: list[str] = []
    unusable: list[str] = []  #: each one's reason
    reads = ReceiptReads()
    games: dict[str, list[tuple[str, list[str]]]] = {}  #: game id -> (log, its chain's hashes)
    for i, log in enumerate(logs):
        if not args.json:
            print(shown(("\n" if i else "") + f"==> {path_text(log)} <=="), flush=True)
        try:
            status, out, a = _replay_one_safely(args, log, [], state_dirs, files, reads)
        except Unusable as exc:
            worst = max(worst, _fail(str(exc)))
            unusable.append(str(exc))
            if args.json:
                docs.append({"log": str(log), "unusable": str(exc)})
            continue
        worst = max(worst, status)
        if status:
            failed.append(str(log))
        if a.start is not None and a.corrupt is None:  # an edited log is already NOT VERIFIED
            games.setdefault(a.start.game_id, []).append((str(log), [r.hash for r in a.records]))
        if args.json:
            docs.append(out)
            by_log[str(log)] = out
        else:
            print_report(out, flush=True)
    copies = [_copies(game_id, held) for game_id, held in games.items() if len(held) > 1]
    parted_logs = [(log, text) for text, parted in copies for log in parted if log not in failed]
    if parted_logs:
        worst = max(worst, 1)
    failed += [log for log, _ in parted_logs]
    verified = len(logs) - len(failed) - len(unusable)
    if args.json:
        for log, text in parted_logs:
            by_log[log]["verified"] = False  # alone it verifies; beside its other copy it cannot
            by_log[log]["problems"].append(text)
        doc = {
            "logs": docs,
            "verified": verified,
            "not_verified": failed,
            "unusable": unusable,
            "same_game": [{"text": text, "parted": bool(parted)} for text, parted in copies],
        }
        print(shown(json.dumps(doc, ensure_ascii=False, indent=2)))
        return worst
    counts = [f"{verified} verified"]
    counts += [f"{len(failed)} NOT VERIFIED"] if failed else []
    counts += [f"{len(unusable)} could not be audited"] if unusable else []
    lines = [f"{counted(len(logs), 'log')}: " + ", ".join(counts)]
    why = dict(parted_logs)
    lines += [
        f"  NOT VERIFIED: {path_text(log)}"
        + (" (another log of its game parts from it)" if log in why else "")
        for log in failed
    ]
    lines += [f"  could not be audited: {why}" for why in unusable]
    lines += [f"  {'NOT VERIFIED' if parted else 'note'}: {text}" for text, parted in copies]
    print_report("\n" + "\n".join(lines))
    return worst


def _copies(game_id: str, held: list[tuple[str, list[str]]]) -> tuple[str, list[str]]:
    """A sentence on the logs that hold one game, and those of them that part ways (none, or
    the longest and each that parts from it): each is a chain that verifies on its own, so two
    that differ at one seq mean one was written again (or two servers ran the game); a copy
    taken while the game went on is only shorter."""
    (first, chain), *others = sorted(held, key=lambda h: -len(h[1]))
    parts: list[str] = []
    parted: list[str] = []
    for log, other in others:
        at = next((i for i, (x, y) in enumerate(zip(chain, other, strict=False)) if x != y), None)
        if at is not None:
            parted += [first] if not parted else []
            parted.append(log)
            parts.append(
                f"{path_text(log)} parts from it at seq {at}: one of the two was written again"
            )
        elif len(other) == len(chain):
            parts.append(f"{path_text(log)} holds the same {counted(len(chain), 'record')}")
        else:
            parts.append(f"{path_text(log)} is a copy of it cut after seq {len(other) - 1}")
    text = f"game {one_line(game_id)} is in {len(held)} logs: {path_text(first)}; " + "; ".join(
        parts
    )
    return text, parted


#: A report line's check word ("  ok    ", "  FAIL  ", "  note  "): its continuation lines go
#: under the text after it.
_CHECK = re.compile(r" *(?:ok|note|FAIL|NOT VERIFIED|could not be audited)\b:? *")
#: A point of a round's explanation ("    +2  1 player matched you"): continued under its text
#: (continued two columns in, it sat one column left of it).
_POINT = re.compile(r" *[+-]?\d+  +(?=\S)")


def fitted(text: str, width: int | None) -> str:
    """``text`` with its lines longer than ``width`` wrapped between words, each continuation
    indented under its line's text (None: as it is, for a pipe or a file, one line a fact).

    Why: read in an 80-column terminal, report lines of 100-200 characters broke words and
    hashes mid-way. A continuation line is always indented, so no logged text wrapped onto a
    new line can begin one as the report's own lines do (a verdict, a log's heading)."""
    if width is None:
        return text
    out: list[str] = []
    for line in text.split("\n"):
        if cells(line) <= width:  # in cells: an emoji in a name takes two (seen at 80 columns)
            out.append(line)
            continue
        head = _CHECK.match(line) or _POINT.match(line)
        lead = len(line) - len(line.lstrip(" "))
        hang = " " * max(2, head.end() if head is not None else lead + 2)
        # The line's own indent stays its first line's, even when its first word is longer
        # than the width (wrapped whole, the indent went and a logged name could begin a
        # line as a verdict does: found by review).
        out += wrap_words(line[lead:], width, line[:lead], hang)
    return "\n".join(out)


def print_report(text: str, **kwargs: Any) -> None:
    """Print a report's text: shown safely, and fitted to a terminal's width."""
    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    print(fitted(shown(text), width), **kwargs)


def shown(text: str) -> str:
    """A log is evidence from someone else: never let its text drive the organizer's terminal.

    Every character protocol.text calls unshown, except the report's own newlines, becomes
    ``\\uXXXX`` (which is also a valid JSON escape).
    """
    return escape_unshown(text, keep="\n")
