"""Shared fixtures: a real server on 127.0.0.1, port 0, with its replays in the test's tmp_path.

    async def test_x(server):                 # a server with test-friendly defaults
        async with open_client(server.url, "Ann") as ann: ...

    async def test_y(start_server):           # your own options (any ServerConfig field)
        srv = await start_server(host_grace=0.2, limit_scale=0.05)

``server.url`` is ``ws://127.0.0.1:PORT``, ``server.port``, ``server.replays`` the log directory,
``server.rooms`` the live rooms by code (``room.game`` is the folded state), ``server.report`` what
startup recovery found; ``await server.aclose()`` stops it cleanly (a second ``start_server()`` on the
same tmp_path then resumes its unfinished games). ``said`` lists every line the servers printed.
Protocol client: ``tests/wsclient.py``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from conjure.protocol.statedir import STATE_DIR_ENV
from conjure.server.config import ServerConfig
from conjure.server.service import GameServer, serve

# Nothing a test runs (a `conjure serve` child making its receipt key, a client keeping a token)
# may write into the state directory of whoever runs the suite: unless a test says otherwise,
# it is one made for this run.
os.environ[STATE_DIR_ENV] = tempfile.mkdtemp(prefix="conjure-tests-state-")
atexit.register(shutil.rmtree, os.environ[STATE_DIR_ENV], ignore_errors=True)

#: Defaults for tests: loopback only, and fast clocks where waiting would only slow the suite.
#: Receipts are signed, as by `conjure serve`.
TEST_OPTIONS: dict[str, Any] = {
    "host": "127.0.0.1",
    "port": 0,
    "shutdown_grace": 1.0,
    "receipt_key": Ed25519PrivateKey.generate(),
}


@pytest.fixture
def said() -> list[str]:
    """Every line the test's servers printed."""
    return []


@pytest.fixture
async def start_server(
    nursery: trio.Nursery, tmp_path: Path, said: list[str]
) -> Callable[..., Awaitable[GameServer]]:
    """Start an in-process server (``replays`` defaults to tmp_path/"replays")."""

    async def start(**options: Any) -> GameServer:
        opts = {**TEST_OPTIONS, "replays": tmp_path / "replays", "say": said.append, **options}
        replays = Path(opts.pop("replays"))
        return await nursery.start(partial(serve, ServerConfig(replays=replays), **opts))

    return start


@pytest.fixture
async def server(start_server: Callable[..., Awaitable[GameServer]]) -> GameServer:
    return await start_server()
