"""Durable appends off the event loop, many logs per thread hand-off ("group commit" across rooms).

Why: every room appends to its own log and fsyncs it after each action. Writing on the event loop
and handing each fsync to a worker with ``trio.to_thread.run_sync`` cost a syscall, a thread
hand-off, a capacity limiter and a wake-up per append: with 300 rooms that was a fifth of the event
loop's time (``bench/load.py``, README). Here the appends requested while earlier ones are in
flight are queued and done as one batch by one worker from Trio's thread cache
(``trio.lowlevel.start_thread_soon``), which wakes all its waiters with one call back into Trio.
Up to ``MAX_FLUSHERS`` batches run at once, so a slow disk can still overlap batches.

A batch writes each job, then makes them durable. Fsyncing file by file costs a disk flush (and a
trip back through the GIL) per file, so a batch of 16 logs took ~2 ms here; when two or more logs of
a batch live on one filesystem, a single ``syncfs(2)`` makes all of them durable at once (~0.3 ms,
whatever the batch size). It also flushes anything else pending on that filesystem, which is why a
batch of one log (a LAN party's usual case) still uses ``fsync``. ``syncfs`` is used only on Linux
5.8 or later, where it reports writeback errors; if it fails, each log of the group is fsync'd on
its own, so the error is reported to the appends it concerns and to no others.

Each append's failure is reported to that append alone, as :class:`AppendFailed` naming the step
(see ``LogWriter``: a failed write or fsync breaks that log for good; it is never retried).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from collections.abc import Callable
from typing import Literal

import outcome
import trio
from trio.lowlevel import Abort, RunVar, Task

#: Worker batches in flight at once.
MAX_FLUSHERS = 2

#: (fd, bytes to append, the file's device or None if unknown, the waiting task)
_Job = tuple[int, bytes, int | None, Task]


def _find_syncfs() -> Callable[[int], int] | None:
    """libc's ``syncfs`` where it reports writeback errors (Linux 5.8+), else None."""
    if platform.system() != "Linux":
        return None
    try:
        major, minor = (int(x) for x in platform.release().split(".")[:2])
    except ValueError:
        return None
    if (major, minor) < (5, 8):
        return None
    try:
        func = ctypes.CDLL(None, use_errno=True).syncfs  # ctypes releases the GIL during the call
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int]
    func.restype = ctypes.c_int
    return func


#: ``syncfs(fd) -> 0 | -1`` (errno set), or None where it is not used.
syncfs: Callable[[int], int] | None = _find_syncfs()


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


def _write(fd: int, data: bytes) -> None:
    try:
        write_all(fd, data)
    except OSError as exc:
        raise AppendFailed("write", exc) from exc


def _fsync(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError as exc:
        raise AppendFailed("fsync", exc) from exc


def durable_appends(work: list[tuple[int, bytes, int | None]]) -> list[outcome.Outcome]:
    """Write each ``(fd, data, device)`` and make it durable; one outcome per job (blocking).

    Jobs whose write succeeded are synced: one ``syncfs`` for each device with two or more of
    them, ``fsync`` for the rest (and for every job of a device whose ``syncfs`` failed).
    """
    results = [outcome.capture(_write, fd, data) for fd, data, _device in work]
    groups: dict[int | None, list[int]] = {}
    for i, (_fd, _data, device) in enumerate(work):
        if isinstance(results[i], outcome.Value):
            groups.setdefault(device, []).append(i)
    for device, jobs in groups.items():
        shared = syncfs is not None and device is not None and len(jobs) > 1
        if shared and syncfs(work[jobs[0]][0]) == 0:
            continue
        for i in jobs:
            results[i] = outcome.capture(_fsync, work[i][0])
    return results


class GroupSync:
    """The durable-append service of one Trio run (get it with :func:`group_sync`)."""

    def __init__(self, token: trio.lowlevel.TrioToken) -> None:
        self._token = token
        self._pending: list[_Job] = []
        self._flushers = 0

    async def append(self, fd: int, data: bytes, device: int | None = None) -> None:
        """Write ``data`` to ``fd`` and make it durable in a worker; raises its ``AppendFailed``.

        ``device`` is the file's ``st_dev``: appends to files of one device may share a
        ``syncfs`` (None: always ``fsync``). Not cancellable: once a write is issued its fate
        must be known. The caller keeps one append per fd in flight (``LogWriter`` holds a
        lock), so a file's appends stay in order.
        """
        self._pending.append((fd, data, device, trio.lowlevel.current_task()))
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
        for (_fd, _data, _device, task), result in zip(jobs, results, strict=True):
            trio.lowlevel.reschedule(task, result)
        if self._pending and self._flushers < MAX_FLUSHERS:
            self._start()


def _worker_failed(exc: Exception) -> outcome.Outcome:
    error = OSError(errno.EAGAIN, f"no worker could run the append: {exc!r}")
    return outcome.Error(AppendFailed("worker", error))


def _flush_fn(jobs: list[_Job]) -> Callable[[], list[outcome.Outcome]]:
    work = [(fd, data, device) for fd, data, device, _task in jobs]
    return lambda: durable_appends(work)


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
