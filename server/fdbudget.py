"""Open files: raise the soft limit as far as the hard limit allows, and fit the caps inside it.

Every connection holds a socket and every started game its log, so the connection and room caps are
what keep the process below its open-file limit (at the limit ``accept`` fails and so does opening a
new game's log). A share of the budget is kept back for everything else (the listener, the event
loop's own descriptors, worker threads, recovery reading a log, TLS files).
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

#: Descriptors kept back for the server's own use, at most (a quarter of a small limit).
RESERVE = 128


@dataclass(frozen=True)
class Budget:
    limit: int  #: the soft RLIMIT_NOFILE in force after raising it
    raised_from: int | None  #: the soft limit before, if it was raised
    connections: int
    rooms: int
    clipped: bool  #: the configured caps did not fit and were lowered


def raise_nofile() -> tuple[int, int | None]:
    """Raise the soft open-file limit to the hard limit; returns (limit now, limit before or None)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return soft, None
        return target, soft
    return soft, None


def fit(limit: int, connections: int, rooms: int, *, raised_from: int | None = None) -> Budget:
    """The caps to use under ``limit`` descriptors: the configured ones, or lower ones that fit.

    Handshakes in progress may exceed the connection cap by a small margin (see server.gate), which
    the reserve covers. When the configured caps do not fit, rooms get at most a quarter of what
    is left and connections the rest.
    """
    reserve = min(RESERVE, max(16, limit // 4))
    room_for = max(2, limit - reserve)
    if connections + rooms <= room_for:
        return Budget(limit, raised_from, connections, rooms, False)
    # A game needs three players or more: a quarter of the budget is plenty for logs.
    rooms = max(1, min(rooms, room_for // 4))
    return Budget(limit, raised_from, max(1, min(connections, room_for - rooms)), rooms, True)


def plan(connections: int, rooms: int) -> Budget:
    limit, before = raise_nofile()
    return fit(limit, connections, rooms, raised_from=before)
