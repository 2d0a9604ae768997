"""The key a server signs receipts with (protocol.receiptsig), made on the first start and kept.

A signed receipt is worth something only if its key stays the server's: players keep receipts
signed by it, and an organizer compares the key with the one ``conjure serve`` printed. So the
key is made once, kept in ``receipt-key.pem`` (mode 0600) in the state directory or where
``--receipt-key`` says, and reused on every later start; a file there that cannot be read, is
not an Ed25519 key or can be read by other users is an error, never replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from conjure.protocol.receiptsig import key_text
from conjure.protocol.statedir import default_state_dir
from conjure.server.keyfiles import KeyFileError, load_kept_key, reason, write_new

KEY_FILE = "receipt-key.pem"


class ReceiptKeyError(Exception):
    """A key file that cannot be used; the message is a sentence for the host."""


@dataclass(frozen=True)
class ReceiptKey:
    key: Ed25519PrivateKey
    path: Path
    created: bool  # made by this call (False: the kept one)

    @property
    def public(self) -> str:
        return key_text(self.key)


def default_key_file() -> Path:
    return default_state_dir() / KEY_FILE


def load_or_make(path: Path) -> ReceiptKey:
    """The key kept at ``path``, or a new one written there if there is no file."""
    try:
        return _load(path)
    except FileNotFoundError:
        pass
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_new(path, pem, 0o600)
    except FileExistsError:  # another server made it at the same moment: use that one
        try:
            return _load(path)
        except FileNotFoundError as exc:  # a link to nowhere: not ours to replace
            raise ReceiptKeyError(f"{path} is a link to a missing file; remove it") from exc
    except OSError as exc:
        raise ReceiptKeyError(f"cannot write a receipt key at {path}: {reason(exc)}") from exc
    return ReceiptKey(key, path, created=True)


def _load(path: Path) -> ReceiptKey:
    fix = (
        f"move {path} away to make a new key (receipts signed with the old one stay checkable"
        " against it, but they and the new ones will name two keys)"
    )
    try:
        key = load_kept_key(path, fix)
    except KeyFileError as exc:
        raise ReceiptKeyError(str(exc)) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ReceiptKeyError(f"{path} holds a key of another kind than Ed25519; {fix}")
    return ReceiptKey(key, path, created=False)
