"""Garbage-collector settings for a long-running server process.

Why: with CPython's default thresholds a loaded server (300 rooms, 1,800 connections, ~360,000
tracked objects) ran a full collection every ~2.5 s that stopped every room for ~290 ms, and young
collections took a fifth of its CPU (measured with ``bench/load.py``; figures in the README). The
objects alive once the server is up (modules, word data, resumed games) never become garbage, so
they are moved out of the collector's sight with ``gc.freeze``; the thresholds are raised so that
collections run less often. Reference counting still frees almost everything at once: the
collector only has to find cycles, which are rare here.

And a young collection every ``YOUNG_EVERY`` seconds (:func:`collect_young`). Why: CPython counts
the young generation as objects made minus objects freed, *whichever generation they were in*, so
while old objects die as fast as new ones are made (connections' waits turning over) the count
hardly grows, the young list does, and the one collection that comes at last walks all of it: at
500 paced rooms young collections of 110-150 ms set the p99. Collecting on a clock bounds the list
by time: over three pairs of 40 s runs the paced 500 p99 went 57-84 -> 30-33 ms and the longest
young collection 112-148 -> 42-45 ms, for about 2% more CPU per action (docs/PERFORMANCE.md).

And a full collection every ``FULL_EVERY`` seconds on the same clock. Why: CPython's own
collections, the only ones that looked at older objects, no longer came (the clock keeps the
count low), so a cycle that outlived a young collection and died later was never freed: every
connection that lived a while was such a cycle once it closed (fixed where it was made), and
any other would grow the server for as long as it runs. Why so seldom: the server makes no
cyclic garbage under load (none in a minute of collections at 300 paced rooms), and there a
full collection stops every room for ~210 ms (a middle one every 2 s, 33-45 ms).
"""

from __future__ import annotations

import gc

import trio

#: Objects allocated (net) before a young collection; CPython's default is 700.
YOUNG = 50_000
#: Young collections before a middle one, middle ones before a full one (defaults 10, 10).
MIDDLE = 20
OLD = 100
#: Seconds between the young collections made on a clock.
YOUNG_EVERY = 0.1
#: Seconds between the full collections made on the same clock.
FULL_EVERY = 600.0
#: TLS connections closed before a middle collection at the next tick (``note_tls_closed``).
TLS_CLOSED_COLLECT = 500

#: TLS connections closed since the last middle or full collection.
_tls_closed = 0


def note_tls_closed() -> None:
    """A TLS connection closed: its ``trio.SSLStream`` is a reference cycle of trio's own (the
    stream holds its handshake's bound method), that only the collector frees. Young on the
    clock, it was an older object by the time it closed, left to the full collection every
    ten minutes: a client opening and closing TLS connections (14 KB each) grew the server by
    hundreds of megabytes, and that collection then stopped every room for 600 ms (found by
    review). Every ``TLS_CLOSED_COLLECT`` of them, a middle collection frees them sooner."""
    global _tls_closed
    _tls_closed += 1


def tune_for_serving() -> None:
    """Call once the server is listening: freeze what exists, collect less often from now on."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, MIDDLE, OLD)


async def collect_young(every: float = YOUNG_EVERY, full_every: float = FULL_EVERY) -> None:
    """Collect the young generation every ``every`` seconds, and every generation every
    ``full_every`` seconds, for ever (run it in a nursery); the middle one too once
    ``TLS_CLOSED_COLLECT`` TLS connections have closed since it last ran."""
    global _tls_closed
    full_due = trio.current_time() + full_every
    while True:
        await trio.sleep(every)
        if trio.current_time() >= full_due:
            gc.collect()
            _tls_closed = 0
            full_due = trio.current_time() + full_every
        elif _tls_closed >= TLS_CLOSED_COLLECT:
            gc.collect(1)
            _tls_closed = 0
        else:
            gc.collect(0)
