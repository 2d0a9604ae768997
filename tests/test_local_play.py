"""``make play``'s start-up path, as a person meets it: ``python -m client.local`` in tmux.

The screen must show the lobby with the person as host and three computer players seated; Ctrl-Q
quits, and afterwards no process of the server or the bots is left. Every path of the run is under
the test's own temporary directory (``TMPDIR``, ``--replays``, ``$CONJURE_STATE_DIR``), so any
process still mentioning it in its command line is a stray.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
TMUX = shutil.which("tmux")


def tmux(sock: Path, *args: str) -> str:
    out = subprocess.run(
        [TMUX or "tmux", "-S", str(sock), *args],
        check=True,
        capture_output=True,
        text=True,
        timeout=10,
    )
    return out.stdout


def wait_screen(sock: Path, *needles: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux(sock, "capture-pane", "-p", "-t", "play")
        if all(n in screen for n in needles):
            return screen
        time.sleep(0.1)
    raise AssertionError(f"the screen never showed {needles!r}; it shows:\n{screen}")


def pane_dead(sock: Path) -> bool:
    return tmux(sock, "display-message", "-p", "-t", "play", "#{pane_dead}").strip() == "1"


def processes_mentioning(text: str) -> dict[int, str]:
    """Live processes (not tmux itself, not zombies) whose command line contains ``text``."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if text not in cmdline or cmdline.startswith(("tmux", TMUX or "tmux")):
            continue
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            continue
        found[int(entry.name)] = cmdline
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_make_play_seats_three_bots_and_quitting_leaves_nothing(tmp_path):
    if TMUX is None:
        pytest.skip("tmux is not installed (make test installs it)")
    sock = tmp_path / "tmux.sock"
    env = {
        "CONJURE_STATE_DIR": str(tmp_path / "state"),
        "CONJURE_NAME": "Tess",
        "TMPDIR": str(tmp_path),
    }
    command = " ".join(
        [
            "env",
            *(f"{k}={shlex.quote(v)}" for k, v in env.items()),
            shlex.quote(sys.executable),
            "-m",
            "client.local",
            "--port",
            "0",
            "--replays",
            shlex.quote(str(tmp_path / "replays")),
        ]
    )
    tmux(sock, "new-session", "-d", "-x", "100", "-y", "30", "-s", "play", "-c", str(ROOT), command)
    try:
        tmux(sock, "set-option", "-t", "play", "remain-on-exit", "on")
        screen = wait_screen(sock, "4 player(s) seated", "Ada", "Basil", "Cleo", timeout=40)
        assert re.search(r"Tess\s*♛", screen), screen  # the person is the host ...
        assert "you are the host: s starts the game" in screen
        assert "share: conjure play ws://" in screen  # ... and sees the join line ...
        from client.local import lan_urls

        if lan_urls(8765):  # ... with the LAN address friends can reach, not loopback
            assert "share: conjure play ws://127.0.0.1" not in screen, screen
        pids = {}
        for path in tmp_path.glob("conjure-play-*/pids"):
            for line in path.read_text().splitlines():
                label, pid = line.split()
                pids[label] = int(pid)
        assert set(pids) == {"server", "bots"}
        assert all(alive(pid) for pid in pids.values())
        assert processes_mentioning(str(tmp_path))  # the server and the bots, by their paths

        tmux(sock, "send-keys", "-t", "play", "C-q")
        deadline = time.monotonic() + 20
        while not pane_dead(sock) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pane_dead(sock), tmux(sock, "capture-pane", "-p", "-t", "play")
        out = tmux(sock, "capture-pane", "-p", "-t", "play", "-S", "-100")
        assert "Stopped the server and the computer players." in out, out
        assert "conjure play ws://" in out  # the join line for friends, printed before
        assert not [pid for pid in pids.values() if alive(pid)]
        assert processes_mentioning(str(tmp_path)) == {}
    finally:
        subprocess.run([TMUX, "-S", str(sock), "kill-server"], capture_output=True, timeout=10)
