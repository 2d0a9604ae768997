"""One task pings every quiet connection of the server, not one task per connection.

A client that has sent no frame for its share of ``heartbeat_interval`` (0.75 to 1.25 of it,
drawn per connection, so that connections opened together are not pinged together) is sent a
Ping; one that then sends nothing for ``heartbeat_timeout`` is dropped as gone (its seat shows
away). Any frame counts as an answer, its Pong or anything else: the connection stamps every
frame a client sends (``WebSocket.heard_at``), and a talking client is never pinged at all.

Why one task: each connection used to keep a task that slept, woke, pinged, and waited for its
Pong under a timeout of its own: with 900 idle connections the server used 8% of a core on this
project's 2-core machine, and 3% with this sweep (docs/PERFORMANCE.md). A sweep is a few
comparisons per connection, and a ping is one write when the socket is free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

import trio

from conjure.server.connection import CLOSE_GOING_AWAY, Connection

#: Sweeps per interval (or per timeout, if that is shorter): how late a ping or a drop can be.
SWEEPS = 10
#: The shortest time between two sweeps (seconds), however small the test's intervals.
MIN_PERIOD = 0.01
#: What a client that answered no ping is told as it is dropped.
NO_ANSWER = "no answer to ping"

Verdict = Literal["ping", "drop", "answered"] | None


def verdict(
    heard_at: float, pinged_at: float | None, now: float, interval: float, answer_within: float
) -> Verdict:
    """What to do with one connection now (pure): its last frame was at ``heard_at``, and it
    was pinged at ``pinged_at`` (None: not since it was last heard). ``interval`` is the
    connection's own share of the heartbeat interval; ``answer_within`` the heartbeat timeout."""
    if pinged_at is not None:
        if heard_at >= pinged_at:
            return "answered"
        return "drop" if now - pinged_at >= answer_within else None
    return "ping" if now - heard_at >= interval else None


def sweep(
    connections: Iterable[Connection], now: float, interval: float, answer_within: float
) -> int:
    """Ping or drop every connection that is due; returns how many were pinged."""
    pinged = 0
    for conn in connections:
        if conn.closing is not None:
            continue
        share = interval * conn.beat
        v = verdict(conn.heard_at, conn.pinged_at, now, share, answer_within)
        if v == "answered":  # and perhaps quiet again since
            conn.pinged_at = None
            v = verdict(conn.heard_at, None, now, share, answer_within)
        if v == "ping":
            # Counted as pinged even when nothing could be sent (a full queue): a client
            # that neither reads nor sends is then dropped like one that does not answer.
            conn.pinged_at = now
            pinged += conn.ping()
        elif v == "drop":
            conn.abort(CLOSE_GOING_AWAY, NO_ANSWER)
    return pinged


def period(interval: float, answer_within: float) -> float:
    """Seconds between two sweeps."""
    return max(MIN_PERIOD, min(interval, answer_within) / SWEEPS)


async def keep(
    connections: Callable[[], Iterable[Connection]], interval: float, answer_within: float
) -> None:
    """Sweep ``connections()`` (a fresh list each time) for ever."""
    every = period(interval, answer_within)
    while True:
        await trio.sleep(every)
        sweep(connections(), trio.current_time(), interval, answer_within)
