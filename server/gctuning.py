"""Garbage-collector settings for a long-running server process.

Why: with CPython's default thresholds a loaded server (300 rooms, 1,800 connections, ~360,000
tracked objects) ran a full collection every ~2.5 s that stopped every room for ~290 ms, and young
collections took a fifth of its CPU (measured with ``bench/load.py``; figures in the README). The
objects alive once the server is up (modules, word data, resumed games) never become garbage, so
they are moved out of the collector's sight with ``gc.freeze``; the thresholds are raised so that
collections run less often. Reference counting still frees almost everything at once: the
collector only has to find cycles, which are rare here.
"""

from __future__ import annotations

import gc

#: Objects allocated (net) before a young collection; CPython's default is 700.
YOUNG = 50_000
#: Young collections before a middle one, middle ones before a full one (defaults 10, 10).
MIDDLE = 20
OLD = 100


def tune_for_serving() -> None:
    """Call once the server is listening: freeze what exists, collect less often from now on."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, MIDDLE, OLD)
