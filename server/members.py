"""Who is in a room: each seat's live connection, the spectators, who is away since when, and
the seats by id (the roster).

The room (:mod:`server.room`) decides what joining, leaving and acting mean and runs the
command pipeline; this module only keeps the books. It holds no lobby, game or log: a
:class:`Roster` is read from whichever of the lobby or the game the room has now.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conjure.protocol.errors import Refusal
from conjure.server.lobby import Lobby
from conjure.server.roomio import Viewer
from conjure.server.rules.state import Game

if TYPE_CHECKING:
    from conjure.server.room import Room


@dataclass(frozen=True, slots=True)
class Roster:
    """The seats in order, by player id, with their names, the host and who was removed."""

    ids: tuple[str, ...]
    names: tuple[str, ...]
    host: str | None
    removed: frozenset[str] = frozenset()

    @classmethod
    def of_lobby(cls, lobby: Lobby) -> Roster:
        return cls(
            ids=tuple(s.id for s in lobby.seats),
            names=tuple(s.name for s in lobby.seats),
            host=lobby.host_id,
        )

    @classmethod
    def of_game(cls, game: Game) -> Roster:
        players = game.setup.players
        return cls(
            ids=tuple(p.id for p in players),
            names=tuple(p.name for p in players),
            host=None if game.over else players[game.host].id,
            removed=frozenset(players[s].id for s in game.kicked),
        )

    def seat(self, player_id: str) -> int | None:
        try:
            return self.ids.index(player_id)
        except ValueError:
            return None

    def name(self, player_id: str) -> str:
        i = self.seat(player_id)
        return self.names[i] if i is not None else "?"

    def successors(self, connected: Container[str]) -> list[str]:
        """Who could take over as host: connected seats after the host's, in seat order."""
        ids = [pid for pid in self.ids if pid not in self.removed]
        if self.host in ids:
            i = ids.index(self.host)
            ids = ids[i + 1 :] + ids[:i]
        return [pid for pid in ids if pid in connected and pid != self.host]


class Members:
    """The room's connections: one per seat at most (a newer one replaces it), and spectators."""

    def __init__(self) -> None:
        self.conns: dict[str, Viewer] = {}  # player id -> its live connection
        self.watchers: set[Viewer] = set()
        #: player id -> when their connection went (everyone is away in a room loaded from a log)
        self.away_since: dict[str, float] = {}
        #: Player ids whose seat was last taken by a computer player (``Viewer.computer``): the
        #: mark stays while the seat is away, and goes when a person's connection takes it. Not
        #: logged (the client's word): a restarted server learns it again as programs return.
        self.computers: frozenset[str] = frozenset()

    def seat(self, conn: Viewer, player_id: str, room: Room) -> None:
        """Bind ``conn`` to a seat of ``room``; an older connection for the seat is closed."""
        old = self.conns.get(player_id)
        if old is not None and old is not conn:
            self.unbind(old)
            old.close("replaced by a new connection")
        self.conns[player_id] = conn
        self.watchers.discard(conn)  # (a spectator of the lobby who took a seat that came free)
        if conn.computer != (player_id in self.computers):
            self.computers ^= {player_id}
        conn.room = room
        conn.player_id = player_id
        conn.spectator = False
        self.away_since.pop(player_id, None)

    def watch(self, conn: Viewer, room: Room) -> None:
        self.watchers.add(conn)
        conn.room = room
        conn.spectator = True
        conn.player_id = None

    def release(self, conn: Viewer, now: float) -> str | None:
        """``conn`` is gone from the room: the player id whose seat it held (now away since
        ``now``), or None for a spectator or a connection the seat no longer used."""
        gone = None
        if conn.spectator:
            self.watchers.discard(conn)
        elif conn.player_id is not None and self.conns.get(conn.player_id) is conn:
            gone = conn.player_id
            del self.conns[gone]
            self.away_since[gone] = now
        self.unbind(conn)
        return gone

    def remove(self, player_id: str, *, seat_stays: bool = False) -> Viewer | None:
        """The seat itself is gone (left or removed from a lobby), or its player is out of the
        game (``seat_stays``: the board still shows the seat, and whose it was): its connection,
        unbound."""
        self.away_since.pop(player_id, None)
        if not seat_stays:
            self.computers -= {player_id}
        conn = self.conns.pop(player_id, None)
        if conn is not None:
            self.unbind(conn)
        return conn

    @staticmethod
    def unbind(conn: Viewer) -> None:
        conn.room = None
        conn.player_id = None
        conn.spectator = False

    @staticmethod
    def acting(conn: Viewer, room: Room) -> str:
        """The player id acting through ``conn`` in ``room``, or a Refusal."""
        if conn.room is not room:
            raise Refusal("not_in_room", "Join a room first.")
        if conn.spectator or conn.player_id is None:
            raise Refusal("spectator", "Spectators watch; they cannot act in the game.")
        return conn.player_id

    def everyone(self) -> Iterator[Viewer]:
        yield from self.conns.values()
        yield from self.watchers
