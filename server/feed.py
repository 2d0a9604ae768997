"""The feed: a few plain sentences telling the table what a batch of events just did.

Built from events only, and careful about one thing: a ``revealed`` event carries the word, but the
feed says only that the player revealed; words appear in the feed once ``summons_published`` has
made them public.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from conjure.protocol import events as ev
from conjure.protocol.events import CASE_TEXT, RULE_TEXT, VOTE_TIME
from conjure.protocol.wording import counted, names_list, signed
from conjure.server.rules.evolve import concerned_seats
from conjure.server.rules.state import Game

#: How a proposer's vote by proposing is told (the feed, the audit's timeline).
OWN_VOTE = "the proposer's own vote"


def _names(g: Game, seats: Sequence[int]) -> str:
    return names_list([g.name(s) for s in seats], empty="nobody")


def duration(seconds: float) -> str:
    """A length of time as people say it: "45 seconds", "30 minutes", "2 hours 5 minutes"."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} second" + ("" if s == 1 else "s")
    m = s // 60
    if m < 120:
        return f"{m} minute" + ("" if m == 1 else "s")
    h, m = divmod(m, 60)
    return f"{h} hours" + (f" {m} minute" + ("" if m == 1 else "s") if m else "")


def standings(name: Callable[[int], str], totals: dict[int, int]) -> str:
    """The standings on one line, highest first (seat order on a tie): Ann 5, Bob 3, Cy 0."""
    ranked = sorted(totals.items(), key=lambda st: (-st[1], st[0]))
    return ", ".join(f"{name(s)} {t}" for s, t in ranked)


def _who_votes(g: Game, e: ev.ProposalMade) -> str:
    """Who votes on it (everyone reads the same line: seen, "Vote!" told a newcomer who had no
    vote to cast); otherwise why nobody does (V1: writers do not vote)."""
    voters = list(e.voters or ())  # the proposer too, whose own vote follows at once (seen:
    # "Ada and Cleo vote on it." and then the proposer's vote, as if out of turn)
    if voters == [e.by]:
        return " Only the proposer votes: the others wrote the words in question (V1)."
    if voters:
        return f" {_names(g, voters)} {'votes' if len(voters) == 1 else 'vote'} on it."
    return " Nobody may vote on it: everyone wrote one of the words in question (V1)."


def describe(g: Game, events: Sequence[ev.Event]) -> list[str]:
    """Sentences for ``events``; ``g`` is the state after them (for names, cards, words)."""
    out: list[str] = []
    for e in events:
        line = _sentence(g, e)
        if line:
            out.append(line)
    return out


def _sentence(g: Game, e: ev.Event) -> str | None:
    name = g.name
    match e:
        case ev.GameStarted(players=players, variant=variant):
            rules = "Dark Magic" if variant == "dark-magic" else "standard"
            return f"The game begins: {len(players)} players, {rules} rules."
        case ev.RoundStarted(round=n, conjurer=c):
            return f"Round {n} of {len(g.setup.players)}: {name(c)} is the conjurer."
        case ev.PhaseStarted(phase="choose", turn=t) if t is not None:
            return f"{name(t)} is choosing a category."
        case ev.PhaseStarted(phase="dark-commit", turn=t) if t is not None:
            return f"{name(t)} is secretly writing the summoning word."
        case ev.PhaseStarted(phase="spell", turn=t) if t is not None:
            return f"{name(t)}'s turn to write a spell word."
        case ev.PhaseStarted(phase="mark", turn=t) if t is not None:
            return f"{name(t)} is placing the summoning crystals."
        case ev.PhaseStarted(phase="commit"):
            return "Everyone summoning: write your summoning word and lock it in."
        case ev.PhaseStarted(phase="reveal"):
            return "The summon is closed: revealing the words."
        case ev.PhaseStarted(phase="review"):
            return "Review the words: challenge one, propose two as the same, or say done."
        case ev.CardChosen(seat=s, card=c):
            card = g.setup.cards[c]
            return f"{name(s)} chose the category {card.text!r} ({counted(card.stars, 'star')})."
        case ev.SpellWritten(seat=s, word=w):
            return f"{name(s)} wrote the spell word {w!r}."
        case ev.TurnPassed(seat=s, reason=why):
            return f"{name(s)} wrote no spell word ({why})."
        case ev.BoardsMarked(seat=s, boards=boards) if not boards:
            return f"{name(s)} placed no crystals."  # "... on the boards of nobody", it said
        case ev.BoardsMarked(seat=s, boards=boards):
            if len(boards) == 1:  # ("on the boards of Bob", it said of one board)
                return f"{name(s)} placed a crystal on {g.name(boards[0])}'s board."
            return f"{name(s)} placed crystals on the boards of {_names(g, boards)}."
        case ev.Committed(seat=s, replaced=True):
            return f"{name(s)} changed their locked-in word."
        case ev.Committed(seat=s):
            return f"{name(s)} has locked in."
        case ev.Revealed(seat=s):
            return f"{name(s)} has revealed."  # the word stays secret until all are published
        case ev.SummonsPublished(round=rnd, words=words, unrevealed=unrevealed):
            shown = ", ".join(f"{name(s)} {w!r}" for s, w in sorted(words.items()))
            line = f"All words are revealed: {shown or 'none'}."
            if unrevealed:
                line += f" Never revealed: {_names(g, unrevealed)}."
            # Whose summon closed on them with no word (seen: the others were not told).
            r = g.round
            none = (
                [s for s in g.summoners() if s not in words and s not in unrevealed]
                if (r is not None and r.number == rnd)
                else []
            )
            if none:
                line += f" No word from {_names(g, none)}."
            return line
        # Proposals are numbered from 1 for people (the wire and the log count from 0).
        case ev.ProposalMade(proposal=p, by=by, kind="challenge", seats=seats, rule=rule):
            word = _word(g, seats[0])
            text = RULE_TEXT.get(rule or "", rule or "")
            # A ruling on a word is one on every board that holds it (seen: "Bob challenges Ada's
            # 'paper'" also cost Cleo and Basil their 'paper', which the line did not say).
            r = g.round
            also = (
                sorted(concerned_seats(g, r, seats) - {seats[0]})
                if r is not None and r.published is not None
                else []
            )
            owners = names_list([name(s) + "'s" for s in also])
            theirs = f" (and {owners})" if also else ""
            return (
                f"Proposal {p + 1}: {name(by)} challenges {name(seats[0])}'s {word!r}{theirs}: "
                f"it {text}.{_who_votes(g, e)}"
            )
        case ev.ProposalMade(proposal=p, by=by, seats=seats):
            # Whose words: two boards may hold the same word (seen: 'steel' twice).
            a, b = (f"{name(s)}'s {_word(g, s)!r}" for s in seats)
            return (
                f"Proposal {p + 1}: {name(by)} proposes that {a} and {b} are the same "
                f"thing.{_who_votes(g, e)}"
            )
        case ev.VoteCast(seat=s, proposal=p, yes=yes, reason=why):
            r = g.round
            if yes and r is not None and p < len(r.proposals) and r.proposals[p].by == s:
                return f"{name(s)} votes yes on proposal {p + 1} ({OWN_VOTE})."
            because = f": {why!r}" if why else ""
            return f"{name(s)} votes {'yes' if yes else 'no'} on proposal {p + 1}{because}."
        case ev.ProposalSettled(proposal=p, carried=carried, yes=y, no=n):
            return f"Proposal {p + 1} {'carried' if carried else 'was rejected'} ({y} yes, {n} no)."
        case ev.PlayerDone(seat=s):
            return f"{name(s)} is done reviewing."
        case ev.ReviewExtended(proposal=p):
            limit = g.setup.limits.review
            more = VOTE_TIME if limit is None else min(VOTE_TIME, limit)
            return (
                f"Proposal {p + 1} came as the review's time ran out: the clock gives its "
                f"voters {more:.0f} s to vote."
            )
        case ev.RoundScored(round=n, case=case, points=points):
            pts = ", ".join(f"{name(s)} {signed(p)}" for s, p in sorted(points.items()) if p)
            return f"Round {n} scored: {CASE_TEXT.get(case, case)}." + (f" {pts}." if pts else "")
        case ev.RoundVoided(round=n, reason=why):
            return f"Round {n} is void: {why}."
        case ev.PlayerSkipped(seat=s, by=by):
            who = name(by) if by is not None else "The table"
            return f"{who} skipped {name(s)} for this round."
        case ev.PlayerKicked(seat=s, by=by):
            return f"{name(by)} removed {name(s)} from the game."
        case ev.HostChanged(seat=s, reason=why):
            return f"{name(s)} is now the host ({why})."
        case ev.GamePaused(by=by):
            return f"{name(by)} paused the game."
        case ev.GameResumed(by=by):
            return f"{name(by)} resumed the game."
        case ev.GameEnded(winners=winners, totals=totals):
            best = totals.get(winners[0], 0) if winners else 0
            won = "wins" if len(winners) == 1 else "win"
            return f"The game is over: {_names(g, winners)} {won} with {best} points."
        case ev.GameAbandoned(idle_since=since, at=at, totals=totals):
            return (
                f"The game was abandoned: nobody was connected for {duration(at - since)}. "
                f"Final standings: {standings(g.name, totals)}. Nobody wins an abandoned game."
            )
    return None


def _word(g: Game, seat: int) -> str:
    r = g.round
    if r is None or r.published is None:
        return "?"
    return r.published.get(seat, "?")
