"""Every frame a client sends counts: a message may not be cut in endless empty fragments, and
pings are not free. The counter is checked against wsproto's own client frames, cut anywhere;
then real servers on 127.0.0.1 meet a fragment flood and a ping flood."""

from __future__ import annotations

import contextlib

import msgspec
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from polling import poll_until
from wsclient import open_client
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Message,
    Ping,
    Pong,
    Request,
    TextMessage,
)

from conjure.client import wire
from conjure.protocol import messages as m
from conjure.server.framemeter import MAX_FRAGMENTS, EarlyData, FrameCounter

ATTACKER = "127.0.0.2"
HONEST = "127.0.0.3"


def open_pair() -> tuple[WSConnection, bytes, bytes]:
    """A wsproto client past its handshake, the request bytes it sent and the server's reply."""
    client, server = WSConnection(ConnectionType.CLIENT), WSConnection(ConnectionType.SERVER)
    request = client.send(Request(host="127.0.0.1", target="/"))
    server.receive_data(request)
    next(server.events())
    reply = server.send(AcceptConnection())
    client.receive_data(reply)
    next(client.events())
    return client, request, reply


def accepted(counter: FrameCounter, request: bytes, reply: bytes) -> FrameCounter:
    assert counter.feed(request) == (0, False)  # the upgrade request holds no frame
    counter.sent(reply)
    return counter


def feed_in_pieces(counter: FrameCounter, data: bytes, cuts: list[int]) -> tuple[int, bool]:
    frames, too_many, start = 0, False, 0
    for cut in [*sorted({c % (len(data) + 1) for c in cuts}), len(data)]:
        n, over = counter.feed(data[start:cut])
        frames, too_many, start = frames + n, too_many or over, cut
    return frames, too_many


#: (payload size, fragments, a ping before it): each length encoding, whole and in pieces.
MESSAGES = st.lists(
    st.tuples(st.sampled_from([0, 1, 125, 126, 200, 65535, 65536, 70000]), st.integers(1, 4)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(MESSAGES, st.lists(st.integers(0, 10**6), max_size=12), st.booleans())
def test_the_counter_finds_every_frame_wsproto_sends_however_the_bytes_are_cut(
    messages, cuts, pings
):
    client, request, reply = open_pair()
    data = b""
    sent = 0
    for size, parts in messages:
        if pings:
            data += client.send(Ping(b"p"))
            sent += 1
        piece = max(1, size // parts)
        text = "x" * size
        chunks = [text[i : i + piece] for i in range(0, size, piece)] or [""]
        for k, chunk in enumerate(chunks):
            data += client.send(Message(data=chunk, message_finished=k == len(chunks) - 1))
            sent += 1
    counter = FrameCounter()
    assert feed_in_pieces(counter, request, cuts) == (0, False)
    counter.sent(reply)
    assert feed_in_pieces(counter, data, cuts) == (sent, False)
    assert counter.fragments == 0  # every message finished


def test_a_message_of_too_many_fragments_is_seen_at_the_one_too_many():
    client, request, reply = open_pair()
    counter = accepted(FrameCounter(), request, reply)
    data = client.send(TextMessage(data="", message_finished=False))
    for _ in range(MAX_FRAGMENTS - 1):
        data += client.send(Ping(b""))  # control frames between fragments are no fragments
        data += client.send(TextMessage(data="", message_finished=False))
    assert counter.feed(data) == (2 * MAX_FRAGMENTS - 1, False)
    assert counter.feed(client.send(TextMessage(data="", message_finished=False))) == (1, True)
    client, request, reply = open_pair()
    counter = accepted(FrameCounter(), request, reply)
    whole = client.send(BytesMessage(data=b"ab", message_finished=True))
    assert counter.feed(whole * (MAX_FRAGMENTS + 10)) == (MAX_FRAGMENTS + 10, False)


def test_a_request_ended_by_bare_newlines_ends_where_the_http_parser_ends_it():
    """h11 takes a blank line with or without its carriage return: so does the counter."""
    client, request, reply = open_pair()
    bare = request.replace(b"\r\n", b"\n")
    counter = accepted(FrameCounter(), bare[:-1], reply)  # not ended yet: no reply either
    assert counter.feed(bare[-1:]) == (0, False)
    assert counter.feed(client.send(Ping(b""))) == (1, False)


def test_bytes_sent_before_the_servers_reply_are_refused():
    """RFC 6455 4.1: a client waits for the reply; what it sends before, the library drops
    unread, so the counter must never read it as frames (it could announce a huge frame and
    hide every later one)."""
    _client, request, _reply = open_pair()
    hidden = bytes([0x82, 0xFF]) + (2**62).to_bytes(8, "big") + b"mask"
    with pytest.raises(EarlyData):
        FrameCounter().feed(request + hidden)
    counter = FrameCounter()
    counter.feed(request)
    with pytest.raises(EarlyData):
        counter.feed(hidden)


# ---------------------------------------------------------------------- on a real server


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


@pytest.mark.parametrize("bare", [False, True], ids=["crlf", "bare-newlines"])
async def test_a_ping_flood_is_held_to_the_frame_rate_while_others_play_on(start_server, bare):
    """200 pings at once against a budget of 20 and 5 a second: the connection is not read
    again for some 36 s, so none of them is answered yet, while another player plays on."""
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
        assert conn.direct is not None and conn.direct.meter is not None
        meter = conn.direct.meter
        with trio.fail_after(10):
            await poll_until(lambda: meter.held > 0)
        await ann.send(m.SendChat(text="still here"))  # the held connection holds up nobody
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "still here")
        pongs = 0
        with trio.move_on_after(0.3):
            while data := await stream.receive_some():
                ws.receive_data(data)
                pongs += sum(isinstance(e, Pong) for e in ws.events())
        assert pongs == 0, "the pings were read in spite of the budget"
    assert server.book.refused.get("frame_rate", 0) >= 1


async def test_frames_sent_before_the_upgrade_is_answered_end_the_connection(start_server):
    """They would hide every later frame from the count (one announcing 2**62 bytes): the
    server ends such a connection before it is a WebSocket, and serves others as before."""
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
