"""A file written whole or not at all, and durable once written: the one way this project writes
a file it must not lose or leave half-written (a client's tokens and receipts, a server's keys).

The data goes to a temporary file of a fresh random name in the same directory (``mkstemp``:
``O_EXCL``, so never through a link someone planted at a name they could guess), is synced, and
takes the final name: replacing what was there (``os.replace``), or, for a file that must never
be overwritten, only if there is none (``os.link``, FileExistsError otherwise). Then the directory
is synced, so the name survives a crash too. A crash at any point leaves the old file or the new,
never a mix; a failure leaves no temporary file behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_whole(path: Path, data: bytes, mode: int, *, overwrite: bool) -> None:
    """Write ``data`` as ``path`` with ``mode``; with ``overwrite`` False, FileExistsError if
    ``path`` is there already (a dangling link included)."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if overwrite:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # unlike os.replace, never overwrites
    finally:
        with contextlib.suppress(FileNotFoundError):  # gone once replaced
            os.unlink(tmp)
    with contextlib.suppress(OSError):
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
