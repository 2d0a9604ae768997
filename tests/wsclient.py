"""A lean protocol client for tests: real WebSocket, typed messages, a record of every frame.

    async with open_client(server.url, "Ann") as ann:        # connects and says hello
        code = await ann.create(settings)                    # or: await bob.join(code)
        await ann.wait_view(lambda v: len(v.players) == 3)   # waits on the LATEST view
        await ann.send(m.StartGame())
        err = await ann.expect_error("not_your_turn")        # consumes messages in order

A background task reads every frame as it arrives (so a test that looks at one client never
makes the server drop another for not reading), keeps it in ``frames`` (raw text) and
``received`` (decoded), and tracks the latest ``view``, ``receipt`` and the seat's token.
``recv``/``recv_until``/``expect_error`` consume ``received`` in order; ``wait_view`` only looks at
the newest view, so it suits states that last until someone acts (a phase, a turn) and may miss one
that lasted between two frames (use ``recv_until`` on ``received`` for exact sequences).
Game helpers (``spell``, ``commit``, ``reveal``...) keep the summoning word and nonce locally
until the reveal, as a real client must. ``open_table``, ``start_game`` and ``play_round`` seat a
table and script whole rounds of either variant.

Connecting, hello, decoding and what answers a seat request are the one protocol client's
(:mod:`client.wire`); a refused create/join/resume/watch raises its ``Refused`` (with the
server's ``code``).
"""

from __future__ import annotations

import contextlib
import math
import socket
import struct
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import msgspec
import trio
from trio_websocket import ConnectionClosed

from conjure.client import wire
from conjure.client.wire import Refused
from conjure.protocol import messages as m
from conjure.protocol.commitment import commitment, new_nonce
from conjure.protocol.messages import PROTOCOL_VERSION, RoomSettings, View

TIMEOUT = 5.0
__all__ = [
    "Client",
    "Refused",
    "by_seat",
    "connect_from",
    "open_client",
    "open_table",
    "play_round",
    "start_game",
]


class Client:
    """One test connection. Build with :func:`open_client`."""

    def __init__(self, link: wire.Link, name: str) -> None:
        self.link = link
        self.ws = link.ws
        self.name = name
        self.frames: list[str | bytes] = []  # every frame received, raw
        self.received: list[m.ServerMsg] = []  # every frame received, decoded
        self.sent: list[str] = []
        self.view: View | None = None
        self.receipt: m.Receipt | None = None
        self.room: str | None = None
        self.seat: int | None = None
        self.player_id: str | None = None
        self.token: str | None = None
        self.closed: tuple[int, str | None] | None = None  # (code, reason) once closed
        self.secrets: dict[int, tuple[str, bytes]] = {}  # round -> (word, nonce) until revealed
        self._cursor = 0
        self._arrived = trio.Event()

    # ------------------------------------------------------------------ plumbing

    async def _pump(self) -> None:
        self.link.on_frame = self.frames.append
        try:
            while True:
                msg = await self.link.recv()  # strict: an undecodable frame fails the test
                self.received.append(msg)
                match msg:
                    case m.Update(view=view, receipt=receipt):
                        self.view = view
                        if view.you is not None:  # seats move when the host reorders the lobby
                            self.seat = view.you
                        if receipt is not None:
                            self.receipt = receipt
                    case m.Seated():
                        self.room, self.seat = msg.room, msg.seat
                        self.player_id, self.token = msg.player_id, msg.token
                    case m.Watching():
                        self.room, self.seat = msg.room, None
                self._wake()
        except ConnectionClosed as exc:
            self.closed = (exc.reason.code, exc.reason.reason)
            self._wake()

    def _wake(self) -> None:
        self._arrived.set()
        self._arrived = trio.Event()

    async def _wait_arrival(self) -> None:
        if self.closed is not None:
            raise ConnectionError(f"{self.name}: connection closed {self.closed}")
        await self._arrived.wait()

    async def send(self, msg: m.ClientMsg | dict | str | bytes) -> None:
        """Send a message (a struct, a dict encoded as JSON, or a raw frame as is)."""
        if isinstance(msg, m.ClientMsg):
            data: str | bytes = m.encoder.encode(msg).decode()
        elif isinstance(msg, dict):
            data = msgspec.json.encode(msg).decode()
        else:
            data = msg
        if isinstance(data, str):
            self.sent.append(data)
        await self.ws.send_message(data)

    async def recv(self, timeout: float = TIMEOUT) -> m.ServerMsg:
        """The next message not yet consumed."""
        with trio.fail_after(timeout):
            while self._cursor >= len(self.received):
                await self._wait_arrival()
        msg = self.received[self._cursor]
        self._cursor += 1
        return msg

    async def recv_until(
        self, pred: Callable[[m.ServerMsg], bool], timeout: float = TIMEOUT
    ) -> m.ServerMsg:
        """Consume messages until one satisfies ``pred``; return it."""
        with trio.fail_after(timeout):
            while True:
                msg = await self.recv(math.inf)
                if pred(msg):
                    return msg

    def skip_all(self) -> None:
        """Mark every message received so far as consumed."""
        self._cursor = len(self.received)

    async def expect_error(self, code: str, timeout: float = TIMEOUT) -> m.Error:
        """The next Error (Updates before it are skipped); assert its code."""
        msg = await self.recv_until(lambda x: isinstance(x, m.Error), timeout)
        assert isinstance(msg, m.Error)
        assert msg.code == code, f"{self.name}: expected error {code!r}, got {msg}"
        return msg

    async def wait_view(self, pred: Callable[[View], bool], timeout: float = TIMEOUT) -> View:
        """Wait until the latest view satisfies ``pred``."""
        with trio.fail_after(timeout):
            while self.view is None or not pred(self.view):
                await self._wait_arrival()
        return self.view

    async def wait_closed(self, timeout: float = TIMEOUT) -> tuple[int, str | None]:
        with trio.fail_after(timeout):
            while self.closed is None:
                await self._arrived.wait()
        return self.closed

    # ------------------------------------------------------------------ lobby

    async def hello(self, protocol: int = PROTOCOL_VERSION) -> m.ServerMsg:
        await self.send(
            wire.hello_message(
                "tests", protocol, patches=self.link.patches, computer=self.link.computer
            )
        )
        return await self.recv_until(lambda x: isinstance(x, m.Welcome | m.Error))

    async def _seat(self, request: m.ClientMsg) -> wire.SeatAnswer:
        """Send a seat request; its answer, or the server's refusal raised as ``Refused``."""
        await self.send(request)
        msg = await self.recv_until(lambda x: wire.answers(request, x))
        return wire.seat_of(request, msg)

    async def _seated(self, request: m.ClientMsg) -> m.Seated:
        msg = await self._seat(request)
        assert isinstance(msg, m.Seated)
        return msg

    async def create(
        self, settings: RoomSettings | None = None, password: str | None = None
    ) -> str:
        """Create a room as its host; returns the room code."""
        request = m.CreateRoom(
            name=self.name, password=password, settings=settings or RoomSettings()
        )
        return (await self._seated(request)).room

    async def join(self, room: str, password: str | None = None) -> m.Seated:
        return await self._seated(m.JoinRoom(room=room, name=self.name, password=password))

    async def resume(self, room: str, token: str) -> m.Seated:
        return await self._seated(m.ResumeSeat(room=room, token=token))

    async def watch(self, room: str, password: str | None = None) -> m.Watching:
        msg = await self._seat(m.Watch(room=room, password=password))
        assert isinstance(msg, m.Watching)
        return msg

    # ------------------------------------------------------------------ game

    async def choose(self, card: int) -> None:
        await self.send(m.ChooseCard(card=card))

    async def spell(self, word: str) -> None:
        await self.send(m.WriteSpell(word=word))

    async def mark(self, boards: Sequence[int]) -> None:
        await self.send(m.MarkBoards(boards=list(boards)))

    def commitment_for(self, word: str, nonce: bytes | None = None) -> tuple[str, bytes]:
        """The commitment this seat would send for ``word`` this round (and the nonce used)."""
        assert self.view is not None and self.view.game_id is not None and self.seat is not None
        nonce = nonce or new_nonce()
        return commitment(self.view.game_id, self.view.round, self.seat, nonce, word), nonce

    async def commit(self, word: str) -> str:
        """Lock in ``word``: only the commitment leaves; word and nonce stay here."""
        c, nonce = self.commitment_for(word)
        assert self.view is not None
        self.secrets[self.view.round] = (word, nonce)
        await self.send(m.CommitSummon(commitment=c))
        return c

    async def reveal(self) -> None:
        assert self.view is not None
        word, nonce = self.secrets.pop(self.view.round)
        await self.send(m.RevealSummon(word=word, nonce=nonce.hex()))

    async def done(self) -> None:
        await self.send(m.ReviewDone())


def reset(stream: trio.SocketStream) -> None:
    """Close with a TCP reset (SO_LINGER 0), as a crashing or flaky client does."""
    with contextlib.suppress(OSError):
        stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    stream.socket.close()


@contextlib.asynccontextmanager
async def open_client(
    url: str,
    name: str = "tester",
    *,
    hello: bool = True,
    ssl_context: Any = None,
    source: str | None = None,
    patches: bool = True,
    computer: bool = False,
) -> AsyncIterator[Client]:
    """Connect (and by default say hello); the connection closes when the block ends.

    ``source``: the loopback address to connect from (127.0.0.2 ...), for tests of per-address
    limits; ws:// only. ``ssl_context``: how to check a wss:// server (instead of pinning).
    ``patches``: ask for patches (the link turns each back into a whole view). ``computer``:
    say a program plays through this connection.
    """
    async with wire.connect(
        url, ssl_context=ssl_context, source=source, patches=patches, computer=computer
    ) as link:
        client = Client(link, name)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client._pump)
            if hello:
                wire.welcomed(await client.hello())
            yield client
            nursery.cancel_scope.cancel()


async def connect_from(nursery: trio.Nursery, url: str, source: str) -> Any:
    """A client WebSocket to ``url`` (ws://127.0.0.1:PORT) whose TCP socket is bound to ``source``
    (its reader runs in ``nursery``; the caller closes it)."""
    stream = await wire.open_stream(url, source=source)
    try:
        return await wire.wrap(nursery, stream, url)
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise


@contextlib.asynccontextmanager
async def open_table(
    url: str,
    names: Sequence[str],
    settings: RoomSettings | None = None,
    password: str | None = None,
    *,
    patches: bool = True,
) -> AsyncIterator[list[Client]]:
    """Seat ``names`` in a fresh room (the first creates it and is host); seats follow the order."""
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(open_client(url, n, patches=patches)) for n in names
        ]
        code = await clients[0].create(settings, password)
        for c in clients[1:]:
            await c.join(code, password)
        for c in clients:
            await c.wait_view(lambda v: len(v.players) == len(names))
        yield clients


async def start_game(table: Sequence[Client]) -> View:
    """The host (seat 0) starts; returns once every seat sees round 1."""
    await table[0].send(m.StartGame())
    for c in table:
        await c.wait_view(lambda v: v.round == 1)
    assert table[0].view is not None
    return table[0].view


def by_seat(table: Sequence[Client]) -> dict[int, Client]:
    return {c.seat: c for c in table if c.seat is not None}


async def play_round(
    table: Sequence[Client],
    summons: dict[int, str],
    spells: dict[int, str],
    marks: Sequence[int],
    *,
    card: int | None = None,
    review: Callable[[dict[int, Client]], Any] | None = None,
) -> m.ResultView:
    """Play the current round with these words (keys are seats); returns its result.

    Works for both variants: in Dark Magic the conjurer commits right after choosing and writes
    no spell word. ``review`` (optional, async) runs when the review opens, before everyone says
    done. ``card`` defaults to the first card still on the table.
    """
    seats = by_seat(table)
    first = table[0]
    v = await first.wait_view(lambda v: v.phase == "choose")
    number, conj = v.round, v.conjurer
    assert conj is not None
    dark = v.settings.variant == "dark-magic"
    c = seats[conj]
    v = await c.wait_view(lambda v: v.phase == "choose" and v.round == number)
    if card is None:
        card = next(x.index for x in v.cards if not x.used)
    await c.choose(card)
    if dark:
        await c.wait_view(lambda v: v.phase == "dark-commit" and v.round == number)
        await c.commit(summons[conj])
    n = len(v.players)
    order = [(conj + i) % n for i in range(n)]
    for s in order[1:] if dark else order:
        if s not in spells:
            continue
        await seats[s].wait_view(
            lambda v, s=s: v.phase == "spell" and v.turn == s and v.round == number
        )
        await seats[s].spell(spells[s])
    await c.wait_view(lambda v: v.phase == "mark" and v.round == number)
    await c.mark(marks)
    for s, word in summons.items():
        if dark and s == conj:
            continue
        await seats[s].wait_view(lambda v: v.phase == "commit" and v.round == number)
        await seats[s].commit(word)
    for s in summons:
        await seats[s].wait_view(lambda v: v.phase == "reveal" and v.round == number)
        await seats[s].reveal()

    def reviewing_or_scored(v: View) -> bool:
        return (v.phase == "review" and v.round == number) or len(v.results) >= number

    await first.wait_view(reviewing_or_scored)
    if review is not None and first.view is not None and first.view.phase == "review":
        await review(seats)
    for s, cl in seats.items():
        v = await cl.wait_view(reviewing_or_scored)
        me = v.players[s]
        if v.phase == "review" and v.round == number and not (me.kicked or me.skipped or me.done):
            await cl.done()
    view = await first.wait_view(lambda v: len(v.results) >= number)
    return view.results[number - 1]


def unframe(data: bytes) -> bytes:
    """The payload of one whole, unmasked frame as the server writes it (RFC 6455 5.2)."""
    n, start = data[1] & 0x7F, 2
    if n == 126:
        n, start = int.from_bytes(data[2:4], "big"), 4
    elif n == 127:
        n, start = int.from_bytes(data[2:10], "big"), 10
    assert len(data) == start + n, "not one whole frame"
    return data[start:]
