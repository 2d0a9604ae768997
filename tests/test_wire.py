"""The one protocol client (client/wire.py) against a real server, and client/net.py's bounded
retries on top of it: hello and the version check, every join refusal as ``Refused`` with the
server's code, the backoff's bounds, giving up on a closed port (and retrying when asked), a
refused join handed to the session without a reconnect, and sockets closed whoever closes."""

from __future__ import annotations

import contextlib
import gc
import random
import socket
import warnings
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import pytest
import trio
from trio_websocket import ConnectionClosed, open_websocket_url
from wsclient import open_table, start_game

from conjure.client import net, wire
from conjure.client.statefile import StateDir
from conjure.protocol import messages as m


def closed_port() -> int:
    """A loopback port nothing listens on (bound once, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------ hello and versions


async def test_hello_is_welcomed_with_the_protocol_version(server):
    async with wire.connect(server.url, client="tests-wire") as link:
        assert link.welcome is not None
        assert link.welcome.protocol == m.PROTOCOL_VERSION
        seated = await link.create("Ann")
        assert isinstance(seated, m.Seated) and len(seated.room) == 4


async def test_another_protocol_version_is_refused_either_way(server):
    async with wire.connect(server.url) as link:  # the server refuses our number
        first = await link.greet("tests-wire", protocol=99)
        with pytest.raises(wire.Refused) as caught:
            wire.welcomed(first)
        assert caught.value.code == "protocol_version"
    # ... and the client refuses a server that speaks another one.
    with pytest.raises(wire.Refused) as caught:
        wire.welcomed(m.Welcome(protocol=m.PROTOCOL_VERSION + 1, server="future/9"))
    assert caught.value.code == "protocol_version"
    assert str(m.PROTOCOL_VERSION + 1) in str(caught.value)
    with pytest.raises(wire.ProtocolProblem):
        wire.welcomed(m.Chat(name="x", text="hi"))


# ------------------------------------------------------------------ seat requests


async def test_every_join_refusal_is_refused_with_the_servers_code(server):
    async with wire.connect(server.url, client="host") as host:
        room = (await host.create("Ann", password="sesame")).room

        async def refusal(request) -> wire.Refused:
            async with wire.connect(server.url, client="guest") as link:
                with pytest.raises(wire.Refused) as caught:
                    await request(link)
                return caught.value

        cases = {
            "unknown_room": lambda link: link.join("ZZZZ", "Bob"),
            "wrong_password": lambda link: link.join(room, "Bob", "open sesame"),
            "name_taken": lambda link: link.join(room, "ANN", "sesame"),
            "bad_name": lambda link: link.join(room, "\u2800", "sesame"),
            "bad_token": lambda link: link.resume(room, "x" * 43),
        }
        for code, request in cases.items():
            got = await refusal(request)
            assert got.code == code, (code, got.code, got.message)
            assert got.message and str(got) == got.message.strip()
            assert got.error == m.Error(code=got.code, message=got.message, ref=got.ref)
        assert (await refusal(cases["unknown_room"])).ref == "join_room"
        missing = await refusal(lambda link: link.join(room, "Bob"))
        assert missing.code == "password_required", missing.message


async def test_watching_and_joining_a_started_game_are_refused_too(server):
    settings = m.RoomSettings(spectators=False)
    async with open_table(server.url, ["Ann", "Bob", "Cy"], settings) as table:
        await start_game(table)
        room = table[0].room
        assert room is not None
        async with wire.connect(server.url, client="late") as link:
            with pytest.raises(wire.Refused) as caught:
                await link.join(room, "Dee")
            assert caught.value.code == "already_started"
            with pytest.raises(wire.Refused) as caught:
                await link.watch(room)
            assert caught.value.code == "no_spectators"
            # The connection stays usable after refusals: the seat's token still works.
            assert table[1].token is not None
            seated = await link.resume(room, table[1].token)
            assert seated.seat == 1


async def test_a_source_address_is_what_the_server_sees(server):
    async with wire.connect(server.url, client="from-2", source="127.0.0.2") as link:
        await link.create("Ann")
        assert "127.0.0.2" in {c.remote for c in server.connections}


# ------------------------------------------------------------------ backoff and reasons


def test_backoff_doubles_with_jitter_up_to_its_cap_and_stops_after_its_tries():
    b = wire.Backoff(1.0, 20.0, random.Random(7), tries=8)
    pauses = [b.next() for _ in range(8)]
    assert pauses[-1] is None  # the 8th failure in a row: give up
    for i, pause in enumerate(pauses[:-1]):
        base = min(20.0, 2.0**i)
        assert pause is not None and 0.75 * base <= pause < 1.25 * base
    b.reset()
    assert b.attempt == 0 and b.next() is not None
    endless = wire.Backoff(0.5, 10.0, random.Random(1))
    assert all((p := endless.next()) is not None and p < 12.5 for _ in range(100))


def test_the_gave_up_line_is_whole_and_fits():
    line = wire.gave_up_line("ws://127.0.0.1:9999", "connection refused")
    assert line == "Cannot reach ws://127.0.0.1:9999 (connection refused)"
    long_reason = wire.gave_up_line("ws://127.0.0.1:9999", "x" * 90)
    assert long_reason == "Cannot reach ws://127.0.0.1:9999"
    long_url = wire.gave_up_line("ws://" + "h" * 100 + ":1", "connection refused")
    assert len(long_url) == 80 and long_url.endswith("…")


async def test_a_closed_port_is_described_in_two_words():
    port = closed_port()
    with pytest.raises(OSError) as caught:
        async with wire.connect(f"ws://127.0.0.1:{port}", client="nobody"):
            pass  # pragma: no cover
    assert wire.describe(caught.value) == "connection refused"
    assert wire.expected(caught.value)


# ------------------------------------------------------------------ client/net.py on top


class FakeSession:
    """What client.net needs of a Session, recording what it is told."""

    def __init__(self, store: StateDir, messages: list[m.ClientMsg]) -> None:
        self.store = store
        self.to_send = messages
        self.joined = False
        self.ended: str | None = None
        self.bye_reason: str | None = None
        self.sent: list[m.ClientMsg] = []
        self.got: list[m.ServerMsg] = []
        self.lost: list[tuple[str, float | None]] = []
        self.feed: list[str] = []
        self.arrived = trio.Event()

    def on_connected(self, welcome: m.Welcome | None = None) -> list[m.ClientMsg]:
        return list(self.to_send)

    def on_message(self, msg: m.ServerMsg) -> None:
        self.got.append(msg)
        if isinstance(msg, m.Seated | m.Watching):
            self.joined = True
        if isinstance(msg, m.Bye):
            self.bye_reason = msg.reason
        self.arrived.set()
        self.arrived = trio.Event()

    def on_disconnected(self, reason: str, retry_in: float | None) -> None:
        self.joined = False
        self.lost.append((reason, retry_in))
        self.arrived.set()
        self.arrived = trio.Event()

    def add_feed(self, text: str, kind: str = "event") -> None:
        self.feed.append(text)

    def say(self, kind: str, text: str) -> None:
        self.feed.append(text)


class GivingUpSession(FakeSession):
    """A session with the give-up handshake: ``on_gave_up`` and a fresh ``retry`` each time."""

    def __init__(self, store: StateDir, messages: list[m.ClientMsg]) -> None:
        super().__init__(store, messages)
        self.gave_up: list[str] = []
        self.retry = trio.Event()

    def on_gave_up(self, reason: str) -> None:
        self.gave_up.append(reason)
        self.retry = trio.Event()
        self.arrived.set()
        self.arrived = trio.Event()


def connection(
    session, url: str, tries: int | None = 3, auto_retry: float = 3600.0
) -> net.Connection:
    _send, outgoing = trio.open_memory_channel[m.ClientMsg](8)
    return net.Connection(
        session,  # type: ignore[arg-type]
        url,
        outgoing,
        lambda: None,
        backoff=wire.Backoff(0.01, 0.01, random.Random(0), tries=tries),
        auto_retry=auto_retry,
    )


async def wait_for(session: FakeSession, pred) -> None:
    with trio.fail_after(10):
        while not pred():
            await session.arrived.wait()


def interrupted_while_connecting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``wire.connect`` as it fails when Ctrl-C lands inside its nursery: a group holding a
    KeyboardInterrupt. Counts the tries."""
    tries: list[int] = []

    @contextlib.asynccontextmanager
    async def connect(*args: object, **kwargs: object) -> AsyncIterator[wire.Link]:
        tries.append(1)
        await trio.lowlevel.checkpoint()
        raise BaseExceptionGroup("connecting", [KeyboardInterrupt()])
        yield  # (unreachable: an async generator all the same)

    monkeypatch.setattr(wire, "connect", connect)
    return tries


async def test_ctrl_c_while_connecting_stops_the_client_and_the_bot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A KeyboardInterrupt inside the connection's nursery came out in a group, was taken for a
    lost connection, and the bot went on retrying (`conjure bot`'s Ctrl-C, a flaky test)."""
    from conjure.client.bots.player import Bot, BotOptions, NamePool

    tries = interrupted_while_connecting(monkeypatch)
    s = GivingUpSession(StateDir(tmp_path / "state"), [])
    with trio.fail_after(5), pytest.raises(BaseExceptionGroup) as info:
        await connection(s, "ws://127.0.0.1:9", tries=3).run()
    assert info.group_contains(KeyboardInterrupt) and tries == [1] and s.lost == []
    bot = Bot(BotOptions(url="ws://127.0.0.1:9", room="ABCD", log=lambda line: None), NamePool())
    with trio.fail_after(5), pytest.raises(BaseExceptionGroup) as info:
        await bot.run()
    assert info.group_contains(KeyboardInterrupt) and tries == [1, 1]


async def test_net_gives_up_on_a_closed_port_and_tries_again_when_asked(tmp_path: Path):
    url = f"ws://127.0.0.1:{closed_port()}"
    s = GivingUpSession(StateDir(tmp_path / "state"), [])
    conn = connection(s, url, tries=3)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.run)
        await wait_for(s, lambda: len(s.gave_up) == 1)
        assert s.gave_up == [f"Cannot reach {url} (connection refused)"]
        assert len(s.gave_up[0]) <= 80
        assert len(s.lost) == 3  # three tries, then the question; nothing more meanwhile
        assert [retry for _, retry in s.lost[:2]] == [pytest.approx(0.01, rel=0.3)] * 2
        assert s.lost[2] == ("connection refused", None)
        s.retry.set()  # the person chose to retry: three more tries from the start
        await wait_for(s, lambda: len(s.gave_up) == 2)
        assert len(s.lost) == 6 and conn.gave_up == 2
        nursery.cancel_scope.cancel()
    assert conn.connections == 0


async def test_after_giving_up_net_tries_once_by_itself_now_and_then(tmp_path: Path):
    """Seen: after a server restart that took 25 s the players' clients stayed on "Cannot reach
    ... r: try again" until each pressed r. Now it also tries by itself, one try at a time (the
    question stays up, and is asked again after each)."""
    url = f"ws://127.0.0.1:{closed_port()}"
    s = GivingUpSession(StateDir(tmp_path / "state"), [])
    conn = connection(s, url, tries=3, auto_retry=0.05)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.run)
        await wait_for(s, lambda: len(s.gave_up) == 3)
        nursery.cancel_scope.cancel()
    assert len(s.lost) == 3 + 1 + 1  # three quick tries, then one now and then


async def test_without_the_handshake_net_keeps_retrying(tmp_path: Path):
    s = FakeSession(StateDir(tmp_path / "state"), [])
    conn = connection(s, f"ws://127.0.0.1:{closed_port()}", tries=2)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.run)
        await wait_for(s, lambda: len(s.lost) >= 6)
        nursery.cancel_scope.cancel()
    assert conn.gave_up == 0 and s.ended is None


async def test_a_refused_join_goes_to_the_session_and_is_not_retried(server, tmp_path: Path):
    s = GivingUpSession(StateDir(tmp_path / "state"), [m.JoinRoom(room="ZZZZ", name="Ann")])
    send, outgoing = trio.open_memory_channel[m.ClientMsg](8)
    conn = net.Connection(s, server.url, outgoing, lambda: None)  # type: ignore[arg-type]
    async with wire.connect(server.url, client="host") as host:
        room = (await host.create("Cat")).room
        async with trio.open_nursery() as nursery:
            nursery.start_soon(conn.run)
            await wait_for(s, lambda: any(isinstance(x, m.Error) for x in s.got))
            err = next(x for x in s.got if isinstance(x, m.Error))
            assert (err.code, err.ref) == ("unknown_room", "join_room")
            assert s.sent == [m.JoinRoom(room="ZZZZ", name="Ann")]
            # The person corrects the code: the same connection takes it, no reconnect.
            await send.send(m.JoinRoom(room=room, name="Ann"))
            await wait_for(s, lambda: s.joined)
            assert conn.connections == 1 and s.lost == [] and s.gave_up == []
            nursery.cancel_scope.cancel()


# ------------------------------------------------------------------ no leaked sockets


async def _leaks(url: str, *, bare: bool) -> list[warnings.WarningMessage]:
    """The ResourceWarnings (unclosed sockets) of one join-then-leave."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        await _leave(url, bare=bare)
        gc.collect()
    return [w for w in seen if issubclass(w.category, ResourceWarning)]


async def _leave(url: str, *, bare: bool) -> None:
    """Join, then leave: the *server* says bye and closes first (the trio-websocket quirk)."""
    if bare:
        async with open_websocket_url(url) as ws:
            await ws.send_message(wire.encode(wire.hello_message("bare")))
            await ws.get_message()
            await ws.send_message(wire.encode(m.CreateRoom(name="Ann")))
            await ws.send_message(wire.encode(m.Leave()))
            with pytest.raises(ConnectionClosed):
                while True:
                    await ws.get_message()
        return
    async with wire.connect(url, client="tidy") as link:
        await link.create("Ann")
        await link.send(m.Leave())
        with pytest.raises(ConnectionClosed):
            while True:
                await link.recv()
        assert link.bye is not None


async def test_a_close_the_server_starts_leaves_no_socket_open(server):
    assert await _leaks(server.url, bare=False) == []
    # The check can see a leak: trio-websocket's own client leaves its socket open here.
    assert await _leaks(server.url, bare=True), "the bare client was expected to leak"


# ------------------------------------------------------------------ a ping crossing the close

PING = b"\x89\x04ping"  # an unmasked server frame: FIN, opcode 9, four bytes of payload
CLOSE_NORMAL_FRAME = b"\x88\x02\x03\xe8"  # FIN, opcode 8, status 1000


async def _pinging_server(listeners: list, *, ping_first: bool) -> None:
    """A WebSocket peer written with wsproto alone: it answers the client's Close with a ping
    (a heartbeat that crossed it) before its own Close."""
    from wsproto import ConnectionType, WSConnection
    from wsproto.events import AcceptConnection, Request

    stream = await listeners[0].accept()
    async with stream:
        conn = WSConnection(ConnectionType.SERVER)
        while True:
            conn.receive_data(await stream.receive_some(65536))
            if any(isinstance(e, Request) for e in conn.events()):
                break
        await stream.send_all(conn.send(AcceptConnection()))
        await stream.receive_some(65536)  # the client's Close
        await stream.send_all((PING if ping_first else b"") + CLOSE_NORMAL_FRAME)
        await trio.sleep(0.5)


@pytest.mark.parametrize("ping_first", [True, False])
async def test_a_ping_that_crosses_our_close_still_closes_cleanly(nursery, ping_first):
    """trio-websocket answers a ping that arrives after our Close, which wsproto refuses; the
    block we leave must end as quietly as without the ping."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    nursery.start_soon(partial(_pinging_server, listeners, ping_first=ping_first))
    async with wire.open_websocket(f"ws://127.0.0.1:{port}/") as ws:
        assert ws.closed is None
    await listeners[0].aclose()
