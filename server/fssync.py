"""When one ``syncfs(2)`` may stand in for the fsyncs of several logs.

Why: fsyncing a batch of logs file by file costs a disk flush (and a trip back through the GIL)
per file: 16 logs took ~2 ms here, against ~0.3 ms for one ``syncfs`` of their filesystem. But
``syncfs`` is only as strong as ``fsync`` under conditions, all checked here:

* Linux 5.17 or later: before it, ``syncfs`` could return 0 when the filesystem's own sync step
  (journal commit, log force, cache flush) failed; since 5.8 it also reports writeback errors.
* ext4 or xfs: their sync step commits the journal or log and flushes the disk cache, as fsync
  does. Elsewhere it may not (FUSE and 9p never ask their server to sync; vfat does not flush
  the device cache), and on btrfs it is a full transaction commit, heavier than fsync's log tree.
* The filesystem is not busy with other work: ``syncfs`` writes everything dirty on it, so on a
  machine copying gigabytes it could stall. ``server.groupsync`` times each call and goes back to
  fsync for a device whose ``syncfs`` was slow, and uses it only for four or more logs at once.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
from collections.abc import Callable

#: Filesystems whose ``syncfs`` makes appended data durable as ``fsync`` does.
SYNCFS_FILESYSTEMS = frozenset({"ext4", "xfs"})


def kernel_reports_syncfs_errors(system: str, release: str) -> bool:
    """True for Linux 5.17 or later (``platform.system()``, ``platform.release()``)."""
    if system != "Linux":
        return False
    try:
        major, minor = (int(x) for x in release.split("-")[0].split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (5, 17)


def _find_syncfs() -> Callable[[int], int] | None:
    if not kernel_reports_syncfs_errors(platform.system(), platform.release()):
        return None
    try:
        func = ctypes.CDLL(None, use_errno=True).syncfs  # ctypes releases the GIL during the call
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int]
    func.restype = ctypes.c_int
    return func


#: libc's ``syncfs(fd) -> 0 | -1`` (errno in ``ctypes.get_errno()``), or None where not used.
syncfs: Callable[[int], int] | None = _find_syncfs()


def filesystem_type(mountinfo: str, device: int) -> str | None:
    """The type of the filesystem mounted from ``device`` (an ``st_dev``), per ``mountinfo``.

    ``mountinfo`` is the text of ``/proc/self/mountinfo``: the third field is major:minor, and
    the type follows the ``-`` separator (see proc(5)).
    """
    wanted = f"{os.major(device)}:{os.minor(device)}"
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) < 3 or fields[2] != wanted or "-" not in fields[3:]:
            continue
        rest = fields[fields.index("-", 3) + 1 :]
        if rest:
            return rest[0]
    return None


@functools.cache
def shared_sync_device(device: int) -> int | None:
    """``device`` if its logs may share a ``syncfs`` (see the module docstring), else None."""
    if syncfs is None:
        return None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            kind = filesystem_type(f.read(), device)
    except OSError:
        return None
    return device if kind in SYNCFS_FILESYSTEMS else None
