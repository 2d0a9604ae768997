"""Admission by source address: connections, messages and rooms, each within its limit.

A visitor is known only by the address its packets come from, so every limit a visitor could abuse is
counted per address (an IPv6 visitor by its /64, which one machine usually holds whole). The server
asks this book before it admits a connection, reads a message or creates a room; each refusal is a
``Refusal`` whose code docs/PROTOCOL.md lists. Bookkeeping only: the caller does the I/O. Rates use
Trio's clock; the book is used from the Trio thread alone.
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import trio

from conjure.protocol.errors import ErrorCode, Refusal
from conjure.server.config import ServerConfig

log = logging.getLogger("conjure.server")

T = TypeVar("T")

#: An address that hit a limit is logged at most once per this many seconds for that limit.
WARN_EVERY = 60.0
#: A room creation counts against its address for this long.
CREATION_WINDOW = 60.0


@functools.lru_cache(maxsize=4096)
def address_key(host: str) -> str:
    """The unit limits count by: an IPv4 address, or an IPv6 /64 (IPv4-mapped ones as IPv4).

    (Memoized: it is asked for every message a client sends, and parsing an address is not free.)
    """
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Bucket:
    """``rate`` tokens a second, at most ``burst`` saved up."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = max(1.0, burst)
        self.tokens = self.burst
        self.stamp = now

    def full(self, now: float) -> bool:
        """Refilled to the brim: forgetting it now gives away nothing."""
        return self.tokens + (now - self.stamp) * self.rate >= self.burst

    def _refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self, now: float, n: float = 1) -> float:
        """Take ``n`` tokens (at most a burst's): 0.0 if they were there, else the seconds until
        they will be."""
        n = min(n, self.burst)
        wait = self.wait(now, n)
        if not wait:
            self.tokens -= n
        return wait

    def wait(self, now: float, n: float = 1) -> float:
        """Seconds until ``n`` tokens are there (0.0: they are), taking none."""
        self._refill(now)
        if self.tokens >= n:
            return 0.0
        return (n - self.tokens) / self.rate if self.rate > 0 else 1.0

    def spend(self, now: float, n: int) -> float:
        """Spend ``n`` tokens even into debt (they were used already): 0.0 if there were enough,
        else the seconds until the debt is paid."""
        self._refill(now)
        self.tokens -= n
        if self.tokens >= 0:
            return 0.0
        return -self.tokens / self.rate if self.rate > 0 else 1.0


#: The most addresses whose buckets are kept before those that have refilled are forgotten.
MAX_BUCKETS = 50_000


def _forget_refilled(
    buckets: dict[str, T], now: float, bucket: Callable[[T], Bucket], keep: int = MAX_BUCKETS
) -> None:
    """Bounded: at ``keep`` addresses, forget those whose bucket has refilled (forgetting
    a full bucket gives away nothing)."""
    if len(buckets) >= keep:
        for key, value in list(buckets.items()):
            if bucket(value).full(now):
                del buckets[key]


def forget_refilled(buckets: dict[str, Bucket], now: float, keep: int = MAX_BUCKETS) -> None:
    """:func:`_forget_refilled` of a dict of buckets."""
    _forget_refilled(buckets, now, lambda b: b, keep)


def bucket_for(
    buckets: dict[str, Bucket],
    key: str,
    now: float,
    rate: float,
    burst: float,
    keep: int = MAX_BUCKETS,
) -> Bucket:
    """``key``'s bucket of ``buckets``, made full on first use and kept until it has refilled
    (at ``keep`` keys, those refilled are forgotten: :func:`forget_refilled`)."""
    bucket = buckets.get(key)
    if bucket is None:
        forget_refilled(buckets, now, keep)
        bucket = buckets[key] = Bucket(rate, burst, now)
    return bucket


@dataclass
class _Address:
    open: int = 0
    #: Handshakes under way, by ticket (``admit_pending``): when each socket was accepted.
    pending: dict[int, float] = field(default_factory=dict)
    over_rate: set[int] = field(default_factory=set)  # pending tickets that came too fast
    created: deque[float] = field(default_factory=deque)
    hosting: int = 0

    @property
    def idle(self) -> bool:
        return not (self.open or self.pending or self.created or self.hosting)


class AddressBook:
    """What every source address holds right now, and whether it may have more."""

    def __init__(self, config: ServerConfig, now: Callable[[], float] = trio.current_time) -> None:
        self.config = config
        self._now = now
        self._by: dict[str, _Address] = {}
        self.total_open = 0
        self.total_pending = 0
        self._warned: dict[tuple[str, str], float] = {}
        #: New-connection buckets by address, (refused in words, closed at once); kept after
        #: the address's connections are gone, so connect-and-close loops are counted too.
        self._arrivals: dict[str, tuple[Bucket, Bucket]] = {}
        #: Message buckets by address, kept likewise once its connections are gone: closing
        #: every connection and opening new ones must not start a full burst afresh.
        self._messages: dict[str, Bucket] = {}
        self._tickets = itertools.count(1)
        self._swept = float("-inf")  # (the book may be made before Trio runs)
        #: Whole views asked for again by address (``check_view_request``), kept likewise.
        self._views: dict[str, Bucket] = {}
        #: Wrong room codes and passwords by address (``check_guess``), kept likewise.
        self._guesses: dict[str, Bucket] = {}
        #: Refusals per code since start (for tests, benchmarks and an operator's curiosity).
        self.refused: dict[str, int] = {}

    @property
    def known(self) -> int:
        """How many addresses the book remembers (each holds something or was refused lately)."""
        return len(self._by)

    def _get(self, key: str) -> _Address:
        entry = self._by.get(key)
        if entry is None:
            self._sweep()
            entry = self._by[key] = _Address()
        return entry

    def _sweep(self) -> None:
        """Forget, at most once a creation window, every address that holds nothing any more.

        Why: an address whose room closed within a minute of its creation still held that
        creation when it was last looked at, and nothing looked at it again (30 addresses stayed
        known for good in an attacker's run).
        """
        now = self._now()
        if now - self._swept < CREATION_WINDOW:
            return
        self._swept = now
        for key in list(self._by):
            self._forget_if_idle(key)

    def _forget_if_idle(self, key: str) -> None:
        entry = self._by.get(key)
        if entry is None:
            return
        now = self._now()
        while entry.created and now - entry.created[0] >= CREATION_WINDOW:
            entry.created.popleft()
        if entry.idle:
            del self._by[key]

    def _expire_pending(self, entry: _Address, now: float) -> None:
        """A safety net only: every handshake ends in ``connect`` or ``handshake_over``, and
        none lasts longer than the handshake timeout."""
        limit = self.config.handshake_timeout + 1.0
        for ticket, since in list(entry.pending.items()):
            if now - since > limit:
                self._end_pending(entry, ticket)

    def _end_pending(self, entry: _Address, ticket: int) -> bool:
        if entry.pending.pop(ticket, None) is None:
            return False
        entry.over_rate.discard(ticket)
        self.total_pending -= 1
        return True

    def _arrived(self, key: str, now: float) -> tuple[bool, bool]:
        """A new connection from ``key``: (within the rate, within four times the rate)."""
        cfg = self.config
        buckets = self._arrivals.get(key)
        if buckets is None:
            _forget_refilled(self._arrivals, now, lambda b: b[0])
            buckets = self._arrivals[key] = (
                Bucket(cfg.connection_rate, cfg.connection_burst, now),
                Bucket(4 * cfg.connection_rate, 4 * cfg.connection_burst, now),
            )
        soft, hard = buckets
        if hard.take(now):
            return False, False
        return not soft.take(now), True

    def refuse(self, host: str, code: ErrorCode, message: str) -> Refusal:
        """Count and log a refusal (see ``note``), and return it for the sender."""
        self.note(host, code, message)
        return Refusal(code, message)

    def note(self, host: str, code: str, message: str) -> None:
        """Count and (at most once a minute per address and limit) log a limit that was hit.

        ``code`` is an ``ErrorCode`` when the visitor is told, or a counter's own name (``flood``:
        that connection is closed, not answered).
        """
        self.refused[code] = self.refused.get(code, 0) + 1
        key = address_key(host)
        now = self._now()
        last = self._warned.get((key, code))
        if last is None or now - last >= WARN_EVERY:
            self._warned[(key, code)] = now
            if len(self._warned) > 10_000:  # bounded: drop the oldest half
                for k in sorted(self._warned, key=self._warned.__getitem__)[:5_000]:
                    del self._warned[k]
            log.warning("limit: %s refused (%s): %s", key, code, message)

    # ------------------------------------------------------------------ connections

    def admit_pending(self, host: str, port: int) -> int | None:
        """At accept, before any handshake: the handshake's ticket, or None: close the socket.

        Only a hard ceiling applies here (handshakes in progress count as connections); below it
        the handler gives the refusal in words (``connect``). The ticket stops counting as a
        handshake at ``connect`` or, for a handshake that never got there (reset, garbage, timed
        out), at ``handshake_over``, which the caller must reach. Why a ticket and not the
        source port: a port can come again while its last handshake is still counted, and a
        count kept by port let one address and port grow the server's total until it refused
        everyone.
        """
        cfg = self.config
        key = address_key(host)
        entry = self._get(key)
        now = self._now()
        self._expire_pending(entry, now)
        per_address = entry.open + len(entry.pending)
        within_rate, within_hard_rate = self._arrived(key, now)
        if not within_hard_rate:
            self.refuse(host, "connection_rate", "closed before the handshake")
            self._forget_if_idle(key)
            return None
        if (
            per_address >= cfg.max_connections_per_address + 8
            or self.total_open + self.total_pending >= cfg.max_connections + 64
        ):
            self.refuse(host, "too_many_connections", "closed before the handshake")
            self._forget_if_idle(key)
            return None
        ticket = next(self._tickets)
        entry.pending[ticket] = now
        if not within_rate:
            entry.over_rate.add(ticket)
        self.total_pending += 1
        return ticket

    def handshake_over(self, host: str, ticket: int) -> None:
        """The socket of ``ticket`` is done with: if it never reached ``connect``, it stops
        counting now (nothing happens for one that did)."""
        key = address_key(host)
        entry = self._by.get(key)
        if entry is not None and self._end_pending(entry, ticket):
            self._forget_if_idle(key)

    def connect(self, host: str, ticket: int) -> Refusal | None:
        """A handshake arrived: count the connection, and say why it must go if it must.

        The connection counts (``disconnect`` must follow) whether or not it is refused, so that a
        refused one is still within the ceilings while it is told why and closed.
        """
        cfg = self.config
        key = address_key(host)
        entry = self._get(key)
        over_rate = ticket in entry.over_rate
        self._end_pending(entry, ticket)
        entry.open += 1
        self.total_open += 1
        if over_rate:
            return self.refuse(
                host,
                "connection_rate",
                f"Too many new connections from your address (at most "
                f"{cfg.connection_rate:g} a second); wait a moment and try again.",
            )
        if entry.open > cfg.max_connections_per_address:
            return self.refuse(
                host,
                "too_many_connections",
                f"Too many connections from your address (at most "
                f"{cfg.max_connections_per_address}); close some and try again.",
            )
        if self.total_open > cfg.max_connections:
            return self.refuse(
                host,
                "server_busy",
                "This server has as many connections as it can take; try again later.",
            )
        return None

    def disconnect(self, host: str) -> None:
        key = address_key(host)
        entry = self._by.get(key)
        if entry is None or entry.open <= 0:
            return
        entry.open -= 1
        self.total_open -= 1
        self._forget_if_idle(key)

    def message_wait(self, host: str) -> float:
        """Take one message's worth of the address's rate: 0.0, or seconds until allowed."""
        cfg = self.config
        now = self._now()
        bucket = bucket_for(
            self._messages, address_key(host), now, cfg.address_rate, cfg.address_burst
        )
        return bucket.take(now)

    # ------------------------------------------------------------------ whole views

    def check_view_request(
        self, host: str, what: str = "whole views asked for", n: int = 1
    ) -> None:
        """Take ``n`` of ``host``'s whole views (one asked for again), or raise the refusal. A
        lobby change (``what``) takes as many as it sends (``Room._spend_whole_views`` counts
        them): swapping two seats back and forth at the message rate sent 22 MB a second of
        views with 200 custom cards to one address's lobbies (found by an attacker's review)."""
        cfg = self.config
        now = self._now()
        bucket = bucket_for(self._views, address_key(host), now, cfg.view_rate, cfg.view_burst)
        wait = bucket.take(now, n)
        if wait:
            raise self.refuse(
                host,
                "rate_limited",
                f"Too many {what} from your address (at most {cfg.view_rate:g} whole views a "
                f"second); try again in {max(1, round(wait))} s.",
            )

    # ------------------------------------------------------------------ guesses

    def check_guess(self, host: str) -> None:
        """Raise the refusal if ``host`` has given too many wrong codes or passwords lately: a
        room is looked for (``join_room``, ``watch``, ``resume_seat``) only within that budget,
        so that the right code or password, guessed, is refused as well."""
        bucket = self._guesses.get(address_key(host))
        wait = 0.0 if bucket is None else bucket.wait(self._now())
        if not wait:
            return
        raise self.refuse(
            host,
            "too_many_guesses",
            f"Too many wrong room codes or passwords from your address; try again in "
            f"{max(1, round(wait))} s.",
        )

    def wrong_guess(self, host: str, code: str) -> None:
        """``host`` gave a room code that names no room, or a wrong password (``code``): it
        costs the address one guess, and is logged (at most once a minute per address)."""
        cfg = self.config
        now = self._now()
        guesses = bucket_for(self._guesses, address_key(host), now, cfg.guess_rate, cfg.guess_burst)
        guesses.spend(now, 1)
        self.note(host, code, "a room code or password that is wrong")

    # ------------------------------------------------------------------ rooms

    def check_create_room(self, host: str) -> None:
        """Raise the refusal if ``host`` may not create a room now."""
        cfg = self.config
        key = address_key(host)
        entry = self._get(key)
        now = self._now()
        while entry.created and now - entry.created[0] >= CREATION_WINDOW:
            entry.created.popleft()
        try:
            if entry.hosting >= cfg.max_rooms_per_address:
                raise self.refuse(
                    host,
                    "too_many_rooms",
                    f"Your address already has {entry.hosting} open rooms (at most "
                    f"{cfg.max_rooms_per_address}); finish or leave one first.",
                )
            if len(entry.created) >= cfg.rooms_per_minute:
                wait = CREATION_WINDOW - (now - entry.created[0])
                raise self.refuse(
                    host,
                    "room_rate",
                    f"Too many new rooms from your address (at most {cfg.rooms_per_minute} a "
                    f"minute); try again in {max(1, round(wait))} s.",
                )
        finally:
            self._forget_if_idle(key)

    def room_created(self, host: str) -> None:
        entry = self._get(address_key(host))
        entry.created.append(self._now())
        entry.hosting += 1

    def room_closed(self, host: str) -> None:
        key = address_key(host)
        entry = self._by.get(key)
        if entry is not None and entry.hosting > 0:
            entry.hosting -= 1
            self._forget_if_idle(key)

    def hosting(self, host: str) -> int:
        entry = self._by.get(address_key(host))
        return 0 if entry is None else entry.hosting
