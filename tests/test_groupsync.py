"""Group commit: many logs' appends share worker hand-offs, and each gets its own outcome."""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import outcome
import pytest
import trio
import trio.testing

from conjure.server import fssync, groupsync
from conjure.server.groupsync import AppendFailed, group_sync
from conjure.server.logformat import read_log
from conjure.server.logstore import open_for_append


@pytest.fixture(autouse=True)
def write_then_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests here are of the write-then-sync path (what a kernel without ``RWF_DSYNC`` gets,
    and every log that shares a ``syncfs``), unless a test turns durable writes back on
    (``durable_writes``)."""
    monkeypatch.setattr(groupsync, "RWF_DSYNC", None)
    monkeypatch.setattr(groupsync, "_dsync_works", None)


needs_dsync = pytest.mark.skipif(
    not hasattr(os, "RWF_DSYNC"), reason="pwritev2(RWF_DSYNC) is Linux's"
)


def durable_writes(
    monkeypatch: pytest.MonkeyPatch, fail: Callable[[int, int], OSError | None] = lambda fd, n: None
) -> dict[str, list]:
    """Turn ``RWF_DSYNC`` writes on, counting every write, pwritev and fsync (each really done,
    unless ``fail(fd, pwritev call number)`` gives an error to raise instead)."""
    monkeypatch.setattr(groupsync, "RWF_DSYNC", os.RWF_DSYNC)
    calls: dict[str, list] = {"pwritev": [], "write": [], "fsync": []}
    real_pwritev, real_write, real_fsync = os.pwritev, os.write, os.fsync

    def pwritev(fd: int, buffers: list, offset: int, flags: int = 0) -> int:
        calls["pwritev"].append((fd, flags))
        error = fail(fd, len(calls["pwritev"]))
        if error is not None:
            raise error
        return real_pwritev(fd, buffers, offset, flags)

    def write(fd: int, data: bytes) -> int:
        calls["write"].append(fd)
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        calls["fsync"].append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "pwritev", pwritev)
    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "fsync", fsync)
    return calls


def open_logs(tmp_path: Path, n: int) -> list[int]:
    return [
        os.open(tmp_path / f"log{i}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        for i in range(n)
    ]


def failing_fsync(monkeypatch: pytest.MonkeyPatch, bad: int) -> list[int]:
    """Make fsync fail with EIO for ``bad`` (the others really fsync); lists every call."""
    calls: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        calls.append(fd)
        if fd == bad:
            raise OSError(errno.EIO, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return calls


async def append_all(fds: list[int], device: Callable[[int], int | None]) -> dict[int, str]:
    """Append to every log at once; each one's outcome: "ok" or "<step>: <errno>"."""
    outcomes: dict[int, str] = {}

    async def append(fd: int) -> None:
        try:
            await group_sync().append(fd, b"x\n", device(fd))
        except AppendFailed as exc:
            outcomes[fd] = f"{exc.step}: {exc.error.errno}"
        else:
            outcomes[fd] = "ok"

    async with trio.open_nursery() as nursery:
        for fd in fds:
            nursery.start_soon(append, fd)
    return outcomes


def held_workers(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], threading.Event]:
    """Workers that start (each start counted) but wait for the event before they drain."""
    starts: list[int] = []
    go = threading.Event()
    real_start = trio.lowlevel.start_thread_soon

    def held_start(fn, deliver, name=None):  # type: ignore[no-untyped-def]
        starts.append(1)

        def held() -> object:
            go.wait(10)
            return fn()

        return real_start(held, deliver, name)

    monkeypatch.setattr(trio.lowlevel, "start_thread_soon", held_start)
    return starts, go


async def all_at_once(go: threading.Event, appends: list[Callable[[], Awaitable[object]]]) -> None:
    """Run every append; let the workers go once all of them are queued."""

    async def release() -> None:
        await trio.testing.wait_all_tasks_blocked()
        go.set()

    async with trio.open_nursery() as nursery:
        for append in appends:
            nursery.start_soon(append)
        nursery.start_soon(release)


async def test_appends_that_arrive_together_share_hand_offs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 50)
    synced: list[int] = []
    real_fsync = os.fsync
    starts, go = held_workers(monkeypatch)

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    batches: list[int] = []
    real_durable = groupsync.durable_appends

    def counting_durable(work, fsync_only=None):  # type: ignore[no-untyped-def]
        batches.append(len(work))
        return real_durable(work, fsync_only)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    monkeypatch.setattr(groupsync, "durable_appends", counting_durable)
    monkeypatch.setattr(groupsync, "RWF_DSYNC", None)  # every durable write is an fsync here
    await all_at_once(
        go,
        [
            functools.partial(group_sync().append, fd, f"record {i}\n".encode())
            for i, fd in enumerate(fds)
        ],
    )
    # Two workers start (MAX_FLUSHERS), whoever drains first takes all 50 as one batch.
    assert groupsync.MAX_FLUSHERS == 2
    assert len(starts) == 2
    assert batches == [50]
    assert sorted(synced) == sorted(fds)  # every append was fsync'd, once
    for i, fd in enumerate(fds):
        os.close(fd)
        assert (tmp_path / f"log{i}.jsonl").read_bytes() == f"record {i}\n".encode()


async def test_a_worker_goes_on_with_appends_that_queued_while_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The appends that arrive during a batch are the worker's next batch: no new worker is
    started for them, and no wait for Trio to start one."""
    fds = open_logs(tmp_path, 12)
    monkeypatch.setattr(groupsync, "MAX_FLUSHERS", 1)
    monkeypatch.setattr(groupsync, "RWF_DSYNC", None)
    starts: list[int] = []
    batches: list[int] = []
    writing, more_queued = threading.Event(), threading.Event()
    real_start, real_durable = trio.lowlevel.start_thread_soon, groupsync.durable_appends

    def counting_start(fn, deliver, name=None):  # type: ignore[no-untyped-def]
        starts.append(1)
        return real_start(fn, deliver, name)

    def slow_durable(work, fsync_only=None):  # type: ignore[no-untyped-def]
        batches.append(len(work))
        if len(batches) == 1:
            writing.set()
            more_queued.wait(10)  # the rest arrive while the first batch is being written
        return real_durable(work, fsync_only)

    monkeypatch.setattr(trio.lowlevel, "start_thread_soon", counting_start)
    monkeypatch.setattr(groupsync, "durable_appends", slow_durable)

    async def the_rest() -> None:
        await trio.to_thread.run_sync(writing.wait, 10)
        async with trio.open_nursery() as nursery:
            for fd in fds[1:]:
                nursery.start_soon(group_sync().append, fd, b"later\n")
            await trio.testing.wait_all_tasks_blocked()
            more_queued.set()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(group_sync().append, fds[0], b"first\n")
            nursery.start_soon(the_rest)
    assert starts == [1]  # (to_thread has its own threads, not counted here)
    assert batches == [1, 11]
    for fd in fds:
        os.close(fd)


async def test_a_worker_that_cannot_start_leaves_its_appends_to_one_that_is_draining(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No second thread to be had: the append queued meanwhile is neither failed nor lost,
    the worker already draining takes it."""
    fds = open_logs(tmp_path, 2)
    real_start, real_durable = trio.lowlevel.start_thread_soon, groupsync.durable_appends
    starts: list[int] = []
    batches: list[list[int]] = []
    writing, release = threading.Event(), threading.Event()

    def second_start_fails(fn, deliver, name=None):  # type: ignore[no-untyped-def]
        starts.append(1)
        if len(starts) == 2:
            raise RuntimeError("can't start new thread")
        return real_start(fn, deliver, name)

    def held_first_batch(work, fsync_only=None):  # type: ignore[no-untyped-def]
        batches.append([fd for fd, _data, _device in work])
        if len(batches) == 1:
            writing.set()
            release.wait(10)
        return real_durable(work, fsync_only)

    monkeypatch.setattr(trio.lowlevel, "start_thread_soon", second_start_fails)
    monkeypatch.setattr(groupsync, "durable_appends", held_first_batch)
    outcomes: dict[int, str] = {}

    async def append(fd: int) -> None:
        try:
            await group_sync().append(fd, b"x\n")
            outcomes[fd] = "ok"
        except AppendFailed as exc:
            outcomes[fd] = exc.step

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(append, fds[0])
            await trio.to_thread.run_sync(writing.wait, 10)
            nursery.start_soon(append, fds[1])
            await trio.testing.wait_all_tasks_blocked()
            release.set()
    assert len(starts) == 2
    assert outcomes == {fds[0]: "ok", fds[1]: "ok"}
    assert batches == [[fds[0]], [fds[1]]]
    for fd in fds:
        os.close(fd)


async def test_a_worker_whose_batch_raises_fails_that_batch_and_the_service_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 2)
    real_durable = groupsync.durable_appends
    calls: list[int] = []

    def first_batch_raises(work, fsync_only=None):  # type: ignore[no-untyped-def]
        calls.append(len(work))
        if len(calls) == 1:
            raise ValueError("a bug, not an I/O error")
        return real_durable(work, fsync_only)

    monkeypatch.setattr(groupsync, "durable_appends", first_batch_raises)
    with trio.fail_after(5):
        with pytest.raises(AppendFailed) as info:
            await group_sync().append(fds[0], b"lost\n")
        assert info.value.step == "worker"
        await group_sync().append(fds[1], b"kept\n")
    for fd in fds:
        os.close(fd)
    assert (tmp_path / "log1.jsonl").read_bytes() == b"kept\n"


async def test_a_failed_fsync_fails_only_its_own_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 6)
    bad = fds[3]
    failing_fsync(monkeypatch, bad)
    outcomes = await append_all(fds, lambda fd: None)
    assert outcomes == {fd: ("fsync: 5" if fd == bad else "ok") for fd in fds}
    for fd in fds:
        os.close(fd)


async def test_a_failed_write_is_reported_as_a_write_failure(tmp_path: Path) -> None:
    fd = os.open(tmp_path / "log.jsonl", os.O_RDONLY | os.O_CREAT, 0o644)  # not writable
    with pytest.raises(AppendFailed) as info:
        await group_sync().append(fd, b"x\n")
    assert info.value.step == "write" and info.value.error.errno == errno.EBADF
    os.close(fd)


async def test_an_append_cannot_be_cancelled_once_issued(tmp_path: Path) -> None:
    """Once bytes are handed to the worker their fate must be known: cancelling waits for it."""
    (fd,) = open_logs(tmp_path, 1)
    with trio.CancelScope() as scope:
        scope.cancel()
        await group_sync().append(fd, b"kept\n")
    os.close(fd)
    assert (tmp_path / "log0.jsonl").read_bytes() == b"kept\n"


async def test_no_worker_thread_fails_the_appends_and_the_service_recovers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of threads: the batch's appends fail with a clear error, none waits for ever, and the
    next append works once threads can start again."""
    fds = open_logs(tmp_path, 5)
    real_start = trio.lowlevel.start_thread_soon

    def no_threads(fn, deliver, name=None):  # type: ignore[no-untyped-def]
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(trio.lowlevel, "start_thread_soon", no_threads)
    failed: list[str] = []

    async def append(fd: int) -> None:
        with pytest.raises(AppendFailed) as info:
            await group_sync().append(fd, b"x\n")
        failed.append(info.value.step)

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            for fd in fds:
                nursery.start_soon(append, fd)
    assert failed == ["worker"] * 5
    monkeypatch.setattr(trio.lowlevel, "start_thread_soon", real_start)
    with trio.fail_after(5):
        await group_sync().append(fds[0], b"kept\n")
    for fd in fds:
        os.close(fd)
    assert (tmp_path / "log0.jsonl").read_bytes() == b"kept\n"


def counting(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """Count the fsync and syncfs calls the workers make (both still do their work)."""
    fsyncs: list[int] = []
    syncfss: list[int] = []
    real_fsync, real_syncfs = os.fsync, fssync.syncfs
    assert real_syncfs is not None

    def fsync(fd: int) -> None:
        fsyncs.append(fd)
        real_fsync(fd)

    def syncfs(fd: int) -> int:
        syncfss.append(fd)
        return real_syncfs(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(fssync, "syncfs", syncfs)
    return fsyncs, syncfss


needs_syncfs = pytest.mark.skipif(fssync.syncfs is None, reason="syncfs: Linux 5.17+ only")


@needs_syncfs
async def test_a_batch_of_logs_on_one_filesystem_shares_one_syncfs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 50)
    fsyncs, syncfss = counting(monkeypatch)
    _starts, go = held_workers(monkeypatch)
    await all_at_once(
        go,
        [
            functools.partial(
                group_sync().append, fd, f"record {i}\n".encode(), os.fstat(fd).st_dev
            )
            for i, fd in enumerate(fds)
        ],
    )
    # One worker takes all 50 as one batch: they share one syncfs.
    assert len(fsyncs) == 0 and len(syncfss) == 1
    for i, fd in enumerate(fds):
        os.close(fd)
        assert (tmp_path / f"log{i}.jsonl").read_bytes() == f"record {i}\n".encode()


@needs_syncfs
def test_only_four_or_more_logs_of_one_filesystem_share_a_syncfs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One batch as a worker runs it; devices are as the caller says (None: never syncfs)."""
    fds = open_logs(tmp_path, 10)
    fsyncs, syncfss = counting(monkeypatch)
    devices = [1, 2, 1, 2, 1, 2, 1, 3, None, None]  # 1: four logs; 2: three; 3: one; unknown
    work = [(fd, b"x\n", dev) for fd, dev in zip(fds, devices, strict=True)]
    results = groupsync.durable_appends(work)
    assert all(isinstance(r, outcome.Value) for r in results)
    assert syncfss == [fds[0]]  # device 1 only
    assert fsyncs == [fds[1], fds[3], fds[5], fds[7], fds[8], fds[9]]
    for fd in fds:
        os.close(fd)


@needs_syncfs
def test_a_log_whose_write_failed_is_left_out_of_the_syncfs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 4)
    read_only = os.open(tmp_path / "ro.jsonl", os.O_RDONLY | os.O_CREAT, 0o644)
    fsyncs, syncfss = counting(monkeypatch)
    work = [(read_only, b"x\n", 1)] + [(fd, b"x\n", 1) for fd in fds]
    results = groupsync.durable_appends(work)
    with pytest.raises(AppendFailed) as info:
        results[0].unwrap()
    assert info.value.step == "write"
    assert all(isinstance(r, outcome.Value) for r in results[1:])
    assert syncfss == [fds[0]] and fsyncs == []  # the syncfs went to a log that was written
    for fd in [read_only, *fds]:
        os.close(fd)


@needs_syncfs
def test_a_slow_or_refused_syncfs_sends_its_device_back_to_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 4)
    fsyncs, syncfss = counting(monkeypatch)
    work = [(fd, b"x\n", 7) for fd in fds]
    fsync_only: set[int] = set()
    monkeypatch.setattr(groupsync, "SYNCFS_SLOW", -1.0)  # every syncfs counts as slow
    groupsync.durable_appends(work, fsync_only)
    assert (len(syncfss), len(fsyncs), fsync_only) == (1, 0, {7})
    groupsync.durable_appends(work, fsync_only)  # the next batch: fsync, log by log
    assert (len(syncfss), len(fsyncs)) == (1, 4)

    def refused(fd: int) -> int:
        ctypes.set_errno(errno.EPERM)
        return -1

    monkeypatch.setattr(fssync, "syncfs", refused)
    fsync_only.clear()
    results = groupsync.durable_appends(work, fsync_only)
    assert all(isinstance(r, outcome.Value) for r in results)  # fsync'd after the refusal
    assert (len(fsyncs), fsync_only) == (8, {7})
    for fd in fds:
        os.close(fd)


@needs_syncfs
async def test_a_failed_syncfs_falls_back_to_fsync_so_only_the_damaged_log_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 8)
    bad = fds[5]
    fsyncs = failing_fsync(monkeypatch, bad)
    monkeypatch.setattr(fssync, "syncfs", lambda fd: -1)
    outcomes = await append_all(fds, lambda fd: os.fstat(fd).st_dev)
    assert outcomes == {fd: ("fsync: 5" if fd == bad else "ok") for fd in fds}
    assert sorted(fsyncs) == sorted(fds)  # every log, once: alone, or after the failed syncfs
    for fd in fds:
        os.close(fd)


@needs_syncfs
async def test_log_writers_tell_the_workers_their_filesystem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if fssync.shared_sync_device(os.stat(tmp_path).st_dev) is None:
        pytest.skip("the temporary directory is not on ext4 or xfs")
    writers = [open_for_append(tmp_path / f"game{i}.jsonl") for i in range(6)]
    fsyncs, syncfss = counting(monkeypatch)
    _starts, go = held_workers(monkeypatch)
    await all_at_once(
        go, [functools.partial(w.append, "note", {"i": i}, 1.0) for i, w in enumerate(writers)]
    )
    assert len(fsyncs) == 0 and len(syncfss) == 1  # six logs of one filesystem together
    for i, w in enumerate(writers):
        w.close()
        (record,) = read_log(tmp_path / f"game{i}.jsonl").records
        assert record.data == {"i": i}


@pytest.mark.parametrize(
    ("system", "release", "reports"),
    [
        ("Linux", "6.1.0-18-amd64", True),
        ("Linux", "5.17.0", True),
        ("Linux", "5.16.20", False),  # syncfs could hide a failed journal commit
        ("Linux", "5.15.90.1-microsoft-standard-WSL2", False),
        ("Linux", "6", False),
        ("Linux", "", False),
        ("Darwin", "23.1.0", False),
    ],
)
def test_syncfs_is_trusted_from_linux_5_17(system: str, release: str, reports: bool) -> None:
    assert fssync.kernel_reports_syncfs_errors(system, release) is reports


MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
40 27 8:17 / /media/usb rw,nosuid shared:7 - vfat /dev/sdb1 rw,fmask=0022
41 27 0:45 / /mnt/c rw,noatime - 9p drvfs rw
"""


def test_the_filesystem_type_is_read_from_mountinfo() -> None:
    assert fssync.filesystem_type(MOUNTINFO, os.makedev(254, 0)) == "ext4"
    assert fssync.filesystem_type(MOUNTINFO, os.makedev(8, 17)) == "vfat"  # optional fields
    assert fssync.filesystem_type(MOUNTINFO, os.makedev(0, 45)) == "9p"
    assert fssync.filesystem_type(MOUNTINFO, os.makedev(9, 9)) is None


# ---------------------------------------------------------------------------- durable writes


@needs_dsync
async def test_a_log_that_shares_no_syncfs_is_made_durable_by_one_system_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 3)
    calls = durable_writes(monkeypatch)
    assert await append_all(fds, lambda fd: None) == {fd: "ok" for fd in fds}
    assert sorted(calls["pwritev"]) == sorted((fd, os.RWF_DSYNC) for fd in fds)
    assert calls["write"] == [] and calls["fsync"] == []
    for i, fd in enumerate(fds):
        os.close(fd)
        assert (tmp_path / f"log{i}.jsonl").read_bytes() == b"x\n"


@needs_dsync
async def test_a_write_the_kernel_takes_in_part_is_finished_durably(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (fd,) = open_logs(tmp_path, 1)
    calls = durable_writes(monkeypatch)
    counted = os.pwritev  # durable_writes' own, which counts the call

    def one_byte(fd: int, buffers: list, offset: int, flags: int = 0) -> int:
        return counted(fd, [bytes(buffers[0][:1])], offset, flags)

    monkeypatch.setattr(os, "pwritev", one_byte)
    await group_sync().append(fd, b"abc\n")
    os.close(fd)
    assert (tmp_path / "log0.jsonl").read_bytes() == b"abc\n"
    assert calls["pwritev"] == [(fd, os.RWF_DSYNC)] * 4 and calls["fsync"] == []


@needs_dsync
async def test_a_failed_durable_write_fails_only_its_own_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 3)
    bad = fds[1]
    durable_writes(
        monkeypatch, lambda fd, n: OSError(errno.EIO, "Input/output error") if fd == bad else None
    )
    outcomes = await append_all(fds, lambda fd: None)
    assert outcomes == {fd: ("write: 5" if fd == bad else "ok") for fd in fds}
    for fd in fds:
        os.close(fd)


@needs_dsync
async def test_a_kernel_that_refuses_durable_writes_gets_a_write_and_an_fsync_from_then_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (fd,) = open_logs(tmp_path, 1)
    calls = durable_writes(monkeypatch, lambda fd, n: OSError(errno.EOPNOTSUPP, "not supported"))
    await group_sync().append(fd, b"one\n")
    await group_sync().append(fd, b"two\n")
    os.close(fd)
    assert (tmp_path / "log0.jsonl").read_bytes() == b"one\ntwo\n"
    assert len(calls["pwritev"]) == 1  # asked once; refused, so not again
    assert calls["write"] == [fd, fd] and calls["fsync"] == [fd, fd]


@needs_dsync
async def test_a_seccomp_filter_refusing_durable_writes_counts_as_a_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (fd,) = open_logs(tmp_path, 1)
    calls = durable_writes(
        monkeypatch, lambda fd, n: OSError(errno.EPERM, "Operation not permitted")
    )
    await group_sync().append(fd, b"one\n")
    os.close(fd)
    assert (tmp_path / "log0.jsonl").read_bytes() == b"one\n"
    assert len(calls["pwritev"]) == 1 and calls["fsync"] == [fd]


@needs_dsync
async def test_a_sync_that_fails_after_the_bytes_landed_fails_the_append_and_writes_nothing_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EINVAL looks like a refused flag, but the bytes are in the file: a failed append, not a
    reason to write them again (a record twice would break the log's sequence)."""
    (fd,) = open_logs(tmp_path, 1)
    calls = durable_writes(monkeypatch)
    counted = os.pwritev

    def write_then_fail(fd: int, buffers: list, offset: int, flags: int = 0) -> int:
        counted(fd, buffers, offset, 0)
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(os, "pwritev", write_then_fail)
    with pytest.raises(AppendFailed) as info:
        await group_sync().append(fd, b"once\n")
    assert info.value.step == "write" and info.value.error.errno == errno.EINVAL
    os.close(fd)
    assert (tmp_path / "log0.jsonl").read_bytes() == b"once\n"
    assert calls["write"] == [] and calls["fsync"] == []


@needs_dsync
async def test_once_durable_writes_worked_a_refusal_is_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (fd,) = open_logs(tmp_path, 1)
    durable_writes(
        monkeypatch, lambda fd, n: OSError(errno.EINVAL, "Invalid argument") if n > 1 else None
    )
    await group_sync().append(fd, b"one\n")
    with pytest.raises(AppendFailed):
        await group_sync().append(fd, b"two\n")
    os.close(fd)
    assert (tmp_path / "log0.jsonl").read_bytes() == b"one\n"


@needs_dsync
def test_logs_that_share_a_syncfs_are_written_then_synced_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four logs of one filesystem share one syncfs; a fifth, elsewhere, is one durable write."""
    fds = open_logs(tmp_path, 5)
    calls = durable_writes(monkeypatch)
    synced: list[int] = []
    monkeypatch.setattr(fssync, "syncfs", lambda fd: synced.append(fd) or 0)
    work = [(fd, b"x\n", 7 if i < 4 else None) for i, fd in enumerate(fds)]
    results = groupsync.durable_appends(work)
    assert all(isinstance(r, outcome.Value) for r in results)
    assert calls["write"] == fds[:4] and len(synced) == 1 and calls["fsync"] == []
    assert calls["pwritev"] == [(fds[4], os.RWF_DSYNC)]
    for fd in fds:
        os.close(fd)
