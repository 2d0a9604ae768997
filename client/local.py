"""``make play`` (``python -m client.local``): a game against computer players in one command.

    python -m client.local [--bots 3] [--variant standard|dark-magic] [--port P]
                           [--replays DIR] [--name NAME]

What it does, in order:

1. picks the port: ``--port``, else 8765 when it is free, else any free one (0);
2. starts ``conjure serve --host 0.0.0.0 --port P --replays DIR`` as a child process (all
   interfaces, so friends on the LAN can join; everything here talks to it on 127.0.0.1) and waits
   for its ``listening on`` line;
3. creates a room as the person at the keyboard (Hello + CreateRoom, name from ``--name``,
   ``$CONJURE_NAME`` or the login name) and saves the seat token in the client state directory
   (``$CONJURE_STATE_DIR`` or the default) for ``ws://127.0.0.1:P``;
4. starts ``conjure bot ws://127.0.0.1:P --room CODE --count N`` as a child process and waits
   until the N bots are seated (holding the host's connection open meanwhile);
5. runs the terminal client, ``conjure play ws://127.0.0.1:P --room CODE --name NAME``, in the
   foreground (in this process): it resumes the saved seat, so the person is the host and
   presses ``s`` to start; friends can join first with the line printed before the screen opens
   (and shown in the lobby when the client honours ``$CONJURE_SHARE_URL``).

Quitting the client stops the bots, then the server (each in its own process group: SIGTERM,
then SIGKILL after a timeout), also when this program gets SIGINT, SIGTERM or SIGHUP. On Linux
the children also get SIGTERM should this process die without cleaning up. The server's and the
bots' output, and a ``pids`` file, are in a fresh ``conjure-play-*`` directory under the temporary
directory; the end of the run says where, and where the game's log went.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_PORT = 8765
SERVER_START_TIMEOUT = 30.0
BOTS_SEATED_TIMEOUT = 60.0
STOP_TIMEOUT = 5.0


class Stopped(Exception):
    """A signal asked this program to stop."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bots", type=int, default=3, help="computer players (default 3)")
    parser.add_argument("--variant", choices=("standard", "dark-magic"), default="standard")
    parser.add_argument(
        "--port", type=int, help=f"server port (default {DEFAULT_PORT} if free, else any free)"
    )
    parser.add_argument(
        "--replays", type=Path, default=Path("replays"), help="game logs (default replays/)"
    )
    parser.add_argument("--name", help="your name at the table (default $CONJURE_NAME or login)")


def player_name(given: str | None) -> str:
    name = given or os.environ.get("CONJURE_NAME") or ""
    if not name:
        with contextlib.suppress(Exception):
            name = getpass.getuser()
    name = " ".join("".join(ch for ch in name if ch.isprintable()).split())[:24]
    return name or "Player"


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def pick_port(requested: int | None) -> int:
    if requested is not None:
        return requested
    return DEFAULT_PORT if port_is_free(DEFAULT_PORT) else 0


def conjure_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "client.cli", *args]


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


async def create_room(
    url: str,
    name: str,
    variant: str,
    bots: int,
    start_bots,
    state_dir: str | None,
    timeout: float = BOTS_SEATED_TIMEOUT,
) -> str:
    """Create the room as the person, save the seat, start the bots, wait until they sit."""
    import trio

    got: dict[str, str] = {}

    async def stop_on_signal(signals, cancel) -> None:
        async for _ in signals:
            cancel.cancel()
            return

    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stop_on_signal, signals, nursery.cancel_scope)
            await _host_exchange(url, name, variant, bots, start_bots, state_dir, timeout, got)
            nursery.cancel_scope.cancel()
    if "room" not in got:
        raise Stopped()
    return got["room"]


async def _host_exchange(
    url: str,
    name: str,
    variant: str,
    bots: int,
    start_bots,
    state_dir: str | None,
    timeout: float,
    got: dict[str, str],
) -> None:
    import trio
    from trio_websocket import open_websocket_url

    from client.statefile import StateDir
    from protocol import messages as m

    ws = None
    try:
        async with open_websocket_url(url, connect_timeout=10, disconnect_timeout=2) as ws:

            async def receive():
                with trio.fail_after(timeout):
                    return m.server_decoder.decode(await ws.get_message())

            async def send(msg: m.ClientMsg) -> None:
                await ws.send_message(m.encoder.encode(msg).decode())

            await send(m.Hello(protocol=m.PROTOCOL_VERSION, client="conjure-local/0.1"))
            settings = m.RoomSettings(variant=variant)  # type: ignore[arg-type]
            await send(m.CreateRoom(name=name, settings=settings))
            while not isinstance(msg := await receive(), m.Seated):
                if isinstance(msg, m.Error):
                    raise RuntimeError(f"could not create a room: {msg.message}")
            StateDir(state_dir).save_seat(
                url, msg.room, seat=msg.seat, player_id=msg.player_id, token=msg.token, name=name
            )
            proc = start_bots(msg.room) if bots else None
            with trio.fail_after(timeout):
                while True:
                    update = await receive()
                    if proc is not None and proc.poll() is not None:
                        raise RuntimeError("the computer players stopped at once")
                    if isinstance(update, m.Update) and _seated(update.view) >= 1 + bots:
                        break
            got["room"] = msg.room
            # Closing the socket keeps the seat for the terminal client (never send Leave).
    finally:
        if ws is not None:
            with trio.CancelScope(shield=True), contextlib.suppress(Exception):
                await ws._stream.aclose()  # see tests/wsclient.py close_socket


def _seated(view) -> int:
    return sum(1 for p in view.players if p.connected and not p.kicked)


def lan_urls(port: int) -> list[str]:
    from server.netinfo import addresses_for, url_host

    return [f"ws://{url_host(a)}:{port}" for a in addresses_for("0.0.0.0") if a != "127.0.0.1"]


def newest_logs(replays: Path, since: float) -> list[Path]:
    try:
        found = [p for p in replays.glob("*.jsonl") if p.stat().st_mtime >= since - 1]
    except OSError:
        return []
    return sorted(found, key=lambda p: p.stat().st_mtime)


def _raise_stopped(signum, frame) -> None:
    raise Stopped()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="make play", description="a game against computer players on a local server"
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    if not 0 <= args.bots <= 7:
        print("make play: --bots must be between 0 and 7", file=sys.stderr)
        return 2
    name = player_name(args.name)
    state_dir = os.environ.get("CONJURE_STATE_DIR") or None
    started = time.time()
    workdir = Path(tempfile.mkdtemp(prefix="conjure-play-"))
    children = Children(workdir)
    server_log, bots_log = workdir / "server.log", workdir / "bots.log"
    old = {sig: signal.signal(sig, _raise_stopped) for sig in (signal.SIGTERM, signal.SIGHUP)}
    code = 0
    try:
        port = pick_port(args.port)
        print(f"Starting a Conjure server (log: {server_log}) ...", flush=True)
        server = children.start(
            "server",
            conjure_command(
                "serve", "--host", "0.0.0.0", "--port", str(port), "--replays", str(args.replays)
            ),
            server_log,
        )
        port = wait_listening(server, server_log, SERVER_START_TIMEOUT)
        url = f"ws://127.0.0.1:{port}"

        def start_bots(room: str) -> subprocess.Popen:
            cmd = conjure_command(
                "bot", url, "--room", room, "--count", str(args.bots), "--log", str(bots_log)
            )
            return children.start("bots", cmd, bots_log)

        import trio

        print(f"Creating a room for {name} and seating {args.bots} computer players ...")
        room = trio.run(create_room, url, name, args.variant, args.bots, start_bots, state_dir)
        lans = lan_urls(port)
        share = lans[0] if lans else url
        print(f"Room {room}. Friends on your network join with:")
        for u in lans or [url]:
            print(f"  conjure play {u} --room {room} --name THEIRNAME")
        os.environ["CONJURE_SHARE_URL"] = share
        os.environ["CONJURE_LOCAL_SERVER"] = "1"
        from client.cli import main as conjure

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
        children.stop_all()
        print("Stopped the server and the computer players.")
        print(f"Server and bot output: {workdir}")
        for log in newest_logs(args.replays, started):
            print(f"Game log: {log}")
            print(f"  check every point with: conjure replay {log}")
        for sig, handler in old.items():
            signal.signal(sig, handler)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return code


if __name__ == "__main__":
    sys.exit(main())
