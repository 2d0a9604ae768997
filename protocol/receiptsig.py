"""Signed receipts: the server's word, in a form nobody else can write, that a log held a record.

An unsigned receipt (``seq``, ``hash``) proves nothing to a third party: anyone can write one, so
a receipt the log disagrees with is the word of whoever hands it over against the log's. A
signed one is the server's own: if the server signed a receipt its log no longer holds, the log
was rewritten after the game was told. The server signs with an Ed25519 key it keeps
(``conjure serve`` prints its public half); the signature covers the game as well as the position,
so a receipt cannot be moved to another game. The bytes signed are documented in
docs/PROTOCOL.md ("Receipts"); this module is the one place they are made.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

DOMAIN = b"conjure-receipt-v1"
KEY_PREFIX = "ed25519:"
_KEY_HEX = 64
_SIG_HEX = 128
_HEX = frozenset("0123456789abcdef")


def _field(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def signed_bytes(game_id: str, seq: int, hash_: str) -> bytes:
    """What the signature covers: length-prefixed domain, game id, seq (8 bytes), hash."""
    return b"".join(
        (
            _field(DOMAIN),
            _field(game_id.encode("utf-8")),
            _field(seq.to_bytes(8, "big")),
            _field(hash_.encode("ascii")),
        )
    )


def key_text(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    """A key's public half as it is shown and stored: ``ed25519:`` and 64 lowercase hex digits."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return KEY_PREFIX + public.public_bytes_raw().hex()


def sign(key: Ed25519PrivateKey, game_id: str, seq: int, hash_: str) -> str:
    """The signature of a receipt, 128 lowercase hex digits."""
    return key.sign(signed_bytes(game_id, seq, hash_)).hex()


def _hex(text: object, length: int) -> bool:
    return isinstance(text, str) and len(text) == length and _HEX.issuperset(text)


def is_key(text: object) -> bool:
    """``text`` is a key as ``key_text`` writes it (a shape check: not that anyone holds it)."""
    return (
        isinstance(text, str)
        and text.startswith(KEY_PREFIX)
        and _hex(text[len(KEY_PREFIX) :], _KEY_HEX)
    )


# Edwards25519 (RFC 8032 5.1): -x^2 + y^2 = 1 + d x^2 y^2 over the integers modulo P.
_P = 2**255 - 19
_D = -121665 * pow(121666, -1, _P) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


def _small_order(raw: bytes) -> bool:
    """Is the public key ``raw`` a point of order 1, 2, 4 or 8?

    Such a "key" is nobody's: a signature made without any private key verifies under it for
    every message (order 1) or one message in eight, and OpenSSL's Ed25519 accepts it. Found by
    review: a forger's receipt under ``ed25519:01`` and zeros verified. A point is of small
    order exactly when eight times it is the neutral point (0, 1). The sign of x does not change
    the order, so either root will do; a y with no point is left to the verifier to refuse.
    """
    y = int.from_bytes(raw, "little") & ((1 << 255) - 1)
    u, v = (y * y - 1) % _P, (_D * y * y + 1) % _P
    x = u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P) % _P  # RFC 8032 5.1.3
    if v * x * x % _P != u:
        x = x * _SQRT_M1 % _P
        if v * x * x % _P != u:
            return False
    for _ in range(3):  # doubling, by the complete addition law (d is not a square)
        xy = x * y % _P
        t = _D * xy * xy % _P
        x, y = 2 * xy * pow(1 + t, -1, _P) % _P, (y * y + x * x) * pow(1 - t, -1, _P) % _P
    return x == 0 and y == 1


def verify(key: str, sig: str, game_id: str, seq: int, hash_: str) -> bool:
    """Did the holder of ``key`` sign this receipt? False for anything malformed, too, and for
    a key of small order, which anyone can sign for."""
    if not is_key(key) or not _hex(sig, _SIG_HEX) or not hash_.isascii() or seq < 0:
        return False
    raw = bytes.fromhex(key[len(KEY_PREFIX) :])
    if _small_order(raw):
        return False
    try:
        public = Ed25519PublicKey.from_public_bytes(raw)
        public.verify(bytes.fromhex(sig), signed_bytes(game_id, seq, hash_))
    except (InvalidSignature, ValueError, OverflowError):
        return False
    return True
