"""fsync off the event loop, many files per thread hand-off ("group commit" across rooms).

Why: every room fsyncs its own log after each action. Handing each fsync to a worker with
``trio.to_thread.run_sync`` cost a thread hand-off, a capacity limiter and a wake-up per append:
with 300 rooms that was a fifth of the event loop's time (``bench/load.py``, README). Here the
fsyncs requested while earlier ones are in flight are queued and done as one batch by one worker
(Trio's thread cache, ``trio.lowlevel.start_thread_soon``), which wakes all its waiters with one
call back into Trio. Up to ``MAX_FLUSHERS`` batches run at once, so a slow disk can still overlap
fsyncs of different files.

An fsync that fails reports its ``OSError`` to the one append that asked for it (see
``LogWriter``: a failed fsync breaks that log for good; it is never retried).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import outcome
import trio
from trio.lowlevel import Abort, RunVar, Task

#: Worker batches in flight at once.
MAX_FLUSHERS = 2

_Job = tuple[int, Task]


class GroupSync:
    """The fsync service of one Trio run (get it with :func:`group_sync`)."""

    def __init__(self, token: trio.lowlevel.TrioToken) -> None:
        self._token = token
        self._pending: list[_Job] = []
        self._flushers = 0

    async def fsync(self, fd: int) -> None:
        """``os.fsync(fd)`` in a worker thread; raises its ``OSError``. Not cancellable: once a
        write is issued its fate must be known."""
        self._pending.append((fd, trio.lowlevel.current_task()))
        if self._flushers < MAX_FLUSHERS:
            self._start()
        # Rescheduled by ``_done`` with the outcome of this fd's fsync (its error is raised here).
        await trio.lowlevel.wait_task_rescheduled(_not_abortable)

    def _start(self) -> None:
        jobs, self._pending = self._pending, []
        self._flushers += 1
        trio.lowlevel.start_thread_soon(
            _flush_fn(jobs), lambda res: self._token.run_sync_soon(self._done, jobs, res)
        )

    def _done(self, jobs: list[_Job], res: outcome.Outcome) -> None:
        """Back in Trio: wake every task of the batch with its own fsync's outcome."""
        self._flushers -= 1
        results: list[outcome.Outcome] = res.unwrap()  # the flush function itself never raises
        for (_fd, task), result in zip(jobs, results, strict=True):
            trio.lowlevel.reschedule(task, result)
        if self._pending and self._flushers < MAX_FLUSHERS:
            self._start()


def _flush_fn(jobs: list[_Job]) -> Callable[[], list[outcome.Outcome]]:
    fds = [fd for fd, _task in jobs]

    def flush() -> list[outcome.Outcome]:
        return [outcome.capture(os.fsync, fd) for fd in fds]

    return flush


def _not_abortable(_raise_cancel: object) -> Abort:
    return Abort.FAILED


_SERVICE: RunVar[GroupSync] = RunVar("conjure_group_sync")


def group_sync() -> GroupSync:
    """This Trio run's fsync service (made on first use)."""
    try:
        return _SERVICE.get()
    except LookupError:
        service = GroupSync(trio.lowlevel.current_trio_token())
        _SERVICE.set(service)
        return service
