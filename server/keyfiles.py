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


def load_kept_key(path: Path, fix: str) -> PrivateKeyTypes:
    """The private key kept in ``path`` (unencrypted PEM, readable by its owner alone), or
    KeyFileError saying why not and ``fix``; FileNotFoundError when there is no such file."""
    try:
        data = path.read_bytes()
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        raise
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
