"""Files of secrets the server makes once and keeps (its certificate, its receipt key).

Written whole or not at all, never over a file already there: a key a server replaced would
break what players pinned or kept, so a file that is there is read or refused, never rewritten.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from conjure.protocol.durablefile import write_whole


def write_new(path: Path, data: bytes, mode: int) -> None:
    """Write ``path`` whole or not at all; FileExistsError if it is already there."""
    write_whole(path, data, mode, overwrite=False)


class KeyFileError(Exception):
    """A kept key file that cannot be used; the message is a sentence for the host."""


#: The most bytes a kept file (a key, a certificate chain) is read to: far more than any holds.
KEPT_FILE_MOST = 1 << 20


class NotKeptFile(ValueError):
    """A path that holds no file the server could have kept: not a regular file, or too big."""

    def __init__(self, message: str, *, too_big: bool = False) -> None:
        super().__init__(message)
        self.too_big = too_big


def read_kept(path: Path, most: int = KEPT_FILE_MOST) -> tuple[bytes, int]:
    """A kept file's bytes and its permission bits, read only if it is a regular file of at
    most ``most`` bytes (NotKeptFile otherwise): a FIFO there would hang the start, and
    ``/dev/zero`` would fill the memory. OSError as ``open`` raises it."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotKeptFile(f"{path} is not a regular file")
        if st.st_size > most:
            raise NotKeptFile(
                f"{path} is {st.st_size:,} bytes, too big for what it should hold", too_big=True
            )
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(most + 1)
    finally:
        os.close(fd)
    if len(data) > most:
        raise NotKeptFile(f"{path} grew past {most:,} bytes while it was read", too_big=True)
    return data, stat.S_IMODE(st.st_mode)


def load_kept_key(path: Path, fix: str) -> PrivateKeyTypes:
    """The private key kept in ``path`` (unencrypted PEM, readable by its owner alone), or
    KeyFileError saying why not and ``fix``; FileNotFoundError when there is no such file."""
    try:
        data, mode = read_kept(path)
    except FileNotFoundError:
        raise
    except NotKeptFile as exc:
        raise KeyFileError(f"{exc}; {fix}") from exc
    except OSError as exc:
        raise KeyFileError(f"cannot read {path}: {reason(exc)}; {fix}") from exc
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        # UnsupportedAlgorithm: a key of a kind the library cannot read (found by review: it
        # raised past this sentence, a traceback and exit 1)
        raise KeyFileError(f"{path} is not an unencrypted PEM private key; {fix}") from exc
    if mode & 0o077:
        raise KeyFileError(
            f"{path} can be read by other users (mode {mode:04o}); run chmod 600 {path}"
        )
    return key


def reason(exc: OSError) -> str:
    """An OSError as the end of a sentence."""
    return exc.strerror or str(exc)
