"""Group commit: many logs' appends share worker hand-offs, and each gets its own outcome."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
import trio

from server import groupsync
from server.groupsync import AppendFailed, group_sync


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
