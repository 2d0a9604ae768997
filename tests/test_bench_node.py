"""bench/load.py's Node peer baseline speaks the trio baseline's protocol, frame for frame.

The server is set up the way the benchmark sets it up (``node_baseline``: ws installed with npm into
build/node-baseline/, reused when already there) and started by the benchmark's ``Server`` on port 0.
Skipped, with the reason, when node or npm is missing or npm cannot install ws. No timing is asserted.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import trio
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
    assert node == await _exchange(baseline_port)  # byte for byte, padding included
