"""Commit-then-reveal for summoning words.

A client sends only ``commitment(...)`` while the summon is open; the word and nonce follow once
every commitment is in. Every field is length-prefixed, so no two different inputs share an encoding,
and the domain tag keeps these hashes from being confused with any other SHA-256 in the project.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets

from conjure.protocol.text import is_hex64

DOMAIN = b"conjure-summon-commitment-v1"
NONCE_BYTES = 32


def _field(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def commitment_preimage(game_id: str, round_: int, seat: int, nonce: bytes, word: str) -> bytes:
    """The exact bytes that are hashed (documented in docs/PROTOCOL.md)."""
    if len(nonce) != NONCE_BYTES:
        raise ValueError(f"the nonce must be {NONCE_BYTES} bytes")
    return b"".join(
        (
            _field(DOMAIN),
            _field(game_id.encode("utf-8")),
            _field(round_.to_bytes(4, "big")),
            _field(seat.to_bytes(4, "big")),
            _field(nonce),
            _field(word.encode("utf-8")),
        )
    )


def commitment(game_id: str, round_: int, seat: int, nonce: bytes, word: str) -> str:
    """Lower-case hex SHA-256 of the preimage."""
    return hashlib.sha256(commitment_preimage(game_id, round_, seat, nonce, word)).hexdigest()


def new_nonce() -> bytes:
    return secrets.token_bytes(NONCE_BYTES)


# Memoized (a pure function of its arguments): an audit checks each reveal twice, deciding it
# again and checking the logged event, one right after the other (docs/PERFORMANCE.md).
@functools.lru_cache(maxsize=64)
def check_reveal(
    expected: str, game_id: str, round_: int, seat: int, nonce_hex: str, word: str
) -> bool:
    """Does (word, nonce) open this commitment? Malformed nonces simply do not."""
    if not is_hex64(nonce_hex):
        return False
    got = commitment(game_id, round_, seat, bytes.fromhex(nonce_hex), word)
    return hmac.compare_digest(got, expected)
