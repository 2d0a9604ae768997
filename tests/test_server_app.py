"""``conjure serve`` as a program: the banner, the parseable port line, clean stop on a signal,
wss:// with a certificate, and reading interface addresses without sending anything."""

from __future__ import annotations

import gc
import re
import signal
import ssl
import subprocess
import sys
import weakref
from pathlib import Path

import trio
from wsclient import open_client

from conjure.protocol import messages as m
from conjure.server import gctuning
from conjure.server.netinfo import _from_ip_json, addresses_for, url_host
from conjure.server.tlscert import self_signed

LISTENING = re.compile(r"^listening on (wss?)://(\S+):(\d+)$")


async def _read_until(stream: trio.abc.ReceiveStream, pattern: re.Pattern, buf: list[str]):
    """Read lines until one matches; returns the match (``buf`` collects every line)."""
    pending = b""
    with trio.fail_after(20):
        while True:
            chunk = await stream.receive_some(4096)
            if not chunk:
                raise AssertionError("server exited early:\n" + "".join(buf))
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                line = raw.decode()
                buf.append(line + "\n")
                found = pattern.match(line)
                if found:
                    return found


async def test_serve_subprocess_prints_its_port_and_stops_cleanly_on_sigint(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "conjure.client.cli",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--replays",
        str(tmp_path / "replays"),
    ]
    proc = await trio.lowlevel.open_process(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=Path(__file__).parent.parent
    )
    lines: list[str] = []
    try:
        found = await _read_until(proc.stdout, LISTENING, lines)
        assert found.group(1, 2) == ("ws", "127.0.0.1")
        port = int(found.group(3))
        text = "".join(lines)
        assert f"conjure play ws://127.0.0.1:{port} --name YOU --create" in text
        assert f"conjure play ws://127.0.0.1:{port} --name YOU --room CODE" in text
        async with open_client(f"ws://127.0.0.1:{port}", "Ann") as ann:
            await ann.create()
            proc.send_signal(signal.SIGINT)
            await ann.wait_closed(timeout=10)
            bye = [x for x in ann.received if isinstance(x, m.Bye)]
            assert bye and "shutting down" in bye[-1].reason
        with trio.fail_after(10):
            rc = await proc.wait()
        rest = b""
        while chunk := await proc.stdout.receive_some(4096):
            rest += chunk
        assert rc == 0, "".join(lines) + rest.decode()
        assert "stopped" in rest.decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await proc.stdout.aclose()


async def test_wss_with_a_certificate(start_server, tmp_path):
    from conjure.server.app import ssl_context

    made = self_signed(tmp_path)  # the certificate `conjure serve --tls-self-signed` makes
    server = await start_server(ssl_context=ssl_context(made.cert, made.key))
    assert server.url.startswith("wss://127.0.0.1:")
    client_ctx = ssl.create_default_context(cafile=str(made.cert))
    async with open_client(server.url, "Ann", ssl_context=client_ctx) as ann:
        code = await ann.create()
        assert len(code) == 4
        # Encrypted frames cannot be written around the TLS layer: they take the ordinary path.
        (conn,) = server.connections
        assert not conn.ws.direct


def test_interface_addresses_are_read_not_probed():
    sample = """[
      {"ifname": "lo", "flags": ["LOOPBACK", "UP"], "addr_info": [
        {"family": "inet", "local": "127.0.0.1", "scope": "host"}]},
      {"ifname": "wlan0", "flags": ["BROADCAST", "UP", "LOWER_UP"], "addr_info": [
        {"family": "inet", "local": "192.168.1.20", "scope": "global"},
        {"family": "inet6", "local": "fe80::1", "scope": "link"},
        {"family": "inet6", "local": "2001:db8::20", "scope": "global"}]},
      {"ifname": "eth1", "flags": ["BROADCAST"], "addr_info": [
        {"family": "inet", "local": "10.0.0.9", "scope": "global"}]}
    ]"""
    assert _from_ip_json(sample) == ["192.168.1.20", "2001:db8::20"]
    assert addresses_for("127.0.0.1") == ["127.0.0.1"]
    assert all(":" not in a for a in addresses_for("0.0.0.0"))
    assert url_host("::1") == "[::1]" and url_host("10.0.0.1") == "10.0.0.1"


async def test_the_young_generation_is_collected_on_a_clock(autojump_clock):
    """gctuning.collect_young: young collections come every YOUNG_EVERY seconds, whatever the
    collector's own count says (it hardly grows while old objects die as new ones are made)."""
    young: list[int] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "stop":  # the young generation, and now and then the older ones with it
            young.append(1)

    gc.callbacks.append(seen)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(gctuning.collect_young)
            await trio.sleep(gctuning.YOUNG_EVERY * 10.5)
            nursery.cancel_scope.cancel()
    finally:
        gc.callbacks.remove(seen)
    assert len(young) >= 10


async def test_cycles_that_die_after_a_young_collection_are_collected_on_the_clock_too(
    autojump_clock,
):
    """Objects in a cycle that outlived a young collection (a connection's, while it was open)
    and died later are found by the clock's full collections: a young collection never looks
    at them, and CPython's own collections no longer came, so such garbage stayed for ever."""

    class Node:
        other: object = None

    saved = gc.get_threshold()
    gc.set_threshold(gctuning.YOUNG, gctuning.MIDDLE, gctuning.OLD)
    try:
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        gc.collect(0)  # still alive: it outlives a young collection
        del a, b  # now garbage, older than young
        async with trio.open_nursery() as nursery:
            nursery.start_soon(gctuning.collect_young)
            await trio.sleep(gctuning.FULL_EVERY / 2)
            assert gone() is not None  # young collections alone never free it
            for _ in range(int(gctuning.FULL_EVERY / gctuning.YOUNG_EVERY)):
                if gone() is None:
                    break
                await trio.sleep(gctuning.YOUNG_EVERY)
            nursery.cancel_scope.cancel()
        assert gone() is None, "a dead cycle outlived the full collection's turn"
        assert trio.current_time() <= gctuning.FULL_EVERY + 1
    finally:
        gc.set_threshold(*saved)
