"""The heartbeat: a quiet client is pinged, any frame it sends answers, and one that stops
answering is dropped. First the rule itself, then real servers on 127.0.0.1, plain and TLS."""

from __future__ import annotations

import trio
from polling import poll_until
from test_tls import _context, certs, known  # noqa: F401 (fixtures)
from test_websocket import raw_client
from wsclient import reset
from wsproto.events import CloseConnection, Ping

from conjure.client import wire
from conjure.client.wire import Trust
from conjure.server.heartbeat import period, verdict

CLIENT = "127.0.0.4"


def test_a_client_heard_from_lately_is_left_alone():
    assert (
        verdict(heard_at=95.0, pinged_at=None, now=100.0, interval=10.0, answer_within=10.0) is None
    )


def test_a_client_quiet_for_the_interval_is_pinged():
    assert (
        verdict(heard_at=90.0, pinged_at=None, now=100.0, interval=10.0, answer_within=10.0)
        == "ping"
    )


def test_any_frame_after_the_ping_answers_it():
    assert verdict(90.0, pinged_at=100.0, now=101.0, interval=10.0, answer_within=10.0) is None
    assert (
        verdict(100.5, pinged_at=100.0, now=101.0, interval=10.0, answer_within=10.0) == "answered"
    )


def test_no_frame_within_the_timeout_after_a_ping_drops_the_client():
    assert verdict(90.0, pinged_at=100.0, now=109.9, interval=10.0, answer_within=10.0) is None
    assert verdict(90.0, pinged_at=100.0, now=110.0, interval=10.0, answer_within=10.0) == "drop"


def test_sweeps_come_often_enough_for_small_intervals_and_not_too_often():
    assert period(10.0, 10.0) == 1.0
    assert period(0.2, 0.5) == 0.02
    assert period(0.0, 0.0) > 0


async def _pings_until_closed(ws, stream, answer: bool, seconds: float) -> tuple[int, bool]:
    """Read for up to ``seconds``: (pings received, whether the server closed)."""
    pings = 0
    with trio.move_on_after(seconds):
        while True:
            data = await stream.receive_some()
            if not data:
                return pings, True
            ws.receive_data(data)
            for event in ws.events():
                if isinstance(event, Ping):
                    pings += 1
                    if answer:
                        await stream.send_all(ws.send(event.response()))
                elif isinstance(event, CloseConnection):
                    return pings, True
    return pings, False


async def test_a_quiet_client_that_answers_its_pings_stays(start_server):
    server = await start_server(heartbeat_interval=0.2, heartbeat_timeout=0.3)
    async with raw_client(server, CLIENT) as (ws, stream):
        pings, closed = await _pings_until_closed(ws, stream, answer=True, seconds=2.0)
    assert not closed
    assert pings >= 4  # one about every 0.15-0.25 s of silence, answered each time


async def test_a_client_that_stops_answering_is_dropped(start_server):
    server = await start_server(heartbeat_interval=0.2, heartbeat_timeout=0.3)
    async with raw_client(server, CLIENT) as (ws, stream):
        with trio.fail_after(5):
            pings, closed = await _pings_until_closed(ws, stream, answer=False, seconds=5.0)
    assert closed and pings == 1  # pinged once, never answered: gone, no second ping
    with trio.fail_after(5):
        await poll_until(lambda: not server.connections)


async def test_a_talking_client_is_never_pinged(start_server):
    server = await start_server(heartbeat_interval=0.3, heartbeat_timeout=0.3, rate=100, burst=100)
    async with raw_client(server, CLIENT) as (ws, stream):
        pings = 0
        with trio.move_on_after(1.5):
            while True:
                await stream.send_all(ws.send(Ping(payload=b"mine")))  # any frame is heard
                with trio.move_on_after(0.05):
                    data = await stream.receive_some()
                    ws.receive_data(data)
                    pings += sum(isinstance(e, Ping) for e in ws.events())
    assert pings == 0


async def test_a_quiet_tls_client_is_pinged_through_the_tls_stream(start_server, certs, known):  # noqa: F811
    server = await start_server(
        ssl_context=_context(certs[0]), heartbeat_interval=0.2, heartbeat_timeout=0.3
    )
    pin = certs[0].fingerprint
    # The client's library answers pings by itself: a quiet TLS connection stays, and its
    # pongs are what the server reads from it.
    async with wire.connect(server.url, trust=Trust(pin=pin, known=known)) as link:
        await link.greet("test-heartbeat")
        (conn,) = server.connections
        before = conn.ws.frames
        await trio.sleep(1.5)
        assert conn.open and conn in server.connections
        assert conn.ws.frames - before >= 3  # pongs: the client sent nothing else


async def test_a_client_that_resets_as_it_is_pinged_costs_the_server_nothing(start_server):
    """Reset (SO_LINGER 0) the moment the first ping arrives, again and again: each connection
    goes, and the server pings and serves the next client as before."""
    server = await start_server(heartbeat_interval=0.1, heartbeat_timeout=0.3)
    for _ in range(5):
        async with raw_client(server, CLIENT) as (ws, stream):
            with trio.fail_after(5):
                while not any(isinstance(e, Ping) for e in ws.events()):
                    ws.receive_data(await stream.receive_some())
            reset(stream)
    with trio.fail_after(5):
        await poll_until(lambda: not server.connections)
    async with raw_client(server, CLIENT) as (ws, stream):
        pings, closed = await _pings_until_closed(ws, stream, answer=True, seconds=1.0)
    assert not closed and pings >= 3
