"""Durable appends off the event loop, many logs per thread hand-off ("group commit" across rooms).

Why: every room appends to its own log and fsyncs it after each action. Writing on the event loop
and handing each fsync to a worker with ``trio.to_thread.run_sync`` cost a syscall, a thread
hand-off, a capacity limiter and a wake-up per append: with 300 rooms that was a fifth of the event
loop's time (``bench/load.py``, README). Here the appends requested while earlier ones are in
flight are queued and done as one batch (write, then fsync, file by file) by one worker from
Trio's thread cache (``trio.lowlevel.start_thread_soon``), which wakes all its waiters with one
call back into Trio. Up to ``MAX_FLUSHERS`` batches run at once, so a slow disk can still overlap
fsyncs of different files.

Each append's failure is reported to that append alone, as :class:`AppendFailed` naming the step
(see ``LogWriter``: a failed write or fsync breaks that log for good; it is never retried).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from typing import Literal

import outcome
import trio
from trio.lowlevel import Abort, RunVar, Task

#: Worker batches in flight at once.
MAX_FLUSHERS = 2

_Job = tuple[int, bytes, Task]


class AppendFailed(Exception):
    """``step`` failed with the ``OSError`` in ``error``: "write" or "fsync", or "worker" when no
    worker could run the append at all (nothing was written then)."""

    def __init__(self, step: Literal["write", "fsync", "worker"], error: OSError) -> None:
        super().__init__(f"{step} failed: {error}")
        self.step = step
        self.error = error


def write_all(fd: int, buf: bytes) -> None:
    """``os.write`` until every byte is written (a short write is legal for a regular file)."""
    view = memoryview(buf)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def durable_append(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd`` and fsync it (blocking; what the worker does per job)."""
    try:
        write_all(fd, data)
    except OSError as exc:
        raise AppendFailed("write", exc) from exc
    try:
        os.fsync(fd)
    except OSError as exc:
        raise AppendFailed("fsync", exc) from exc


class GroupSync:
    """The durable-append service of one Trio run (get it with :func:`group_sync`)."""

    def __init__(self, token: trio.lowlevel.TrioToken) -> None:
        self._token = token
        self._pending: list[_Job] = []
        self._flushers = 0

    async def append(self, fd: int, data: bytes) -> None:
        """``durable_append(fd, data)`` in a worker thread; raises its ``AppendFailed``.

        Not cancellable: once a write is issued its fate must be known. The caller keeps one
        append per fd in flight (``LogWriter`` holds a lock), so a file's appends stay in order.
        """
        self._pending.append((fd, data, trio.lowlevel.current_task()))
        if self._flushers < MAX_FLUSHERS:
            self._start()
        # Rescheduled by ``_done`` with this job's outcome (its error is raised here).
        await trio.lowlevel.wait_task_rescheduled(_not_abortable)

    def _start(self) -> None:
        jobs, self._pending = self._pending, []
        self._flushers += 1
        try:
            trio.lowlevel.start_thread_soon(
                _flush_fn(jobs), lambda res: self._token.run_sync_soon(self._done, jobs, res)
            )
        except Exception as exc:  # e.g. RuntimeError("can't start new thread")
            # Fail this batch's appends, once their tasks are waiting (the caller of ``append``
            # is not yet): a lost batch would leave rooms waiting for ever.
            self._token.run_sync_soon(self._done, jobs, outcome.Error(exc))

    def _done(self, jobs: list[_Job], res: outcome.Outcome) -> None:
        """Back in Trio: wake every task of the batch with its own job's outcome."""
        self._flushers -= 1
        try:
            results: list[outcome.Outcome] = res.unwrap()
        except Exception as exc:  # the worker never ran, or the flush itself failed
            results = [_worker_failed(exc) for _job in jobs]
        for (_fd, _data, task), result in zip(jobs, results, strict=True):
            trio.lowlevel.reschedule(task, result)
        if self._pending and self._flushers < MAX_FLUSHERS:
            self._start()


def _worker_failed(exc: Exception) -> outcome.Outcome:
    error = OSError(errno.EAGAIN, f"no worker could run the append: {exc!r}")
    return outcome.Error(AppendFailed("worker", error))


def _flush_fn(jobs: list[_Job]) -> Callable[[], list[outcome.Outcome]]:
    work = [(fd, data) for fd, data, _task in jobs]

    def flush() -> list[outcome.Outcome]:
        return [outcome.capture(durable_append, fd, data) for fd, data in work]

    return flush


def _not_abortable(_raise_cancel: object) -> Abort:
    return Abort.FAILED


_SERVICE: RunVar[GroupSync] = RunVar("conjure_group_sync")


def group_sync() -> GroupSync:
    """This Trio run's durable-append service (made on first use)."""
    try:
        return _SERVICE.get()
    except LookupError:
        service = GroupSync(trio.lowlevel.current_trio_token())
        _SERVICE.set(service)
        return service
