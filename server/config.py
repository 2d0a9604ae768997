"""The server's knobs in one frozen place, with the defaults a LAN party wants.

Tests shrink the time-related ones (grace periods, heartbeats, ``limit_scale``) to stay fast.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


def _say(line: str) -> None:
    print(line, flush=True)


@dataclass(frozen=True)
class ServerConfig:
    replays: Path
    host: str = "127.0.0.1"
    port: int = 0
    ssl_context: ssl.SSLContext | None = None
    #: Seconds a disconnected host keeps the role before it passes to the next connected seat.
    host_grace: float = 30.0
    #: Ping every ``heartbeat_interval`` s; no pong within ``heartbeat_timeout`` s drops the peer.
    heartbeat_interval: float = 10.0
    heartbeat_timeout: float = 10.0
    #: Per-connection rate limit: messages per second on average, and the burst allowed.
    rate: float = 20.0
    burst: float = 40.0
    #: Frames queued for one client before it counts as not reading and is dropped.
    outbound_queue: int = 64
    #: Multiplies every phase limit when a game starts (tests use small values for fast clocks).
    limit_scale: float = 1.0
    #: A room nobody is connected to closes after this long (games in progress never close).
    idle_close: float = 600.0
    max_rooms: int = 1000
    #: Seconds connections get to say goodbye at shutdown.
    shutdown_grace: float = 2.0
    clock: Callable[[], float] = time.time
    say: Callable[[str], None] = _say
