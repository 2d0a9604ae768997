"""Helpers for tests/test_server_crash.py: a server in a subprocess, and scripted tables that survive it.

``ServerProcess`` runs ``python -m client.cli serve --host 127.0.0.1 --port 0 --replays DIR`` with
its output in a file (``server-N.out``, one per start), parses the port from the ``listening on``
line and the resume count from the banner, and kills it with SIGKILL.

``ScriptedTable`` plays a whole scripted game as a list of :class:`Step` (one protocol action each,
in the order a table would play them). Each step knows when it may be sent (``ready``) and when its
effect shows in a view (``done``); both only look at the acting seat's latest view. The table plays
step by step, each acknowledged (its effect seen in an Update) before the next; an acknowledged
step is recorded with the log record it must have produced. After a crash the table reconnects
with its tokens and carries on from the first step whose effect the resumed view does not show:
a step that was sent but not acknowledged before the kill is sent again only if it is missing.
The clients keep their summoning words and nonces (``secrets``) until the end of the game, so a
commitment made before a crash is revealed after it, and a reveal lost in a crash can be re-sent.
"""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import trio
from gamescripts import RoundScript
from polling import poll_until
from wsclient import Client, open_client

from conjure.protocol import messages as m
from conjure.protocol.commitment import commitment, new_nonce
from conjure.protocol.deck import Card
from conjure.protocol.events import GameEnded, event_from_record
from conjure.protocol.messages import InLimits, RoomSettings, View
from conjure.server.logformat import LogReadResult, read_log
from conjure.server.rules import fold

ROOT = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"^listening on ws://127\.0\.0\.1:(\d+)$", re.MULTILINE)
BANNER = re.compile(r"(\d+) unfinished game\(s\) resumed, (\d+) finished, (\d+) refused")
#: Record types a table writes at most once per (round, seat[, proposal]).
ONCE = {
    "card_chosen",
    "spell_written",
    "boards_marked",
    "committed",
    "revealed",
    "vote_cast",
    "player_done",
}
#: Lines a healthy server never prints.
TROUBLE = (
    "Traceback",
    "unexpected error",
    "internal error",
    "error handling a message",
    "refused /",
)

NAMES = ["Ann", "Bob", "Cy", "Dee"]
STARS = 2
#: No clocks: nothing may time out while the server is down or restarting.
NO_CLOCKS = InLimits(choose=None, spell=None, mark=None, commit=None, reveal=None, review=None)


def settings(variant: str) -> RoomSettings:
    """A custom deck whose cards are all worth 2 stars, so the deal cannot change a score."""
    return RoomSettings(
        variant=variant,  # type: ignore[arg-type]
        deck="custom",
        custom_cards=[Card(text=f"Category {c}", stars=STARS) for c in "ABCD"],
        limits=NO_CLOCKS,
        spectators=False,
    )


# ---------------------------------------------------------------------------- the server process


class ServerProcess:
    """``conjure serve`` in a subprocess on 127.0.0.1, port 0; restartable on the same replays/."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.replays = workdir / "replays"
        self.proc: trio.Process | None = None
        self.port = 0
        self.starts = 0
        self.banner = ""
        self.outputs: list[Path] = []

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def start(self) -> None:
        assert self.proc is None
        self.starts += 1
        out = self.workdir / f"server-{self.starts}.out"
        self.outputs.append(out)
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
            str(self.replays),
            # Several tables here stand for several machines, but all come from 127.0.0.1.
            *("--address-rate", "10000", "--address-burst", "10000"),
            *("--max-connections-per-address", "1000", "--max-rooms-per-address", "100"),
            *("--rooms-per-minute", "1000"),
        ]
        with out.open("wb") as f:
            self.proc = await trio.lowlevel.open_process(
                cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT
            )
        with trio.fail_after(20):
            while True:
                text = out.read_text(errors="replace")
                found = LISTENING.search(text)
                if found:
                    break
                if self.proc.poll() is not None:
                    raise AssertionError(f"the server exited at start:\n{text}")
                await trio.sleep(0.005)
        self.port = int(found.group(1))
        self.banner = text

    def resumed(self) -> tuple[int, int, int]:
        """(unfinished games resumed, finished, refused) as the last start's banner says."""
        found = BANNER.search(self.banner)
        assert found, self.banner
        return int(found.group(1)), int(found.group(2)), int(found.group(3))

    def freeze(self) -> None:
        """SIGSTOP: the server reads nothing more (until it is killed)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    async def kill(self) -> None:
        """SIGKILL: no goodbye, no flush, nothing but what is already on disk survives."""
        assert self.proc is not None
        self.proc.kill()
        with trio.fail_after(10):
            await self.proc.wait()
        assert self.proc.returncode == -9, self.proc.returncode
        self.proc = None

    async def aclose(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            with trio.CancelScope(shield=True):
                await self.proc.wait()
            self.proc = None

    def output(self) -> str:
        return "".join(p.read_text(errors="replace") for p in self.outputs)

    def check_output(self) -> None:
        text = self.output()
        for bad in TROUBLE:
            assert bad not in text, f"the server printed {bad!r}:\n{text}"


@contextlib.asynccontextmanager
async def server_process(workdir: Path):
    srv = ServerProcess(workdir)
    try:
        await srv.start()
        yield srv
    finally:
        await srv.aclose()


# ---------------------------------------------------------------------------- scripts and steps


Kind = Literal[
    "choose", "dark_commit", "spell", "mark", "commit", "reveal", "challenge", "vote", "done"
]


def _past(v: View, r: int) -> bool:
    return v.phase == "over" or v.round > r or len(v.results) >= r


@dataclass(frozen=True)
class Step:
    """One action of the script: ``seat`` does ``kind`` in round ``round``."""

    round: int
    seat: int
    kind: Kind
    word: str = ""
    boards: tuple[int, ...] = ()
    target: int = 0
    rule: str = ""
    proposal: int = 0
    yes: bool = True

    def __str__(self) -> str:
        extra = self.word or (self.boards if self.kind == "mark" else "")
        return f"r{self.round} seat {self.seat} {self.kind} {extra}".rstrip()

    def ready(self, v: View) -> bool:
        """The acting seat's view says the action is now possible."""
        if v.round != self.round:
            return False
        match self.kind:
            case "choose":
                return v.phase == "choose"
            case "dark_commit":
                return v.phase == "dark-commit"
            case "spell":
                return v.phase == "spell" and v.turn == self.seat
            case "mark" | "commit" | "reveal":
                return v.phase == self.kind
            case "vote":
                return v.phase == "review" and len(v.proposals) > self.proposal
            case _:
                return v.phase == "review"

    def done(self, v: View) -> bool:
        """The view shows this action's effect (monotone: once true, true in every later view)."""
        r = self.round
        if _past(v, r):
            return True
        if v.round != r:
            return False
        me = v.players[self.seat]
        match self.kind:
            case "choose":
                return v.phase != "choose"
            case "dark_commit":
                return v.phase not in ("choose", "dark-commit")
            case "spell":
                return me.spell is not None
            case "mark":
                return v.phase in ("commit", "reveal", "review")
            case "commit":
                return me.committed or v.phase in ("reveal", "review")
            case "reveal":
                return me.revealed or v.phase == "review"
            case "challenge":
                return any(
                    p.kind == "challenge" and p.by == self.seat and p.seats == [self.target]
                    for p in v.proposals
                )
            case "vote":
                return len(v.proposals) > self.proposal and self.seat in (
                    v.proposals[self.proposal].votes
                )
            case "done":
                return v.phase == "review" and me.done
        raise AssertionError(self.kind)


def build_steps(variant: str, script: list[RoundScript], players: int) -> list[Step]:
    """Every action of the game in playing order (round r's conjurer is seat r-1)."""
    dark = variant == "dark-magic"
    steps: list[Step] = []
    for r, rs in enumerate(script, 1):
        conj = r - 1
        steps.append(Step(r, conj, "choose"))
        if dark:
            steps.append(Step(r, conj, "dark_commit", word=rs.summons[conj]))
        order = [(conj + i) % players for i in range(players)]
        for s in order[1:] if dark else order:
            steps.append(Step(r, s, "spell", word=rs.spells[s]))
        steps.append(Step(r, conj, "mark", boards=tuple(rs.marks)))
        for s in range(players):
            if not (dark and s == conj):
                steps.append(Step(r, s, "commit", word=rs.summons[s]))
        for s in range(players):
            steps.append(Step(r, s, "reveal"))
        for action in rs.review:
            match action:
                case ("challenge", seat, target, rule):
                    steps.append(Step(r, seat, "challenge", target=target, rule=rule))
                case ("vote", seat, proposal, yes):
                    steps.append(Step(r, seat, "vote", proposal=proposal, yes=yes))
        for s in range(players):
            steps.append(Step(r, s, "done"))
    return steps


def find(steps: list[Step], round: int, kind: str, nth: int = 1) -> int:
    """Index of the ``nth`` (1-based) step of ``kind`` in ``round``."""
    hits = [i for i, s in enumerate(steps) if s.round == round and s.kind == kind]
    return hits[nth - 1]


@dataclass(frozen=True)
class Kill:
    """Where the server dies: around step ``at`` (-1 = right after the game started).

    ``ack``: after the step was acknowledged. ``sent``: right after the step was sent, before any
    answer (it may or may not reach the log: both happen). ``unread``: the server is stopped
    (SIGSTOP) before the step is sent, so it is certainly lost. ``logged``: as soon as the step's
    records are in the log file, whether or not the client has seen its update yet.
    """

    at: int
    mode: Literal["ack", "sent", "unread", "logged"] = "ack"
    label: str = ""


# ---------------------------------------------------------------------------- a scripted table


class ScriptedTable:
    """One game of a script, played over as many server lives as it takes."""

    def __init__(self, variant: str, script: list[RoundScript], name: str = "") -> None:
        self.variant = variant
        self.script = script
        self.name = name
        self.players = len(script)
        self.steps = build_steps(variant, script, self.players)
        self.pos = 0  # the next step not yet known to be done
        self.tokens: dict[int, str] = {}
        self.secrets: dict[tuple[int, int], tuple[str, bytes]] = {}  # (round, seat) -> word, nonce
        self.sent: dict[int, tuple[str, dict[str, Any]]] = {}  # step -> the record it makes
        self.sends: dict[int, int] = {}  # step -> how many times it was sent
        self.acked: dict[int, tuple[str, dict[str, Any]]] = {}
        self.inflight: list[tuple[int, str, bool]] = []  # (step, mode, found done after restart)
        self.clients: dict[int, Client] = {}
        self.code: str | None = None
        self.game_id: str | None = None
        self.finished_in_crash = False
        self._stack: contextlib.AsyncExitStack | None = None
        self._pending: tuple[int, str] | None = None

    # -------------------------------------------------------------- connections

    async def _open(self, url: str) -> None:
        self._stack = contextlib.AsyncExitStack()
        await self._stack.__aenter__()
        self.clients = {}
        for seat, name in enumerate(NAMES[: self.players]):
            self.clients[seat] = await self._stack.enter_async_context(open_client(url, name))

    async def drop(self) -> None:
        """Close every client connection (after the server died they are already broken)."""
        if self._stack is not None:
            stack, self._stack = self._stack, None
            await stack.aclose()

    async def seat_and_start(self, url: str) -> None:
        await self._open(url)
        first = self.clients[0]
        self.code = await first.create(settings(self.variant))
        for seat in range(1, self.players):
            await self.clients[seat].join(self.code)
        for c in self.clients.values():
            await c.wait_view(lambda v: len(v.players) == self.players)
        for seat, c in self.clients.items():
            assert c.seat == seat and c.token is not None
            self.tokens[seat] = c.token
        await first.send(m.StartGame())
        for c in self.clients.values():
            await c.wait_view(lambda v: v.round == 1 and v.phase == "choose")
        self.game_id = first.view.game_id  # type: ignore[union-attr]

    async def come_back(self, url: str, replays: Path) -> None:
        """After a restart: resume every seat, unless the game ended with the last write.

        Checks first that everything acknowledged before the kill is in the (recovered) log, and
        then that the resumed views show it all.
        """
        log = await self.read_whole(replays)  # the restarted server recovered any torn tail
        self.check_acked(log)
        if log.records[-1].type == "game_ended":
            assert self._pending is not None, f"{self.name}: the game ended without us"
            i, mode = self._pending
            assert i == len(self.steps) - 1
            self.inflight.append((i, mode, True))
            self._pending = None
            self.finished_in_crash = True
            return
        await self.resume(url)

    async def resume(self, url: str) -> None:
        """Every seat comes back with its token and gets a full view."""
        await self._open(url)
        assert self.code is not None
        for seat, c in self.clients.items():
            seated = await c.resume(self.code, self.tokens[seat])
            assert seated.seat == seat
        for c in self.clients.values():
            await c.wait_view(lambda v: all(p.connected for p in v.players))
        for i in self.acked:
            st = self.steps[i]
            assert st.done(self.clients[st.seat].view), f"{self.name}: {st} lost in the crash"  # type: ignore[arg-type]
        if self._pending is not None:  # the step in flight at the kill: is it in the log?
            i, mode = self._pending
            shown = self.steps[i].done(self.clients[self.steps[i].seat].view)  # type: ignore[arg-type]
            self.inflight.append((i, mode, shown))
            self._pending = None

    # -------------------------------------------------------------- playing

    def log_path(self, replays: Path) -> Path:
        assert self.game_id is not None
        return replays / f"{self.game_id}.jsonl"

    async def _send(self, i: int) -> None:
        st = self.steps[i]
        c = self.clients[st.seat]
        v = c.view
        assert v is not None and v.game_id == self.game_id
        r, s = st.round, st.seat
        msg: m.ClientMsg
        match st.kind:
            case "choose":
                card = next(x.index for x in v.cards if not x.used)
                msg = m.ChooseCard(card=card)
                rec = ("card_chosen", {"round": r, "seat": s, "card": card})
            case "spell":
                msg = m.WriteSpell(word=st.word)
                rec = ("spell_written", {"round": r, "seat": s, "word": st.word})
            case "mark":
                msg = m.MarkBoards(boards=list(st.boards))
                rec = ("boards_marked", {"round": r, "seat": s, "boards": list(st.boards)})
            case "commit" | "dark_commit":
                nonce = new_nonce()
                c_hex = commitment(v.game_id, r, s, nonce, st.word)
                self.secrets[r, s] = (st.word, nonce)  # kept before it leaves, as a client must
                msg = m.CommitSummon(commitment=c_hex)
                rec = ("committed", {"round": r, "seat": s, "commitment": c_hex})
            case "reveal":
                word, nonce = self.secrets[r, s]  # kept, not popped: a lost reveal is re-sent
                msg = m.RevealSummon(word=word, nonce=nonce.hex())
                rec = ("revealed", {"round": r, "seat": s, "word": word, "nonce": nonce.hex()})
            case "challenge":
                msg = m.ChallengeWord(seat=st.target, rule=st.rule)  # type: ignore[arg-type]
                rec = (
                    "proposal_made",
                    {"round": r, "by": s, "kind": "challenge", "seats": [st.target]},
                )
            case "vote":
                msg = m.CastVote(proposal=st.proposal, yes=st.yes)
                rec = ("vote_cast", {"round": r, "seat": s, "proposal": st.proposal, "yes": st.yes})
            case "done":
                msg = m.ReviewDone()
                rec = ("player_done", {"round": r, "seat": s})
        self.sent[i] = rec
        self.sends[i] = self.sends.get(i, 0) + 1
        await c.send(msg)

    async def _wait_ready(self, i: int) -> bool:
        """Wait until step ``i`` may be sent or is already done; True if it is done."""
        st = self.steps[i]
        c = self.clients[st.seat]
        v = await c.wait_view(lambda v: st.done(v) or st.ready(v))
        return st.done(v)

    async def play(self, until: int | None = None) -> None:
        """Play steps up to (not including) ``until``, each acknowledged before the next."""
        stop = len(self.steps) if until is None else until
        while self.pos < stop:
            i = self.pos
            st = self.steps[i]
            if await self._wait_ready(i):
                # Done without being sent in this server life: it was in flight at the kill.
                assert i in self.sent, f"{self.name}: {st} shows done but was never sent"
            else:
                await self._send(i)
                await self.clients[st.seat].wait_view(st.done)
            self.acked[i] = self.sent[i]
            self.pos += 1
        if self.pos == len(self.steps):
            for c in self.clients.values():
                await c.wait_view(lambda v: v.phase == "over")

    async def play_to(self, kill: Kill, srv: ServerProcess) -> None:
        """Play up to the kill point; in flight modes, send the step there without waiting."""
        if kill.mode == "ack":
            await self.play(kill.at + 1)
            return
        await self.play(kill.at)
        assert not await self._wait_ready(kill.at)
        path = self.log_path(srv.replays)
        size = path.stat().st_size
        if kill.mode == "unread":
            srv.freeze()
        await self._send(kill.at)
        self._pending = (kill.at, kill.mode)
        if kill.mode == "logged":
            with trio.fail_after(5):
                while True:
                    data = path.read_bytes()
                    if len(data) > size and data.endswith(b"\n"):
                        break
                    await trio.lowlevel.checkpoint()

    # -------------------------------------------------------------- checks

    def expected_totals(self) -> dict[int, int]:
        totals = dict.fromkeys(range(self.players), 0)
        for rs in self.script:
            for seat, pts in rs.points.items():
                totals[seat] += pts
        return totals

    def read(self, replays: Path) -> LogReadResult:
        return read_log(self.log_path(replays))

    async def read_whole(self, replays: Path) -> LogReadResult:
        """The log of a live server, read once no append is half done: a resumed game logs its
        seats' absence at once, and a reader can meet an append the kernel has copied only in
        part (a line across a page boundary; seen once in a clean run). A torn tail that start-up
        failed to move aside stays torn, and fails here."""
        seen: list[LogReadResult] = []

        def whole() -> bool:
            seen.append(self.read(replays))
            return not seen[-1].torn

        with trio.fail_after(5):
            await poll_until(whole)
        return seen[-1]

    def check_acked(self, log: LogReadResult) -> None:
        """Every acknowledged action is in the log once, exactly as it was sent."""
        for i, (typ, data) in self.acked.items():
            hits = [
                r
                for r in log.records
                if r.type == typ and all(r.data.get(k) == v for k, v in data.items())
            ]
            assert len(hits) == 1, f"{self.name}: acknowledged {self.steps[i]} is not in the log"

    def check(self, replays: Path) -> None:
        """Scores as without a crash; every acknowledged action in the log; nothing twice."""
        assert self.pos == len(self.steps) or self.finished_in_crash
        log = self.read(replays)
        assert not log.torn
        events = [event_from_record(r.type, r.data) for r in log.records]
        assert isinstance(events[-1], GameEnded)
        game = fold(events)
        totals = self.expected_totals()
        assert game.totals == totals
        assert dict(events[-1].totals) == totals
        got = [(x.case, x.points, set(x.invalid)) for x in game.results]
        want = [(rs.case, rs.points, rs.invalid) for rs in self.script]
        assert got == want
        self.check_acked(log)
        # Nothing was re-sent after it had been logged: one record per action, no replacement.
        assert not [r for r in log.records if r.type == "committed" and r.data.get("replaced")]
        keyed = [
            (r.type, r.data.get("round"), r.data.get("seat"), r.data.get("proposal"))
            for r in log.records
            if r.type in ONCE
        ]
        assert len(keyed) == len(set(keyed)), f"{self.name}: an action was logged twice"
        # A step sent twice was one that the first server never logged.
        for i, n in self.sends.items():
            assert n <= 2, (self.steps[i], n)
        # The clients that saw the end agree with the log, receipts included.
        if not self.finished_in_crash:
            last = log.records[-1]
            for seat, c in self.clients.items():
                v = c.view
                assert v is not None and v.phase == "over"
                assert {p.seat: p.score for p in v.players} == totals
                got_v = [(x.case, x.points, set(x.invalid)) for x in v.results]
                assert got_v == want
                r = c.receipt
                assert r is not None and (r.seq, r.hash) == (last.seq, last.hash), seat

    def outcomes(self) -> Iterator[str]:
        for i, mode, shown in self.inflight:
            yield f"{self.steps[i]} ({mode}): {'in the log' if shown else 'lost, re-sent'}"
