"""The client's connection: connect, say hello, join, pump messages, reconnect with backoff.

Runs on Trio (inside the UI's guest run). The :class:`~client.session.Session` decides what to
send on (re)connection and what every server message means; this module moves messages through
the one protocol client (:mod:`client.wire`) and keeps the link up: a WebSocket ping every 15 s
so a dead link is noticed, and after a loss a retry with backoff (1 s doubling, with jitter) and
a banner in the session meanwhile.

Retrying is bounded: after :data:`~client.wire.GIVE_UP_AFTER` tries in a row that never got a
seat back, it calls ``session.on_gave_up(line)`` with one line that fits 80 columns ("Cannot reach
ws://127.0.0.1:9999 (connection refused)") and waits for ``session.retry`` (a ``trio.Event``)
before trying again from the start; meanwhile it tries once by itself every
:data:`AUTO_RETRY` seconds (a newcomer's clients stayed on the question after a server restart
that took 25 s, while the bots came back by themselves). A Session without that pair is retried as before, every
20 s. A refused join (a wrong room code, name or password) is handed to the Session as the
error it is and never retried here: the connection stays open for the person's next try. It
stops for good when a wss:// server's certificate is refused (:mod:`client.pins`) or the server
speaks another protocol version: retrying cannot change either.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable

import trio

from conjure.client import wire
from conjure.client.pins import Trust, refused
from conjure.client.session import Session
from conjure.client.wire import Backoff, describe
from conjure.protocol.messages import Bye, ClientMsg, ServerMsg

#: Seconds between the tries a connection makes by itself once it gave up and asked the person.
AUTO_RETRY = 15.0

__all__ = ["CLIENT_NAME", "Backoff", "Connection", "describe"]

CLIENT_NAME = "conjure-play/0.1"
PING_EVERY = 15.0
PING_TIMEOUT = 15.0


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
        auto_retry: float | None = None,
    ) -> None:
        self.session = session
        self.url = url
        self.outgoing = outgoing
        self.notify = notify
        self.trust = trust
        self.backoff = backoff or Backoff(tries=wire.GIVE_UP_AFTER)
        #: Seconds between the tries made by itself once it gave up (the person may press r).
        self.auto_retry = AUTO_RETRY if auto_retry is None else auto_retry
        self.connections = 0
        #: Why the loop stopped for good (a refused certificate, another protocol), if it did.
        self.refused: str | None = None
        #: How many times the server could not be reached after every try (on_gave_up calls).
        self.gave_up = 0
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
                    _errors, passing = exc.split(Exception)
                    if passing is not None:
                        # Being cancelled (the screen closed) wins over a close that raced it,
                        # and so does a KeyboardInterrupt: neither is a lost connection.
                        raise passing from None
                reason = describe(exc)
                exc_seen = exc
                if refused(exc) is not None or _other_protocol(exc):
                    self.refused = reason  # retrying cannot change the certificate or version
                    self.session.ended = reason
                    self.session.add_feed(reason, "error")  # whole: the status line cuts it
                if not wire.expected(exc):
                    self.session.store.log(
                        "connection failed unexpectedly:\n"
                        + "".join(traceback.format_exception(exc))
                    )
            finally:
                self._cancel = None
            bye = self.session.bye_reason
            if bye is not None:
                self.session.bye_reason = None
                if wire.close_code(exc_seen) in (None, 1000):
                    self.session.ended = bye  # left, removed, replaced: do not come back
                else:
                    reason = f"the server went away: {bye}"
            if self.session.ended is not None:
                self.session.on_disconnected(reason, None)
                self.notify()
                return
            delay = self.backoff.next()
            if delay is None:
                if await self._give_up(reason):
                    continue
                delay = self.backoff.cap
            self.session.on_disconnected(reason, delay)
            self.notify()
            await trio.sleep(delay)

    async def _give_up(self, reason: str) -> bool:
        """Tell the Session the server cannot be reached and wait until it asks to retry;
        False if the Session has no ``on_gave_up``/``retry`` (then retrying goes on)."""
        s = self.session
        self.session.on_disconnected(reason, None)
        on_gave_up = getattr(s, "on_gave_up", None)
        if on_gave_up is None:
            return False
        self.gave_up += 1
        on_gave_up(wire.gave_up_line(self.url, reason))
        self.notify()
        retry = getattr(s, "retry", None)  # read after the call: it may make a fresh one
        if not isinstance(retry, trio.Event):
            return False
        with trio.move_on_after(self.auto_retry):
            await retry.wait()
        if retry.is_set():  # asked: a few quick tries from the start again
            self.backoff.reset()
        return True  # (by itself: one try, then the same question if it fails)

    def _keep_deal(self, commitment: str, share: str) -> None:
        """A deal opened for this seat: its commitment and our share, kept for an audit."""
        s = self.session
        v = s.view
        seat = v.you if v is not None and v.phase == "lobby" else None
        # The name as the server seated it (it tidies width and spaces), not as it was typed
        seated = next((p.name for p in v.players if p.seat == seat), None) if v else None
        try:
            s.store.save_deal(
                s.server,
                s.room or "",
                commitment=commitment,
                share=share,
                seat=seat,
                name=seated or s.name,
            )
            s.dealt = (s.room or "", commitment)
        except OSError as exc:  # the share still goes: the deal is not held up by a disk
            s.store.log(f"could not keep the deal's share ({exc.strerror or exc})")

    async def _once(self) -> None:
        s = self.session
        async with wire.connect(
            self.url, trust=self.trust, strict=False, on_undecodable=self._bad
        ) as link:
            link.on_deal = self._keep_deal
            first = await link.greet(CLIENT_NAME)
            if isinstance(first, Bye):
                self._deliver(first)
                return
            welcome = wire.welcomed(first)  # Refused: the reason run() shows
            self.connections += 1
            if self.trust is not None:  # (the join lines it shows carry the server's pin)
                s.pin = self.trust.accepted
            for msg in s.on_connected(welcome):
                s.sent.append(msg)
                if wire.is_seat_request(msg):
                    try:
                        answer: ServerMsg = await link.request_seat(msg)
                    except wire.Refused as refusal:
                        answer = refusal.error  # the session shows the form; no retry here
                    self._deliver(answer)
                else:
                    await link.send(msg)
            self.notify()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._writer, link)
                nursery.start_soon(self._pinger, link)
                while True:
                    self._deliver(await link.recv())
                    # After a Bye keep reading: the close code tells whether to come back.

    def _deliver(self, msg: ServerMsg) -> None:
        s = self.session
        try:
            s.on_message(msg)
        except Exception:
            s.store.log("error handling a server message:\n" + traceback.format_exc())
            s.say("error", f"Internal error; details in {s.store.log_path}.")
        if s.joined:
            self.backoff.reset()
        self.notify()

    def _bad(self, raw: str | bytes, exc: Exception) -> None:
        self.session.store.log(f"undecodable server message ({exc}): {str(raw)[:500]!r}")

    async def _writer(self, link: wire.Link) -> None:
        async for msg in self.outgoing:
            await link.send(msg)

    async def _pinger(self, link: wire.Link) -> None:
        while True:
            await trio.sleep(PING_EVERY)
            with trio.fail_after(PING_TIMEOUT):
                await link.ws.ping()


def _other_protocol(exc: BaseException) -> bool:
    return any(
        isinstance(leaf, wire.Refused) and leaf.code == "protocol_version"
        for leaf in wire.leaves(exc)
    )
