"""What one viewer may see: the only place a ``View`` is made, so secrecy is checked in one spot.

Never in a view: any token (only hashes exist on the server, and they are not shown either), any
commitment or nonce, and any summoning word before the round's ``summons_published`` (until then a
board only says ``committed`` / ``revealed``). Spell words are public by the rules.

Every seat sees the public view (a spectator's) with only ``you`` set: :func:`for_viewer` is the one
per-viewer step. :func:`update_frames` encodes a room's broadcast from that same public view, once
per broadcast instead of once per viewer, reusing the encoded parts that rarely change (settings,
dealt cards, past results, word checks) through a per-room :class:`ViewCache`. Why: building and
encoding a full ~5 KB view for each of six viewers was a third of the server's time per action.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from conjure.protocol.messages import (
    NO_EARLIER,
    CardView,
    Earlier,
    PlayerView,
    ProposalView,
    Receipt,
    ResultView,
    RoomSettings,
    Update,
    View,
    encoder,
)
from conjure.protocol.words import normalize
from conjure.server.lobby import Lobby
from conjure.server.results import card_view
from conjure.server.rules.sheet import current_standing
from conjure.server.rules.state import Game
from conjure.server.wsframes import text_frame


@dataclass(frozen=True)
class Table:
    """What the room knows beyond the game state."""

    code: str
    settings: RoomSettings
    lobby: Lobby | None  # None once the game has started
    connected: frozenset[str]  # public ids of seats with a live connection
    computers: frozenset[str] = frozenset()  # public ids of seats a computer player took
    spectators: int = 0
    results: Sequence[ResultView] = ()  # only ever appended to (the cache relies on it)
    now: float | None = None  # when the view is sent: clients count down from ``remaining``


@dataclass
class ViewCache:
    """A room's memo of view parts that change far less often than once per action.

    Each part is kept with the key it was made from: immutable values, or the id of an object
    that stays alive (a room never drops a past result), so a stale part can never be served.
    """

    _parts: dict[str, tuple[object, Any]] = field(default_factory=dict)

    def get(self, part: str, key: object, make: Callable[[], Any]) -> Any:
        """``part`` as ``make()`` gives it for ``key``, made again only when the key changes."""
        hit = self._parts.get(part)
        if hit is None or hit[0] != key:
            hit = (key, make())
            self._parts[part] = hit
        return hit[1]


def build_view(table: Table, game: Game | None, viewer: int | None) -> View:
    """The view of seat ``viewer`` (None: a spectator, who gets the public view)."""
    return for_viewer(public_view(table, game), viewer)


def public_view(
    table: Table, game: Game | None, cache: ViewCache | None = None, *, lists: bool = True
) -> View:
    """What a spectator sees; every seat's view is this with ``you`` set (``for_viewer``).

    ``lists=False`` leaves out the dealt cards and past results, for a caller that has them
    encoded already (``update_frames``).
    """
    if game is None:
        return _lobby_view(table)
    return _game_view(table, game, _checks(game, cache), lists)


def for_viewer(public: View, viewer: int | None) -> View:
    """``public`` as seat ``viewer`` sees it: the only difference is who ``you`` is."""
    if viewer is None:
        return public
    players = [
        msgspec.structs.replace(p, you=True) if p.seat == viewer else p for p in public.players
    ]
    return msgspec.structs.replace(public, you=viewer, players=players)


def update_frames(
    table: Table,
    game: Game | None,
    viewers: Iterable[int | None],
    receipt: Receipt | None,
    feed: list[str],
    cache: ViewCache,
    earlier: Earlier = NO_EARLIER,
) -> dict[int | None, bytes]:
    """The text frame of the ``Update`` each viewer gets, a whole WebSocket frame: exactly
    ``encode(Update(view=build_view(table, game, v), receipt=receipt, feed=feed))``, built faster.

    The public view is built once; its big parts are encoded once (``msgspec.Raw`` is spliced in
    verbatim by the encoder), and only the players list, where one board says ``you``, is put
    together per viewer from per-player pieces.
    """
    public = public_view(table, game, cache, lists=False)
    players = [encoder.encode(p) for p in public.players]
    shared: dict[str, Any] = {
        **lasting_parts(table, game, public.settings, cache, "raw", _raw),
        "proposals": _raw(public.proposals),
    }
    frames: dict[int | None, bytes] = {}
    for v in viewers:
        parts = list(players)
        for i, p in enumerate(public.players):
            if p.seat == v:
                parts[i] = encoder.encode(msgspec.structs.replace(p, you=True))
        view = msgspec.structs.replace(
            public, you=v, players=msgspec.Raw(b"[" + b",".join(parts) + b"]"), **shared
        )
        lines, chat = earlier
        update = Update(view=view, receipt=receipt, feed=feed, earlier=lines, earlier_chat=chat)
        frames[v] = text_frame(encoder.encode(update))
    return frames


def lasting_parts(
    table: Table,
    game: Game | None,
    settings: RoomSettings,
    cache: ViewCache,
    form: str,
    make: Callable[[Any], Any],
) -> dict[str, Any]:
    """The view's parts that change far less often than once per action (the settings, the
    dealt cards, the past results), each as ``make`` turns it into ``form``, made again only
    when what it is made from changes. They are what ``public_view`` puts in those fields;
    ``lists=False`` leaves the two lists out of it for a caller that takes them from here."""
    parts: dict[str, Any] = {
        "settings": cache.get(f"settings {form}", settings, lambda: make(settings))
    }
    if game is not None:
        g, results = game, table.results
        used = (g.setup.cards, frozenset(g.used))  # g.cards: an immutable tuple
        parts["cards"] = cache.get(f"cards {form}", used, lambda: make(_card_views(g)))
        # Results are only appended, never changed: their count and the last one say all.
        grown = (len(results), id(results[-1]) if results else 0)
        parts["results"] = cache.get(f"results {form}", grown, lambda: make(list(results)))
    return parts


def _raw(obj: object) -> msgspec.Raw:
    return msgspec.Raw(encoder.encode(obj))


def _remaining(g: Game, now: float | None) -> float | None:
    """Seconds left at send time, so clients need not trust their own clock against ours."""
    if g.paused:
        return g.paused_remaining
    if g.deadline is None or now is None:
        return None
    return max(0.0, round(g.deadline - now, 3))


def _checks(g: Game, cache: ViewCache | None) -> tuple[dict, dict, list[list[int]]]:
    """(invalid, flags, the seats counted as one) of the published words; nothing before
    publication.

    They depend only on what the key holds (the round's words and spells, who takes part, and
    the carried rulings), so a room recomputes them only when one of those changes.
    """
    r = g.round
    if r is None or r.published is None or r.card is None:
        return {}, {}, []
    if cache is None:
        return current_standing(g)
    key = (
        g.setup.game_id,
        r.number,
        tuple(sorted(r.published.items())),
        tuple(sorted(r.spells.items())),
        frozenset(r.unrevealed),
        frozenset(r.skipped),
        frozenset(g.kicked),
        tuple((p.id, p.kind, p.seats, p.rule, p.carried) for p in r.proposals),
    )
    return cache.get("checks", key, lambda: current_standing(g))


def _lobby_view(table: Table) -> View:
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
            computer=s.id in table.computers,
        )
        for i, s in enumerate(lobby.seats)
    ]
    return View(
        room=table.code,
        phase="lobby",
        host=host,
        settings=lobby.settings,
        players=players,
        spectators=table.spectators,
    )


def _card_views(g: Game) -> list[CardView]:
    return [c for c in (card_view(g, i) for i in range(len(g.setup.cards))) if c is not None]


def _game_view(
    table: Table, g: Game, checks: tuple[dict, dict, list[list[int]]], lists: bool = True
) -> View:
    r = g.round
    published = r.published if r is not None else None
    invalid, flags, as_one = checks
    players = []
    for p in g.setup.players:
        s = p.seat
        pv = PlayerView(
            seat=s,
            id=p.id,
            name=p.name,
            colour=p.colour,
            connected=p.id in table.connected,
            host=s == g.host,
            computer=p.id in table.computers,
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
    return View(
        room=table.code,
        game_id=g.setup.game_id,
        phase=g.phase,
        host=g.host,
        settings=table.settings,
        players=players,
        cards=_card_views(g) if lists else [],
        round=r.number if r is not None else 0,
        rounds=len(g.setup.players),
        conjurer=r.conjurer if r is not None else None,
        card=card_view(g, r.card) if r is not None else None,
        turn=g.turn,
        deadline=g.deadline,
        remaining=_remaining(g, table.now),
        paused=g.paused,
        proposals=proposals,
        counted_as_one=[list(c) for c in as_one] if g.phase == "review" else [],
        results=list(table.results) if lists else [],
        winners=list(g.winners),
        spectators=table.spectators,
        abandoned=g.abandoned,
    )
