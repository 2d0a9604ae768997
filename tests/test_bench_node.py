"""bench/load.py's other baselines (Node's ws; the broadcast framing its own frames) speak the trio
baseline's protocol, message for message.

Each server is started by the benchmark's ``Server`` on port 0; the Node one is set up the way the
benchmark sets it up (``node_baseline``: ws installed with npm into build/node-baseline/, reused
when already there), and its test is skipped, with the reason, when node or npm is missing or npm
cannot install ws. No timing is asserted.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import trio
from polling import poll_until
from trio_websocket import open_websocket_url

ROOT = Path(__file__).resolve().parent.parent


def _bench_load() -> ModuleType:
    """bench/load.py as a module (it is a script, in no package); sys.path is left as it was."""
    saved = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location(
            "conjure_bench_load", ROOT / "bench" / "load.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


@pytest.fixture(scope="module")
def load() -> ModuleType:
    return _bench_load()


def _server(load: ModuleType, kind: str, tmp: Path, cmd: list[str] | None) -> Iterator[int]:
    server = load.Server(kind, str(tmp), cmd)
    try:
        yield server.port
    finally:
        server.stop()


@pytest.fixture
def node_port(load: ModuleType, tmp_path: Path) -> Iterator[int]:
    try:
        argv = load.node_baseline(timeout=25.0)
    except load.NodeUnavailable as exc:
        pytest.skip(f"the Node baseline cannot run here: {exc}")
    yield from _server(load, "node", tmp_path, argv)


@pytest.fixture
def framed_port(load: ModuleType, tmp_path: Path) -> Iterator[int]:
    yield from _server(load, "framed", tmp_path, None)


@pytest.fixture
def durable(load: ModuleType, tmp_path: Path) -> Iterator:
    server = load.Server("durable", str(tmp_path), None)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def baseline_port(load: ModuleType, tmp_path: Path) -> Iterator[int]:
    yield from _server(load, "baseline", tmp_path, None)


async def _exchange(port: int) -> list[list[str]]:
    """Two players join room r1 and each sends an action: every frame each of them received."""
    url = f"ws://127.0.0.1:{port}/"
    got: list[list[str]] = [[], []]
    with trio.fail_after(10):
        async with open_websocket_url(url) as ann, open_websocket_url(url) as bob:
            players = (ann, bob)
            await ann.send_message('{"room":"r1","seat":0}')
            got[0].append(await ann.get_message())
            await bob.send_message('{"room":"r1","seat":1}')
            for i, ws in enumerate(players):
                got[i].append(await ws.get_message())
            for seat, sender in enumerate(players):
                await sender.send_message(f'{{"seat":{seat},"n":1,"act":"commit"}}')
                for i, ws in enumerate(players):
                    got[i].append(await ws.get_message())
    return [[str(frame) for frame in frames] for frames in got]


async def test_node_baseline_numbers_each_action_and_sends_it_to_the_whole_room(
    node_port: int, baseline_port: int
) -> None:
    node = await _exchange(node_port)
    ann, bob = ([json.loads(frame) for frame in frames] for frames in node)
    assert ann[0] == {"seq": 0, "members": 1}
    assert ann[1] == bob[0] == {"seq": 0, "members": 2}
    for seq, (a, b) in enumerate(zip(ann[2:], bob[1:], strict=True), start=1):
        assert a == b
        assert a["seq"] == seq and a["a"] == {"seat": seq - 1, "n": 1, "act": "commit"}
        assert set(a["pad"]) == {"x"}
    assert node == await _exchange(baseline_port)  # message for message, padding included


async def test_framed_baseline_is_the_trio_baseline_message_for_message(
    framed_port: int, baseline_port: int
) -> None:
    assert await _exchange(framed_port) == await _exchange(baseline_port)


_OPENING = (
    b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


async def _raw_client(port: int) -> tuple[trio.SocketStream, bytes]:
    """A TCP client past the opening handshake: the stream, and any bytes after the 101."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    await stream.send_all(_OPENING)
    head = b""
    while b"\r\n\r\n" not in head:
        head += await stream.receive_some(4096)
    assert b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in head  # RFC 6455 section 1.3's example
    return stream, head.partition(b"\r\n\r\n")[2]


def _client_frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    """A masked client frame (short payloads only), mask 0x01020304."""
    mask = bytes((1, 2, 3, 4))
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes(((0x80 if fin else 0) | opcode, 0x80 | len(payload))) + mask + body


async def _until_closed(stream: trio.SocketStream, got: bytes) -> bytes:
    while chunk := await stream.receive_some(4096):
        got += chunk
    return got


async def test_framed_baseline_answers_pings_and_long_messages(framed_port: int) -> None:
    url = f"ws://127.0.0.1:{framed_port}/"
    with trio.fail_after(10):
        async with open_websocket_url(url) as ws:
            await ws.ping(b"are you there")  # returns once the matching pong has come back
            # a 70,000-byte join message: a 64-bit length in the frame header
            await ws.send_message('{"room":"r9","seat":0,"x":"' + "y" * 70_000 + '"}')
            assert json.loads(await ws.get_message()) == {"seq": 0, "members": 1}


async def test_framed_baseline_joins_fragments_around_a_ping(framed_port: int) -> None:
    with trio.fail_after(10):
        stream, got = await _raw_client(framed_port)
        join = b'{"room":"r8","seat":0}'
        await stream.send_all(
            _client_frame(0x1, join[:9], fin=False)
            + _client_frame(0x9, b"hi")  # a ping between fragments is answered at once
            + _client_frame(0x0, join[9:])
        )
        members = b'{"seq":0,"members":1}'
        want = b"\x8a\x02hi" + b"\x81" + bytes((len(members),)) + members
        while len(got) < len(want):
            got += await stream.receive_some(4096)
        assert got == want
        await stream.send_all(_client_frame(0x8, b"\x03\xe8"))  # close, code 1000
        assert await _until_closed(stream, b"") == b"\x88\x02\x03\xe8"
    await stream.aclose()


@pytest.mark.parametrize(
    "bad",
    [
        b"\x81\x05hello",  # a text frame without the mask bit (RFC 6455 section 5.1)
        _client_frame(0x2, b"\x00\x01"),  # binary
        _client_frame(0x0, b"stray"),  # a continuation with no message begun
        _client_frame(0x9, b"p", fin=False),  # a fragmented control frame
        _client_frame(0x1, b"\xff\xfe"),  # text that is not UTF-8
    ],
)
async def test_framed_baseline_drops_a_connection_that_breaks_the_protocol_and_serves_on(
    framed_port: int, baseline_port: int, bad: bytes
) -> None:
    with trio.fail_after(10):
        stream, got = await _raw_client(framed_port)
        await stream.send_all(bad)
        assert await _until_closed(stream, got) == b""  # closed, nothing sent
        await stream.aclose()
        # only that connection ended: the server still plays, as the trio baseline does
        assert await _exchange(framed_port) == await _exchange(baseline_port)


async def test_durable_baseline_logs_each_action_before_it_tells_the_room(
    durable, baseline_port: int
) -> None:
    """The floor under a durable server: the same messages, and every action in its room's log."""
    assert await _exchange(durable.port) == await _exchange(baseline_port)
    (folder,) = [line.split(" in ", 1)[1] for line in durable.tail if "durable logs in" in line]
    logs = await trio.Path(folder).iterdir()
    lines = [line for log in logs for line in (await log.read_text()).splitlines()]
    assert sorted(json.loads(line)["a"]["seat"] for line in lines) == [0, 1]  # the joins: none

    # The room emptied: its log is closed (a descriptor per room stayed open for good).
    def logs_open() -> list[str]:
        fds, paths = f"/proc/{durable.pid}/fd", []
        for fd in os.listdir(fds):
            with contextlib.suppress(FileNotFoundError):  # closed since it was listed
                paths.append(os.readlink(f"{fds}/{fd}"))
        return [path for path in paths if path.startswith(folder)]

    with trio.fail_after(10):
        await poll_until(lambda: not logs_open())
