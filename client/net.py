"""The client's connection: connect, say hello, join, pump messages, reconnect with backoff.

Runs on Trio (inside the UI's guest run). The :class:`~client.session.Session` decides what to
send on (re)connection and what every server message means; this module only moves bytes and
keeps retrying: exponential backoff (1 s doubling to 20 s, with jitter) after every loss, a
WebSocket ping every 15 s so a dead link is noticed, and a banner in the session meanwhile. It
stops for good when a wss:// server's certificate is refused (:mod:`client.pins`): retrying
cannot change the certificate.
"""

from __future__ import annotations

import random
import ssl
import traceback
from collections.abc import Callable

import msgspec
import trio
from trio_websocket import (
    ConnectionClosed,
    ConnectionRejected,
    HandshakeError,
)

from client.pins import CertificateRefused, Trust, open_websocket, refused
from client.session import Session
from protocol.messages import (
    PROTOCOL_VERSION,
    Bye,
    ClientMsg,
    Hello,
    Welcome,
    encoder,
    server_decoder,
)

CLIENT_NAME = "conjure-play/0.1"
PING_EVERY = 15.0
PING_TIMEOUT = 15.0
CONNECT_TIMEOUT = 10.0


class Backoff:
    """1, 2, 4, ... seconds up to ``cap``, each scaled by a random factor in [0.75, 1.25)."""

    def __init__(self, first: float = 1.0, cap: float = 20.0, rng: random.Random | None = None):
        self.first = first
        self.cap = cap
        self.attempt = 0
        self.rng = rng or random.Random()

    def next(self) -> float:
        base = min(self.cap, self.first * (2**self.attempt))
        self.attempt += 1
        return base * (0.75 + self.rng.random() / 2)

    def reset(self) -> None:
        self.attempt = 0


def describe(exc: BaseException) -> str:
    """A short human reason for a lost or refused connection."""
    if isinstance(exc, BaseExceptionGroup):
        leaves = list(_leaves(exc))
        if leaves:
            return describe(leaves[0])
    if isinstance(exc, ConnectionRejected):
        return f"refused by the server (HTTP {exc.status_code})"
    if isinstance(exc, ConnectionClosed):
        reason = exc.reason
        if reason is not None and reason.reason:
            return f"closed: {reason.reason}"
        return "closed by the server"
    if isinstance(exc, HandshakeError):
        cause = exc.__cause__ or exc.__context__
        if cause is not None and not isinstance(cause, HandshakeError):
            return describe(cause)
        return "handshake failed"
    if isinstance(exc, trio.TooSlowError):
        return "no answer from the server"
    if isinstance(exc, CertificateRefused):
        return str(exc)
    if isinstance(exc, ssl.SSLError):
        return f"TLS error: {exc.reason or exc}"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc) or type(exc).__name__
    if isinstance(exc, ProtocolProblem):
        return str(exc)
    return str(exc) or type(exc).__name__


def _leaves(group: BaseExceptionGroup):
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            yield from _leaves(exc)
        else:
            yield exc


class ProtocolProblem(Exception):
    pass


class Connection:
    """The reconnecting link between one Session and one server URL."""

    def __init__(
        self,
        session: Session,
        url: str,
        outgoing: trio.MemoryReceiveChannel[ClientMsg],
        notify: Callable[[], None],
        *,
        trust: Trust | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.session = session
        self.url = url
        self.outgoing = outgoing
        self.notify = notify
        self.trust = trust
        self.backoff = backoff or Backoff()
        self.connections = 0
        #: Why the server's certificate was refused (then the loop stopped), if it was.
        self.refused: str | None = None
        self._cancel: trio.CancelScope | None = None

    def drop(self) -> None:
        """Cut the current connection (the loop then reconnects); for tests and /reconnect."""
        if self._cancel is not None:
            self._cancel.cancel()

    async def run(self) -> None:
        while True:
            reason = "closed"
            exc_seen: BaseException | None = None
            try:
                with trio.CancelScope() as scope:
                    self._cancel = scope
                    await self._once()
                if scope.cancelled_caught:
                    reason = "dropped"
            except (Exception, BaseExceptionGroup) as exc:
                if isinstance(exc, BaseExceptionGroup):
                    cancelled, _rest = exc.split(trio.Cancelled)
                    if cancelled is not None:
                        # Being cancelled (the screen closed) wins over a close that raced it.
                        raise cancelled from None
                reason = describe(exc)
                exc_seen = exc
                if refused(exc) is not None:
                    self.refused = reason  # retrying cannot change the certificate
                    self.session.ended = reason
                    self.session.add_feed(reason, "error")  # whole: the status line cuts it
                if not _expected(exc):
                    self.session.store.log(
                        "connection failed unexpectedly:\n"
                        + "".join(traceback.format_exception(exc))
                    )
            finally:
                self._cancel = None
            bye = self.session.bye_reason
            if bye is not None:
                self.session.bye_reason = None
                if _close_code(exc_seen) in (None, 1000):
                    self.session.ended = bye  # left, removed, replaced: do not come back
                else:
                    reason = f"the server went away: {bye}"
            if self.session.ended is not None:
                self.session.on_disconnected(reason, None)
                self.notify()
                return
            delay = self.backoff.next()
            self.session.on_disconnected(reason, delay)
            self.notify()
            await trio.sleep(delay)

    async def _once(self) -> None:
        s = self.session
        async with open_websocket(
            self.url,
            self.trust,
            connect_timeout=CONNECT_TIMEOUT,
            disconnect_timeout=2,
            max_message_size=2**22,
        ) as ws:
            await ws.send_message(
                encoder.encode(Hello(protocol=PROTOCOL_VERSION, client=CLIENT_NAME)).decode()
            )
            with trio.fail_after(CONNECT_TIMEOUT):
                first = self._decode(await ws.get_message())
            if isinstance(first, Bye):
                s.on_message(first)
                return
            if not isinstance(first, Welcome):
                s.on_message(first)
                raise ProtocolProblem("the server did not say welcome")
            self.connections += 1
            for msg in s.on_connected(first):
                s.sent.append(msg)
                await ws.send_message(encoder.encode(msg).decode())
            self.notify()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._writer, ws)
                nursery.start_soon(self._pinger, ws)
                while True:
                    raw = await ws.get_message()
                    msg = self._decode(raw)
                    if msg is None:
                        continue
                    try:
                        s.on_message(msg)
                    except Exception:
                        s.store.log("error handling a server message:\n" + traceback.format_exc())
                        s.say("error", f"Internal error; details in {s.store.log_path}.")
                    if s.joined:
                        self.backoff.reset()
                    self.notify()
                    # After a Bye keep reading: the close code tells whether to come back.

    def _decode(self, raw: str | bytes):
        try:
            return server_decoder.decode(raw)
        except msgspec.DecodeError as exc:
            self.session.store.log(f"undecodable server message ({exc}): {str(raw)[:500]!r}")
            return None

    async def _writer(self, ws) -> None:
        async for msg in self.outgoing:
            await ws.send_message(encoder.encode(msg).decode())

    async def _pinger(self, ws) -> None:
        while True:
            await trio.sleep(PING_EVERY)
            with trio.fail_after(PING_TIMEOUT):
                await ws.ping()


def _close_code(exc: BaseException | None) -> int | None:
    if exc is None:
        return None
    leaves = list(_leaves(exc)) if isinstance(exc, BaseExceptionGroup) else [exc]
    for leaf in leaves:
        if isinstance(leaf, ConnectionClosed) and leaf.reason is not None:
            return leaf.reason.code
    return None


def _expected(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(_expected(e) for e in _leaves(exc))
    return isinstance(
        exc,
        (
            ConnectionClosed,
            HandshakeError,
            OSError,
            trio.TooSlowError,
            ProtocolProblem,
            trio.BrokenResourceError,
            trio.ClosedResourceError,
        ),
    )
