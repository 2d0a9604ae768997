"""Helpers for the client tests: a headless ClientApp in its own thread, and scripted players.

``HeadlessClient`` runs the real ``client.app.ClientApp`` (prompt_toolkit on asyncio with Trio as
a guest) in a worker thread, fed by ``create_pipe_input`` and drawing to ``DummyOutput``; the test
(on its own Trio loop, with the server) types into it and reads its session and screen.

``Robot`` plays a seat on its own through the lean protocol client of ``tests/wsclient.py``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import trio
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from wsclient import Client, open_client

from conjure.client.app import ClientApp, Options
from conjure.protocol.messages import View

ENTER = "\r"
CTRL_U = "\x15"
ESC = "\x1b"


async def wait_until(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
    """Poll ``predicate`` until it is truthy (it may read another thread's objects)."""
    with trio.move_on_after(timeout):
        while True:
            try:
                value = predicate()
            except (AttributeError, IndexError, KeyError, TypeError):
                value = None
            if value:
                return value
            await trio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what or predicate}")


class HeadlessClient:
    """A real ClientApp running headless in a thread of its own."""

    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self._pipe_cm = create_pipe_input()
        self.input = self._pipe_cm.__enter__()
        self.client = ClientApp(opts, input=self.input, output=DummyOutput())
        self.loop: asyncio.AbstractEventLoop | None = None
        self.exit_code: int | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._ready = threading.Event()
        self._pipe_closed = False

    async def __aenter__(self) -> HeadlessClient:
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        if self._thread.is_alive() or not self._pipe_closed:
            await self.stop()

    @property
    def session(self):
        return self.client.session

    def _main(self) -> None:
        async def amain() -> int:
            self.loop = asyncio.get_running_loop()
            self._ready.set()
            return await self.client.run_async()

        try:
            # One AppSession per thread: prompt_toolkit's default one is shared process-wide.
            with create_app_session(input=self.input, output=self.client.app.output):
                self.exit_code = asyncio.run(amain())
        except BaseException as exc:  # reported by stop()
            self.error = exc
        finally:
            self._ready.set()

    async def start(self) -> HeadlessClient:
        self._thread.start()
        await trio.to_thread.run_sync(self._ready.wait)
        await wait_until(lambda: self.client.app.is_running, what="the app to run")
        return self

    def type(self, text: str) -> None:
        self.input.send_text(text)

    async def line(self, text: str) -> None:
        """Type a line and Enter, then give the app a moment to handle it."""
        self.type(text + ENTER)
        await self.idle()

    async def idle(self) -> None:
        """Wait until the app's loop has handled what was typed so far."""
        await trio.sleep(0.05)
        await self._call(lambda: None)

    async def _call(self, fn: Callable[[], Any]) -> Any:
        assert self.loop is not None
        fut: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> None:
            try:
                fut.set_result(fn())
            except BaseException as exc:
                fut.set_exception(exc)

        self.loop.call_soon_threadsafe(run)
        return await trio.to_thread.run_sync(fut.result, 5)

    async def screen(self, width: int = 80, height: int = 24) -> str:
        return await self._call(lambda: self.client.snapshot(width, height))

    async def wait_screen(self, *needles: str, timeout: float = 10.0) -> str:
        last = ""

        async def check():
            nonlocal last
            last = await self.screen()
            return all(n in last for n in needles)

        with trio.move_on_after(timeout):
            while not await check():
                await trio.sleep(0.05)
            return last
        raise AssertionError(f"screen never showed {needles!r}; last screen:\n{last}")

    async def wait(self, predicate: Callable[[Any], Any], timeout: float = 10.0, what: str = ""):
        try:
            return await wait_until(lambda: predicate(self.session), timeout, what)
        except AssertionError as exc:
            shot = await self.screen()
            raise AssertionError(f"{exc}; the screen:\n{shot}") from None

    async def stop(self) -> int | None:
        if self._thread.is_alive() and self.loop is not None:
            self.loop.call_soon_threadsafe(
                lambda: self.client.app.exit(result=0) if self.client.app.is_running else None
            )
        await trio.to_thread.run_sync(self._thread.join, 10)
        self._close_pipe()
        if self.error is not None:
            raise self.error
        return self.exit_code

    async def crash(self) -> None:
        """End the client abruptly: the Trio side is cancelled, nothing is said to the server."""
        self.client.cancel()
        await trio.to_thread.run_sync(self._thread.join, 10)
        self._close_pipe()

    def _close_pipe(self) -> None:
        if not self._pipe_closed:
            self._pipe_closed = True
            self._pipe_cm.__exit__(None, None, None)


class Robot:
    """Plays one seat on its own through a ``tests/wsclient.py`` Client.

    It writes ``spell`` on its turn, chooses the first open card and marks the first boards as
    conjurer, commits ``summon`` (at once in Dark Magic as conjurer), reveals, and says done in
    the review. Actions named in ``hold`` ("commit", "done", ...) wait for :meth:`release`.
    """

    def __init__(
        self,
        client: Client,
        *,
        spell: str = "",
        summon: str = "spaceship",
        play: bool = True,
        hold: tuple[str, ...] = (),
    ) -> None:
        self.c = client
        self.hold = set(hold)  # actions not taken until released
        self.spell = spell or f"{client.name.lower()}word"
        self.summon = summon
        self.play = play
        self._acted: set[tuple] = set()

    def _todo(self, v: View) -> tuple | None:
        if not self.play or self.c.seat is None or v.paused or v.phase in ("lobby", "over"):
            return None
        me = v.players[self.c.seat]
        if me.kicked or me.skipped:
            return None
        conj = v.conjurer == self.c.seat
        dark = v.settings.variant == "dark-magic"
        action = None
        if v.phase == "choose" and conj:
            action = "choose"
        elif v.phase == "dark-commit" and conj and not me.committed:
            action = "commit"
        elif v.phase == "spell" and v.turn == self.c.seat:
            action = "spell"
        elif v.phase == "mark" and conj:
            action = "mark"
        elif v.phase == "commit" and not me.committed and not (conj and dark):
            action = "commit"
        elif v.phase == "reveal" and me.committed and not me.revealed:
            action = "reveal"
        elif v.phase == "review" and not me.done:
            action = "done"
        if action is None or action in self.hold:
            return None
        key = (v.game_id, v.round, action)
        return None if key in self._acted else key

    def release(self, *actions: str) -> None:
        """Take these actions again (and look at the current view at once)."""
        self.hold.difference_update(actions or tuple(self.hold))
        self.c._wake()

    async def run(self) -> None:
        c = self.c
        while True:
            v = await c.wait_view(lambda v: self._todo(v) is not None, timeout=math.inf)
            key = self._todo(v)
            assert key is not None
            self._acted.add(key)
            action = key[2]
            if action == "choose":
                await c.choose(next(x.index for x in v.cards if not x.used))
            elif action == "spell":
                await c.spell(self.spell)
            elif action == "mark":
                boards = [p.seat for p in v.players if p.spell][:2]
                await c.mark(boards[:1] if v.settings.variant == "dark-magic" else boards)
            elif action == "commit":
                await c.commit(self.summon)
            elif action == "reveal":
                if v.round in c.secrets:
                    await c.reveal()
            elif action == "done":
                await c.done()


@contextlib.asynccontextmanager
async def robots(url: str, room: str, specs: list[dict]) -> AsyncIterator[list[Robot]]:
    """Seat one Robot per spec ({"name": ..., "spell": ..., "summon": ...}) in ``room``."""
    async with contextlib.AsyncExitStack() as stack:
        out = []
        for spec in specs:
            spec = dict(spec)
            client = await stack.enter_async_context(open_client(url, spec.pop("name")))
            await client.join(room)
            out.append(Robot(client, **spec))
        async with trio.open_nursery() as nursery:
            for r in out:
                nursery.start_soon(r.run)
            yield out
            nursery.cancel_scope.cancel()
