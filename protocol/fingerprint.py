"""The one text form of a TLS certificate's fingerprint: what ``conjure serve`` prints and what a
player passes to ``--pin`` (and what the client keeps in ``known_servers.json``).

``sha256:`` followed by the SHA-256 of the certificate's DER bytes in 64 upper-case hex digits,
e.g. ``sha256:3F1C...9A``. Input is forgiving (any case, with or without the prefix, with or
without the colons ``openssl x509 -fingerprint`` puts between bytes); output is always canonical.
"""

from __future__ import annotations

import hashlib
import hmac

from conjure.protocol.text import is_hex64

PREFIX = "sha256:"


def fingerprint(der: bytes) -> str:
    """The fingerprint of a certificate given as DER bytes."""
    return PREFIX + hashlib.sha256(der).hexdigest().upper()


def parse_fingerprint(text: str) -> str:
    """The canonical form of a fingerprint a person typed; ValueError with a sentence if it is none."""
    body = text.strip()
    if body.lower().startswith(PREFIX):
        body = body[len(PREFIX) :]
    body = body.replace(":", "").upper()
    if not is_hex64(body.lower()):
        raise ValueError(
            f"{text!r} is not a certificate fingerprint (expected {PREFIX} and 64 hex digits,"
            " as the server prints it)"
        )
    return PREFIX + body


def same_fingerprint(a: str, b: str) -> bool:
    """Whether two canonical fingerprints are equal (in constant time)."""
    return hmac.compare_digest(a.encode("ascii", "replace"), b.encode("ascii", "replace"))
