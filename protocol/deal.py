"""The fair deal: a shuffle whose seed no single party controls, and that anyone can redo.

Before the cards are dealt the server commits to a secret seed (``deal_open`` carries
``commitment = sha256(server_seed)``); every seated player's client answers with a random
contribution of its own (``deal_seed``); then the seed of the shuffle is the hash of the server's
seed and every contribution in seat order, and the deal is a Fisher-Yates shuffle of the deck
driven by HMAC-SHA256 of that seed (docs/PROTOCOL.md, "The deal"). The server cannot pick the
cards: its seed is fixed before it sees anyone's contribution. No player can: each contribution is
sent without knowing the server's seed. The log records the seed, the commitment, the
contributions and the deck, so ``conjure replay`` deals again and checks the cards on the table.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from typing import TypeVar

DEAL_TAG = b"conjure-deal-v1\x00"
SEED_BYTES = 32

T = TypeVar("T")


def commitment_of(server_seed: str) -> str:
    """What ``deal_open`` announces: the SHA-256 of the server's seed (both lower-case hex)."""
    return hashlib.sha256(bytes.fromhex(server_seed)).hexdigest()


def combined_seed(server_seed: str, contributions: Mapping[int, str], seats: int) -> bytes:
    """The shuffle's seed: the server's seed, then each seat's contribution (or its absence)."""
    h = hashlib.sha256(DEAL_TAG)
    h.update(bytes.fromhex(server_seed))
    for seat in range(seats):
        given = contributions.get(seat)
        h.update(b"\x01" + bytes.fromhex(given) if given else b"\x00")
    return h.digest()


class _Stream:
    """Uniform integers from HMAC-SHA256(seed, counter), 8 bytes at a time, by rejection."""

    def __init__(self, seed: bytes) -> None:
        self.seed = seed
        self.counter = 0
        self.buffer = b""

    def _next64(self) -> int:
        if len(self.buffer) < 8:
            block = hmac.new(self.seed, self.counter.to_bytes(8, "big"), hashlib.sha256).digest()
            self.counter += 1
            self.buffer += block
        out, self.buffer = self.buffer[:8], self.buffer[8:]
        return int.from_bytes(out, "big")

    def below(self, k: int) -> int:
        """A uniform integer in [0, k)."""
        limit = (1 << 64) - (1 << 64) % k
        while True:
            x = self._next64()
            if x < limit:
                return x % k


def shuffled(deck: Sequence[T], seed: bytes) -> list[T]:
    """``deck`` in the order the seed gives (Fisher-Yates, from the last position down)."""
    out = list(deck)
    stream = _Stream(seed)
    for i in range(len(out) - 1, 0, -1):
        j = stream.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def seeded_deal(deck: Sequence[T], players: int, seed: bytes) -> tuple[T, ...]:
    """The cards on the table: the first ``players`` of the shuffled deck."""
    return tuple(shuffled(deck, seed)[:players])
