"""As a person would play: a real server process, the real ``conjure play`` in tmux, robots.

The test types with ``tmux send-keys`` and reads the screen with ``tmux capture-pane``, through
one whole round: create the room, start, choose a category, write a spell word, place crystals,
write a summoning word (the client's local warning included), then the client is killed with
SIGKILL after locking in, started again with the same state directory, resumes its seat, and
reveals the same word by itself; the boards, marks, revealed words and points are read off the
screen.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trio
from clienthelpers import robots

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CONJURE = str(Path(sys.executable).parent / "conjure")
TMUX = shutil.which("tmux")


class Tmux:
    def __init__(self, tmp: Path) -> None:
        self.sock = str(tmp / "tmux.sock")
        self.target = "play"

    def run(self, *args: str) -> str:
        out = subprocess.run(
            [TMUX, "-S", self.sock, *args], check=True, capture_output=True, text=True, timeout=10
        )
        return out.stdout

    def start(self, command: str) -> None:
        self.run("new-session", "-d", "-x", "100", "-y", "30", "-s", self.target, command)
        self.run("set-option", "-t", self.target, "remain-on-exit", "on")

    def respawn(self, command: str) -> None:
        self.run("respawn-pane", "-k", "-t", self.target, command)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.target, *keys)

    def type(self, text: str) -> None:
        self.run("send-keys", "-t", self.target, "-l", text)

    def line(self, text: str) -> None:
        self.type(text)
        self.keys("Enter")

    def capture(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.target)

    def pane_pid(self) -> int:
        return int(self.run("display-message", "-p", "-t", self.target, "#{pane_pid}").strip())

    def exit_status(self) -> int | None:
        """The exit status of the pane's process once it has ended, else None.

        tmux may be slow to reap a respawned pane's process, so a zombie counts as ended
        (its exit code is the last field of /proc/PID/stat, in waitpid's format).
        """
        fmt = "#{pane_dead}|#{pane_dead_status}|#{pane_pid}"
        out = self.run("display-message", "-p", "-t", self.target, fmt).strip().split("|")
        dead, status, pid = ([*out, "", "", ""])[:3]
        if dead == "1" and status:
            return int(status)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":
            return int(fields[-1]) >> 8
        return None

    def kill(self) -> None:
        subprocess.run([TMUX, "-S", self.sock, "kill-server"], capture_output=True, timeout=10)

    async def wait(self, *needles: str, timeout: float = 15.0) -> str:
        screen = ""
        with trio.move_on_after(timeout):
            while True:
                screen = self.capture()
                if all(n in screen for n in needles):
                    return screen
                await trio.sleep(0.1)
        raise AssertionError(f"the screen never showed {needles!r}; it shows:\n{screen}")


@pytest.fixture
def server_process(tmp_path):
    proc = subprocess.Popen(
        [
            CONJURE,
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--replays",
            str(tmp_path / "replays"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    url = None
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        found = re.search(r"listening on (ws://\S+)", line)
        if found:
            url = found.group(1)
            break
    if url is None:
        proc.kill()
        raise AssertionError("the server did not start:\n" + "".join(lines))
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    yield url
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    reader.join(5)
    proc.stdout.close()
    print("server output:\n" + "".join(lines))  # shown by pytest when the test fails


async def test_a_whole_round_in_tmux_with_a_crash_mid_summon(server_process, tmp_path):
    if TMUX is None:
        pytest.skip("tmux is not installed (make test installs it)")
    url = server_process
    state = tmp_path / "state"
    env = f"env CONJURE_STATE_DIR={shlex.quote(str(state))} TERM=xterm-256color"
    play = f"exec {env} {shlex.quote(CONJURE)} play {url} --name Ann"
    tmux = Tmux(tmp_path)
    try:
        tmux.start(f"{play} --create --quick")
        screen = await tmux.wait("Lobby: s=start", "share: conjure play")
        room = re.search(r"--room ([A-Z]{4})", screen).group(1)
        specs = [
            dict(name="Bob", spell="hydrogen", summon="spaceship", hold=("commit",)),
            dict(name="Cat", spell="rocket", summon="moon", hold=("commit",)),
        ]
        async with robots(url, room, specs) as (bob, cat):
            await tmux.wait("Bob", "Cat", "3 players seated")
            tmux.type("s")
            tmux.type("y")  # the host is asked first
            await tmux.wait("Choose a category (1-3):", "Categories on the table")
            tmux.line("1")
            await tmux.wait("Your spell word:")
            tmux.line("freighter")
            await tmux.wait(
                "Toggle boards 1-3, Enter to confirm (2-3 crystals):", "hydrogen", "rocket"
            )
            tmux.type("2")
            tmux.type("3")
            await tmux.wait("Crystals ready for: hydrogen, rocket")
            tmux.keys("Enter")
            await tmux.wait("Your summoning word:")
            # A pasted block of lines is one line in the input, cleared whole by Ctrl-U (its
            # line breaks made every Enter a refusal, and Ctrl-U cleared one line of it).
            tmux.run("set-buffer", "kettle\nspoon\nfork")
            tmux.run("paste-buffer", "-p", "-t", tmux.target)
            await tmux.wait("Your summoning word: kettle spoon fork")
            tmux.keys("Left", "Left", "Left", "Left", "Left", "C-u")  # the whole line, not its left
            await tmux.wait("Your summoning word:\n")  # the prompt, and nothing after it
            tmux.line("rocket ship")
            await tmux.wait("it would be invalid, -3", "anyway? y = yes, n = change it")
            tmux.type("n")  # no: the word comes back to the input line, to be changed
            await tmux.wait("Your summoning word: rocket ship")
            tmux.keys("C-u")
            tmux.line("spaceship")
            screen = await tmux.wait("Locked in 'spaceship'", "spaceship · locked in")
            assert screen.count("◆") >= 2

            # The client dies hard after locking in; the others have not summoned yet.
            os.kill(tmux.pane_pid(), signal.SIGKILL)
            await bob.c.wait_view(lambda v: not v.players[0].connected, timeout=10)
            tmux.respawn(f"exec env NO_COLOR=1 {play[5:]} --room {room.lower()}")
            await tmux.wait("Locked in 'spaceship'", "back at board 1")
            bob.release()
            cat.release()

            # The reveal happens by itself, with the word saved before the crash.
            screen = await tmux.wait("Review: c=challenge", "spaceship ✓", "moon ✓")
            board = {
                m.group(1): m.group(0)
                for m in re.finditer(r"^[ ▶]\d (Ann|Bob|Cat).*$", screen, re.MULTILINE)
            }
            assert "freighter" in board["Ann"] and "spaceship ✓" in board["Ann"]
            assert "◆" in board["Bob"] and "◆" in board["Cat"] and "◆" not in board["Ann"]
            assert "moon ✓" in board["Cat"]
            tmux.type("d")
            screen = await tmux.wait("Round 1:", "matched the conjurer", "round 2/3")
            points = {
                m.group(1): int(m.group(2))
                for m in re.finditer(r"^\s+(Ann|Bob|Cat)\s+([+-]\d+)\s", screen, re.MULTILINE)
            }
            assert points["Ann"] > 0 and points["Bob"] > 0 and set(points) == {"Ann", "Bob", "Cat"}
            tmux.keys("Escape")  # the results card closes: the boards again
            screen = await tmux.wait("spell word", "summoning word", "points")
            score = {
                m.group(1): int(m.group(2))
                for m in re.finditer(r"^[ ▶]\d (Ann|Bob|Cat)\b.*?(-?\d+)$", screen, re.MULTILINE)
            }
            assert score == points
            print(screen)

            # NO_COLOR: attributes (bold, reverse) but no colour at all (39/49 are the defaults).
            styled = tmux.run("capture-pane", "-p", "-e", "-t", tmux.target)
            params = {
                int(p)
                for seq in re.findall(r"\x1b\[([0-9;]*)m", styled)
                for p in seq.split(";")
                if p
            }
            assert not params & (set(range(30, 39)) | set(range(40, 49)) | set(range(90, 108))), (
                params
            )

            # A smaller window: everything is drawn again to fit 80x24.
            tmux.run("resize-window", "-t", tmux.target, "-x", "80", "-y", "24")
            await tmux.wait("Your spell word:", "round 2/3")
            screen = tmux.capture()
            assert max(len(line) for line in screen.splitlines()) <= 80
            assert "round 2/3" in screen.splitlines()[0]
            tmux.keys("C-q")  # the host of a game in play is asked first; y quits
            await tmux.wait("You host this game: the others will play on")
            tmux.keys("y")
            with trio.move_on_after(10):  # a clean exit with code 0
                while (status := tmux.exit_status()) is None:
                    await trio.sleep(0.1)
            assert status == 0, f"no clean exit after Ctrl-Q ({status}):\n{tmux.capture()}"
    finally:
        tmux.kill()
