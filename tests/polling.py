"""Waiting for state that announces no change: the one polling loop of the tests.

Where a change is announced (a ``trio.Event``, a message, a closed connection), wait for that
instead. What is left here is state nobody signals: the server's rooms and connections as a test
reads them, a list a handler appends to, a bot's status. The caller bounds the wait with its own
cancel scope (``with trio.fail_after(5): await poll_until(...)``), so waits compose and a lost
change fails the test instead of hanging it.
"""

from __future__ import annotations

from collections.abc import Callable

import trio


async def poll_until(check: Callable[[], object], interval: float = 0.01) -> None:
    """Return once ``check()`` is truthy, looking again every ``interval`` seconds."""
    while not check():  # noqa: ASYNC110 - nothing announces this change (see the docstring)
        await trio.sleep(interval)
