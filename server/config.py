"""The server's knobs in one frozen place, with the defaults a LAN party wants.

Tests shrink the time-related ones (grace periods, heartbeats, ``limit_scale``) to stay fast, and the
benchmarks raise the limits. Every limit here has a ``conjure serve`` option and a key of the same
name in a ``--config`` TOML file (``server.settings``); docs/SERVING.md lists them with their defaults.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def _say(line: str) -> None:
    print(line, flush=True)


@dataclass(frozen=True)
class ServerConfig:
    replays: Path
    host: str = "127.0.0.1"
    port: int = 0
    ssl_context: ssl.SSLContext | None = None
    #: The key receipts are signed with at each round's start (server.receiptkey); None: unsigned.
    receipt_key: Ed25519PrivateKey | None = None
    #: Seconds a disconnected host keeps the role before it passes to the next connected seat.
    host_grace: float = 30.0
    #: Ping every ``heartbeat_interval`` s; no pong within ``heartbeat_timeout`` s drops the peer.
    heartbeat_interval: float = 10.0
    heartbeat_timeout: float = 10.0
    #: Per-connection rate limit: messages per second on average, and the burst allowed.
    rate: float = 20.0
    burst: float = 40.0
    #: Per-connection frame budget: WebSocket frames of any kind (pings and message fragments
    #: too) per second on average, and the burst allowed; over it, reading waits
    #: (server.websocket).
    frame_rate: float = 60.0
    frame_burst: float = 120.0
    #: Game actions one seat may have logged in one round (the longest game the rules allow
    #: takes at most about 100 of one seat): bounds how much one member can add to a game's log.
    max_actions_per_round: int = 500
    #: Of those, the ones that change what is logged already (a vote cast again, a summoning
    #: word replaced, a pause or resume): the rules allow them without end.
    max_changes_per_round: int = 20
    #: Frames queued for one client before it counts as not reading and is dropped.
    outbound_queue: int = 64
    #: Bytes queued for one client before it counts as not reading and is dropped: what the
    #: socket's own buffer cannot take of about ten whole views of the biggest table.
    outbound_bytes: int = 512 << 10
    #: Multiplies every phase limit when a game starts (tests use small values for fast clocks).
    limit_scale: float = 1.0

    # -- limits per source address (a home router's whole party shares one address) --
    #: Open connections from one address (handshakes in progress included).
    max_connections_per_address: int = 32
    #: New connections one address may open per second on average, and in a burst; four times
    #: that is closed at once, before any handshake.
    connection_rate: float = 10.0
    connection_burst: float = 40.0
    #: Messages per second summed over one address's connections, and the burst allowed.
    address_rate: float = 60.0
    address_burst: float = 120.0
    #: Wrong room codes and wrong passwords per second from one address, and the burst allowed:
    #: a mistyped code is nothing, but a room's code and password must not be guessed online
    #: (an address at the message rate covered every code in an hour: found by review).
    guess_rate: float = 0.2
    guess_burst: float = 10.0
    #: Whole views one address may ask for again (``resync``, or resuming the seat a connection
    #: holds) per second, and the burst allowed: each is the whole table, tens of kilobytes with
    #: a big deck, for a request of a few bytes (found by review: 2.9 MB/s out per address).
    view_rate: float = 2.0
    view_burst: float = 10.0
    #: Rooms one address may create in any 60 seconds.
    rooms_per_minute: int = 10
    #: Live rooms created by one address at once.
    max_rooms_per_address: int = 8

    # -- server-wide limits (also kept within the open-file budget, see server.fdbudget) --
    max_connections: int = 2000
    max_rooms: int = 500
    #: Most spectators a room admits; a host may set a lower number in the room settings.
    max_spectators: int = 50
    #: Chat lines one seat may say per second, and in a burst: each goes to every member of the
    #: room, so without it seats of many addresses, each within its message rate, made the
    #: server send fifty-odd frames a line a thousand times a second (found by review). Per
    #: seat, not per room: one member must not take the room's chat from the others.
    chat_rate: float = 2.0
    chat_burst: float = 10.0

    # -- how long things may sit idle --
    #: Seconds a new connection has to say hello.
    hello_timeout: float = 10.0
    #: Seconds a greeted connection may stay without creating, joining or watching a room.
    roomless_timeout: float = 300.0
    #: A lobby nobody is connected to closes after this long.
    lobby_idle_close: float = 90.0
    #: A room whose game is over closes this long after its last viewer went.
    idle_close: float = 300.0
    #: A started game with no connected player for this long ends as abandoned.
    abandon_after: float = 1800.0
    #: Seconds between tries to write a game log again after an append failed (disk full).
    log_retry: float = 5.0
    #: Megabytes the disk holding ``replays`` must keep free for a new game to start. Why: each
    #: log is bounded, their sum is not: from one address, games started and left to time
    #: out wrote about 250 MB a day (found by review); a full disk holds every game under way.
    min_free_mb: int = 256
    #: Spectators are sent at most one update per this many seconds (changes in between coalesce).
    spectator_interval: float = 0.25
    #: Seconds the seats' clients have to add their share to the shuffle (protocol.deal); a seat
    #: that sends none in time is dealt without (tests scale it down with ``limit_scale``).
    deal_timeout: float = 5.0
    #: Seconds TCP+WebSocket handshakes may take before the socket is closed.
    handshake_timeout: float = 10.0

    #: Seconds connections get to say goodbye at shutdown.
    shutdown_grace: float = 2.0
    #: The wall clock: what the game's deadlines and its log's times are told in.
    clock: Callable[[], float] = time.time
    #: What measures how long the room's own waits have lasted (a host away, nobody connected, a
    #: deal's shares); None: ``time.monotonic`` beside the wall clock, else ``clock`` itself (a
    #: test's clock is its own measure). See ``elapsed_clock``.
    steady_clock: Callable[[], float] | None = None
    say: Callable[[str], None] = _say

    def elapsed_clock(self) -> Callable[[], float]:
        """The clock a room follows ``clock``'s steps by (``Room._follow_clock_steps``)."""
        if self.steady_clock is not None:
            return self.steady_clock
        return time.monotonic if self.clock is time.time else self.clock


#: The fields ``--config FILE`` and the command line may set, with their types.
TUNABLE: dict[str, type] = {
    "host": str,
    "port": int,
    "host_grace": float,
    "rate": float,
    "burst": float,
    "frame_rate": float,
    "frame_burst": float,
    "max_actions_per_round": int,
    "max_changes_per_round": int,
    "max_connections_per_address": int,
    "connection_rate": float,
    "connection_burst": float,
    "address_rate": float,
    "address_burst": float,
    "guess_rate": float,
    "guess_burst": float,
    "view_rate": float,
    "view_burst": float,
    "rooms_per_minute": int,
    "max_rooms_per_address": int,
    "max_connections": int,
    "max_rooms": int,
    "max_spectators": int,
    "chat_rate": float,
    "chat_burst": float,
    "hello_timeout": float,
    "roomless_timeout": float,
    "lobby_idle_close": float,
    "idle_close": float,
    "abandon_after": float,
    "min_free_mb": int,
}
