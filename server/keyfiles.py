"""Files of secrets the server makes once and keeps (its certificate, its receipt key).

Written whole or not at all, never over a file already there: a key a server replaced would
break what players pinned or kept, so a file that is there is read or refused, never rewritten.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_new(path: Path, data: bytes, mode: int) -> None:
    """Write ``path`` whole or not at all; FileExistsError if it is already there."""
    # A fresh name of its own (O_EXCL): a predictable one could be a link someone planted.
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
        os.link(tmp, path)  # unlike os.replace, never overwrites
    finally:
        os.unlink(tmp)
    with contextlib.suppress(OSError):
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def reason(exc: OSError) -> str:
    """An OSError as the end of a sentence."""
    return exc.strerror or str(exc)
