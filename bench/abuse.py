"""Abuse benchmark: what the DEFAULT limits do for an honest room while hostile visitors attack.

    .venv/bin/python bench/abuse.py             # six attacks of 12 s each, about 2 minutes
    .venv/bin/python bench/abuse.py --quick     # 3 s each, under a minute
    .venv/bin/python bench/abuse.py --only idle,garbage

One real server subprocess (``python -m client.cli serve --host 127.0.0.1 --port 0 --replays TMP``)
with its default limits: no limit option is passed, since the point is to measure what the defaults
do (an attack that needed a limit raised to be an attack at all would say so in its row; none does).
An honest room of 6 scripted players from 127.0.0.2, in a process of its own, plays without a
pause: one step at a time, either a chat line or (every ``ACT_EVERY``-th step) the next real game
action; a step's latency runs from just before its frame is sent to the moment the LAST of the 6
players received the chat, or the update whose receipt reflects the action. A finished game is
followed by a new room.

The attacks run one after another, each in a fresh process (niced, so that on a small machine the
server and the honest room, which would have machines of their own in real life, get the CPU first)
from loopback addresses of their own (127.0.K.x for attack K, many where the attack uses many).
For each one: the honest room's latency over the ``--calm`` seconds just before it, then during it,
and their ratio; the attacker's refusals, by error code and close code; the server's CPU; and
whether the server is still alive afterwards (its process runs and a fresh client from yet another
address says hello, creates a room and sees its view). Every attack loop is bounded in count and
time; the whole run stops by itself. Network: loopback only. Files: a temp dir only.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import math
import multiprocessing as mp
import os
import random
import re
import resource
import shutil
import socket
import struct
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VENV_PY = ROOT / ".venv" / "bin" / "python"
for _p in (str(ROOT / "bench"), str(ROOT)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

try:
    import msgspec
    import trio
    from trio_websocket import (
        ConnectionClosed,
        HandshakeError,
        WebSocketConnection,
        wrap_client_stream,
    )
    from wsproto.utilities import LocalProtocolError
except ImportError:  # run with a python that lacks the project's packages: use the venv's
    if VENV_PY.exists() and Path(sys.prefix).resolve() != VENV_PY.parent.parent.resolve():
        os.execv(str(VENV_PY), [str(VENV_PY), *sys.argv])
    raise

from loadlib import procstat  # noqa: E402
from loadlib.players import (  # noqa: E402
    SPELLS,
    SUMMONS,
    LBye,
    LDeal,
    LError,
    LMsg,
    LSeated,
    LUpdate,
    LView,
    LWatching,
    LWelcome,
    conjure_need,
)
from loadlib.serverproc import ServerProcess, pct  # noqa: E402

from conjure.protocol.commitment import commitment  # noqa: E402
from conjure.protocol.messages import MAX_FRAME_BYTES  # noqa: E402
from conjure.server.config import ServerConfig  # noqa: E402

HOST = "127.0.0.1"
HONEST = "127.0.0.2"
PLAYERS = 6
#: Every this many honest steps is a game action; the others are chat lines, said by each seat in
#: turn.
ACT_EVERY = 4
#: Seconds between two honest steps: what keeps each seat's chat within the server's default
#: ``chat_rate`` with a fifth to spare (about 12 steps a second), so that an honest step is never
#: refused for its own sake (at 50 steps a second they were, as ``chat_busy``, once seats had a
#: chat rate).
PACE = (1 - 1 / ACT_EVERY) / (PLAYERS * 0.8 * ServerConfig.chat_rate)
STEP_TIMEOUT = 5.0  # a step not complete by then is "lost"
CONNECT_TIMEOUT = 5.0  # a connection (TCP, then the WebSocket handshake) not made by then fails
ANSWER_TIMEOUT = 5.0  # an answer not received by then counts as none
HELLO = '{"type":"hello","protocol":1,"client":"abuse-bench"}'
NO_CLOCKS = '{"choose":null,"spell":null,"mark":null,"commit":null,"reveal":null,"review":null}'
HANDSHAKE = (
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)
DEFAULTS = {f.name: f.default for f in fields(ServerConfig)}
SERVER_TROUBLE = re.compile(r"Traceback|unexpected error|error handling a message|ExceptionGroup")


class HChat(LMsg, tag="chat"):
    text: str = ""


#: The lean decoder of loadlib.players, with the chat's text (the honest room times chat lines).
DECODER = msgspec.json.Decoder(
    LUpdate | LWelcome | LSeated | LError | LBye | LWatching | HChat | LDeal
)


# ------------------------------------------------------------------ the server


def serve_argv(replays: str) -> list[str]:
    """The server with its default limits: no limit option is passed."""
    py = str(VENV_PY) if VENV_PY.exists() else sys.executable
    return [
        py,
        "-m",
        "conjure.client.cli",
        "serve",
        "--host",
        HOST,
        "--port",
        "0",
        "--replays",
        replays,
    ]


# ------------------------------------------------------------------ sockets from an address


async def tcp_from(source: str, port: int) -> trio.SocketStream:
    """A TCP stream to the server whose socket is bound to the loopback address ``source``."""
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
    try:
        with trio.fail_after(CONNECT_TIMEOUT):
            await sock.bind((source, 0))
            await sock.connect((HOST, port))
    except BaseException:
        sock.close()
        raise
    return trio.SocketStream(sock)


async def ws_from(
    nursery: trio.Nursery, source: str, port: int
) -> tuple[WebSocketConnection, trio.SocketStream]:
    """A client WebSocket from ``source``, and its TCP stream (which the caller must close)."""
    stream = await tcp_from(source, port)
    try:
        with trio.fail_after(CONNECT_TIMEOUT):
            ws = await wrap_client_stream(nursery, stream, HOST, "/", max_message_size=2**22)
    except BaseException:
        reset(stream)
        raise
    return ws, stream


def reset(stream: trio.SocketStream) -> None:
    """Close with a TCP reset (SO_LINGER 0): no goodbye, no TIME_WAIT."""
    with contextlib.suppress(OSError):
        stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    stream.socket.close()


async def hang_up(ws: WebSocketConnection, stream: trio.SocketStream, grace: float = 1.0) -> None:
    """A clean WebSocket close (bounded), then the TCP stream."""
    with trio.move_on_after(grace), contextlib.suppress(Exception):
        await ws.aclose()
    with trio.CancelScope(shield=True):
        await trio.aclose_forcefully(stream)


def close_code(exc: ConnectionClosed) -> int:
    return exc.reason.code if exc.reason is not None else 1006


def decode(raw: str | bytes) -> Any:
    try:
        return DECODER.decode(raw)
    except msgspec.DecodeError:
        return None


# ------------------------------------------------------------------ the honest room


@dataclass
class Step:
    kind: str  # "chat" | "act:<what>"
    want: Any  # chat text, or the receipt seq the update must reach
    sender: int
    t_sent: float = 0.0
    seen: set[int] = field(default_factory=set)
    t_last: float = 0.0
    failed: str | None = None
    done: trio.Event = field(default_factory=trio.Event)

    def arrive(self, seat: int, t: float) -> None:
        if seat not in self.seen:
            self.seen.add(seat)
            self.t_last = t
            if len(self.seen) == PLAYERS:
                self.done.set()


@dataclass
class HPlayer:
    seat: int
    ws: Any = None
    stream: Any = None
    view: LView | None = None
    seq: int = -1
    code: str | None = None
    secret: tuple[str, bytes] | None = None
    welcomed: trio.Event = field(default_factory=trio.Event)
    seated: trio.Event = field(default_factory=trio.Event)
    full: trio.Event = field(default_factory=trio.Event)  # has seen all PLAYERS seats taken


class HonestRoom:
    """4 players, one step in flight at a time; every step timed until all 4 have it."""

    def __init__(self, port: int, code_box: Any) -> None:
        self.port = port
        self.code_box = code_box
        self.samples: list[tuple[float, float, str]] = []  # (t sent, seconds, kind)
        self.lost: list[tuple[float, str]] = []
        self.errors: Counter[str] = Counter()
        self.step: Step | None = None
        self.games = 0
        self.rooms = 0
        self.chat_n = 0
        self.ready = trio.Event()
        self.closing = False  # we are hanging up: closes are expected
        self.broken = trio.Event()

    async def read(self, p: HPlayer) -> None:
        mono = time.monotonic
        try:
            while True:
                raw = await p.ws.get_message()
                t = mono()
                msg = decode(raw)
                st = self.step
                if type(msg) is LUpdate:
                    p.view = msg.view
                    if len(msg.view.players) >= PLAYERS:
                        p.full.set()
                    if msg.receipt is not None and msg.receipt.seq > p.seq:
                        p.seq = msg.receipt.seq
                    if st is not None and st.kind != "chat" and p.seq >= st.want:
                        st.arrive(p.seat, t)
                elif type(msg) is HChat:
                    if st is not None and st.kind == "chat" and msg.text == st.want:
                        st.arrive(p.seat, t)
                elif type(msg) is LWelcome:
                    p.welcomed.set()
                elif type(msg) is LDeal:  # the fair deal: every seat adds a random share
                    seed = os.urandom(32).hex()
                    await p.ws.send_message(f'{{"type":"deal_seed","seed":"{seed}"}}')
                elif type(msg) is LSeated:
                    p.code, p.seat = msg.room, msg.seat
                    p.seated.set()
                elif type(msg) is LError:
                    self.errors[msg.code] += 1
                    if st is not None and st.sender == p.seat:
                        st.failed = msg.code
                        st.done.set()
                elif type(msg) is LBye and not self.closing:
                    self.errors["bye: " + msg.reason[:40]] += 1
        except ConnectionClosed as exc:
            if not self.closing:  # the server dropped an honest player: seat a new room
                self.errors[f"close {close_code(exc)}"] += 1
                self.broken.set()
                if self.step is not None:
                    self.step.done.set()

    def action(self, players: list[HPlayer]) -> tuple[HPlayer, str, str] | None:
        """The next game action someone may take: (player, frame, kind)."""
        v = players[0].view
        if v is None:
            return None
        if v.phase == "lobby":
            return (
                (players[0], '{"type":"start_game"}', "start")
                if len(v.players) == PLAYERS
                else None
            )
        for p in players:
            if p.view is None:
                continue
            need = conjure_need(p.view, p.seat)
            if need is not None:
                return p, self.frame(p, need), need[1]
        return None

    def frame(self, p: HPlayer, need: tuple[int, str]) -> str:
        r, kind = need
        v, me = p.view, p.seat
        assert v is not None
        if kind == "choose":
            card = next((c.index for c in v.cards if not c.used), 0)
            return f'{{"type":"choose_card","card":{card}}}'
        if kind == "spell":
            return f'{{"type":"write_spell","word":"{SPELLS[(me + r) % len(SPELLS)]}"}}'
        if kind == "mark":
            return f'{{"type":"mark_boards","boards":[{(me + 1) % PLAYERS},{(me + 2) % PLAYERS}]}}'
        if kind == "commit":
            word, nonce = SUMMONS[(me + r) % 3], os.urandom(32)
            p.secret = (word, nonce)
            c = commitment(v.game_id or "", r, me, nonce, word)
            return f'{{"type":"commit_summon","commitment":"{c}"}}'
        if kind == "reveal":
            word, nonce = p.secret or ("", b"\0" * 32)
            return f'{{"type":"reveal_summon","word":"{word}","nonce":"{nonce.hex()}"}}'
        return '{"type":"done"}'

    async def seat_everyone(self, nursery: trio.Nursery, players: list[HPlayer]) -> None:
        with trio.fail_after(20):
            for p in players:
                p.ws, p.stream = await ws_from(nursery, HONEST, self.port)
                nursery.start_soon(self.read, p)
                await p.ws.send_message(HELLO)
                await p.welcomed.wait()
            host = players[0]
            await host.ws.send_message(
                f'{{"type":"create_room","name":"Honest0","settings":{{"limits":{NO_CLOCKS}}}}}'
            )
            await host.seated.wait()
            for p in players[1:]:
                await p.ws.send_message(
                    f'{{"type":"join_room","room":"{host.code}","name":"Honest{p.seat}"}}'
                )
                await p.seated.wait()
            for p in players:
                await p.full.wait()
        self.code_box.value = (host.code or "").encode()
        self.rooms += 1

    async def one_room(self, stop: trio.Event) -> None:
        """Seat a room and play in it until the game is over or ``stop``."""
        players = [HPlayer(seat=i) for i in range(PLAYERS)]
        self.closing, self.broken = False, trio.Event()
        try:
            async with trio.open_nursery() as nursery:
                try:
                    await self.seat_everyone(nursery, players)
                    self.ready.set()
                    await self.play(players, stop)
                finally:
                    self.closing = True
                    for p in players:
                        if p.ws is not None:
                            await hang_up(p.ws, p.stream, 0.5)
                    nursery.cancel_scope.cancel()
        except Exception as exc:  # a broken room is counted; the next one is seated
            self.errors[f"room failed: {type(exc).__name__}"] += 1

    async def play(self, players: list[HPlayer], stop: trio.Event) -> None:
        mono = time.monotonic
        for k in range(1, 1_000_000):
            if stop.is_set() or self.broken.is_set():
                return
            v = players[0].view
            assert v is not None
            if v.phase == "over":
                self.games += 1
                return
            act = self.action(players) if (k % ACT_EVERY == 0 or v.phase == "lobby") else None
            if act is not None:
                p, frame, kind = act
                step = Step("act:" + kind, max(q.seq for q in players) + 1, p.seat)
            else:
                self.chat_n += 1
                p = players[k % PLAYERS]
                text = f"ping {self.chat_n}"
                frame = f'{{"type":"chat","text":"{text}"}}'
                step = Step("chat", text, p.seat)
            self.step = step
            step.t_sent = mono()
            await p.ws.send_message(frame)
            with trio.move_on_after(STEP_TIMEOUT):
                await step.done.wait()
            self.step = None
            if self.broken.is_set():
                self.lost.append((step.t_sent, f"{step.kind}: connection lost"))
            elif step.failed is not None:
                self.lost.append((step.t_sent, f"{step.kind}: {step.failed}"))
            elif step.done.is_set():
                self.samples.append((step.t_sent, step.t_last - step.t_sent, step.kind))
            else:
                self.lost.append((step.t_sent, f"{step.kind}: timeout"))
            await trio.sleep(PACE)

    async def run(self, stop_evt: Any, ready_q: Any) -> None:
        stop = trio.Event()

        async def watch_stop() -> None:
            while not await trio.to_thread.run_sync(stop_evt.wait, 0.25):
                pass
            stop.set()

        async def report_ready() -> None:
            with trio.move_on_after(30):
                await self.ready.wait()
            ready_q.put(self.ready.is_set())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch_stop)
            nursery.start_soon(report_ready)
            for _ in range(1000):  # a new room after each game (or a failed room)
                if stop.is_set():
                    break
                await self.one_room(stop)
                if not stop.is_set():
                    await trio.sleep(0.2)
            nursery.cancel_scope.cancel()


def honest_main(port: int, code_box: Any, stop_evt: Any, ready_q: Any, result_q: Any) -> None:
    room = HonestRoom(port, code_box)
    try:
        trio.run(room.run, stop_evt, ready_q)
        result_q.put(
            {
                "samples": room.samples,
                "lost": room.lost,
                "errors": dict(room.errors),
                "games": room.games,
                "rooms": room.rooms,
            }
        )
    except BaseException:
        ready_q.put(False)
        result_q.put({"crash": traceback.format_exc()[-3000:]})


# ------------------------------------------------------------------ attacks


@dataclass
class Attack:
    """What an attack process shares with its attack function, and reports back."""

    port: int
    duration: float
    code_box: Any
    net: int  # the attack's addresses are 127.0.<net>.1 ...
    tally: Counter[str] = field(default_factory=Counter)  # refusals: error codes, close codes
    stats: Counter[str] = field(default_factory=Counter)  # what the attacker did
    t0: float = 0.0
    t1: float = 0.0
    deadline: float = 0.0
    _closes: set[int] = field(default_factory=set)

    def addr(self, i: int) -> str:
        return f"127.0.{self.net}.{1 + i}"

    def left(self) -> float:
        return self.deadline - trio.current_time()

    def closed(self, ws: WebSocketConnection, exc: ConnectionClosed) -> None:
        """Count a connection's close code once (normal closes and resets are not refusals)."""
        if id(ws) in self._closes:
            return
        self._closes.add(id(ws))
        code = close_code(exc)
        if code not in (1000, 1005, 1006):  # normal, none given, abnormal (a reset)
            self.tally[f"close {code}"] += 1

    def refused(self, msg: Any) -> bool:
        if type(msg) is LError:
            self.tally[msg.code] += 1
            return True
        return False

    async def drain(self, ws: WebSocketConnection) -> None:
        """Read everything the server sends, counting its refusals, until it closes."""
        try:
            while True:
                msg = decode(await ws.get_message())
                if not self.refused(msg) and type(msg) is HChat:
                    self.stats["chat frames received"] += 1
        except ConnectionClosed as exc:
            self.closed(ws, exc)

    async def answer(self, ws: WebSocketConnection, want: type) -> Any:
        """The first ``want`` or error (counted) the server sends; None after ANSWER_TIMEOUT."""
        with trio.move_on_after(ANSWER_TIMEOUT):
            while True:
                msg = decode(await ws.get_message())
                if type(msg) is want or self.refused(msg):
                    return msg
        return None

    async def session(
        self,
        source: str,
        body: Callable[[WebSocketConnection, trio.SocketStream, trio.Nursery], Awaitable[None]],
    ) -> bool:
        """Connect from ``source``, run ``body``, hang up. Connection trouble is counted, never
        raised; False if the server did not take the connection."""
        try:
            async with trio.open_nursery() as nursery:
                try:
                    ws, stream = await ws_from(nursery, source, self.port)
                except (
                    OSError,
                    trio.TooSlowError,
                    trio.BrokenResourceError,
                    HandshakeError,
                ) as exc:
                    self.not_taken(exc)
                    nursery.cancel_scope.cancel()
                    return False
                try:
                    await body(ws, stream, nursery)
                except ConnectionClosed as exc:
                    self.closed(ws, exc)
                except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
                    self.stats["connections broken"] += 1
                finally:
                    await hang_up(ws, stream, 0.5)
                    nursery.cancel_scope.cancel()
        except* LocalProtocolError:
            # trio-websocket's own reader task can fail on the client side (it answers a ping
            # while closing: wsproto LocalProtocolError); that is the attacker's problem.
            self.stats["client library errors"] += 1
        return True

    def not_taken(self, exc: BaseException) -> None:
        """A connection the server did not take: reset at accept, timed out, refused."""
        if isinstance(exc, trio.TooSlowError):
            self.tally["connect timeout"] += 1
        else:
            self.tally["closed before handshake"] += 1


async def attack_resets(att: Attack) -> None:
    """~100 connections a second from 4 addresses: WebSocket handshake, then a TCP reset (a third
    before reading the reply, a third after it, a third in the middle of a first frame)."""
    rate = 100.0

    async def one(i: int) -> None:
        try:
            with trio.fail_after(3.0):
                stream = await tcp_from(att.addr(i % 4), att.port)
        except (OSError, trio.TooSlowError) as exc:
            att.not_taken(exc)
            return
        try:
            with trio.fail_after(3.0):
                await stream.send_all(HANDSHAKE)
                if i % 3:
                    reply = b""
                    while b"\r\n\r\n" not in reply and len(reply) < 8192:
                        chunk = await stream.receive_some(4096)
                        if not chunk:
                            break
                        reply += chunk
                    if b" 101 " in reply:
                        att.stats["handshakes completed"] += 1
                    else:
                        att.tally["closed before handshake"] += 1
                    if i % 3 == 2:  # a masked text frame announcing 100 bytes, 5 sent
                        await stream.send_all(bytes([0x81, 0x80 | 100]) + b"\x01\x02\x03\x04hello")
        except (trio.BrokenResourceError, trio.TooSlowError, OSError):
            att.tally["closed before handshake"] += 1
        finally:
            reset(stream)
            att.stats["connections reset"] += 1

    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        for i in range(int(rate * att.duration) + 1):
            if att.left() <= 0:
                break
            await trio.sleep_until(start + i / rate)
            nursery.start_soon(one, i)


async def attack_rooms(att: Attack) -> None:
    """4 addresses, each in a loop: connect, hello, create a room, disconnect."""

    async def loop(a: int) -> None:
        for i in range(5000):
            if att.left() <= 0:
                return

            async def body(ws: WebSocketConnection, *_: Any, i: int = i) -> None:
                await ws.send_message(HELLO)
                await ws.send_message(f'{{"type":"create_room","name":"churn{i}"}}')
                if type(await att.answer(ws, LSeated)) is LSeated:
                    att.stats["rooms created"] += 1

            att.stats["connections"] += 1
            if not await att.session(att.addr(a), body):
                await trio.sleep(0.05)

    async with trio.open_nursery() as nursery:
        for a in range(4):
            nursery.start_soon(loop, a)


async def attack_spectators(att: Attack) -> None:
    """32 loops from 4 addresses on the honest room: watch it, stay a moment, leave (by ``leave``
    or by a reset), again; beyond the room's spectator limit they are refused and retry."""

    async def loop(j: int) -> None:
        rng = random.Random(j)
        for i in range(2000):
            if att.left() <= 0:
                return

            async def body(
                ws: WebSocketConnection, stream: trio.SocketStream, n: trio.Nursery, i: int = i
            ) -> None:
                await ws.send_message(HELLO)
                code = att.code_box.value.decode()
                await ws.send_message(f'{{"type":"watch","room":"{code}"}}')
                if type(await att.answer(ws, LWatching)) is not LWatching:
                    await trio.sleep(0.05)
                    return
                att.stats["watches"] += 1
                watching[code] += 1  # per room: the honest room changes after each game
                most = max(att.stats["most watching one room at once"], watching[code])
                att.stats["most watching one room at once"] = most
                n.start_soon(att.drain, ws)
                try:
                    await trio.sleep(min(rng.uniform(0.1, 0.6), max(0.0, att.left())))
                    if i % 2:
                        await ws.send_message('{"type":"leave"}')
                    else:
                        reset(stream)
                finally:
                    # Counted from the welcome to the goodbye sent: a lower bound of the room's count.
                    watching[code] -= 1
                for _ in range(100):  # until the server has closed it (drain counts how)
                    if ws.closed is not None:
                        break
                    await trio.sleep(0.01)

            if not await att.session(att.addr(j % 4), body):
                await trio.sleep(0.05)

    watching: Counter[str] = Counter()
    async with trio.open_nursery() as nursery:
        for j in range(32):
            nursery.start_soon(loop, j)


async def attack_chatter(att: Attack) -> None:
    """400 connections from 20 addresses (20 each, under the per-address cap): per address 8 create
    rooms and 12 join them; then every connection chats at 19 a second (under its own limit)."""
    addresses, per, rate = 20, 20, 19.0
    go = trio.Event()
    all_chatting = trio.Event()

    async def chat(ws: WebSocketConnection, *_: Any) -> None:
        await go.wait()
        start = trio.current_time() + random.uniform(0, 1 / rate)
        for n in range(int(rate * att.duration) + 1):
            if att.left() <= 0:
                return
            await trio.sleep_until(start + n / rate)
            await ws.send_message('{"type":"chat","text":"buy cheap spells"}')
            att.stats["chats sent"] += 1

    async def member(a: int, i: int, codes: list[str], seated: trio.Event) -> None:
        async def body(ws: WebSocketConnection, _s: Any, n: trio.Nursery) -> None:
            await ws.send_message(HELLO)
            if i < 8:
                await ws.send_message(
                    f'{{"type":"create_room","name":"c{i}","settings":{{"spectators":false}}}}'
                )
            else:
                with trio.move_on_after(5):
                    await seated.wait()
                code = codes[i % len(codes)] if codes else "ABCD"
                await ws.send_message(f'{{"type":"join_room","room":"{code}","name":"c{i}"}}')
            msg = await att.answer(ws, LSeated)
            if type(msg) is LSeated:
                att.stats["seated"] += 1
                if i < 8:
                    codes.append(msg.room)
                    if len(codes) == 8:
                        seated.set()
            att.stats["connections chatting"] += 1
            if att.stats["connections chatting"] >= addresses * per:
                all_chatting.set()
            n.start_soon(att.drain, ws)
            await chat(ws)
            await trio.sleep(max(0.0, att.left()))

        await att.session(att.addr(a), body)

    async def address(a: int, nursery: trio.Nursery) -> None:
        codes: list[str] = []
        seated = trio.Event()
        for i in range(per):
            nursery.start_soon(member, a, i, codes, seated)
            await trio.sleep(0.002)

    async with trio.open_nursery() as nursery:
        for a in range(addresses):
            nursery.start_soon(address, a, nursery)
        with trio.move_on_after(max(0.0, min(5.0, att.left()))):
            await all_chatting.wait()
        go.set()


async def attack_idle(att: Attack) -> None:
    """1,500 connections from 50 addresses (30 each) that then do nothing; half never say hello."""
    addresses, per = 50, 30
    limiter = trio.CapacityLimiter(64)  # handshakes in flight at once

    async def one(i: int, nursery: trio.Nursery) -> None:
        settled = trio.Event()

        async def body(ws: WebSocketConnection, stream: trio.SocketStream, n: trio.Nursery) -> None:
            att.stats["connections opened"] += 1
            settled.set()
            n.start_soon(att.drain, ws)
            if i % 2 == 0:
                await ws.send_message(HELLO)
                att.stats["greeted"] += 1
            await trio.sleep(max(0.0, att.left()))
            reset(stream)  # no goodbye: 1,500 closing handshakes would be another attack

        async def run() -> None:
            await att.session(att.addr(i % addresses), body)
            settled.set()

        async with limiter:
            if att.left() <= 0:
                return
            nursery.start_soon(run)
            await settled.wait()

    async with trio.open_nursery() as nursery:
        for i in range(addresses * per):
            nursery.start_soon(one, i, nursery)


DEEP = '{"a":' * 2000 + "1" + "}" * 2000
#: Small objects in one "costly" garbage frame: as many as fit well within the frame limit.
SMALL_OBJECTS = (MAX_FRAME_BYTES - 100) // 8
GARBAGE: list[tuple[str, str | bytes]] = [
    ("malformed", '{"type": "chat", "text": '),
    ("malformed", "not json at all \u2603"),
    ("binary", bytes(range(256))),
    ("wrong types", '{"type": "chat", "text": 5}'),
    ("wrong types", '{"type": "hello", "protocol": "one", "extra": [1, 2]}'),
    ("unknown type", '{"type": "teleport", "to": "the moon"}'),
    ("deep nesting", DEEP),
    ("deep nesting", "[" * 3000 + "]" * 3000),
    ("random unicode", "\U0001f9d9\u202e\u0301\x00 \ud7ff \uffff"),
    ("oversized", '{"type":"chat","text":"' + "x" * (MAX_FRAME_BYTES + 512) + '"}'),
    # Within the frame limit, refused at their first fault, and dear to explain had the refusal
    # parsed them whole (an attacker's review: 3.5 ms each, the event loop 98% busy).
    ("costly", '{"type":"resync","x":[' + ",".join(['{"a":1}'] * SMALL_OBJECTS) + "]}"),
    ("costly", "[" + ",".join(['{"a":1}'] * SMALL_OBJECTS) + "]"),
    ("costly", '{"type":"chat","text":"\\ud800","x":[' + ",".join(['{"a":1}'] * SMALL_OBJECTS)),
]


async def attack_garbage(att: Attack) -> None:
    """32 connections from 4 addresses, ~10 frames a second each, cycling through malformed JSON,
    binary frames, wrong types, deep nesting, odd unicode, frames that fill the frame limit with
    small objects and fail at their first bytes, and oversized frames (which close the connection:
    it comes back). Half say hello first."""
    rate = 10.0

    async def loop(j: int) -> None:
        k = [j]

        async def body(ws: WebSocketConnection, _s: Any, n: trio.Nursery) -> None:
            n.start_soon(att.drain, ws)
            if j % 2:
                await ws.send_message(HELLO)
            start = trio.current_time()
            for m in range(int(rate * att.duration) + 1):
                if att.left() <= 0:
                    return
                await trio.sleep_until(start + m / rate)
                kind, frame = GARBAGE[k[0] % len(GARBAGE)]
                k[0] += 1
                await ws.send_message(frame)
                att.stats[f"sent {kind}"] += 1
                if kind == "oversized":
                    for _ in range(200):  # the server closes it (1009): drain counts that
                        if ws.closed is not None:
                            return
                        await trio.sleep(0.01)

        for _ in range(1000):
            if att.left() <= 0:
                return
            if not await att.session(att.addr(j % 4), body):
                await trio.sleep(0.05)

    async with trio.open_nursery() as nursery:
        for j in range(32):
            nursery.start_soon(loop, j)


async def _read_until_close(att: Attack, ws: Any, stream: trio.SocketStream, scope: Any) -> None:
    """A raw wsproto client's reader: counts the server's close code, then ends the session."""
    from wsproto.events import CloseConnection

    with contextlib.suppress(OSError, trio.BrokenResourceError, trio.ClosedResourceError):
        while data := await stream.receive_some():
            ws.receive_data(data)
            for event in ws.events():
                if isinstance(event, CloseConnection):
                    att.tally[f"close {event.code}"] += 1
                    scope.cancel()
                    return
    scope.cancel()


async def attack_frames(att: Attack) -> None:
    """16 greeted connections from 4 addresses that send frames no message limit sees, as fast as
    the server reads them: half start a message and send only empty continuation fragments (6
    bytes each), half send pings. Each comes back when the server closes it."""
    from wsproto import ConnectionType, WSConnection
    from wsproto.events import AcceptConnection, Ping, Request, TextMessage

    async def loop(j: int) -> None:
        for _ in range(1000):
            if att.left() <= 0:
                return
            try:
                stream = await tcp_from(att.addr(j % 4), att.port)
            except (OSError, trio.TooSlowError):
                att.tally["closed before handshake"] += 1
                await trio.sleep(0.05)
                continue
            ws = WSConnection(ConnectionType.CLIENT)
            try:
                with trio.move_on_after(max(0.0, att.left())):
                    await stream.send_all(ws.send(Request(host=HOST, target="/")))
                    while not any(isinstance(e, AcceptConnection) for e in ws.events()):
                        if not (data := await stream.receive_some()):
                            raise trio.BrokenResourceError("closed before its handshake")
                        ws.receive_data(data)
                    await stream.send_all(ws.send(TextMessage(data=HELLO)))
                    if j % 2:
                        burst = b"".join(ws.send(Ping(b"")) for _ in range(100))
                        kind = "pings"
                    else:
                        await stream.send_all(ws.send(TextMessage(data="", message_finished=False)))
                        burst = ws.send(TextMessage(data="", message_finished=False)) * 100
                        kind = "empty fragments"

                    async with trio.open_nursery() as n:
                        n.start_soon(_read_until_close, att, ws, stream, n.cancel_scope)
                        while att.left() > 0:  # the server's reading paces these sends
                            await stream.send_all(burst)
                            att.stats[f"{kind} sent"] += 100
            except* (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
                att.stats["connections broken"] += 1
            except* LocalProtocolError:
                att.stats["client library errors"] += 1
            finally:
                reset(stream)

    async with trio.open_nursery() as nursery:
        for j in range(16):
            nursery.start_soon(loop, j)


#: (key, label, function, a limit that had to be raised for it to be an attack at all, or "")
ATTACKS: list[tuple[str, str, Callable[[Attack], Awaitable[None]], str]] = [
    ("resets", "handshake + TCP reset, 100/s", attack_resets, ""),
    ("rooms", "create room + disconnect loop", attack_rooms, ""),
    ("spectators", "spectators join/leave", attack_spectators, ""),
    ("chatter", "400 conns x 19 msg/s", attack_chatter, ""),
    ("idle", "1,500 idle conns, half mute", attack_idle, ""),
    ("garbage", "garbage frames", attack_garbage, ""),
    ("frames", "ping + empty-fragment floods", attack_frames, ""),
]


def _cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def attack_main(key: str, net: int, port: int, duration: float, code_box: Any, result_q) -> None:
    """Entry point of one attack process (multiprocessing target)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with contextlib.suppress(OSError):
        os.nice(5)
    fn = next(f for k, _, f, _ in ATTACKS if k == key)
    att = Attack(port=port, duration=duration, code_box=code_box, net=net)

    async def run() -> None:
        att.deadline = trio.current_time() + duration
        # The whole attack, setup and teardown included, is bounded in time.
        with trio.move_on_after(duration + 20):
            await fn(att)

    cpu0 = _cpu_self()
    att.t0 = time.monotonic()
    try:
        trio.run(run)
    except BaseException:
        result_q.put({"crash": traceback.format_exc()[-3000:]})
        return
    att.t1 = time.monotonic()
    result_q.put(
        {
            "t0": att.t0,
            "t1": min(att.t1, att.t0 + duration),
            "tally": dict(att.tally),
            "stats": dict(att.stats),
            "cpu": _cpu_self() - cpu0,
        }
    )


# ------------------------------------------------------------------ is the server alive?


async def probe(port: int, source: str) -> float:
    """A fresh client from ``source``: hello, create a room, see its view. Returns seconds."""
    t0 = time.monotonic()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            ws, stream = await ws_from(nursery, source, port)
            try:
                await ws.send_message(HELLO)
                await ws.send_message('{"type":"create_room","name":"Probe"}')
                while True:
                    msg = decode(await ws.get_message())
                    if type(msg) is LError:
                        raise RuntimeError(f"refused: {msg.code}: {msg.message}")
                    if type(msg) is LUpdate and len(msg.view.players) == 1:
                        break
                took = time.monotonic() - t0
            finally:
                await hang_up(ws, stream, 1.0)
                nursery.cancel_scope.cancel()
    return took


def alive(server: ServerProcess, source: str) -> tuple[bool, str]:
    if not server.alive:
        return False, f"server exited with {server.proc.returncode}"
    try:
        took = trio.run(probe, server.port, source)
    except Exception as exc:  # any failure of the probe is the finding
        return False, f"probe failed: {type(exc).__name__}: {exc}"[:120]
    return True, f"probe {1000 * took:.0f} ms"


# ------------------------------------------------------------------ main


def window(samples: list, lost: list, t0: float, t1: float) -> tuple[list[float], int]:
    lat = [s for t, s, _ in samples if t0 <= t <= t1]
    return lat, sum(1 for t, _ in lost if t0 <= t <= t1)


def fmt_counts(c: dict[str, int], top: int = 6) -> str:
    items = sorted(c.items(), key=lambda kv: -kv[1])
    shown = " ".join(f"{k}:{v}" for k, v in items[:top])
    return shown + (f" (+{len(items) - top} more)" if len(items) > top else "") or "-"


def ratio(a: float, b: float) -> str:
    if math.isnan(a) or math.isnan(b) or b <= 0:
        return "-"
    return f"{a / b:.1f}x"


def run_attack(
    ctx: Any,
    server: ServerProcess,
    honest_pid: int,
    code_box: Any,
    n: int,
    key: str,
    duration: float,
    calm: float,
) -> dict:
    """A calm window, then one attack in its own process, then the liveness probe."""
    t_calm0 = time.monotonic()
    time.sleep(calm)
    t_calm1 = time.monotonic()
    trouble0 = len(server.trouble)
    sampler = procstat.Sampler(server.pid, [server.pid]).start()
    cpu0, m0, w0 = procstat.cpu_seconds(server.pid), procstat.machine_cpu(), time.monotonic()
    snap0 = procstat.all_cpu()
    q = ctx.Queue()
    net = 1 + [a[0] for a in ATTACKS].index(key)
    p = ctx.Process(target=attack_main, args=(key, net, server.port, duration, code_box, q))
    p.start()
    try:
        res = q.get(timeout=duration + 90)
    except Exception:  # a hung attacker is reported, not fatal
        res = {"crash": "the attack process did not report"}
    p.join(timeout=20)
    if p.is_alive():
        p.kill()
        p.join(timeout=5)
    cpu1, m1, w1 = procstat.cpu_seconds(server.pid), procstat.machine_cpu(), time.monotonic()
    sampler.stop()
    ours = {os.getpid(), server.pid, honest_pid, p.pid or 0}
    other, other_top = procstat.others(snap0, procstat.all_cpu(), ours, w1 - w0)
    time.sleep(1.0)  # let the server finish closing the attacker's connections
    ok, how = alive(server, f"127.0.0.{3 + n}")
    return {
        "key": key,
        "calm": (t_calm0, t_calm1),
        "res": res,
        "srv_cpu": 100.0 * (cpu1 - cpu0) / (w1 - w0),
        "mach_cpu": 100.0 * (m1[0] - m0[0]) / max(1, m1[1] - m0[1]),
        "other_cpu": other,
        "other_top": other_top,
        "rss_mb": sampler.peak_kb / 1024,
        "alive": ok,
        "how": how,
        "trouble": server.trouble[trouble0:],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="3 s attacks, 2 s calm windows")
    ap.add_argument("--duration", type=float, help="seconds per attack (default 12, quick 3)")
    ap.add_argument("--calm", type=float, help="seconds of calm before each (default 4, quick 2)")
    ap.add_argument("--only", help="comma-separated attacks: " + ",".join(a[0] for a in ATTACKS))
    args = ap.parse_args(argv)
    duration = args.duration or (3.0 if args.quick else 12.0)
    calm = args.calm or (2.0 if args.quick else 4.0)
    chosen = [a for a in ATTACKS if not args.only or a[0] in args.only.split(",")]
    if not chosen:
        ap.error("no such attack")

    tmp = tempfile.mkdtemp(prefix="conjure-abuse-")
    ctx = mp.get_context("spawn")
    code_box = ctx.Array(ctypes.c_char, 16)
    stop_evt, ready_q, honest_q = ctx.Event(), ctx.Queue(), ctx.Queue()
    rows: list[dict] = []
    started = time.monotonic()
    server = ServerProcess(serve_argv(tmp), cwd=ROOT, trouble=SERVER_TROUBLE)
    assert server.port is not None
    print(
        f"server pid {server.pid} on ws://{HOST}:{server.port}, default limits, logs in a temp dir"
    )
    honest = ctx.Process(
        target=honest_main,
        args=(server.port, code_box, stop_evt, ready_q, honest_q),
        daemon=True,
    )
    honest.start()
    result: dict = {}
    try:
        if not ready_q.get(timeout=60):
            raise RuntimeError(
                "the honest room could not be seated: " + str(honest_q.get(timeout=5))
            )
        print(
            f"honest room {code_box.value.decode()} from {HONEST} playing; attacks of {duration:g} s"
        )
        time.sleep(1.0)
        for n, (key, label, _, raised) in enumerate(chosen):
            row = run_attack(ctx, server, honest.pid or 0, code_box, n, key, duration, calm)
            row.update(label=label, raised=raised)
            rows.append(row)
            status = "alive" if row["alive"] else "NOT ALIVE"
            print(f"  {label}: done, server {status} ({row['how']})", flush=True)
            if not server.alive:
                break
    finally:
        stop_evt.set()
        with contextlib.suppress(Exception):
            result = honest_q.get(timeout=30)
        honest.join(timeout=10)
        if honest.is_alive():
            honest.kill()
        code = server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    report(rows, result, duration, calm, code, server, time.monotonic() - started)
    return 0 if rows and all(r["alive"] for r in rows) else 1


def report(
    rows: list[dict],
    honest: dict,
    duration: float,
    calm: float,
    exit_code: int | None,
    server: ServerProcess,
    took: float,
) -> None:
    if "crash" in honest:
        print("the honest room's process crashed:\n" + honest["crash"])
        return
    samples, lost = honest.get("samples", []), honest.get("lost", [])
    print()
    print(
        f"Honest room: {PLAYERS} players from {HONEST}, one step at a time (chat lines, and every "
        f"{ACT_EVERY}th step a game action); latency = sent -> the last of the {PLAYERS} has it."
    )
    print(
        f"Calm = the {calm:g} s just before each attack, attacked = its {duration:g} s; "
        "other = CPU (% of a core) used by processes outside this benchmark meanwhile."
    )
    head = (
        f"{'attack':<30} {'calm p50/p99 ms':>16} {'attacked p50/p99':>17} {'x p50':>6} {'x p99':>6}"
        f" {'n calm/att':>10} {'lost':>4} {'server':>6} {'other':>5} {'alive':>5}"
        "  refusals by code (close N: closed with that code)"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        res = r["res"]
        if "crash" in res:
            print(f"{r['label']:<30} attack process failed: {res['crash'][-300:]}")
            continue
        c_lat, c_lost = window(samples, lost, *r["calm"])
        a_lat, a_lost = window(samples, lost, res["t0"], res["t1"])
        c50, c99 = 1000 * pct(c_lat, 0.5), 1000 * pct(c_lat, 0.99)
        a50, a99 = 1000 * pct(a_lat, 0.5), 1000 * pct(a_lat, 0.99)
        label = r["label"] + (" *" if r["raised"] else "")
        print(
            f"{label:<30} {c50:>7.1f} /{c99:>7.1f} {a50:>8.1f} /{a99:>7.1f} {ratio(a50, c50):>6}"
            f" {ratio(a99, c99):>6} {len(c_lat):>4}/{len(a_lat):<5} {c_lost + a_lost:>4}"
            f" {r['srv_cpu']:>5.0f}% {r['other_cpu']:>4.0f}% {'yes' if r['alive'] else 'NO':>5}"
            f"  {fmt_counts(res['tally'])}"
        )
    print()
    for r in rows:
        res = r["res"]
        if "crash" in res:
            continue
        a_lat, _ = window(samples, lost, res["t0"], res["t1"])
        worst = 1000 * max(a_lat) if a_lat else float("nan")
        print(f"{r['label']}: the attacker did {fmt_counts(res['stats'], 8)}")
        print(
            f"    attacker CPU {100 * res['cpu'] / duration:.0f}% of a core (niced), server"
            f" {r['srv_cpu']:.0f}%, server peak RSS {r['rss_mb']:.0f} MB, machine"
            f" {r['mach_cpu']:.0f}% busy; honest max {worst:.0f} ms; after: {r['how']}"
        )
        if r["raised"]:
            print(f"    * limit raised for this attack: {r['raised']}")
        if r["other_cpu"] >= 20:
            print(f"    shared machine: {', '.join(r['other_top']) or 'short-lived processes'}")
        for line in r["trouble"][:3]:
            print(f"    SERVER ERROR LOGGED: {line}")
    acts = [s for _, s, k in samples if k != "chat"]
    d = DEFAULTS
    print()
    print(
        f"Limits: the server's defaults, none raised (max_connections_per_address "
        f"{d['max_connections_per_address']}, address_rate {d['address_rate']:g}/s, "
        f"max_rooms_per_address {d['max_rooms_per_address']}, max_connections "
        f"{d['max_connections']}, max_rooms {d['max_rooms']}, max_spectators "
        f"{d['max_spectators']}, hello_timeout {d['hello_timeout']:g} s)."
    )
    print(
        "What they leave to an attacker with many addresses (arithmetic, not measured): "
        f"{math.ceil(d['max_rooms'] / d['max_rooms_per_address'])} addresses fill every room "
        f"(server_full for all) for lobby_idle_close = {d['lobby_idle_close']:g} s; "
        f"{math.ceil(d['max_connections'] / d['max_connections_per_address'])} take every "
        "connection (server_busy). An IPv6 /64 counts as one address."
    )
    print(
        f"Honest room over the whole run: {len(samples)} steps ({len(acts)} game actions, p50 "
        f"{1000 * pct(acts, 0.5):.1f} ms, p99 {1000 * pct(acts, 0.99):.1f} ms), {len(lost)} lost, "
        f"{honest.get('games', 0)} games finished in {honest.get('rooms', 0)} rooms; "
        f"its own refusals: {fmt_counts(honest.get('errors', {}))}."
    )
    t_first = rows[0]["calm"][0] if rows else 0.0
    for t, why in lost[:5]:
        print(f"  lost step at +{t - t_first:.1f} s: {why}")
    print(
        f"Server: {server.lines} log lines, {len(server.trouble)} showing an exception; exit code "
        f"{exit_code} after SIGTERM. Whole run {took:.0f} s."
    )


if __name__ == "__main__":
    sys.exit(main())
