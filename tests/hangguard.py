"""A blocking call that must not hang: a test of it fails after a while instead of waiting on."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def no_longer_than(seconds: int, what: str) -> Iterator[None]:
    """Raise TimeoutError in the main thread if the block runs longer than ``seconds`` (a read
    blocked in the kernel is interrupted: SIGALRM)."""

    def hung(signum: int, frame: object) -> None:
        raise TimeoutError(f"{what} did not return within {seconds} s")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
