"""The one protocol client: every Conjure program that talks to a server does it through here.

The terminal client (:mod:`client.net`), the computer players (:mod:`client.bots.player`),
``make play`` (:mod:`client.local`) and the tests' client (``tests/wsclient.py``) connect, greet,
join and close with this module, so a protocol change is made once:

- :func:`connect` opens a WebSocket to ``ws://`` or ``wss://`` (a wss:// certificate is judged by
  :mod:`client.pins` before anything is sent, unless an explicit ``ssl_context`` is given),
  optionally from a chosen source address (tests of per-address limits), and yields a
  :class:`Link`. Leaving the block closes the WebSocket *and* the TCP stream under it: this
  module opens that stream itself, so it can close it (trio-websocket 0.12.2's client never
  closes its socket after a close the server started, a ResourceWarning).
- :class:`Link` sends and receives typed messages; :meth:`Link.hello` checks the protocol
  version; :meth:`Link.create`, :meth:`~Link.join`, :meth:`~Link.resume` and :meth:`~Link.watch`
  return the server's ``seated``/``watching`` or raise :class:`Refused`, the one error class for
  "the server said no", carrying the server's ``code``, ``message`` and ``ref``.
- :class:`Backoff` is the reconnect policy (one definition; callers pick its scale and bound).
- :func:`describe` turns a failed or lost connection into a short reason for people;
  :func:`gave_up_line` is the one line said when the server could not be reached.

Imports only :mod:`protocol` and :mod:`client.pins`.
"""

from __future__ import annotations

import contextlib
import random
import secrets
import ssl
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import msgspec
import trio
from trio_websocket import (
    ConnectionClosed,
    ConnectionRejected,
    HandshakeError,
    WebSocketConnection,
    wrap_client_stream,
)

from conjure.client.pins import CertificateRefused, Trust, open_tls, server_key, tls_handshake
from conjure.protocol import messages as m
from conjure.protocol.patch import FEATURE as PATCHES
from conjure.protocol.patch import PatchError, apply
from conjure.protocol.structs import struct_tag
from conjure.protocol.wsclose import crossed_close

#: Largest frame a client accepts (a full view of an 8-player game with a big custom deck).
MAX_MESSAGE_SIZE = 2**22
CONNECT_TIMEOUT = 10.0
CLOSE_TIMEOUT = 2.0
#: Tries in a row (the first one included) after which a client stops trying to reach a server.
GIVE_UP_AFTER = 4
#: The message types answered with ``seated``/``watching`` or an error.
SEAT_REQUESTS = (m.CreateRoom, m.JoinRoom, m.ResumeSeat, m.Watch)

SeatAnswer = m.Seated | m.Watching


class Refused(Exception):
    """The server refused a message (an ``error``), or speaks another protocol version."""

    def __init__(self, code: str, message: str, ref: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.ref = ref

    @classmethod
    def of(cls, err: m.Error) -> Refused:
        return cls(err.code, err.message, err.ref)

    @property
    def error(self) -> m.Error:
        """The refusal as the server's message (what a Session is handed)."""
        return m.Error(code=self.code, message=self.message, ref=self.ref)

    def __str__(self) -> str:
        return self.message.strip() or self.code.replace("_", " ")


class ProtocolProblem(Exception):
    """The server said something this client cannot follow (no welcome, an undecodable frame)."""


# ------------------------------------------------------------------ messages


def encode(msg: m.ClientMsg) -> str:
    return m.encoder.encode(msg).decode()


def decode(raw: str | bytes) -> m.ServerMsg:
    """A server message, typed; ``msgspec.DecodeError`` if it is none."""
    return m.server_decoder.decode(raw)


_VIEW = msgspec.json.Decoder(m.View)


def hello_message(
    client: str,
    protocol: int = m.PROTOCOL_VERSION,
    *,
    patches: bool = False,
    computer: bool = False,
) -> m.Hello:
    features = [PATCHES] if patches else []
    if computer:
        features.append(m.COMPUTER)
    return m.Hello(protocol=protocol, client=client, features=features)


def welcomed(msg: m.ServerMsg) -> m.Welcome:
    """``msg`` as the answer to hello: the Welcome, or Refused (an error, or another protocol
    version), or ProtocolProblem."""
    if isinstance(msg, m.Welcome):
        if msg.protocol != m.PROTOCOL_VERSION:
            raise Refused(
                "protocol_version",
                f"The server speaks protocol version {msg.protocol}; this client speaks"
                f" {m.PROTOCOL_VERSION}. Use a client of the server's version.",
                "hello",
            )
        return msg
    if isinstance(msg, m.Error):
        raise Refused.of(msg)
    raise ProtocolProblem(f"the server did not say welcome ({type(msg).__name__})")


def _tag(msg: m.ClientMsg) -> str:
    return struct_tag(type(msg))


def answers(request: m.ClientMsg, msg: m.ServerMsg) -> bool:
    """Whether ``msg`` is the server's answer to the seat request ``request``."""
    if isinstance(msg, m.Error):
        return msg.ref in (None, _tag(request))
    if isinstance(request, m.Watch):
        return isinstance(msg, m.Watching)
    return isinstance(msg, m.Seated)


def seat_of(request: m.ClientMsg, msg: m.ServerMsg) -> SeatAnswer:
    """The answer ``msg`` (see :func:`answers`) as a seat, or Refused."""
    if isinstance(msg, m.Error):
        raise Refused.of(msg)
    assert isinstance(msg, m.Seated | m.Watching) and answers(request, msg), msg
    return msg


def is_seat_request(msg: m.ClientMsg) -> bool:
    return isinstance(msg, SEAT_REQUESTS)


# ------------------------------------------------------------------ the link


class Link:
    """One open connection to a server: typed messages in both directions.

    ``strict``: an undecodable frame raises ProtocolProblem (tests); otherwise it goes to
    ``on_undecodable`` and is skipped. ``on_frame`` sees every frame received, raw.

    ``patches``: ask for patches in hello (protocol.patch). The link applies each ``patch`` to
    the view it holds and hands on an ``update`` with the whole view, so no caller ever sees a
    patch; one that does not follow from the view held (or does not apply) is dropped and a
    whole view asked for (``resync``).

    ``computer``: say in hello that a program plays through this link (``messages.COMPUTER``),
    so that its seat is shown as a computer player's.
    """

    def __init__(
        self,
        ws: WebSocketConnection,
        *,
        strict: bool = True,
        on_undecodable: Callable[[str | bytes, Exception], None] | None = None,
        on_frame: Callable[[str | bytes], None] | None = None,
        patches: bool = True,
        computer: bool = False,
    ) -> None:
        self.ws = ws
        self.patches = patches
        self.computer = computer
        #: The view held (as JSON data) and its number; None until a numbered update.
        self._doc: dict[str, Any] | None = None
        self._n: int | None = None
        self._asked = False  # a resync was sent and its whole view has not come yet
        #: Patches applied, and how often a whole view had to be asked for (tests, benches).
        self.patched = 0
        self.resyncs = 0
        self.strict = strict
        self.on_undecodable = on_undecodable
        self.on_frame = on_frame
        self.welcome: m.Welcome | None = None
        #: The reason of the server's last ``bye`` (its close code, raised as ConnectionClosed
        #: by the next receive, says whether it was final).
        self.bye: str | None = None
        self._early: list[m.ServerMsg] = []  # arrived while waiting for a seat answer
        #: Answer ``deal_open`` with a random ``deal_seed`` (off only to test a silent seat).
        self.contribute = True
        #: The deal commitments this connection was shown (compare with the log's game_started).
        self.deal_commitments: list[str] = []
        #: Told each deal's commitment and this client's share before the share is sent, to keep
        #: them (``StateDir.save_deal``): an audit then checks the server logged both as they were.
        self.on_deal: Callable[[str, str], None] | None = None

    async def send(self, msg: m.ClientMsg) -> None:
        await self.ws.send_message(encode(msg))

    async def recv(self) -> m.ServerMsg:
        """The next server message (ConnectionClosed once the connection is closed)."""
        if self._early:
            return self._early.pop(0)
        return await self._next()

    async def _next(self) -> m.ServerMsg:
        while True:
            raw = await self.ws.get_message()
            if self.on_frame is not None:
                self.on_frame(raw)
            try:
                msg = decode(raw)
            except msgspec.DecodeError as exc:
                if self.strict:
                    raise ProtocolProblem(
                        f"undecodable server message ({exc}): {str(raw)[:200]!r}"
                    ) from exc
                if self.on_undecodable is not None:
                    self.on_undecodable(raw, exc)
                continue
            if isinstance(msg, m.Patch):
                update = await self._patched(msg)
                if update is None:
                    continue
                msg = update
            elif isinstance(msg, m.Update) and msg.n is not None:
                self._doc = msgspec.to_builtins(msg.view, str_keys=True)
                self._n = msg.n
                self._asked = False
            if isinstance(msg, m.Bye):
                self.bye = msg.reason
            elif isinstance(msg, m.DealOpen) and self.contribute:
                # The fair deal: every client adds randomness of its own (protocol.deal).
                self.deal_commitments.append(msg.commitment)
                share = secrets.token_hex(32)
                if self.on_deal is not None:
                    self.on_deal(msg.commitment, share)
                await self.send(m.DealSeed(seed=share))
            return msg

    async def _patched(self, patch: m.Patch) -> m.Update | None:
        """The update ``patch`` stands for, or None (dropped: a whole view is on its way)."""
        if self._doc is not None and patch.base == self._n:
            try:
                doc = apply(self._doc, patch.ops)
                view = _VIEW.decode(m.encoder.encode(doc))  # decoded as a whole view is
            except (PatchError, msgspec.DecodeError):
                pass  # the view held is now unknown: ask for a whole one
            else:
                self._doc, self._n = doc, patch.n
                self.patched += 1
                return m.Update(view=view, receipt=patch.receipt, feed=patch.feed, n=patch.n)
        self._doc = self._n = None
        if not self._asked:  # ask once; patches until the whole view arrives are dropped
            self._asked = True
            self.resyncs += 1
            await self.send(m.Resync())
        return None

    async def greet(
        self, client: str, protocol: int = m.PROTOCOL_VERSION, timeout: float = CONNECT_TIMEOUT
    ) -> m.ServerMsg:
        """Say hello; the server's first answer, whatever it is (see :func:`welcomed`)."""
        await self.send(
            hello_message(client, protocol, patches=self.patches, computer=self.computer)
        )
        with trio.fail_after(timeout):
            return await self.recv()

    async def hello(self, client: str, timeout: float = CONNECT_TIMEOUT) -> m.Welcome:
        """Say hello and check the welcome (Refused, ProtocolProblem otherwise)."""
        self.welcome = welcomed(await self.greet(client, timeout=timeout))
        return self.welcome

    async def request_seat(
        self, request: m.ClientMsg, timeout: float = CONNECT_TIMEOUT
    ) -> SeatAnswer:
        """Send a seat request; its Seated/Watching, or Refused. Other messages that arrive
        first are kept for :meth:`recv`."""
        await self.send(request)
        with trio.fail_after(timeout):
            while True:
                msg = await self._next()
                if answers(request, msg):
                    return seat_of(request, msg)
                self._early.append(msg)

    async def create(
        self, name: str, settings: m.RoomSettings | None = None, password: str | None = None
    ) -> m.Seated:
        return await self._seat(
            m.CreateRoom(name=name, password=password, settings=settings or m.RoomSettings())
        )

    async def join(self, room: str, name: str, password: str | None = None) -> m.Seated:
        return await self._seat(m.JoinRoom(room=room, name=name, password=password))

    async def resume(self, room: str, token: str) -> m.Seated:
        return await self._seat(m.ResumeSeat(room=room, token=token))

    async def watch(self, room: str, password: str | None = None) -> m.Watching:
        got = await self.request_seat(m.Watch(room=room, password=password))
        assert isinstance(got, m.Watching)
        return got

    async def _seat(self, request: m.ClientMsg) -> m.Seated:
        got = await self.request_seat(request)
        assert isinstance(got, m.Seated)
        return got


# ------------------------------------------------------------------ connecting


def _parts(url: str) -> tuple[str, str, int, str, str]:
    """(scheme, host, port, Host header, resource) of a ws:// or wss:// URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss"):
        raise ValueError(f"{url!r} is not a ws:// or wss:// address")
    host = parts.hostname or "localhost"
    port = parts.port or (443 if parts.scheme == "wss" else 80)
    header = server_key(host, port)
    if port in (80, 443):
        header = header.rsplit(":", 1)[0]
    resource = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, host, port, header, resource


async def open_stream(
    url: str,
    *,
    trust: Trust | None = None,
    ssl_context: ssl.SSLContext | None = None,
    source: str | None = None,
) -> trio.SocketStream | trio.SSLStream[trio.SocketStream]:
    """The TCP (ws://) or TLS (wss://) stream a WebSocket to ``url`` runs on.

    wss://: the certificate is judged by ``trust`` (client.pins; default: the user's state
    directory), or by ``ssl_context`` when one is given. ``source``: the local address to
    connect from (ws:// only).
    """
    scheme, host, port, _, _ = _parts(url)
    if source is not None:
        if scheme != "ws":
            raise ValueError("a source address is for ws:// connections only")
        sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
        try:
            await sock.bind((source, 0))
            await sock.connect((host, port))
        except BaseException:
            sock.close()
            raise
        return trio.SocketStream(sock)
    if scheme == "ws":
        return await trio.open_tcp_stream(host, port)
    if ssl_context is None:
        return await open_tls(host, port, trust or Trust())
    return await tls_handshake(host, port, ssl_context)


async def wrap(
    nursery: trio.Nursery,
    stream: trio.SocketStream | trio.SSLStream[trio.SocketStream],
    url: str,
    *,
    message_queue_size: int = 1,
    max_message_size: int = MAX_MESSAGE_SIZE,
) -> WebSocketConnection:
    """The WebSocket handshake for ``url`` on ``stream`` (its reader runs in ``nursery``)."""
    _, _, _, header, resource = _parts(url)
    return await wrap_client_stream(
        nursery,
        stream,
        header,
        resource,
        message_queue_size=message_queue_size,
        max_message_size=max_message_size,
    )


@contextlib.asynccontextmanager
async def open_websocket(
    url: str,
    *,
    trust: Trust | None = None,
    ssl_context: ssl.SSLContext | None = None,
    source: str | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
    close_timeout: float = CLOSE_TIMEOUT,
    message_queue_size: int = 1,
    max_message_size: int = MAX_MESSAGE_SIZE,
) -> AsyncIterator[WebSocketConnection]:
    """A WebSocket to ``url``; on leaving, the close handshake (at most ``close_timeout``, even
    when cancelled) and then the stream is closed. A failure comes out as itself, not wrapped
    in an exception group."""
    with trio.fail_after(connect_timeout):
        stream = await open_stream(url, trust=trust, ssl_context=ssl_context, source=source)
    alone: BaseException | None = None
    finished = False  # the caller's block ended by itself, not by an error
    try:
        async with trio.open_nursery() as nursery:
            with trio.fail_after(connect_timeout):
                ws = await wrap(
                    nursery,
                    stream,
                    url,
                    message_queue_size=message_queue_size,
                    max_message_size=max_message_size,
                )
            try:
                yield ws
                finished = True
            finally:
                with trio.CancelScope(shield=True):
                    with trio.move_on_after(close_timeout):
                        await ws.aclose()
                    await trio.aclose_forcefully(stream)
                nursery.cancel_scope.cancel()  # the reader, should it still wait
    except BaseExceptionGroup as group:
        alone = _single(group)
        if alone is None:
            raise
        if finished and crossed_close(alone):
            alone = None  # a ping crossed the Close we sent on leaving: that close is done
    finally:
        await trio.aclose_forcefully(stream)
    if alone is not None:
        raise alone


@contextlib.asynccontextmanager
async def connect(
    url: str,
    *,
    client: str | None = None,
    trust: Trust | None = None,
    ssl_context: ssl.SSLContext | None = None,
    source: str | None = None,
    strict: bool = True,
    on_undecodable: Callable[[str | bytes, Exception], None] | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
    message_queue_size: int = 1,
    patches: bool = True,
    computer: bool = False,
) -> AsyncIterator[Link]:
    """A :class:`Link` to ``url``; with ``client`` (the name sent in hello) it has already
    said hello and been welcomed (else Refused or ProtocolProblem)."""
    async with open_websocket(
        url,
        trust=trust,
        ssl_context=ssl_context,
        source=source,
        connect_timeout=connect_timeout,
        message_queue_size=message_queue_size,
    ) as ws:
        link = Link(
            ws, strict=strict, on_undecodable=on_undecodable, patches=patches, computer=computer
        )
        if client is not None:
            await link.hello(client, timeout=connect_timeout)
        yield link


def _single(group: BaseExceptionGroup) -> BaseException | None:
    """The one exception in a group of one (groups of one nested inside included)."""
    while len(group.exceptions) == 1:
        inner = group.exceptions[0]
        if not isinstance(inner, BaseExceptionGroup):
            return inner
        group = inner
    return None


# ------------------------------------------------------------------ reconnecting


class Backoff:
    """The pause before each retry: ``first``, doubling up to ``cap`` seconds, each scaled by a
    random factor in [0.75, 1.25) so that clients dropped together do not return together.

    With ``tries``, :meth:`next` returns None once that many tries in a row have failed (the
    caller gives up, or asks the person); :meth:`reset` after a success starts over.
    """

    def __init__(
        self,
        first: float = 1.0,
        cap: float = 20.0,
        rng: random.Random | None = None,
        *,
        tries: int | None = None,
    ) -> None:
        self.first = first
        self.cap = cap
        self.tries = tries
        self.attempt = 0  # failures in a row so far
        self.rng = rng or random.Random()

    def next(self) -> float | None:
        """Count one more failure; the pause before the next try (None: stop trying)."""
        base = min(self.cap, self.first * (2**self.attempt))
        self.attempt += 1
        if self.tries is not None and self.attempt >= self.tries:
            return None
        return base * (0.75 + self.rng.random() / 2)

    def reset(self) -> None:
        self.attempt = 0


# ------------------------------------------------------------------ explaining failures


def leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions inside (nested) exception groups, or ``exc`` itself."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from leaves(inner)
    else:
        yield exc


def describe(exc: BaseException) -> str:
    """A short human reason for a lost or refused connection ("connection refused")."""
    if isinstance(exc, BaseExceptionGroup):
        found = list(leaves(exc))
        if found:
            return describe(found[0])
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
        # trio.open_tcp_stream: "all attempts to connect to H:P failed", the errors as cause.
        cause = exc.__cause__
        if exc.strerror is None and isinstance(cause, BaseException):
            return describe(cause)
        if exc.strerror:
            return exc.strerror[:1].lower() + exc.strerror[1:]
        return str(exc) or type(exc).__name__
    if isinstance(exc, trio.BrokenResourceError) and exc.__cause__ is not None:
        return describe(exc.__cause__)
    return str(exc) or type(exc).__name__


def gave_up_line(url: str, reason: str, width: int = 80) -> str:
    """The one line said when ``url`` could not be reached: whole, never wider than ``width``."""
    line = f"Cannot reach {url} ({reason})"
    if len(line) <= width:
        return line
    line = f"Cannot reach {url}"
    if len(line) <= width:
        return line
    return line[: width - 1] + "…"


def close_code(exc: BaseException | None) -> int | None:
    """The WebSocket close code in ``exc`` (or its group), if the connection was closed."""
    if exc is None:
        return None
    for leaf in leaves(exc):
        if isinstance(leaf, ConnectionClosed) and leaf.reason is not None:
            return leaf.reason.code
    return None


def expected(exc: BaseException) -> bool:
    """Whether ``exc`` is an ordinary network failure (not a bug worth a traceback)."""
    return all(
        isinstance(
            leaf,
            (
                ConnectionClosed,
                HandshakeError,
                OSError,
                trio.TooSlowError,
                ProtocolProblem,
                Refused,
                trio.BrokenResourceError,
                trio.ClosedResourceError,
            ),
        )
        for leaf in leaves(exc)
    )
