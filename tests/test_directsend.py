"""Frames written straight to the socket keep their bytes and their order.

A real trio-websocket server on 127.0.0.1 port 0 hands frames to a :class:`Connection`, as the
room does; a real client reads them. When the kernel takes a frame only in part, the rest is owed
and must still come before later frames and before trio-websocket's own pongs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import trio
from trio_websocket import (
    WebSocketConnection,
    WebSocketRequest,
    open_websocket_url,
    serve_websocket,
)

from server.connection import Connection

#: Client options for a reader that falls behind: it buffers one message and takes big ones.
UNREAD = {"message_queue_size": 1, "max_message_size": 2**20}


def frame(i: int, size: int) -> str:
    return f"{i:05d}:" + "abcdefghij"[i % 10] * size


@asynccontextmanager
async def sending_server(
    count: int, size: int, **client: int
) -> AsyncIterator[tuple[WebSocketConnection, list[Connection]]]:
    """A server that sends ``count`` frames as soon as a client connects, then holds on.

    Yields the connected client (``client``: its ``open_websocket_url`` options) and the list
    that receives the server's :class:`Connection` once the handler has it.
    """
    conns: list[Connection] = []
    finished = trio.Event()

    async def handler(request: WebSocketRequest) -> None:
        ws = await request.accept()
        conn = Connection(ws, queue_size=count + 1)
        conns.append(conn)
        async with trio.open_nursery() as tasks:
            tasks.start_soon(conn.write_loop)
            for i in range(count):
                conn.send_text(frame(i, size))
            await finished.wait()
            tasks.cancel_scope.cancel()

    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve_websocket, handler, "127.0.0.1", 0, None)
        async with open_websocket_url(f"ws://127.0.0.1:{server.port}", **client) as ws:
            yield ws, conns
        finished.set()
        nursery.cancel_scope.cancel()


async def wait_for(check: Callable[[], bool]) -> None:
    with trio.fail_after(5):
        while not check():
            await trio.sleep(0.01)


async def read_all(ws: WebSocketConnection, count: int, size: int) -> None:
    for i in range(count):
        with trio.fail_after(10):
            assert await ws.get_message() == frame(i, size)


async def test_the_shortcut_fits_the_installed_trio_websocket():
    async with sending_server(1, 10) as (ws, conns):
        await read_all(ws, 1, 10)
        (conn,) = conns
        assert conn.direct is not None, "trio-websocket changed: frames lost the shortcut"


async def test_frames_go_straight_to_the_socket_while_it_has_room():
    async with sending_server(20, 100) as (ws, conns):
        await read_all(ws, 20, 100)
        (conn,) = conns
        assert conn.direct is not None
        assert (conn.direct.whole, conn.direct.partial) == (20, 0)


async def test_a_frame_taken_in_part_is_finished_before_anything_else():
    count, size = 40, 256 * 1024  # 10 MB: more than the socket buffers hold unread
    async with sending_server(count, size, **UNREAD) as (ws, conns):
        await wait_for(lambda: bool(conns))
        direct = conns[0].direct
        assert direct is not None
        # The client is not reading: the kernel takes part of a frame and the rest is owed.
        await wait_for(lambda: direct.partial >= 1)
        async with trio.open_nursery() as nursery:
            # The server answers a ping from its reader task while frames are owed or queued.
            nursery.start_soon(ws.ping, b"are you there")
            await read_all(ws, count, size)
        assert not direct.owed


async def test_the_shortcut_resumes_once_the_client_catches_up():
    count, size = 40, 256 * 1024
    async with sending_server(count, size, **UNREAD) as (ws, conns):
        await wait_for(lambda: bool(conns) and conns[0].direct.partial >= 1)
        await read_all(ws, count, size)
        conn = conns[0]
        before = conn.direct.whole
        conn.send_text(frame(count, 10))
        assert conn.direct.whole == before + 1  # written at once, not queued
        assert await ws.get_message() == frame(count, 10)


async def test_trio_websockets_own_frames_wait_for_owed_bytes():
    """A ping the library sends while part of a frame is owed goes out after that frame."""
    size = 256 * 1024
    sent: list[int] = []
    pinged = trio.Event()

    async def handler(request: WebSocketRequest) -> None:
        ws = await request.accept()
        conn = Connection(ws, queue_size=10)
        assert conn.direct is not None
        # No writer task yet: nothing flushes the owed bytes except the library's next send.
        while not conn.direct.owed:
            conn.send_text(frame(len(sent), size))
            sent.append(len(sent))
        await ws.ping(b"after the owed bytes")
        pinged.set()
        async with trio.open_nursery() as tasks:
            tasks.start_soon(conn.write_loop)
            conn.send_text(frame(len(sent), size))
            sent.append(len(sent))
            await trio.sleep_forever()

    with trio.fail_after(20):  # a garbled stream can leave both ends waiting on each other
        async with trio.open_nursery() as nursery:
            server = await nursery.start(serve_websocket, handler, "127.0.0.1", 0, None)
            url = f"ws://127.0.0.1:{server.port}"
            async with open_websocket_url(url, **UNREAD) as ws:
                await wait_for(lambda: bool(sent))
                owed_frames = len(sent)
                await read_all(ws, owed_frames, size)  # the client answers the ping after these
                await pinged.wait()
                assert await ws.get_message() == frame(owed_frames, size)
            nursery.cancel_scope.cancel()
