"""The server's WebSocket (``server.websocket``) on real sockets on 127.0.0.1.

First a bare server that hands a :class:`Connection` to a script, as the real server hands it to
a room: frames go straight onto the socket while it has room, and a frame the kernel takes only
in part is finished before anything else, pongs and the Close frame included. Then the real
server meets what a client may do wrong: frames that break RFC 6455, endless fragments, a ping
flood, frames before the upgrade is answered, a request that is no upgrade.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial

import msgspec
import pytest
import trio
from polling import poll_until
from trio_websocket import ConnectionClosed, WebSocketConnection
from wsclient import open_client, reset
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    Ping,
    Pong,
    Request,
    TextMessage,
)

from conjure.client import wire
from conjure.protocol import messages as m
from conjure.server.connection import Connection
from conjure.server.websocket import read_request
from conjure.server.wsframes import MAX_FRAGMENTS, text_frame, unmask

ATTACKER = "127.0.0.2"
HONEST = "127.0.0.3"

#: Bigger than the socket buffers of an unread loopback connection (about 4 MB here), so the
#: kernel is sure to take only part of it: the rest is owed.
HUGE = 16 * 2**20
#: A huge frame, then frames that queue up behind it.
BACKLOG = [HUGE] + [64 * 1024] * 20
#: Client options for a reader that falls behind: it buffers one message and takes huge ones.
UNREAD = {"message_queue_size": 1, "max_message_size": 2 * HUGE}


def text(i: int, size: int) -> str:
    return f"{i:05d}:" + "abcdefghij"[i % 10] * size


def frame(i: int, size: int) -> bytes:
    return text_frame(text(i, size).encode())


#: What the bare server does with a connection.
Script = Callable[[Connection], Awaitable[None]]


@asynccontextmanager
async def listening(
    script: Script, queue_size: int = 10
) -> AsyncIterator[tuple[int, list[Connection]]]:
    """A bare server that runs ``script`` on each connection (its :class:`Connection` holds
    ``queue_size`` frames), and reads it as the real server does. Yields its port, and the list
    that receives each :class:`Connection`."""
    conns: list[Connection] = []

    async def handler(stream: trio.SocketStream) -> None:
        handshake = await read_request(stream)
        assert handshake is not None
        ws = await handshake.accept(max_message=2 * HUGE, frame_rate=1000.0, frame_burst=1000.0)
        conn = Connection(ws, queue_size=queue_size, queue_bytes=64 * HUGE)  # (frames count here)
        conns.append(conn)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(script, conn)
            with contextlib.suppress(Exception):
                while True:
                    await ws.receive()

    with trio.fail_after(30):  # a garbled stream can leave both ends waiting on each other
        async with trio.open_nursery() as nursery:
            (listener,) = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
            yield listener.socket.getsockname()[1], conns
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def serving(
    script: Script, queue_size: int = 10, **client: int
) -> AsyncIterator[tuple[WebSocketConnection, list[Connection]]]:
    """:func:`listening`, and a trio-websocket client connected to it (``client``: its
    ``open_websocket_url`` options)."""
    async with (
        listening(script, queue_size) as (port, conns),
        wire.open_websocket(f"ws://127.0.0.1:{port}", **client) as ws,
    ):
        yield ws, conns


def sending_server(
    sizes: Sequence[int], **client: int
) -> AbstractAsyncContextManager[tuple[WebSocketConnection, list[Connection]]]:
    """:func:`serving` a script that sends frames of ``sizes`` at once, then holds on."""

    async def send(conn: Connection) -> None:
        async with trio.open_nursery() as tasks:
            tasks.start_soon(conn.write_loop)
            for i, size in enumerate(sizes):
                conn.send_frame(frame(i, size))
            await trio.sleep_forever()

    return serving(send, len(sizes) + 1, **client)


async def wait_for(check: Callable[[], bool]) -> None:
    with trio.fail_after(5):
        await poll_until(check)


async def read_all(ws: WebSocketConnection, sizes: Sequence[int]) -> None:
    for i, size in enumerate(sizes):
        with trio.fail_after(10):
            assert await ws.get_message() == text(i, size)


async def test_the_real_server_writes_a_plain_sockets_frames_directly(server):
    """The real server: a ws:// connection writes frames straight onto its socket, and knows
    its peer's address."""
    async with open_client(server.url, "Ann", source="127.0.0.2") as ann:
        await ann.create()
        (conn,) = server.connections
        assert conn.ws.direct and conn.ws.whole >= 1
        assert conn.remote == "127.0.0.2"


async def test_frames_go_straight_to_the_socket_while_it_has_room():
    async with sending_server([100] * 20) as (ws, conns):
        await read_all(ws, [100] * 20)
        (conn,) = conns
        assert (conn.ws.whole, conn.ws.partial) == (20, 0)


async def test_a_frame_taken_in_part_is_finished_before_anything_else():
    async with sending_server(BACKLOG, **UNREAD) as (ws, conns):
        await wait_for(lambda: bool(conns))
        sock = conns[0].ws
        # The client is not reading: the kernel took part of the first frame and the rest is owed.
        await wait_for(lambda: sock.partial == 1)
        async with trio.open_nursery() as nursery:
            # The server answers a ping while bytes are owed or queued: its pong comes after.
            nursery.start_soon(ws.ping, b"are you there")
            await read_all(ws, BACKLOG)
        assert not sock.owed


async def test_the_shortcut_resumes_once_the_client_catches_up():
    async with sending_server(BACKLOG, **UNREAD) as (ws, conns):
        await wait_for(lambda: bool(conns))
        await read_all(ws, BACKLOG)
        conn = conns[0]
        await wait_for(lambda: not conn.ws.owed and not conn._queue)
        before = conn.ws.whole
        conn.send_frame(frame(len(BACKLOG), 10))
        assert conn.ws.whole == before + 1  # written at once, not queued
        assert await ws.get_message() == text(len(BACKLOG), 10)


async def test_a_cancelled_flush_keeps_the_rest_owed_for_the_close_frame():
    """The writer is cancelled while the client is not reading; the close still lands whole."""
    flush_cancelled = trio.Event()

    async def script(conn: Connection) -> None:
        conn.send_frame(frame(0, HUGE))
        await conn.ws.flush()  # the client's reader takes it all, then waits for the app
        conn.send_frame(frame(1, HUGE))
        assert conn.ws.owed
        with trio.move_on_after(0.2):
            await conn.ws.flush()  # the client is not reading: this cannot finish
        assert conn.ws.owed
        flush_cancelled.set()
        await conn.ws.aclose(1000, "goodbye")

    async with serving(script, **{**UNREAD, "message_queue_size": 0}) as (ws, _):
        await flush_cancelled.wait()
        await read_all(ws, [HUGE, HUGE])
        with pytest.raises(ConnectionClosed) as closed:
            await ws.get_message()
        assert (closed.value.reason.code, closed.value.reason.reason) == (1000, "goodbye")


async def test_nothing_is_written_once_the_peer_has_hung_up_without_a_close_frame():
    """A client that only shuts its side (a FIN, no Close frame) is gone: the frames the room
    still hands its connection are dropped, not put on the socket."""
    seen: list[tuple[int, int]] = []

    async def script(conn: Connection) -> None:
        with trio.fail_after(10):
            await poll_until(lambda: conn.ws.closed is not None)
        before = (conn.ws.whole, conn.ws.partial)
        conn.send_frame(frame(0, 10))
        seen.append((conn.ws.whole - before[0], conn.ws.partial - before[1]))

    async with listening(script, 4) as (port, conns):
        client = WSConnection(ConnectionType.CLIENT)
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        await stream.send_all(client.send(Request(host="127.0.0.1", target="/")))
        while not any(isinstance(e, AcceptConnection) for e in client.events()):
            client.receive_data(await stream.receive_some())
        await stream.send_eof()  # the FIN, and nothing else
        await wait_for(lambda: bool(seen))
        assert seen == [(0, 0)]
        assert conns[0].ws.closed is not None
        await stream.aclose()


# ---------------------------------------------------------------------- the real server


async def tcp_from(server, source: str) -> trio.SocketStream:
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
    await sock.bind((source, 0))
    await sock.connect(("127.0.0.1", server.port))
    return trio.SocketStream(sock)


@contextlib.asynccontextmanager
async def raw_client(server, source: str, bare: bool = False):
    """A greeted wsproto client bound to ``source``: (its connection, its stream). ``bare``:
    its request's lines end in a bare newline (which the server's HTTP parser takes)."""
    stream = await tcp_from(server, source)
    ws = WSConnection(ConnectionType.CLIENT)
    try:
        request = ws.send(Request(host="127.0.0.1", target="/"))
        await stream.send_all(request.replace(b"\r\n", b"\n") if bare else request)
        with trio.fail_after(5):
            while not any(isinstance(e, AcceptConnection) for e in ws.events()):
                ws.receive_data(await stream.receive_some())
        hello = msgspec.json.encode(wire.hello_message("attacker")).decode()
        await stream.send_all(ws.send(TextMessage(data=hello)))
        yield ws, stream
    finally:
        await stream.aclose()


async def closed_with(ws: WSConnection, stream: trio.SocketStream) -> tuple[int, list[str]]:
    """Read until the server's Close: its code, and the texts that came before it."""
    texts: list[str] = []
    with trio.fail_after(10):
        while True:
            data = await stream.receive_some()
            if not data:
                return 1006, texts
            ws.receive_data(data)
            for event in ws.events():
                if isinstance(event, TextMessage):
                    texts.append(event.data)
                elif isinstance(event, CloseConnection):
                    return event.code, texts


async def answer_to(stream: trio.SocketStream, request: bytes) -> bytes:
    """Send ``request`` and read all the server says until it closes; close the stream."""
    await stream.send_all(request)
    got = b""
    with trio.fail_after(5), contextlib.suppress(trio.BrokenResourceError):
        while data := await stream.receive_some():
            got += data
    await stream.aclose()
    return got


def masked(first: int, payload: bytes, mask: bytes = b"\x0f\x0e\x0d\x0c") -> bytes:
    """A client frame built by hand (for what no library sends); ``first``: its first byte."""
    assert len(payload) < 126
    return bytes((first, 0x80 | len(payload))) + mask + unmask(payload, mask)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"\x81\x02hi", 1002),  # unmasked
        (masked(0x81 | 0x40, b"hi"), 1002),  # a reserved bit (no extension was agreed)
        (masked(0x83, b"hi"), 1002),  # an unknown opcode
        (masked(0x81, b"\xff\xfe"), 1007),  # text that is not UTF-8
    ],
    ids=["unmasked", "reserved-bit", "unknown-opcode", "not-utf8"],
)
async def test_a_frame_that_breaks_rfc_6455_closes_that_connection_with_its_code(
    start_server, data, code
):
    server = await start_server()
    async with raw_client(server, ATTACKER) as (ws, stream):
        await stream.send_all(data)
        got, _ = await closed_with(ws, stream)
    assert got == code
    async with open_client(server.url, "Ann", source=HONEST) as ann:  # the server is fine
        assert await ann.create()


async def test_the_clients_close_is_answered_with_its_code_and_its_seat_goes_away(server):
    async with raw_client(server, ATTACKER) as (ws, stream):
        with trio.fail_after(5):
            await poll_until(lambda: len(server.connections) == 1)
        await stream.send_all(ws.send(CloseConnection(code=4001, reason="done here")))
        code, _ = await closed_with(ws, stream)
        assert code == 4001
        with trio.fail_after(5):
            await poll_until(lambda: not server.connections)


def _upgrade(version: str, newline: str) -> bytes:
    lines = [
        f"GET / {version}",
        "Host: x",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
    ]
    return (newline.join(lines) + newline * 2).encode()


async def test_a_request_that_is_not_an_upgrade_gets_an_http_refusal(server):
    for request, status in [
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"400"),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n",
            b"426",
        ),
        (b"NOT HTTP AT ALL\r\n\r\n", b"400"),
        # RFC 6455 4.1: an upgrade is an HTTP/1.1 request (or higher), whatever its line ends
        (_upgrade("HTTP/1.0", "\r\n"), b"400"),
        (_upgrade("HTTP/1.0", "\n"), b"400"),
        (_upgrade("HTTP/0.9", "\r\n"), b"400"),
    ]:
        stream = await trio.open_tcp_stream("127.0.0.1", server.port)
        got = await answer_to(stream, request)
        assert got.startswith(b"HTTP/1.1 " + status), got
    async with open_client(server.url, "Ann") as ann:
        assert await ann.create()


async def test_a_message_sent_in_endless_empty_fragments_is_closed_with_a_reason(start_server):
    server = await start_server()
    async with raw_client(server, ATTACKER) as (ws, stream):
        await stream.send_all(ws.send(TextMessage(data="", message_finished=False)))
        empty = ws.send(TextMessage(data="", message_finished=False))  # 6 bytes on the wire
        with contextlib.suppress(trio.BrokenResourceError):
            for _ in range(MAX_FRAGMENTS + 10):
                await stream.send_all(empty)
        code, texts = await closed_with(ws, stream)
    assert code == 1008
    byes = [t for t in texts if '"bye"' in t]
    assert byes and f"at most {MAX_FRAGMENTS} frames" in byes[-1]
    async with open_client(server.url, "Ann", source=HONEST) as ann:  # the server is fine
        assert await ann.create()


async def eve_creates_and_ann_joins(server, ws: WSConnection, stream, ann) -> None:
    """The raw client (Eve) makes a room and Ann sits in it."""
    create = msgspec.json.encode(m.CreateRoom(name="Eve")).decode()
    await stream.send_all(ws.send(TextMessage(data=create)))
    with trio.fail_after(5):
        await poll_until(lambda: len(server.rooms) == 1)
    (code,) = server.rooms
    await ann.join(code)


def chat_then_violation(ws: WSConnection, text: str, violation: str) -> bytes:
    """One write: a chat, then too many fragments or an unmasked frame."""
    data = ws.send(TextMessage(data=msgspec.json.encode(m.SendChat(text=text)).decode()))
    if violation == "fragments":
        for _ in range(MAX_FRAGMENTS + 2):
            data += ws.send(TextMessage(data="", message_finished=False))
    else:
        data += b"\x81\x02hi"  # unmasked
    return data


@pytest.mark.parametrize("violation", ["fragments", "unmasked"])
async def test_messages_read_with_a_violation_are_handled_and_answered_before_it_ends(
    start_server, violation
):
    """A ``create_room`` and a chat in the room, then a violation, all in one read (a budget
    that parses them in one go): the room is made, the chat reaches the table, and both are
    answered before the connection ends (they were dropped, or answered after the Close)."""
    server = await start_server(frame_burst=400.0, frame_rate=400.0)
    async with open_client(server.url, "Ann", source=HONEST) as ann:
        async with raw_client(server, ATTACKER) as (ws, stream):
            await eve_creates_and_ann_joins(server, ws, stream, ann)
            await stream.send_all(chat_then_violation(ws, "before the violation", violation))
            close, texts = await closed_with(ws, stream)
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "before the violation")
    assert close == (1008 if violation == "fragments" else 1002)
    kinds = [msgspec.json.decode(t)["type"] for t in texts]
    assert "seated" in kinds and "chat" in kinds, kinds


async def test_a_client_that_resets_right_after_its_chat_and_a_violation_harms_nobody(
    start_server,
):
    """The worst moment for the wait that lets the room answer first: the client is gone
    (a TCP reset) before the answer can be written. Its chat still reaches the table, its
    seat goes away, and the server plays on for everyone else."""
    server = await start_server(frame_burst=400.0, frame_rate=400.0)
    async with open_client(server.url, "Ann", source=HONEST) as ann:
        async with raw_client(server, ATTACKER) as (ws, stream):
            await eve_creates_and_ann_joins(server, ws, stream, ann)
            await stream.send_all(chat_then_violation(ws, "last words", "fragments"))
            reset(stream)
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "last words")
        await ann.wait_view(lambda v: not v.players[0].connected)  # Eve's seat went away
        with trio.fail_after(5):
            await poll_until(lambda: len(server.connections) == 1)
        await ann.send(m.SendChat(text="still here"))
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "still here")


async def test_messages_of_one_read_are_taken_with_other_tasks_running_between_them(server):
    """Twenty messages in one packet: the connection's task yields between two of them (it
    handled them all in one step, the other rooms waiting), as a read that waits does."""

    class Steps(trio.abc.Instrument):
        def __init__(self) -> None:
            self.steps = 0

        def before_task_step(self, task: trio.lowlevel.Task) -> None:
            if task.name.endswith("_run_handler"):  # a connection's task (only one is open)
                self.steps += 1

    async with raw_client(server, ATTACKER) as (ws, stream):
        create = msgspec.json.encode(m.CreateRoom(name="Eve")).decode()
        await stream.send_all(ws.send(TextMessage(data=create)))
        with trio.fail_after(5):
            await poll_until(lambda: len(server.rooms) == 1)
        chat = msgspec.json.encode(m.SendChat(text="hi")).decode()
        counter = Steps()
        trio.lowlevel.add_instrument(counter)
        try:
            await stream.send_all(b"".join(ws.send(TextMessage(data=chat)) for _ in range(20)))
            (conn,) = server.connections
            with trio.fail_after(5):
                await poll_until(lambda: conn.ws.frames >= 22)  # hello, create, the chats
                await poll_until(lambda: not conn.unanswered or conn.unanswered[-1].is_set())
        finally:
            trio.lowlevel.remove_instrument(counter)
    assert counter.steps >= 20, counter.steps


@pytest.mark.parametrize("bare", [False, True], ids=["crlf", "bare-newlines"])
async def test_a_ping_flood_is_held_to_the_frame_rate_while_others_play_on(start_server, bare):
    """200 pings at once against a budget of 20 and 5 a second: a burst of them is answered,
    the rest not for some 36 s, while another player plays on."""
    server = await start_server(frame_rate=5.0, frame_burst=20.0)
    async with (
        raw_client(server, ATTACKER, bare) as (ws, stream),
        open_client(server.url, "Ann", source=HONEST) as ann,
    ):
        await ann.create()
        await stream.send_all(b"".join(ws.send(Ping(b"%d" % i)) for i in range(200)))
        with trio.fail_after(10):
            await poll_until(lambda: any(c.remote == ATTACKER for c in server.connections))
        (conn,) = [c for c in server.connections if c.remote == ATTACKER]
        with trio.fail_after(10):
            await poll_until(lambda: conn.ws.held > 0)
        await ann.send(m.SendChat(text="still here"))  # the held connection holds up nobody
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "still here")
        pongs = 0
        with trio.move_on_after(0.3):
            while data := await stream.receive_some():
                ws.receive_data(data)
                pongs += sum(isinstance(e, Pong) for e in ws.events())
        assert pongs <= 20, "the pings were read in spite of the budget"
    assert server.book.refused.get("frame_rate", 0) >= 1


async def test_frames_sent_before_the_upgrade_is_answered_end_the_connection(start_server):
    """RFC 6455 4.1: a client waits for the reply. One that does not is ended before it is a
    WebSocket, and the server serves others as before."""
    server = await start_server()
    stream = await tcp_from(server, ATTACKER)
    ws = WSConnection(ConnectionType.CLIENT)
    hidden = bytes([0x82, 0xFF]) + (2**62).to_bytes(8, "big") + b"mask"
    await stream.send_all(ws.send(Request(host="127.0.0.1", target="/")) + hidden)
    got = b""
    with trio.fail_after(10), contextlib.suppress(trio.BrokenResourceError):
        while data := await stream.receive_some():
            got += data
    await stream.aclose()
    assert b"HTTP/1.1 101" not in got  # no WebSocket was made of it
    async with open_client(server.url, "Ann", source=HONEST) as ann:
        assert await ann.create()


async def test_a_burst_of_tiny_frames_in_one_read_is_parsed_no_faster_than_the_budget(
    start_server,
):
    """64 KiB of empty Pong frames arrive in one read: some 10,000 frames. The server parses
    only what the frame budget allows before it waits, not the whole read at once (each parsed
    frame is an object held, each Ping a Pong to write: ten times the bytes sent, per
    connection)."""
    burst = 20
    server = await start_server(frame_rate=5.0, frame_burst=float(burst))
    async with raw_client(server, ATTACKER) as (_ws, stream):
        await stream.send_all(masked(0x8A, b"") * 1000)  # 6 bytes each
        with trio.fail_after(10):
            await poll_until(lambda: any(c.remote == ATTACKER for c in server.connections))
        (conn,) = [c for c in server.connections if c.remote == ATTACKER]
        with trio.fail_after(10):
            await poll_until(lambda: conn.ws.held > 0)
        assert conn.ws.frames <= 2 * burst + 1  # the hello, a burst, and the one over it


UPGRADE_TAIL = b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"


@pytest.mark.parametrize(
    "request_, status",
    [
        # 4,000 empty header lines: 9.5 ms of the HTTP parser's time each, on the event loop
        (b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X:\r\n" * 3900 + UPGRADE_TAIL
         + b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", b"431"),
        # what RFC 6455 4.1-4.2.1 asks, which the parser let through
        (b"GET / HTTP/1.1\r\nHost: x\r\n" + UPGRADE_TAIL + b"Sec-WebSocket-Key: abc\r\n\r\n",
         b"400"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n" + UPGRADE_TAIL
         + b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", b"400"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n" + UPGRADE_TAIL
         + b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", b"400"),
        (b"GET http://evil/ HTTP/1.1\r\nHost: x\r\n" + UPGRADE_TAIL
         + b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", b"400"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n" + UPGRADE_TAIL
         + b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", b"400"),
        (b"\r\n\r\n", b"400"),  # blank lines alone (the check once read past them)
    ],
    ids=["header-bomb", "short-key", "content-length", "chunked", "absolute-uri", "folded",
         "blank"],
)  # fmt: skip
async def test_an_upgrade_request_is_held_to_rfc_6455_before_it_is_parsed(server, request_, status):
    """Found by review: each of these was upgraded (or, the first, cost 20 times a real
    request's parsing); an honest client's request still is."""
    got = await answer_to(await tcp_from(server, ATTACKER), request_)
    assert got.startswith(b"HTTP/1.1 " + status), got
    async with open_client(server.url, "Ann") as ann:
        assert await ann.create()


async def test_a_request_dripped_a_byte_at_a_time_is_read_slowly_then_dropped(server):
    """Found by review: one byte per TCP segment woke the server for every byte (36,000 reads
    a second from one address), and each read copied the whole request so far. After a few
    reads each waits, and a request that takes more than MAX_REQUEST_READS is dropped."""
    from conjure.server.websocket import MAX_REQUEST_READS, REQUEST_READ_WAIT

    stream = await tcp_from(server, ATTACKER)
    stream.setsockopt(trio.socket.IPPROTO_TCP, trio.socket.TCP_NODELAY, 1)
    request = _upgrade("HTTP/1.1", "\r\n")
    began = trio.current_time()
    sent = 0
    got = None
    try:
        with trio.fail_after(30):
            for byte in request:
                await stream.send_all(bytes([byte]))
                sent += 1
                await trio.sleep(REQUEST_READ_WAIT)  # a byte per read of the server's
            got = await stream.receive_some()
    except trio.BrokenResourceError:
        got = b""  # dropped: reset while we wrote
    finally:
        await stream.aclose()
    assert got == b""  # nothing answered, the stream ended
    assert sent < len(request) and sent <= MAX_REQUEST_READS * 2
    assert trio.current_time() - began >= (MAX_REQUEST_READS - 4) * REQUEST_READ_WAIT


@pytest.mark.parametrize(
    "header",
    [
        b"Host: \xff\xfe",  # wsproto decodes the host as IDNA
        b"Host: xn--zz",  # punycode that does not decode
        b"Host: x\r\nConnection: Upgrade, \xff",  # and comma lists as ASCII
        b"Host: x\r\nSec-WebSocket-Protocol: \xe9",
    ],
    ids=["host-not-ascii", "host-bad-idna", "connection-not-ascii", "subprotocol-not-ascii"],
)
async def test_an_upgrade_with_undecodable_headers_gets_a_400_not_a_logged_crash(
    server, caplog, header
):
    request = (
        b"GET / HTTP/1.1\r\n" + header + b"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    got = await answer_to(await tcp_from(server, ATTACKER), request)
    assert got.startswith(b"HTTP/1.1 400"), got
    assert not [r for r in caplog.records if "unexpected error" in r.getMessage()]


async def test_frames_sent_while_the_server_waits_for_the_clients_close_keep_to_the_budget(
    start_server,
):
    """The last wait for a client's Close (``drain``, up to a second after the server's Close)
    reads within the frame budget too: else a client the server closes (here, one the heartbeat
    drops while it is over its budget) has all it sends in that second parsed, and one that
    sends without pause costs the event loop the whole second."""
    burst = 20
    server = await start_server(
        frame_rate=5.0, frame_burst=float(burst), heartbeat_interval=1.0, heartbeat_timeout=0.5
    )
    pongs = masked(0x8A, b"") * 3000  # 6 bytes each
    async with raw_client(server, ATTACKER) as (ws, stream):
        await stream.send_all(pongs)
        with trio.fail_after(10):
            await poll_until(lambda: any(c.remote == ATTACKER for c in server.connections))
        (conn,) = [c for c in server.connections if c.remote == ATTACKER]
        code, _ = await closed_with(ws, stream)  # the heartbeat drops it: the server's Close
        assert code == 1001
        with trio.fail_after(10), contextlib.suppress(trio.BrokenResourceError):
            await stream.send_all(pongs)  # while the server waits for the client's Close
            while await stream.receive_some():  # until the server closes the socket
                pass
    assert conn.ws.frames <= 4 * burst


async def test_a_frame_dripped_a_byte_per_segment_is_read_no_more_often_than_the_read_rate():
    """Found by review: frames were metered, bytes not: a frame sent one byte per TCP segment
    woke the server for each byte (30,000 reads a second from one address). Reads beyond
    READ_BURST wait their turn, and what came meanwhile is read at once."""
    from trio.testing import memory_stream_pair

    from conjure.server.websocket import READ_BURST, WebSocket

    client, server_side = memory_stream_pair()
    reads = 0
    real = server_side.receive_some

    async def counted(max_bytes=None):
        nonlocal reads
        reads += 1
        return await real(max_bytes)

    server_side.receive_some = counted  # type: ignore[method-assign]
    ws = WebSocket(server_side, max_message=65536, frame_rate=1000.0, frame_burst=1000.0)
    payload = b"x" * 3000
    mask = b"\x0f\x0e\x0d\x0c"
    data = bytes((0x81, 0x80 | 126)) + len(payload).to_bytes(2, "big") + mask
    data += unmask(payload, mask)

    async def drip() -> None:
        for i in range(len(data)):
            await client.send_all(data[i : i + 1])
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(drip)
        with trio.fail_after(20):
            assert await ws.receive() == payload.decode()
    assert reads < READ_BURST + 100, reads  # not one a byte (3,000)
