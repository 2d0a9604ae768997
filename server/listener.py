"""The accept loop's guard: out of file descriptors is a pause, not the end; floods close early.

``trio.serve_listeners`` ends the server on any accept error it does not know, and on EMFILE it logs
every 100 ms. This listener wraps the TCP listener (a public ``trio.abc.Listener``): when the process
or the system is out of descriptors or buffers it backs off (up to a second), says so once, says so
again when accepting works, and never raises for one connection's trouble. Each accepted socket is
checked against the address book's hard ceilings before any byte of it is read.
"""

from __future__ import annotations

import errno
import logging
from dataclasses import dataclass

import trio

from conjure.server.gate import AddressBook

log = logging.getLogger("conjure.server")

#: Accept errors that mean "no room right now": wait and try again.
CAPACITY_ERRNOS = frozenset(
    getattr(errno, name)
    for name in ("EMFILE", "ENFILE", "ENOBUFS", "ENOMEM")
    if hasattr(errno, name)
)
FIRST_BACKOFF = 0.05
MAX_BACKOFF = 1.0


@dataclass(frozen=True)
class Admitted:
    host: str  #: the peer's address, as seen at accept
    ticket: int  #: the handshake's, in the address book (``AddressBook.admit_pending``)


class GuardedListener(trio.abc.Listener[trio.SocketStream]):
    def __init__(self, inner: trio.SocketListener, book: AddressBook) -> None:
        self.inner = inner
        self.book = book
        #: Times accept failed for lack of descriptors or memory (for tests and the operator).
        self.starved = 0
        #: Each accepted socket's peer, as seen at accept, and its handshake's ticket in the
        #: address book, until the handler takes them (``admitted``).
        self._admitted: dict[trio.SocketStream, Admitted] = {}
        self._starving = False

    @property
    def port(self) -> int:
        return int(self.inner.socket.getsockname()[1])

    async def accept(self) -> trio.SocketStream:
        delay = FIRST_BACKOFF
        while True:
            try:
                stream = await self.inner.accept()
            except trio.ClosedResourceError:
                raise
            except OSError as exc:
                self.starved += 1
                if not self._starving:
                    self._starving = True
                    if exc.errno in CAPACITY_ERRNOS:
                        log.error(
                            "cannot accept connections: %s; retrying until it clears",
                            exc.strerror or exc,
                        )
                    else:
                        log.error("accept failed: %s; retrying", exc)
                await trio.sleep(delay)
                delay = min(MAX_BACKOFF, delay * 2)
                continue
            if self._starving:
                self._starving = False
                delay = FIRST_BACKOFF
                log.warning("accepting connections again")
            try:
                peer = stream.socket.getpeername()
            except OSError:  # reset before we looked: nothing to serve
                await trio.aclose_forcefully(stream)
                continue
            host = str(peer[0])
            ticket = self.book.admit_pending(host, int(peer[1]))
            if ticket is None:
                await trio.aclose_forcefully(stream)
                continue
            self._admitted[stream] = Admitted(host, ticket)
            return stream

    def admitted(self, stream: trio.SocketStream) -> Admitted | None:
        """The peer and ticket of a socket this listener accepted (once: the handler's).

        Why here: a peer that resets before the handler runs has no address any more
        (``getpeername`` fails), yet its handshake was counted and must be let go.
        """
        return self._admitted.pop(stream, None)

    async def aclose(self) -> None:
        await self.inner.aclose()
