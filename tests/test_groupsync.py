"""Group commit: many logs' appends share worker hand-offs, and each gets its own outcome."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import outcome
import pytest
import trio

from server import groupsync
from server.groupsync import AppendFailed, group_sync
from server.logstore import open_for_append, read_log


def open_logs(tmp_path: Path, n: int) -> list[int]:
    return [
        os.open(tmp_path / f"log{i}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        for i in range(n)
    ]


async def test_appends_that_arrive_together_share_hand_offs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 50)
    starts: list[int] = []
    synced: list[int] = []
    real_start, real_fsync = trio.lowlevel.start_thread_soon, os.fsync

    def counting_start(fn, deliver, name=None):  # type: ignore[no-untyped-def]
        starts.append(1)
        return real_start(fn, deliver, name)

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(trio.lowlevel, "start_thread_soon", counting_start)
    monkeypatch.setattr(os, "fsync", counting_fsync)
    async with trio.open_nursery() as nursery:
        for i, fd in enumerate(fds):
            nursery.start_soon(group_sync().append, fd, f"record {i}\n".encode())
    # Two batches start at once (MAX_FLUSHERS); the other 48 appends wait and go as one.
    assert groupsync.MAX_FLUSHERS == 2
    assert len(starts) == 3
    assert sorted(synced) == sorted(fds)  # every append was fsync'd, once
    for i, fd in enumerate(fds):
        os.close(fd)
        assert (tmp_path / f"log{i}.jsonl").read_bytes() == f"record {i}\n".encode()


async def test_a_failed_fsync_fails_only_its_own_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 6)
    bad = fds[3]
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if fd == bad:
            raise OSError(errno.EIO, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    outcomes: dict[int, str] = {}

    async def append(fd: int) -> None:
        try:
            await group_sync().append(fd, b"x\n")
        except AppendFailed as exc:
            outcomes[fd] = f"{exc.step}: {exc.error.errno}"
        else:
            outcomes[fd] = "ok"

    async with trio.open_nursery() as nursery:
        for fd in fds:
            nursery.start_soon(append, fd)
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
    real_fsync, real_syncfs = os.fsync, groupsync.syncfs
    assert real_syncfs is not None

    def fsync(fd: int) -> None:
        fsyncs.append(fd)
        real_fsync(fd)

    def syncfs(fd: int) -> int:
        syncfss.append(fd)
        return real_syncfs(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(groupsync, "syncfs", syncfs)
    return fsyncs, syncfss


needs_syncfs = pytest.mark.skipif(groupsync.syncfs is None, reason="syncfs: Linux 5.8+ only")


@needs_syncfs
async def test_a_batch_of_logs_on_one_filesystem_shares_one_syncfs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 50)
    fsyncs, syncfss = counting(monkeypatch)
    async with trio.open_nursery() as nursery:
        for i, fd in enumerate(fds):
            nursery.start_soon(
                group_sync().append, fd, f"record {i}\n".encode(), os.fstat(fd).st_dev
            )
    # Two appends start a batch each, alone: fsync. The other 48 share one syncfs.
    assert len(fsyncs) == 2 and len(syncfss) == 1
    for i, fd in enumerate(fds):
        os.close(fd)
        assert (tmp_path / f"log{i}.jsonl").read_bytes() == f"record {i}\n".encode()


@needs_syncfs
def test_logs_on_different_filesystems_are_synced_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One batch as a worker runs it; devices are as the caller says (None: unknown)."""
    fds = open_logs(tmp_path, 7)
    fsyncs, syncfss = counting(monkeypatch)
    devices = [1, 2, 1, 2, 3, None, None]
    results = groupsync.durable_appends(
        [(fd, b"x\n", dev) for fd, dev in zip(fds, devices, strict=True)]
    )
    assert all(isinstance(r, outcome.Value) for r in results)
    assert syncfss == [fds[0], fds[1]]  # one per device with two logs
    assert fsyncs == [fds[4], fds[5], fds[6]]  # a device's only log, and unknown devices
    for fd in fds:
        os.close(fd)


@needs_syncfs
async def test_a_failed_syncfs_falls_back_to_fsync_so_only_the_damaged_log_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_logs(tmp_path, 8)
    bad = fds[5]
    fsyncs, _ = counting(monkeypatch)
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if fd == bad:
            fsyncs.append(fd)
            raise OSError(errno.EIO, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(groupsync, "syncfs", lambda fd: -1)
    outcomes: dict[int, str] = {}

    async def append(fd: int) -> None:
        try:
            await group_sync().append(fd, b"x\n", os.fstat(fd).st_dev)
        except AppendFailed as exc:
            outcomes[fd] = f"{exc.step}: {exc.error.errno}"
        else:
            outcomes[fd] = "ok"

    async with trio.open_nursery() as nursery:
        for fd in fds:
            nursery.start_soon(append, fd)
    assert outcomes == {fd: ("fsync: 5" if fd == bad else "ok") for fd in fds}
    assert sorted(fsyncs) == sorted(fds)  # every log, once: alone, or after the failed syncfs
    for fd in fds:
        os.close(fd)


@needs_syncfs
async def test_log_writers_tell_the_workers_their_filesystem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writers = [open_for_append(tmp_path / f"game{i}.jsonl") for i in range(5)]
    fsyncs, syncfss = counting(monkeypatch)
    async with trio.open_nursery() as nursery:
        for i, w in enumerate(writers):
            nursery.start_soon(w.append, "note", {"i": i}, 1.0)
    assert len(fsyncs) == 2 and len(syncfss) == 1  # two alone, three together
    for i, w in enumerate(writers):
        w.close()
        (record,) = read_log(tmp_path / f"game{i}.jsonl").records
        assert record.data == {"i": i}
