"""Frames written straight to the socket keep their bytes and their order.

A real trio-websocket server on 127.0.0.1 port 0 hands frames to a :class:`Connection`, as the
room does; a real client reads them. When the kernel takes a frame only in part, the rest is owed
and must still come before later frames and before trio-websocket's own pings and pongs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial

import pytest
import trio
from polling import poll_until
from trio_websocket import (
    ConnectionClosed,
    WebSocketConnection,
    wrap_server_stream,
)
from wsclient import open_client

from conjure.client import wire
from conjure.server.connection import Connection
from conjure.server.directsend import FrameStream, text_frame

#: Bigger than the socket buffers of an unread loopback connection (about 4 MB here), so the
#: kernel is sure to take only part of it: the rest is owed.
HUGE = 16 * 2**20
#: A huge frame, then frames that queue up behind it.
BACKLOG = [HUGE] + [64 * 1024] * 20
#: Client options for a reader that falls behind: it buffers one message and takes huge ones.
UNREAD = {"message_queue_size": 1, "max_message_size": 2 * HUGE}


def frame(i: int, size: int) -> str:
    return f"{i:05d}:" + "abcdefghij"[i % 10] * size


#: What the server does with a connection: ``script(server_ws, conn)``.
Script = Callable[[WebSocketConnection, Connection], Awaitable[None]]


@asynccontextmanager
async def listening(
    script: Script, queue_size: int = 10
) -> AsyncIterator[tuple[int, list[Connection]]]:
    """A server that runs ``script`` on each connection (its :class:`Connection` holds
    ``queue_size`` frames). As the real server does, it accepts the TCP socket itself and hands
    trio-websocket a :class:`FrameStream` around it. Yields its port, and the list that
    receives the server's :class:`Connection` once the handler has it."""
    conns: list[Connection] = []

    async def handler(stream: trio.SocketStream) -> None:
        direct = FrameStream(stream)
        async with trio.open_nursery() as nursery:
            request = await wrap_server_stream(nursery, direct)
            ws = await request.accept()
            conn = Connection(ws, queue_size=queue_size, stream=direct)
            conns.append(conn)
            await script(ws, conn)

    with trio.fail_after(30):  # a garbled stream can leave both ends waiting on each other
        async with trio.open_nursery() as nursery:
            (listener,) = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
            yield listener.socket.getsockname()[1], conns
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def serving(
    script: Script, queue_size: int = 10, **client: int
) -> AsyncIterator[tuple[WebSocketConnection, list[Connection]]]:
    """:func:`listening`, and a client connected to it (``client``: its
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

    async def send(_ws: WebSocketConnection, conn: Connection) -> None:
        async with trio.open_nursery() as tasks:
            tasks.start_soon(conn.write_loop)
            for i, size in enumerate(sizes):
                conn.send_text(frame(i, size))
            await trio.sleep_forever()

    return serving(send, len(sizes) + 1, **client)


async def wait_for(check: Callable[[], bool]) -> None:
    with trio.fail_after(5):
        await poll_until(check)


async def read_all(ws: WebSocketConnection, sizes: Sequence[int]) -> None:
    for i, size in enumerate(sizes):
        with trio.fail_after(10):
            assert await ws.get_message() == frame(i, size)


def test_a_text_frame_is_framed_as_rfc_6455_says():
    """Checked against wsproto's own framing, at each length encoding (7, 16 and 64 bits)."""
    from wsproto import ConnectionType, WSConnection
    from wsproto.events import AcceptConnection, Request, TextMessage

    client, server = WSConnection(ConnectionType.CLIENT), WSConnection(ConnectionType.SERVER)
    server.receive_data(client.send(Request(host="localhost", target="/")))
    next(server.events())
    client.receive_data(server.send(AcceptConnection()))
    next(client.events())
    for size in (0, 125, 126, 65535, 65536, 70000):
        text = "é" * (size // 2) + "x" * (size % 2)
        assert text_frame(text) == server.send(TextMessage(data=text)), size
        client.receive_data(text_frame(text))
        got = "".join(e.data for e in client.events() if isinstance(e, TextMessage))
        assert got == text


async def test_the_real_server_gives_a_plain_socket_the_shortcut(server):
    """The real server: a ws:// connection writes frames directly; and it reads the peer's
    address from the socket (trio-websocket cannot see one through a FrameStream)."""
    async with open_client(server.url, "Ann", source="127.0.0.2") as ann:
        await ann.create()
        (conn,) = server.connections
        assert isinstance(conn.direct, FrameStream) and conn.direct.whole >= 1
        assert conn.remote == "127.0.0.2"


async def test_frames_go_straight_to_the_socket_while_it_has_room():
    async with sending_server([100] * 20) as (ws, conns):
        await read_all(ws, [100] * 20)
        (conn,) = conns
        assert conn.direct is not None
        assert (conn.direct.whole, conn.direct.partial) == (20, 0)


async def test_a_frame_taken_in_part_is_finished_before_anything_else():
    async with sending_server(BACKLOG, **UNREAD) as (ws, conns):
        await wait_for(lambda: bool(conns))
        direct = conns[0].direct
        assert direct is not None
        # The client is not reading: the kernel took part of the first frame and the rest is owed.
        assert direct.partial == 1
        async with trio.open_nursery() as nursery:
            # The server answers a ping from its reader task while bytes are owed or queued.
            nursery.start_soon(ws.ping, b"are you there")
            await read_all(ws, BACKLOG)
        assert not direct.owed


async def test_the_shortcut_resumes_once_the_client_catches_up():
    async with sending_server(BACKLOG, **UNREAD) as (ws, conns):
        await wait_for(lambda: bool(conns))
        await read_all(ws, BACKLOG)
        conn = conns[0]
        assert conn.direct is not None
        before = conn.direct.whole
        conn.send_text(frame(len(BACKLOG), 10))
        assert conn.direct.whole == before + 1  # written at once, not queued
        assert await ws.get_message() == frame(len(BACKLOG), 10)


async def test_trio_websockets_own_frames_wait_for_owed_bytes():
    """A ping the library sends while part of a frame is owed goes out after that frame."""
    pinged = trio.Event()

    async def script(ws: WebSocketConnection, conn: Connection) -> None:
        assert conn.direct is not None
        # No writer task yet: nothing flushes the owed bytes except the library's next send.
        conn.send_text(frame(0, HUGE))
        assert conn.direct.owed
        await ws.ping(b"after the owed bytes")
        pinged.set()
        async with trio.open_nursery() as tasks:
            tasks.start_soon(conn.write_loop)
            conn.send_text(frame(1, 10))
            await trio.sleep_forever()

    async with serving(script, **UNREAD) as (ws, _):
        await read_all(ws, [HUGE])  # the client answers the ping after this frame
        await pinged.wait()
        assert await ws.get_message() == frame(1, 10)


async def test_a_cancelled_flush_keeps_the_rest_owed_for_the_close_frame():
    """The writer is cancelled while the client is not reading; the close still lands whole."""
    flush_cancelled = trio.Event()

    async def script(ws: WebSocketConnection, conn: Connection) -> None:
        assert conn.direct is not None
        conn.send_text(frame(0, HUGE))
        await conn.direct.flush()  # the client's reader takes it all, then waits for the app
        conn.send_text(frame(1, HUGE))
        assert conn.direct.owed
        with trio.move_on_after(0.2):
            await conn.direct.flush()  # the client is not reading: this cannot finish
        assert conn.direct.owed
        flush_cancelled.set()
        await ws.aclose(1000, "goodbye")

    async with serving(script, **{**UNREAD, "message_queue_size": 0}) as (ws, _):
        await flush_cancelled.wait()
        await read_all(ws, [HUGE, HUGE])
        with pytest.raises(ConnectionClosed) as closed:
            await ws.get_message()
        assert (closed.value.reason.code, closed.value.reason.reason) == (1000, "goodbye")


async def test_nothing_is_written_once_the_peer_has_hung_up_without_a_close_frame():
    """A client that only shuts its side (a FIN, no Close frame) is gone: the frames the room
    still hands its connection are dropped, not put on the socket."""
    from wsproto import ConnectionType, WSConnection
    from wsproto.events import AcceptConnection, Request

    seen: list[tuple[int, int]] = []

    async def script(ws: WebSocketConnection, conn: Connection) -> None:
        with trio.fail_after(10):
            await poll_until(lambda: ws.closed is not None)
        assert conn.direct is not None
        before = (conn.direct.whole, conn.direct.partial)
        conn.send_text(frame(0, 10))
        seen.append((conn.direct.whole - before[0], conn.direct.partial - before[1]))

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
