"""Durable appends off the event loop, many logs per thread hand-off ("group commit" across rooms).

Why: every room appends to its own log and fsyncs it after each action. Writing on the event loop
and handing each fsync to a worker with ``trio.to_thread.run_sync`` cost a syscall, a thread
hand-off, a capacity limiter and a wake-up per append: with 300 rooms that was a fifth of the event
loop's time (``bench/load.py``, README). Here the appends requested while earlier ones are in
flight are queued, and a worker from Trio's thread cache (``trio.lowlevel.start_thread_soon``)
takes all of them as one batch, wakes all their waiters with one call back into Trio, and goes on
with the next batch, if any has queued, without waiting for Trio. Up to ``MAX_FLUSHERS`` workers
drain at once, so a slow disk can still overlap batches.

A batch writes each job and makes it durable. Four or more logs of one filesystem where
``server.fssync`` allows it are written, then share one ``syncfs(2)``; every other log is one
``pwritev2(RWF_DSYNC)`` (one system call; a write and an fsync where the kernel lacks it). A
``syncfs`` that was slow (the filesystem had much else to write) or refused sends that device back
to fsync for the rest of the run. If a ``syncfs`` fails, each log of its group is fsync'd on its
own: a log's lost data is reported by its own fsync (``syncfs`` does not consume a file's error
report), so the error reaches the appends it concerns.

Each append's failure is reported to that append alone, as :class:`AppendFailed` naming the step
(see ``LogWriter``: a failed write or fsync breaks that log for good; it is never retried).
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import threading
import time
from typing import Literal

import outcome
import trio
from trio.lowlevel import Abort, RunVar, Task

from conjure.server import fssync

_LOG = logging.getLogger(__name__)

#: Workers draining appends at once.
MAX_FLUSHERS = 2
#: The fewest logs of one device in a batch that share one ``syncfs`` instead of fsyncs each.
SYNCFS_MIN_LOGS = 4
#: A ``syncfs`` slower than this (seconds) means the filesystem is busy: fsync on it from then on.
SYNCFS_SLOW = 0.05

#: (fd, bytes to append, the device from ``fssync.shared_sync_device`` or None, the waiting task)
_Job = tuple[int, bytes, int | None, Task]


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


#: ``pwritev2``'s per-write O_DSYNC (Linux 4.7 on); None where Python or the OS lacks it.
RWF_DSYNC: int | None = getattr(os, "RWF_DSYNC", None)
#: How a kernel (or a seccomp filter) refuses a flag it does not have.
_REFUSALS = frozenset({errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS, errno.EPERM})
#: Whether ``RWF_DSYNC`` writes work here: None until the first one has been tried.
_dsync_works: bool | None = None


def write_durable(fd: int, buf: bytes) -> bool:
    """Write every byte of ``buf`` with ``RWF_DSYNC``: each write returns only once its data,
    and the file size that makes it readable, are on stable storage, as ``fdatasync`` does (the
    timestamps that ``fsync`` adds are not what a log's recovery reads). One system call, where
    a write and an fsync are two, each one handing the interpreter's lock back and forth with the
    event loop's thread. False (nothing written) where ``RWF_DSYNC`` is not to be had.

    Whether it is to be had is learnt once, from the first write: a refusal then counts only if
    the file did not grow (a sync that failed after the bytes landed is a failed append, never a
    reason to write them again). After one success every error is the append's failure.
    """
    global _dsync_works
    if RWF_DSYNC is None or _dsync_works is False:
        return False
    probing = _dsync_works is None
    try:
        size = os.fstat(fd).st_size if probing else 0
    except OSError as exc:
        raise AppendFailed("write", exc) from exc
    view = memoryview(buf)
    while view:
        try:
            # Offset -1: the file's own offset, which O_APPEND keeps at its end.
            n = os.pwritev(fd, [view], -1, RWF_DSYNC)
        except OSError as exc:
            if probing and exc.errno in _REFUSALS and len(view) == len(buf):
                try:
                    untouched = os.fstat(fd).st_size == size
                except OSError:
                    untouched = False
                if untouched:
                    _dsync_works = False
                    return False
            raise AppendFailed("write", exc) from exc
        view = view[n:]
    _dsync_works = True
    return True


def _fsync(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError as exc:
        raise AppendFailed("fsync", exc) from exc


def durable_appends(
    work: list[tuple[int, bytes, int | None]], fsync_only: set[int] | None = None
) -> list[outcome.Outcome]:
    """Write each ``(fd, data, device)`` and make it durable; one outcome per job (blocking).

    Jobs of a device with at least ``SYNCFS_MIN_LOGS`` of them are written, then share one
    ``syncfs``; every other job is one durable write (``write_durable``), or where that is not
    to be had a write and an ``fsync`` (as is every job of a device whose ``syncfs`` failed).
    Devices in ``fsync_only`` never use ``syncfs``; a device whose ``syncfs`` was slow or refused
    is added to it.
    """
    fsync_only = set() if fsync_only is None else fsync_only
    by_device: dict[int | None, list[int]] = {}
    for i, (_fd, _data, device) in enumerate(work):
        by_device.setdefault(device, []).append(i)
    shared = {
        device
        for device, jobs in by_device.items()
        if device is not None and device not in fsync_only and len(jobs) >= SYNCFS_MIN_LOGS
    }
    results: dict[int, outcome.Outcome] = {}
    synced: set[int] = set()
    for device, jobs in by_device.items():
        if device in shared:
            continue
        for i in jobs:  # too few to share a syncfs: one durable write each, where the OS has it
            fd, data, _device = work[i]
            try:
                if write_durable(fd, data):
                    results[i] = outcome.Value(None)
                    synced.add(i)
            except AppendFailed as exc:
                results[i] = outcome.Error(exc)
    for i, (fd, data, _device) in enumerate(work):
        if i not in results:
            results[i] = outcome.capture(_write, fd, data)
    for device, jobs in by_device.items():
        written = [i for i in jobs if i not in synced and isinstance(results[i], outcome.Value)]
        if not written:
            continue
        if (
            device is not None
            and device in shared
            and _syncfs(work[written[0]][0], device, fsync_only)
        ):
            continue
        for i in written:
            results[i] = outcome.capture(_fsync, work[i][0])
    return [results[i] for i in range(len(work))]


def _syncfs(fd: int, device: int, fsync_only: set[int]) -> bool:
    """One ``syncfs``; True if it succeeded. Slow or refused: ``device`` goes to ``fsync_only``."""
    if fssync.syncfs is None:
        return False
    started = time.monotonic()
    if fssync.syncfs(fd) == 0:
        if time.monotonic() - started > SYNCFS_SLOW:
            fsync_only.add(device)
        return True
    if ctypes.get_errno() in (errno.ENOSYS, errno.EPERM, errno.EINVAL):
        fsync_only.add(device)  # not allowed here (a seccomp filter, an odd filesystem)
    return False


class GroupSync:
    """The durable-append service of one Trio run (get it with :func:`group_sync`).

    Its workers drain the queue: a worker takes every append waiting, makes them durable, hands
    the outcomes back to Trio and, without waiting for Trio to run, takes whatever has arrived
    since. Why: under load the event loop is busy, and a worker that had to wait for it to start
    the next batch sat idle while appends queued behind it (500 paced rooms: appends waited
    ~7 ms at the median for writes of ~0.5 ms; docs/PERFORMANCE.md).
    """

    def __init__(self, token: trio.lowlevel.TrioToken) -> None:
        self._token = token
        #: Guards ``_pending`` and ``_flushers``, which Trio's thread and the workers share.
        self._lock = threading.Lock()
        self._pending: list[_Job] = []
        self._flushers = 0  #: workers draining now
        #: Devices whose ``syncfs`` was slow or refused: their logs are fsync'd one by one.
        self.fsync_only: set[int] = set()

    # No KeyboardInterrupt between queueing the job and waiting for it: a job whose task is not
    # waiting, or a worker counted that never starts, would break the run or hang every append.
    @trio.lowlevel.enable_ki_protection
    async def append(self, fd: int, data: bytes, device: int | None = None) -> None:
        """Write ``data`` to ``fd`` and make it durable in a worker; raises its ``AppendFailed``.

        ``device``: from ``fssync.shared_sync_device``, appends to files of one device may share
        a ``syncfs`` (None: always ``fsync``). Not cancellable: once a write is issued its fate
        must be known. The caller keeps one append per fd in flight (``LogWriter`` holds a
        lock), so a file's appends stay in order.
        """
        with self._lock:
            self._pending.append((fd, data, device, trio.lowlevel.current_task()))
            start = self._flushers < MAX_FLUSHERS
            if start:
                self._flushers += 1
        if start:
            self._start()
        # Rescheduled by ``_wake`` with this job's outcome (its error is raised here).
        await trio.lowlevel.wait_task_rescheduled(_not_abortable)

    def _start(self) -> None:
        try:
            trio.lowlevel.start_thread_soon(self._drain, _after_drain)
        except Exception as exc:  # e.g. RuntimeError("can't start new thread")
            with self._lock:
                self._flushers -= 1
                # With another worker still draining, it takes them; with none, they fail.
                jobs, self._pending = ([], self._pending) if self._flushers else (self._pending, [])
            # Woken once their tasks are waiting (the caller of ``append`` is not yet): a lost
            # batch would leave rooms waiting for ever.
            self._token.run_sync_soon(self._wake, jobs, [_worker_failed(exc) for _job in jobs])

    def _drain(self) -> None:
        """A worker: make every waiting append durable, batch after batch, until none waits."""
        while True:
            with self._lock:
                jobs, self._pending = self._pending, []
                if not jobs:
                    self._flushers -= 1
                    return
            work = [(fd, data, device) for fd, data, device, _task in jobs]
            try:
                results = durable_appends(work, self.fsync_only)
            except Exception as exc:  # a bug, not an I/O error (those are each job's outcome)
                results = [_worker_failed(exc) for _job in jobs]
            self._token.run_sync_soon(self._wake, jobs, results)

    def _wake(self, jobs: list[_Job], results: list[outcome.Outcome]) -> None:
        """Back in Trio: wake every task of a batch with its own job's outcome."""
        for (_fd, _data, _device, task), result in zip(jobs, results, strict=True):
            trio.lowlevel.reschedule(task, result)


def _after_drain(result: outcome.Outcome) -> None:
    """A worker's end, in its thread: it returns once nothing waits, or stops when the run is
    over (``run_sync_soon`` refused: nobody is left to wake). Anything else is a bug that left
    a batch's tasks unwoken: said loudly, never dropped."""
    if isinstance(result, outcome.Error) and not isinstance(result.error, trio.RunFinishedError):
        _LOG.critical("a durable-append worker failed", exc_info=result.error)


def _worker_failed(exc: Exception) -> outcome.Outcome:
    error = OSError(errno.EAGAIN, f"no worker could run the append: {exc!r}")
    return outcome.Error(AppendFailed("worker", error))


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
