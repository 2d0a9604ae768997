"""What one viewer may see: the only place a ``View`` is made, so secrecy is checked in one spot.

Never in a view: any token (only hashes exist on the server, and they are not shown either), any
commitment or nonce, and any summoning word before the round's ``summons_published`` (until then a
board only says ``committed`` / ``revealed``). Spell words are public by the rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from protocol.messages import PlayerView, ProposalView, ResultView, RoomSettings, View
from protocol.words import normalize
from server.lobby import Lobby
from server.results import card_view
from server.rules.sheet import current_checks
from server.rules.state import Game


@dataclass(frozen=True)
class Table:
    """What the room knows beyond the game state."""

    code: str
    settings: RoomSettings
    lobby: Lobby | None  # None once the game has started
    connected: frozenset[str]  # public ids of seats with a live connection
    spectators: int = 0
    results: Sequence[ResultView] = ()
    now: float | None = None  # when the view is sent: clients count down from ``remaining``


def build_view(table: Table, game: Game | None, viewer: int | None) -> View:
    """The view of seat ``viewer`` (None: a spectator, who gets the public view)."""
    return build_views(table, game, (viewer,))[viewer]


def build_views(
    table: Table, game: Game | None, viewers: Iterable[int | None]
) -> dict[int | None, View]:
    """``build_view`` for several viewers at once, checking the words only once."""
    if game is None:
        return {v: _lobby_view(table, v) for v in viewers}
    checks = _checks(game)
    return {v: _game_view(table, game, v, checks) for v in viewers}


def _remaining(g: Game, now: float | None) -> float | None:
    """Seconds left at send time, so clients need not trust their own clock against ours."""
    if g.paused:
        return g.paused_remaining
    if g.deadline is None or now is None:
        return None
    return max(0.0, round(g.deadline - now, 3))


def _checks(g: Game) -> tuple[dict, dict]:
    """(invalid, flags) of the published words; nothing before publication."""
    r = g.round
    if r is None or r.published is None or r.card is None:
        return {}, {}
    return current_checks(g)


def _lobby_view(table: Table, viewer: int | None) -> View:
    lobby = table.lobby
    assert lobby is not None
    host = lobby.host
    players = [
        PlayerView(
            seat=i,
            id=s.id,
            name=s.name,
            colour=s.colour,
            connected=s.id in table.connected,
            host=i == host,
            you=i == viewer,
        )
        for i, s in enumerate(lobby.seats)
    ]
    return View(
        room=table.code,
        phase="lobby",
        you=viewer,
        host=host,
        settings=lobby.settings,
        players=players,
        spectators=table.spectators,
    )


def _game_view(table: Table, g: Game, viewer: int | None, checks: tuple[dict, dict]) -> View:
    r = g.round
    published = r.published if r is not None else None
    invalid, flags = checks
    players = []
    for p in g.players:
        s = p.seat
        pv = PlayerView(
            seat=s,
            id=p.id,
            name=p.name,
            colour=p.colour,
            connected=p.id in table.connected,
            host=s == g.host,
            you=s == viewer,
            kicked=s in g.kicked,
            score=g.totals.get(s, 0),
        )
        if r is not None:
            pv.skipped = s in r.skipped
            pv.spell = r.spells.get(s)
            pv.passed = s in r.passed
            pv.marked = r.marked is not None and s in r.marked
            pv.committed = s in r.commits
            pv.revealed = s in r.reveals
            pv.done = s in r.done
            if published is not None:  # words exist for viewers only from here on
                word = published.get(s)
                pv.summon = word
                pv.compared = None if word is None else normalize(word)
                if s in invalid:
                    pv.valid = False
                    pv.invalid_reason = invalid[s].reason
                elif word is not None:
                    pv.valid = True
                pv.flags = list(flags.get(s, ()))
        players.append(pv)
    proposals = []
    if r is not None and published is not None:
        for pr in r.proposals:
            proposals.append(
                ProposalView(
                    id=pr.id,
                    kind=pr.kind,
                    by=pr.by,
                    seats=list(pr.seats),
                    words=[published.get(s, "") for s in pr.seats],
                    rule=pr.rule,
                    voters=sorted(pr.voters),
                    votes=dict(pr.votes),
                    reasons=dict(pr.reasons),
                    carried=pr.carried,
                )
            )
    cards = [card_view(g, i) for i in range(len(g.cards))]
    return View(
        room=table.code,
        game_id=g.game_id,
        phase=g.phase,
        you=viewer,
        host=g.host,
        settings=table.settings,
        players=players,
        cards=[c for c in cards if c is not None],
        round=r.number if r is not None else 0,
        rounds=len(g.players),
        conjurer=r.conjurer if r is not None else None,
        card=card_view(g, r.card) if r is not None else None,
        turn=g.turn,
        deadline=g.deadline,
        remaining=_remaining(g, table.now),
        paused=g.paused,
        proposals=proposals,
        results=list(table.results),
        winners=list(g.winners),
        spectators=table.spectators,
    )
