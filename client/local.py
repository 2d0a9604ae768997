"""``make play`` (``python -m client.local``): a game against computer players in one command.

    python -m client.local [--bots 3] [--variant standard|dark-magic] [--port P]
                           [--replays DIR] [--name NAME] [--resume | --new]

What it does, in order:

1. looks for your unfinished game from an earlier run (``local-game.json`` in the client state
   directory, ``$CONJURE_STATE_DIR`` or the default; see :class:`LastGame`): its log must still
   be in ``--replays`` and its seat token in the state directory. If there is one it asks
   whether to resume it (``--resume`` / ``--new`` answer beforehand; without a terminal the
   answer is yes);
2. picks the port: ``--port``, else the old game's port or 8765 when free, else any free one
   (``--port 0`` tries the old game's port too);
3. starts ``conjure serve --host 0.0.0.0 --port P --replays DIR`` as a child process (all
   interfaces, so friends on the LAN can join; everything here talks to it on 127.0.0.1) and waits
   for its ``listening on`` line. A server started on the same ``replays/`` brings the unfinished
   game back from its log, in the same room;
4. a new game: creates a room as the person at the keyboard (name from ``--name``,
   ``$CONJURE_NAME``, the name they gave an earlier run, else asked once on a terminal, else the
   login name: :func:`player_name`) and saves the seat token in the state directory for
   ``ws://127.0.0.1:P``; a resumed game: takes the saved seat back (its token moved to the new
   address if the port changed);
5. starts ``conjure bot ws://127.0.0.1:P --room CODE --count N --state-dir STATE/local-bots`` as
   a child process and waits until the N bots are seated (holding the person's connection open
   meanwhile). The bots keep their seat tokens and summoning secrets in that directory, so on a
   resume the same bots (``--name`` of each saved bot) take their own seats back;
6. runs the terminal client, ``conjure play ws://127.0.0.1:P --room CODE --name NAME``, in the
   foreground (in this process): it resumes the saved seat, so the person is the host and
   presses ``s`` to start; friends can join first with the line printed before the screen opens
   (and shown in the lobby: ``$CONJURE_SHARE_URL``). The client also gets
   ``$CONJURE_LOCAL_SERVER=1`` (quitting stops this server: it asks first when other people are
   seated; the board tells the people from the computer players, who say so when they connect).

When the client exits, a look at the room (as a spectator, else with the seat's token) tells which
game this was and whether it is over; the server and the bots keep running until then. An
unfinished game is paused with the seat's token (the person hosts it), so that its clock does
not run while the server is stopped, and remembered for the next run, which resumes it once
everyone is seated again; the exit summary names this game's log. Then the
bots and the server are stopped (each in its own process group: SIGTERM, then SIGKILL after a
timeout), also when this program gets SIGINT, SIGTERM or SIGHUP. On Linux the children also get
SIGTERM should this process die without cleaning up. The server's and the bots' output, and a
``pids`` file, are in a fresh ``conjure-play-*`` directory under the temporary directory, removed
when the run ends well and named in the summary when it does not.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import getpass
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple

from conjure.client.statefile import (
    ENV_LOCAL_SERVER,
    ENV_SHARE_URL,
    RECEIPT_LINE,
    StateDir,
    home_short,
    write_private,
)

if TYPE_CHECKING:  # the protocol modules are imported where they are used (a quick start)
    from conjure.protocol.events import Variant

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

DEFAULT_PORT = 8765
SERVER_START_TIMEOUT = 30.0
BOTS_SEATED_TIMEOUT = 60.0
LOOK_TIMEOUT = 10.0
#: Seconds to wait for the computer players to save their seats (a loaded machine is slow).
BOTS_SAVED_TIMEOUT = 15.0
STOP_TIMEOUT = 5.0
CLIENT_NAME = "conjure-local/0.1"
#: In the client state directory: the unfinished game of the last run.
LAST_GAME_FILE = "local-game.json"
#: Held (``flock``) by the make play that uses the state directory (``hold_state_dir``).
PLAY_LOCK_FILE = "make-play.lock"
#: Under the client state directory: the computer players' own state (seat tokens, secrets).
BOTS_STATE_DIR = "local-bots"


class Stopped(Exception):
    """A signal asked this program to stop."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bots", type=int, default=3, help="computer players (default 3)")
    parser.add_argument(
        "--variant",
        choices=("standard", "dark-magic"),
        default="standard",
        help="the rules to play (default standard; dark-magic: the conjurer writes first)",
    )
    parser.add_argument(
        "--port", type=int, help=f"server port (default {DEFAULT_PORT} if free, else any free)"
    )
    parser.add_argument(
        "--replays", type=Path, default=Path("replays"), help="game logs (default replays/)"
    )
    parser.add_argument(
        "--name",
        help="your name at the table (default $CONJURE_NAME, else the name you gave last time, "
        "else asked; off a terminal, your login name)",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--resume", action="store_true", help="resume your unfinished game without asking"
    )
    which.add_argument(
        "--new", action="store_true", help="start a new game even if one is unfinished"
    )


def login_name() -> str:
    """The login name, as a name at the table ("Player" when there is none)."""
    from conjure.protocol.names import name_problem

    name = ""
    with contextlib.suppress(Exception):
        name = getpass.getuser()
    name = " ".join("".join(ch for ch in name if ch.isprintable()).split())[:24]
    return name if name and name_problem(name) is None else "Player"


#: Tries at the name question before the login name is taken.
NAME_TRIES = 3


def player_name(given: str | None, store: StateDir, ask: Callable[[str], str] | None = None) -> str:
    """The person's name at the table: ``--name``, ``$CONJURE_NAME``, the name they gave an
    earlier run, else asked once (``ask``, on a terminal) and remembered, else the login name.

    Why ask: seen at a party, a newcomer played a whole game as "root", the machine's account.
    """
    name = given or os.environ.get("CONJURE_NAME") or store.saved_name()
    if name:
        return name
    from conjure.protocol.names import name_problem

    default = login_name()
    if ask is None:
        return default
    for _ in range(NAME_TRIES):
        try:
            answer = " ".join(ask(f"Your name at the table (Enter: {default}): ").split())
        except EOFError:
            return default
        if not answer:
            answer = default
        problem = name_problem(answer)
        if problem is None:
            store.save_name(answer)
            return answer
        print(f"{problem} Try another.")
    return default


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def pick_port(requested: int | None, earlier: int | None = None) -> int:
    """``--port``; else the resumed game's port when free (its players come back to the same
    address), else 8765 when free, else any free one (0). ``--port 0`` asks for any port: the
    resumed game's is one, so it is still tried first (a newcomer's friend, at the old port,
    could not get back to a game resumed on another)."""
    if requested:
        return requested
    for port in (earlier, None if requested == 0 else DEFAULT_PORT):
        if port and port_is_free(port):
            return port
    return 0


def local_url(port: int) -> str:
    return f"ws://127.0.0.1:{port}"


def conjure_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "conjure.client.cli", *args]


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Children:
    """Child processes, each in its own session (process group); stopped in reverse order."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self._files: list = []

    def start(self, label: str, cmd: list[str], log: Path) -> subprocess.Popen:
        out = open(log, "ab")  # noqa: SIM115 - closed in stop_all
        self._files.append(out)
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        self.procs.append((label, proc))
        with open(self.workdir / "pids", "a", encoding="utf-8") as fh:
            fh.write(f"{label} {proc.pid}\n")
        return proc

    def stop_all(self) -> None:
        for _, proc in reversed(self.procs):
            _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        for _, proc in reversed(self.procs):
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(5)
            _signal_group(proc, signal.SIGKILL)  # anything the child left in its group
        for fh in self._files:
            with contextlib.suppress(OSError):
                fh.close()


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def wait_listening(proc: subprocess.Popen, log: Path, timeout: float) -> int:
    """The port from the server's ``listening on ws://HOST:PORT`` line."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        found = re.search(r"listening on wss?://\S+:(\d+)", text)
        if found:
            return int(found.group(1))
        if proc.poll() is not None:
            raise RuntimeError(f"the server stopped at once:\n{text.strip()}")
        time.sleep(0.05)
    raise RuntimeError(f"the server did not say 'listening on' within {timeout:g} s")


# ------------------------------------------------------------------ the last game


@dataclass
class LastGame:
    """``local-game.json``: the game a run of ``make play`` left unfinished.

    ``{"version": 1, "url": "ws://127.0.0.1:8765", "room": "ABCD", "name": "Ann",
    "game_id": "...", "replays": "/abs/replays", "round": 2, "rounds": 4,
    "players": ["Ann", "Ada", "Basil", "Cleo"], "saved_at": 1767225600.0}``. The seat token
    itself stays in ``secrets.json`` (:mod:`client.statefile`), the bots' in ``local-bots/``.
    """

    url: str
    room: str
    name: str
    game_id: str
    replays: str
    round: int = 0
    rounds: int = 0
    players: list[str] = field(default_factory=list)
    #: ``make play`` paused the game as its person left (the server stops with them): the next
    #: run resumes it once everyone is back, so no clock ran while nobody could play.
    paused_for_later: bool = False

    @property
    def port(self) -> int | None:
        found = re.search(r":(\d+)$", self.url)
        return int(found.group(1)) if found else None

    @property
    def log(self) -> Path:
        return Path(self.replays) / f"{self.game_id}.jsonl"

    def question(self) -> str:
        from conjure.protocol.wording import names_list

        where = f"round {self.round} of {self.rounds}" if self.rounds else "started"
        others = [p for p in self.players if p != self.name]
        people = f", with {names_list(others)}" if others else ""
        return f"Your game in room {self.room} is unfinished ({where}{people}). Resume it? [Y/n] "


def last_game_path(store: StateDir) -> Path:
    return store.path / LAST_GAME_FILE


def load_last_game(store: StateDir, replays: Path) -> LastGame | None:
    """The unfinished game to offer: remembered, its log still in ``replays``, its seat saved."""
    try:
        data = json.loads(last_game_path(store).read_bytes())
        data.pop("version", None)
        data.pop("saved_at", None)
        last = LastGame(**data)
    except (OSError, ValueError, TypeError):
        return None
    if Path(last.replays) != replays.resolve() or not last.log.is_file():
        return None
    if store.load_seat(last.url, last.room) is None:
        return None
    return last


def save_last_game(store: StateDir, last: LastGame) -> None:
    data = {"version": 1, **asdict(last), "saved_at": time.time()}
    write_private(last_game_path(store), json.dumps(data, indent=1).encode() + b"\n")


def forget_last_game(store: StateDir) -> None:
    with contextlib.suppress(OSError):
        last_game_path(store).unlink()


def fit_lines(text: str, width: int = 80) -> list[str]:
    """``text`` wrapped at spaces for a terminal of ``width`` cells (never a word cut in two)."""
    from conjure.protocol.cells import wrap_words

    return wrap_words(text.strip(), width - 1, "", "")


def want_resume(last: LastGame | None, args: argparse.Namespace) -> bool:
    if last is None:
        if args.resume:
            print("There is no unfinished game to resume; starting a new one.")
        return False
    if args.new or args.resume:
        return bool(args.resume)
    if not sys.stdin.isatty():
        return True
    *before, ask = fit_lines(last.question())  # wrapped at words, the question on its own
    for line in before:
        print(line)
    while True:
        try:
            answer = input(ask + " ").strip().lower()
        except EOFError:
            return True
        if answer in ("", "y", "yes"):
            return True
        if answer in ("n", "no"):
            # What becomes of it, said (a newcomer who said n was told nothing of it).
            for line in fit_lines(
                f"A new game, then. The one in room {last.room} stays unfinished; its log is "
                f"{_from_here(last.log)} (conjure replay shows it as far as it went)."
            ):
                print(line)
            return False
        # A stray key started a new room and the unfinished game was not offered again (seen
        # by a newcomer): anything but yes or no is asked again.
        print("Answer y to resume it (or Enter), or n to start a new game.")


def move_seat(store: StateDir, old_url: str, new_url: str, room: str) -> dict[str, Any] | None:
    """The person's saved seat for ``room``, saved under ``new_url`` too (same server, restarted
    on another port)."""
    entry = store.load_seat(old_url, room)
    if entry is not None and old_url != new_url:
        store.save_seat(
            new_url,
            room,
            seat=entry.get("seat", 0),
            player_id=entry.get("player_id", ""),
            token=entry["token"],
            name=entry.get("name", ""),
        )
    return entry


# ------------------------------------------------------------------ talking to the server


def _seated(view) -> int:
    return sum(1 for p in view.players if p.connected and not p.kicked)


async def _until_seated(link, done: Callable[[Any], bool], proc, timeout: float) -> Any:
    """Read updates until ``done(view)``, and return that view; RuntimeError if the bots'
    process ended first or they did not sit down in time."""
    import trio

    from conjure.protocol import messages as m

    with trio.move_on_after(timeout):
        while True:
            with trio.move_on_after(0.5):
                msg = await link.recv()
                if isinstance(msg, m.Update) and done(msg.view):
                    return msg.view
            if proc is not None and proc.poll() is not None:
                raise RuntimeError("the computer players stopped at once")
    raise RuntimeError(f"the computer players did not sit down within {timeout:g} s")


async def _bots_saved(bots_store: StateDir, url: str, room: str, count: int) -> None:
    """Wait (at most ``BOTS_SAVED_TIMEOUT``) until ``count`` bots have saved their seats: their
    ids are read there."""
    import trio

    from conjure.client.bots.player import saved_bots

    for _ in range(int(BOTS_SAVED_TIMEOUT / 0.1)):
        if len(await trio.to_thread.run_sync(saved_bots, bots_store, url, room)) >= count:
            return
        await trio.sleep(0.1)


async def host_new_room(
    url: str,
    name: str,
    variant: Variant,
    bots: int,
    start_bots: Callable[[str, list[str]], subprocess.Popen],
    store: StateDir,
    bots_store: StateDir,
    timeout: float = BOTS_SEATED_TIMEOUT,
) -> str:
    """Create the room as the person, save the seat, start the bots, wait until they sit."""
    import trio

    from conjure.client import wire
    from conjure.protocol import messages as m

    async with wire.connect(url, client=CLIENT_NAME) as link:
        settings = m.RoomSettings(variant=variant)
        try:
            seated = await link.create(name, settings)
        except wire.Refused as refusal:
            raise RuntimeError(f"could not create a room: {refusal}") from None
        await trio.to_thread.run_sync(
            lambda: store.save_seat(
                url,
                seated.room,
                seat=seated.seat,
                player_id=seated.player_id,
                token=seated.token,
                name=name,
            )
        )
        proc = start_bots(seated.room, []) if bots else None
        await _until_seated(link, lambda v: _seated(v) >= 1 + bots, proc, timeout)
        await _bots_saved(bots_store, url, seated.room, bots)
        # Leaving the block closes the socket: the seat stays for the terminal client (no Leave).
    return seated.room


async def rejoin_game(
    url: str,
    last: LastGame,
    start_bots: Callable[[str, list[str]], subprocess.Popen],
    store: StateDir,
    bots_store: StateDir,
    timeout: float = BOTS_SEATED_TIMEOUT,
) -> str:
    """Take the person's seat of ``last`` back, start its bots with their own names (they
    resume their seats by their tokens), wait until they sit. RuntimeError if the seat is gone."""
    import trio

    from conjure.client import wire
    from conjure.client.bots.player import move_bot_seats, saved_bots

    def carry() -> tuple[dict[str, Any] | None, list[dict]]:
        entry = move_seat(store, last.url, url, last.room)
        move_bot_seats(bots_store, last.url, url, last.room)
        return entry, saved_bots(bots_store, url, last.room)

    entry, bots = await trio.to_thread.run_sync(carry)
    if entry is None:
        raise RuntimeError(f"your seat in room {last.room} is no longer saved")
    async with wire.connect(url, client=CLIENT_NAME) as link:
        try:
            await link.resume(last.room, entry["token"])
        except wire.Refused as refusal:
            raise RuntimeError(f"could not resume room {last.room}: {refusal}") from None
        ids = {b.get("player_id") for b in bots}
        proc = start_bots(last.room, [b["name"] for b in bots]) if bots else None

        def back(view) -> bool:
            waiting = [p for p in view.players if p.id in ids and not p.kicked]
            return all(p.connected for p in waiting)

        view = await _until_seated(link, back, proc, timeout)
        if last.paused_for_later and await _set_paused(link, view, paused=False):
            print("The game was paused while you were away; it goes on now.")
    return last.room


async def _set_paused(link, view, *, paused: bool, timeout: float = LOOK_TIMEOUT) -> bool:
    """Pause (or resume) the game of the seat ``link`` holds (its ``view`` as last told), if
    it is the host's and the game is running and not so already; True once the server says so."""
    import trio

    from conjure.protocol import messages as m

    with trio.move_on_after(timeout):
        if view.phase in ("lobby", "over") or view.host != view.you or view.paused == paused:
            return False
        await link.send(m.PauseGame() if paused else m.ResumeGame())
        while True:
            msg = await link.recv()
            if isinstance(msg, m.Update) and msg.view.paused == paused:
                return True
            if isinstance(msg, m.Error):
                return False
    return False


async def pause_for_later(url: str, room: str, token: str) -> bool:
    """Pause the game as ``make play`` stops its server, with the person's seat (their client
    has exited, so nobody is replaced): else its clock, run out while nobody could play, cost
    the round the person came back to (seen: 53 s left became 32 s). True if it was paused."""
    import trio

    from conjure.client import wire
    from conjure.protocol import messages as m

    with trio.move_on_after(LOOK_TIMEOUT):
        try:
            async with wire.connect(url, client=CLIENT_NAME) as link:
                await link.resume(room, token)
                while not isinstance(msg := await link.recv(), m.Update):
                    pass
                return await _set_paused(link, msg.view, paused=True)
        except (OSError, wire.Refused, wire.ProtocolProblem):
            return False
        except Exception as exc:
            if not wire.expected(exc):
                raise
    return False


async def look_at_room(url: str, room: str, token: str | None, timeout: float = LOOK_TIMEOUT):
    """The room's view as it is now (None if it cannot be seen): as a spectator, or else with
    the seat's token (the client has exited, so nobody is replaced)."""
    import trio

    from conjure.client import wire
    from conjure.protocol import messages as m

    with trio.move_on_after(timeout):
        try:
            async with wire.connect(url, client=CLIENT_NAME) as link:
                try:
                    await link.watch(room)
                except wire.Refused:
                    if token is None:
                        return None
                    await link.resume(room, token)
                while True:
                    msg = await link.recv()
                    if isinstance(msg, m.Update):
                        return msg.view
        except (OSError, wire.Refused, wire.ProtocolProblem):
            return None
        except Exception as exc:  # a closed connection: nothing to look at
            if not wire.expected(exc):
                raise
            return None
    return None


def run_trio(fn: Callable[[*Ts], Awaitable[T]], *args: *Ts) -> T:
    """``trio.run(fn, *args)``, stopped (Stopped) by SIGTERM or SIGHUP; a failure to talk to
    the server comes out as RuntimeError with a short reason."""
    import trio

    from conjure.client import wire

    result: list[T] = []

    async def main() -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
            async with trio.open_nursery() as nursery:

                async def stop_on_signal() -> None:
                    async for _ in signals:
                        nursery.cancel_scope.cancel()
                        return

                nursery.start_soon(stop_on_signal)
                result.append(await fn(*args))
                nursery.cancel_scope.cancel()

    try:
        trio.run(main)
    except BaseExceptionGroup as group:
        found = list(wire.leaves(group))
        if len(found) != 1:
            raise
        exc = found[0]
        if isinstance(exc, Exception) and not isinstance(exc, RuntimeError) and wire.expected(exc):
            raise RuntimeError(f"cannot talk to the server ({wire.describe(exc)})") from exc
        raise exc from None
    if not result:
        raise Stopped()
    return result[0]


def lan_urls(port: int) -> list[str]:
    from conjure.server.netinfo import addresses_for, url_host

    return [f"ws://{url_host(a)}:{port}" for a in addresses_for("0.0.0.0") if a != "127.0.0.1"]


#: The summary's lines fit a terminal this wide (the smallest the client supports).
SUMMARY_WIDTH = 80
CHECK_LINE = "  check every point with:"


def summary(view, replays: Path, game_id: str | None, receipt: Path | None = None) -> list[str]:
    """The lines about this run's game: how it ended, its log, the player's receipt for it, and
    whether it can be resumed (``conjure play`` names the log and the receipt too)."""
    from conjure.protocol.program import program_here

    if game_id is None:
        return ["No game was started."] if view is not None else []
    lines = _final_lines(view) if view is not None and view.phase == "over" else []
    log = _from_here(replays / f"{game_id}.jsonl")  # replays/g….jsonl fits an 80-column line
    command = f"{program_here()} replay {shlex.quote(str(log))}"
    state_dir = ""
    if state := os.environ.get("CONJURE_STATE_DIR"):
        # Where the receipts are: a shell without the variable would look elsewhere (seen).
        state_dir = f"--state-dir {shlex.quote(state)}"
    whole = f"{command} {state_dir}".rstrip()
    lines.append(f"Game log: {log}")
    if len(f"{CHECK_LINE} {whole}") <= SUMMARY_WIDTH:
        lines.append(f"{CHECK_LINE} {whole}")
    elif len(f"    {whole}") <= SUMMARY_WIDTH:  # on a line of its own: never cut where it wraps
        lines += [CHECK_LINE, f"    {whole}"]
    else:  # continued with a backslash, so that it still pastes as one command (seen: a
        lines += [CHECK_LINE, f"    {command} \\", f"      {state_dir}"]  # path cut in two)
    if receipt is not None and receipt.is_file():
        lines += [RECEIPT_LINE, f"    {home_short(receipt)}"]
    if view is not None and view.phase != "over":
        lines.append(UNFINISHED)
    return lines


UNFINISHED = "The game is unfinished: run make play again to resume it."


def _final_lines(view) -> list[str]:
    """Who won, and everyone's total (wrapped at 80)."""
    from conjure.protocol.cells import wrap_words
    from conjure.protocol.wording import final_words

    return wrap_words(final_words(view), SUMMARY_WIDTH, "", "  ")


def _from_here(path: Path) -> Path:
    """``path`` as typed from the current folder: relative below it, whole elsewhere."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except (ValueError, OSError):  # (OSError: the working folder is gone)
        return path


def _raise_stopped(signum, frame) -> None:
    raise Stopped()


def main(argv: list[str] | None = None) -> int:
    # Options reach this program through make's ARGS: "make play --bots 5" gave make's own
    # list of options, as the usage line, printed as argparse makes it, invited (found by review).
    parser = argparse.ArgumentParser(
        prog="make play",
        usage='make play ARGS="[options]"   e.g. make play ARGS="--bots 5 --variant dark-magic"',
        description="a game against computer players on a local server",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    if not 0 <= args.bots <= 7:
        print("make play: --bots must be between 0 and 7", file=sys.stderr)
        return 2
    store = StateDir(os.environ.get("CONJURE_STATE_DIR") or None)
    try:
        held = hold_state_dir(store)
    except OSError as exc:
        print(f"make play: cannot use the state directory {store.path}: {exc}", file=sys.stderr)
        return 1
    if held is None:
        said = (
            f"make play: another make play is running with the state directory {store.path}, "
            "which remembers one unfinished game: a second one at once would make it forget "
            "the other. Quit that one first, or give this one another folder with "
            "CONJURE_STATE_DIR."
        )
        for line in fit_lines(said):  # (one long line broke mid-word at 80 columns)
            print(line, file=sys.stderr)
        return 1
    bots_store = StateDir(store.path / BOTS_STATE_DIR)
    replays = args.replays.resolve()
    workdir = Path(tempfile.mkdtemp(prefix="conjure-play-"))
    children = Children(workdir)
    server_log, bots_log = workdir / "server.log", workdir / "bots.log"
    old = {sig: signal.signal(sig, _raise_stopped) for sig in (signal.SIGTERM, signal.SIGHUP)}
    code = 0
    url: str | None = None
    room: str | None = None
    name = ""  # asked below, once the question of an unfinished game is answered
    last: LastGame | None = None
    try:
        last = load_last_game(store, replays)
        if not want_resume(last, args):
            last = None
        # A resumed game keeps the name its seat has; a new one asks it, the first time.
        ask = input if last is None and sys.stdin.isatty() else None
        name = player_name(args.name, store, ask)
        port = pick_port(args.port, last.port if last is not None else None)
        print(f"Starting a Conjure server (log: {server_log}) ...", flush=True)
        server = children.start(
            "server",
            conjure_command(
                "serve", "--host", "0.0.0.0", "--port", str(port), "--replays", str(replays)
            ),
            server_log,
        )
        port = wait_listening(server, server_log, SERVER_START_TIMEOUT)
        url = local_url(port)

        def start_bots(code_: str, names: list[str]) -> subprocess.Popen:
            count = len(names) or args.bots
            cmd = conjure_command(
                "bot", url or "", "--room", code_, "--count", str(count), "--log", str(bots_log),
                "--state-dir", str(bots_store.path),
                *(["--name", *names] if names else []),
            )  # fmt: skip
            return children.start("bots", cmd, bots_log)

        if last is not None:
            print(f"Resuming room {last.room} and bringing its computer players back ...")
            try:
                room = run_trio(rejoin_game, url, last, start_bots, store, bots_store)
                name = last.name
            except RuntimeError as exc:
                print(f"make play: {exc}; starting a new game instead.")
                forget_last_game(store)
                last = None
        if room is None:
            print(f"Creating a room for {name} and seating {args.bots} computer players ...")
            room = run_trio(
                host_new_room, url, name, args.variant, args.bots, start_bots, store, bots_store
            )
        lans = lan_urls(port)
        share = lans[0] if lans else url
        from conjure.client.bots.player import saved_bots
        from conjure.protocol.program import program_here
        from conjure.protocol.wording import join_command, not_on_path_note

        bots = {str(b.get("name")) for b in saved_bots(bots_store, url, room)}
        people = [p for p in (last.players if last is not None else []) if p not in bots]
        if last is None:
            print(f"Room {room}. Friends on your network join with:")
        elif len(people) > 1:  # a started game: nobody new can join, its players come back
            print(f"Room {room}. Its other players come back with their own command, e.g.:")
        else:  # only computer players besides the person: they came back by themselves
            print(f"Room {room}.")
        if last is None or len(people) > 1:
            for u in lans or [url]:
                print("  " + join_command(u, room=room))
            if (note := not_on_path_note(program_here())) is not None:
                print("  " + note)
        os.environ[ENV_SHARE_URL] = share
        os.environ[ENV_LOCAL_SERVER] = "1"
        from conjure.client.cli import main as conjure

        code = conjure(["play", url, "--room", room, "--name", name])
    except Stopped:
        code = 130
    except KeyboardInterrupt:
        code = 130
    except RuntimeError as exc:
        print(f"make play: {exc}", file=sys.stderr)
        code = 1
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # let nothing interrupt the clean-up
        # Said where a terminal is: a window closed under the game is gone for writing too
        # (EIO), and a print that failed there left the game neither paused nor offered again
        # (found by a newcomer).
        _say("Stopping the server and the computer players ...")
        lines = _remember(store, url, room, name, replays, last)
        children.stop_all()
        _say("Stopped the server and the computer players.")
        if code == 0 or not _say(f"Server and bot output: {workdir}"):
            # Kept only when something went wrong, and said: every run left a folder in the
            # temporary directory, and they piled up (seen by a newcomer).
            shutil.rmtree(workdir, ignore_errors=True)
        for line in lines:
            _say(line)
        for sig, handler in old.items():
            signal.signal(sig, handler)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.close(held)  # the state directory is free for the next make play
    return code


def hold_state_dir(store: StateDir) -> int | None:
    """Hold ``store`` for this make play (a lock the system lets go of when the process ends,
    however it ends); None if another one holds it. Why: two at once with one state directory
    each said "run make play again" of its game, and the directory remembers one (found by a
    newcomer: the first game was never offered again)."""
    store.ensure()
    fd = os.open(store.path / PLAY_LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # held: any other failure is the folder's, and said as such
        os.close(fd)
        return None
    except OSError:
        os.close(fd)
        raise
    return fd


def _say(line: str) -> bool:
    """Print a line of the clean-up; False when the terminal is gone (a closed window)."""
    try:
        print(line, flush=True)
    except OSError:
        return False
    return True


def _remember(
    store: StateDir,
    url: str | None,
    room: str | None,
    name: str,
    replays: Path,
    last: LastGame | None,
) -> list[str]:
    """Look at this run's room (the server still runs), remember an unfinished game for the next
    run, forget a finished one; the summary lines."""
    if url is None or room is None:
        return []
    import trio

    seat = store.load_seat(url, room)
    token = seat["token"] if seat is not None else None
    try:
        view = trio.run(look_at_room, url, room, token)
    except Exception:  # the summary is not worth failing the clean-up for
        view = None
    game_id = view.game_id if view is not None else (last.game_id if last is not None else None)
    # Paused by the person's own client as it quit (``Inputs._pause_as_the_server_stops``).
    paused = bool(view is not None and view.paused and (seat or {}).get("paused_on_quit"))
    if view is not None and view.phase not in ("lobby", "over") and not view.paused and token:
        try:  # (the client could not: its connection was gone, or its window closed)
            paused = trio.run(pause_for_later, url, room, token)
        except Exception:  # (as above: the clock runs on, as it did before)
            paused = False
    if view is not None and view.game_id is not None and view.phase != "over" and token:
        save_last_game(
            store,
            LastGame(
                url=url,
                room=room,
                name=(seat or {}).get("name") or name,
                game_id=view.game_id,
                replays=str(replays),
                round=view.round,
                rounds=view.rounds,
                players=[p.name for p in view.players if not p.kicked],
                paused_for_later=paused,
            ),
        )
    elif view is not None or last is None:
        forget_last_game(store)
    receipt = store.receipt_path(game_id) if game_id is not None else None
    lines = summary(view, replays, game_id, receipt)
    if paused and lines and lines[-1] == UNFINISHED:
        lines[-1] = "The game is unfinished, and paused until you come back: run make play again."
    return lines


if __name__ == "__main__":
    sys.exit(main())
