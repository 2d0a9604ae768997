"""The terminal client as a person meets it, at 80x24 (and once at 120x40), in tmux.

One real server process for the whole module; in each test the real ``conjure play`` runs in
tmux and robots (``clienthelpers.Robot``, on the protocol client) fill the other seats. The
screen is read with ``tmux capture-pane`` and every capture is checked as a reader would
(``screencheck``: nothing wider than the terminal, no word cut or wrapped mid-word). One test
per thing a player met in issue 12:

- the "lock it in anyway?" question: the word locked after "y" is the word typed;
- text typed for a closed question never becomes a command in the next one;
- every player's result line and reason is on screen, whole, before the next round;
- proposal numbers agree between the panel, the feed, the status line and ``conjure replay``,
  and a vote on a proposal about your own word is refused with its reason (rule V1);
- the game explains itself: spell words, summoning words, stars, the challenge menu, /help;
- join errors bring back the field to change; nothing joined means a non-zero exit;
- a friend who comes after the start watches the game with Enter.
"""

from __future__ import annotations

import re
import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trio
from clienthelpers import robots
from screencheck import assert_readable, unwrap
from test_client_tmux import CONJURE, ROOT, TMUX, Tmux
from wsclient import open_client, open_table, start_game

from conjure.protocol import messages as m
from conjure.protocol.messages import CastVote, ChallengeWord, ProposeSame

pytestmark = pytest.mark.slow

NAMES = ["Ann", "Bob", "Cat", "Dan", "Eve"]


class Term(Tmux):
    """A tmux pane of a given size; every capture is read as a person would read it."""

    def __init__(self, tmp: Path, width: int = 80, height: int = 24, words=()) -> None:
        super().__init__(tmp)
        self.width, self.height = width, height
        self.words = list(words)

    def start(self, command: str) -> None:
        size = ["-x", str(self.width), "-y", str(self.height)]
        self.run("new-session", "-d", *size, "-s", self.target, command)
        self.run("set-option", "-t", self.target, "remain-on-exit", "on")

    def capture(self) -> str:
        screen = super().capture().rstrip("\n")
        assert_readable(screen, self.width, self.height, self.words)
        return screen

    async def exited(self) -> int | None:
        with trio.move_on_after(10):
            while (status := self.exit_status()) is None:
                await trio.sleep(0.1)
            return status
        return None


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    """One server process for the module (games do not disturb each other)."""
    replays = tmp_path_factory.mktemp("replays")
    proc = subprocess.Popen(
        [CONJURE, "serve", "--host", "127.0.0.1", "--port", "0", "--replays", str(replays)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    url = None
    for line in proc.stdout:
        lines.append(line)
        if found := re.search(r"listening on (ws://\S+)", line):
            url = found.group(1)
            break
    if url is None:
        proc.kill()
        raise AssertionError("the server did not start:\n" + "".join(lines))
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    yield url, replays
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    reader.join(5)
    proc.stdout.close()
    print("server output:\n" + "".join(lines))


def play(url: str, state: Path, *args: str, env: str = "") -> str:
    cmd = " ".join(shlex.quote(a) for a in (CONJURE, "play", url, *args))
    return f"exec env CONJURE_STATE_DIR={shlex.quote(str(state))} TERM=xterm-256color {env} {cmd}"


def needs_tmux() -> None:
    if TMUX is None:
        pytest.skip("tmux is not installed (make test installs it)")


def numbered(screen: str) -> dict[str, dict[int, str]]:
    """Proposal numbers and who made them, as the panel and the feed show them."""
    panel = {
        int(m.group(1)): m.group(2)
        for m in re.finditer(r"^ (\d+)\. (\w+) (?:challenges|proposes)", screen, re.M)
    }
    feed = {
        int(m.group(1)): m.group(2)
        for m in re.finditer(r"Proposal (\d+): (\w+) (?:challenges|proposes)", unwrap(screen))
    }
    return {"panel": panel, "feed": feed}


async def test_a_round_read_as_a_person_would(server_url, tmp_path):
    """Items 1, 3, 4, 5 and 8 of issue 12, in one round of five players at 80x24."""
    needs_tmux()
    url, replays = server_url
    words = [*NAMES, "bread", "breadbox", "castle", "dragon", "engine", "freighter"]
    words += ["spaceship", "moon", "star", "planet"]
    term = Term(tmp_path, words=words)
    try:
        # The settings form: each question once, the hint about [brackets] said once.
        term.start(play(url, tmp_path / "ann", "--name", "Ann", "--create"))
        screen = await term.wait("New room settings", "Variant: 1 standard, 2 dark magic [1]:")
        assert unwrap(screen).count("Enter keeps the value in [brackets]") == 1, screen
        for _ in range(4):
            term.keys("Enter")
            await trio.sleep(0.2)
        screen = await term.wait("Create the room? Enter = yes")
        term.keys("Enter")
        screen = await term.wait("Lobby: s=start", "share: conjure play")
        room = re.search(r"--room ([A-Z]{4})", screen).group(1)
        assert "you sit at board 1 in room" in screen and "back at board" not in screen
        assert "Ann is back" not in screen and "New here?" in screen  # the first time
        # Settings unchanged: nothing sent, so nobody reads "changed the settings".
        term.type("e")
        await term.wait("Room settings", "Variant: 1 standard")
        for _ in range(5):
            term.keys("Enter")
            await trio.sleep(0.2)
        screen = await term.wait("Settings unchanged.")
        assert "changed the settings" not in screen
        # /help fits and scrolls; F2 tells how to play.
        term.keys("F1")
        screen = await term.wait("Help", "Keys", "Enter/Esc close")
        if "more lines: PgDn" in screen:
            term.keys("PageDown")
            screen = await term.wait("the end")
        assert "summoning word: your secret guess" in unwrap(screen)
        term.keys("Escape")
        term.keys("F2")
        screen = await term.wait("How to play Conjure", "1. Choose.")
        assert "★: a category is worth 1 to 3 stars" in unwrap(screen)
        term.keys("Escape")
        await term.wait("Lobby: s=start", "share: conjure play")  # the card is gone

        specs = [
            dict(name="Bob", spell="bread", summon="spaceship", hold=("commit", "done")),
            dict(name="Cat", spell="castle", summon="moon", hold=("commit", "done")),
            dict(name="Dan", spell="dragon", summon="star", hold=("commit", "done")),
            dict(name="Eve", spell="engine", summon="planet", hold=("commit", "done")),
        ]
        async with robots(url, room, specs) as bots:
            bob, cat = bots[0].c, bots[1].c
            await term.wait("5 players seated")
            term.type("s")
            await term.wait("Start the game now, with these 5 players? y/n:")
            term.type("y")
            screen = await term.wait("Choose a category (1-5):", "Categories on the table")
            assert "★ = the points a match scores" in screen
            term.line("1")
            screen = await term.wait("Your spell word:")
            assert "Spell word: a clue each player writes in turn" in unwrap(screen)
            term.line("freighter")
            screen = await term.wait("Toggle boards 1-5", "engine")
            assert "1-5 toggle" in screen and "1-8" not in screen
            term.type("2")
            term.type("3")
            await term.wait("Crystals ready for: bread, castle")
            term.keys("Enter")
            screen = await term.wait("Your summoning word:")
            assert "Summoning word: the thing you summon, written in secret" in unwrap(screen)

            # Item 1: the warning is a real y/n question; "y" Enter locks in the word typed.
            term.line("breadbox")
            await term.wait("seems hidden inside your word", "Lock in 'breadbox' anyway?")
            term.line("y")  # as at any yes/no prompt: y, then Enter
            screen = await term.wait("Locked in 'breadbox'", "breadbox · locked in")
            assert "breadboxy" not in screen
            for b in bots:
                b.release("commit")
            screen = await term.wait("Review: c=challenge", "breadbox ✓", "planet ✓")

            # Item 4: one numbering, from 1, in the panel, the feed and the status line.
            await bob.send(ChallengeWord(seat=0, rule="written-word"))  # proposal 1: Ann's word
            await term.wait(" 1. Bob challenges Ann's 'breadbox'")
            term.type("v")
            screen = await term.wait("Proposal 1 is about your word")
            assert "the players it does not concern vote on it" in unwrap(screen)
            await cat.send(ProposeSame(a=3, b=4))  # proposal 2: Dan's and Eve's words
            await term.wait(" 2. Cat proposes 'star' = 'planet'")
            await trio.sleep(1.2)  # as a person reads: keys right after a refused one do nothing
            term.type("v")
            await term.wait("Proposal 2: y=yes n=no")
            term.type("y")
            await term.wait("Reason for your yes")
            term.line("both shine at night")
            screen = await term.wait("Ann votes yes on proposal 2")
            assert "Ann votes yes on proposal 2: 'both shine at night'" in unwrap(screen)
            assert "You voted yes" not in screen  # the feed says it: the confirmation is over
            term.type("c")
            await term.wait("Challenge whose word")
            term.type("3")
            screen = await term.wait("Challenge Cat's 'moon': which rule?")
            assert "2 it must be a thing without adjectives or describing words" in screen
            assert "4 it cannot be or contain a written word" in screen
            term.type("1")
            await term.wait(" 3. Ann challenges Cat's 'moon'")
            await bob.send(CastVote(proposal=2, yes=False, reason="a moon is a noun"))
            screen = await term.wait("Bob: a moon is a noun")
            seen = numbered(screen)
            assert seen["panel"] == {1: "Bob", 2: "Cat", 3: "Ann"}, screen
            for n, who in seen["feed"].items():
                assert seen["panel"][n] == who, (n, who, screen)
            assert "Bob votes no on proposal 3: 'a moon is a noun'" in unwrap(screen)

            # Item 3: the results stay readable, every line and reason whole.
            for b in bots:
                b.release("done")
            term.type("d")
            screen = await term.wait("Round 1:", "round 2/5", "Scores: ", "Enter/Esc close")
            result = (await bob.wait_view(lambda v: bool(v.results))).results[0]
            text = unwrap(screen)
            for seat, name in enumerate(NAMES):
                line = re.search(rf"^  {name} +([+-]\d+)  ", screen, re.M)
                assert line, f"no result line for {name}:\n{screen}"
                assert int(line.group(1)) == result.points.get(seat, 0)
                for point in result.reasons.get(seat, []):
                    assert point.why in text, f"{name}: {point.why!r} is not whole:\n{screen}"
            term.keys("Escape")
            await term.wait("spell word", "summoning word", "points")

        # conjure replay numbers the proposals as the table saw them.
        log = max(replays.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
        out = subprocess.run(
            [CONJURE, "replay", str(log)], capture_output=True, text=True, timeout=60, cwd=ROOT
        ).stdout
        assert "#1 Bob challenged Ann's 'breadbox'" in out, out
        assert "#2 Cat proposed that 'star' and 'planet'" in out, out
        assert "#3 Ann challenged Cat's 'moon'" in out, out
        term.keys("C-q")
        assert await term.exited() == 0
    finally:
        term.kill()


async def test_text_for_a_closed_summon_never_becomes_a_command(server_url, tmp_path):
    """Item 2, at 120x40: "crimson" typed, the clock closes the summon, Enter does nothing."""
    needs_tmux()
    url, _ = server_url
    term = Term(tmp_path, 120, 40, words=["crimson", "ruby", "scarlet", "Ann", "Bob", "Cat"])
    limits = "choose=off spell=off mark=off commit=10 reveal=off review=off"
    try:
        term.start(
            play(url, tmp_path / "ann", "--name", "Ann", "--create", "--quick", "--limits", limits)
        )
        screen = await term.wait("Lobby: s=start", "share: conjure play")
        room = re.search(r"--room ([A-Z]{4})", screen).group(1)
        specs = [dict(name="Bob", spell="ruby", summon="rose"), dict(name="Cat", spell="scarlet")]
        async with robots(url, room, specs):
            await term.wait("3 players seated")
            term.type("s")
            term.type("y")  # the host is asked first
            await term.wait("Choose a category")
            term.line("1")
            await term.wait("Your spell word:")
            term.line("crimson")
            await term.wait("Toggle boards")
            term.type("23")
            term.keys("Enter")
            await term.wait("Your summoning word:")
            term.type("crimson")  # typed, never sent: the clock closes the summon first
            await term.wait("Your summoning word: crimson")
            screen = await term.wait("Review: c=challenge", timeout=40)
            assert "not sent, the summon closed: 'crimson'" in unwrap(screen)
            prompt_row = next(r for r in screen.splitlines() if "Review: c=challenge" in r)
            assert prompt_row.rstrip().endswith("d=done:"), "the old text is in the new prompt"
            term.keys("Enter")  # must not read the old text's "c" as "challenge"
            # Keys are handled in order: once "v" is answered, the Enter has been handled too.
            term.type("v")
            screen = await term.wait("There is no open proposal to vote on.")
            assert "Challenge whose word" not in screen and "Proposals" not in screen
            assert "Review: c=challenge" in screen
            term.keys("C-q")  # the host of a game in play is asked first; y quits
            await term.wait("You host this game: the others will play on")
            term.keys("y")
        assert await term.exited() == 0
    finally:
        term.kill()


async def test_join_errors_bring_back_the_field_to_change(server_url, tmp_path):
    """Item 6: a wrong code, a missing then wrong password, a taken name; then no server."""
    needs_tmux()
    url, _ = server_url
    term = Term(tmp_path, words=["Bob", "Ann", "sesame"])
    try:
        async with open_client(url, "Bob") as bob:
            room = await bob.create(password="sesame")
            term.start(play(url, tmp_path / "ann", "--room", "QQQQ", "--name", "Bob"))
            screen = await term.wait("Room code to join (4 letters):")
            assert "QQQQ" in screen
            term.line(room.lower())
            screen = await term.wait(f"Password for room {room}:", "has a password")
            assert "wrong" not in screen.lower()  # a missing password is not a wrong one
            term.line("open sesame")
            screen = await term.wait(f"Password for room {room}:", "Wrong password")
            assert "open sesame" not in screen  # typed, but never shown
            term.line("sesame")
            screen = await term.wait("Another name:", "already")
            term.line("Ann")
            screen = await term.wait("you sit at board 2", "Waiting for Bob to start")
            status_row = screen.splitlines()[-3]
            assert "already" not in status_row, "the refusal stays on the status line"
            term.keys("C-q")
            assert await term.exited() == 0

        # No server at all: one line that fits, and quitting says "nothing joined".
        with trio.socket.socket() as sock:
            await sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        nowhere = f"ws://127.0.0.1:{port}"
        term.respawn(play(nowhere, tmp_path / "ann", "--room", "ABCD", "--name", "Ann"))
        # The connecting screen names the address too, so wait for the verdict itself.
        screen = await term.wait("annot reach", timeout=20)
        status_row = screen.splitlines()[-3]
        assert status_row.strip().lower().startswith("cannot reach"), screen
        term.keys("C-q")
        assert await term.exited() not in (0, None)
    finally:
        term.kill()


async def test_a_friend_who_comes_late_watches_with_enter(server_url, tmp_path):
    """Seen with a late friend: "quit (Ctrl-Q) and type: conjure watch …", a second program to
    start. The game is on the same screen one Enter later, as a spectator."""
    needs_tmux()
    url, _ = server_url
    term = Term(tmp_path, words=["Ann", "Bob", "Cat", "Dee"])
    try:
        async with open_table(url, ["Ann", "Bob", "Cat"]) as table:
            await start_game(table)
            room = table[0].room
            assert room is not None
            term.start(play(url, tmp_path / "dee", "--room", room.lower(), "--name", "Dee"))
            screen = await term.wait("has started without you", "Enter watches the game here")
            assert "conjure watch" not in screen  # no second program to start
            term.keys("Enter")
            screen = await term.wait("watching:", "Ann", "Bob", "Cat")
            assert f"room {room}" in screen and "Dee" not in screen  # watching, not seated
            await table[0].send(m.SendChat(text="welcome Dee"))
            await term.wait("Ann: welcome Dee")
            term.keys("C-q")
            assert await term.exited() == 0  # a room was joined: watched
    finally:
        term.kill()


async def test_one_who_watches_a_full_room_takes_a_seat_that_comes_free(server_url, tmp_path):
    """A friend who found the room full and watched instead could only quit and join again
    when someone left: the seat is offered on the same screen, and Enter takes it."""
    needs_tmux()
    url, _ = server_url
    names = [f"P{i}" for i in range(8)]
    term = Term(tmp_path, words=[*names, "Viv"])
    try:
        async with open_table(url, names) as table:
            room = table[0].room
            assert room is not None
            term.start(play(url, tmp_path / "viv", "--room", room.lower(), "--name", "Viv"))
            await term.wait("w watches instead")
            term.line("w")
            await term.wait("watching:", "P7")
            await table[7].send(m.Leave())
            screen = await term.wait("A seat is free: Enter takes it")
            assert "Enter take the seat" in screen
            term.keys("Enter")
            screen = await term.wait("you took board 8", "Waiting for P0 to start")
            assert "watching:" not in screen
            await table[0].wait_view(lambda v: v.spectators == 0 and v.players[-1].name == "Viv")
            term.keys("C-q")
            assert await term.exited() == 0
    finally:
        term.kill()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
