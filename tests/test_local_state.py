"""``make play``'s memory between runs (client/local.py), without tmux: which unfinished game is
offered, how seats follow the server to a new port, and the look at the room after the client
exits. The whole path, in tmux, is tests/test_local_play.py."""

from __future__ import annotations

import argparse
import io
import os
import socket
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import trio
from wsclient import open_table, start_game

from conjure.client import local
from conjure.client.bots.player import bot_seat_server, move_bot_seats, saved_bots
from conjure.client.statefile import StateDir
from conjure.protocol import messages as m

OLD, NEW = "ws://127.0.0.1:8765", "ws://127.0.0.1:9001"


def last_game(replays: Path, **kw) -> local.LastGame:
    fields = dict(
        url=OLD,
        room="ABCD",
        name="Tess",
        game_id="g1",
        replays=str(replays.resolve()),
        round=2,
        rounds=4,
        players=["Tess", "Ada", "Basil", "Cleo"],
    )
    return local.LastGame(**{**fields, **kw})


def seat(store: StateDir, url: str = OLD, room: str = "ABCD", name: str = "Tess") -> None:
    store.save_seat(url, room, seat=0, player_id="p0", token="t" * 43, name=name)


def test_an_unfinished_game_is_offered_only_with_its_log_and_its_seat(tmp_path):
    store, replays = StateDir(tmp_path / "state"), tmp_path / "replays"
    replays.mkdir()
    assert local.load_last_game(store, replays) is None
    last = last_game(replays)
    local.save_last_game(store, last)
    assert local.load_last_game(store, replays) is None  # no log yet
    last.log.write_text("")
    assert local.load_last_game(store, replays) is None  # no seat token
    seat(store)
    assert local.load_last_game(store, replays) == last
    assert local.load_last_game(store, tmp_path / "elsewhere") is None  # other replays/
    assert last.port == 8765
    assert last.question() == (
        "Your game in room ABCD is unfinished (round 2 of 4, with Ada, Basil and Cleo)."
        " Resume it? [Y/n] "
    )
    local.forget_last_game(store)
    assert local.load_last_game(store, replays) is None
    local.last_game_path(store).write_text("{not json")
    assert local.load_last_game(store, replays) is None


def test_resuming_is_asked_unless_answered_beforehand(tmp_path, monkeypatch, capsys):
    last = last_game(tmp_path)

    def args(**kw) -> argparse.Namespace:
        return argparse.Namespace(**{"resume": False, "new": False, **kw})

    assert local.want_resume(last, args(new=True)) is False
    assert local.want_resume(last, args(resume=True)) is True
    assert local.want_resume(None, args(resume=True)) is False
    assert "no unfinished game" in capsys.readouterr().out
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert local.want_resume(last, args()) is True  # no terminal: nobody to ask, resume


@pytest.mark.parametrize(
    "typed, resumes", [("x\ny\n", True), ("x\n\n", True), ("maybe\nno\n", False), ("x\n", True)]
)
def test_a_stray_answer_to_the_resume_question_is_asked_again(
    tmp_path, monkeypatch, capsys, typed, resumes
):
    """One mistyped key started a new room, and the unfinished game was never offered again
    (a newcomer's first make play after Ctrl-C). The last case: the input ends, so it resumes."""
    last = last_game(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    args = argparse.Namespace(resume=False, new=False)
    assert local.want_resume(last, args) is resumes
    assert "Answer y to resume it (or Enter), or n to start a new game." in capsys.readouterr().out


def test_a_second_make_play_with_the_same_state_directory_is_refused(tmp_path):
    """Found by a newcomer: two at once each said "run make play again" of its game, and the
    state directory remembers one, so the first was never offered again. The second is told,
    before it starts anything; once the first has ended, the directory is free."""
    state = tmp_path / "state"
    first = local.hold_state_dir(StateDir(state))
    assert first is not None
    cmd = [sys.executable, "-m", "conjure.client.local", "--port", "0"]
    cmd += ["--replays", str(tmp_path / "replays"), "--name", "Tess"]
    env = {**os.environ, "CONJURE_STATE_DIR": str(state)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "another make play is running with the state directory" in done.stderr
    assert "Starting a Conjure server" not in done.stdout  # nothing was started
    assert local.hold_state_dir(StateDir(state)) is None  # (in one process too)
    os.close(first)
    again = local.hold_state_dir(StateDir(state))
    assert again is not None
    os.close(again)


def test_seats_follow_the_server_to_another_port(tmp_path):
    store, bots = StateDir(tmp_path / "state"), StateDir(tmp_path / "bots")
    seat(store)
    for i, name in enumerate(["Cleo", "Ada"], 1):
        bots.save_seat(
            bot_seat_server(OLD, name), "ABCD", seat=3 - i, player_id=f"b{i}", token=f"{i}" * 43,
            name=name,
        )  # fmt: skip
    bots.save_seat(
        bot_seat_server(OLD, "Gus"), "WXYZ", seat=1, player_id="x", token="x" * 43, name="Gus"
    )
    assert [b["name"] for b in saved_bots(bots, OLD, "abcd")] == ["Ada", "Cleo"]  # seat order
    entry = local.move_seat(store, OLD, NEW, "ABCD")
    assert entry is not None and store.load_seat(NEW, "ABCD")["token"] == entry["token"]
    move_bot_seats(bots, OLD, NEW, "ABCD")
    moved = saved_bots(bots, NEW, "ABCD")
    assert [(b["name"], b["player_id"]) for b in moved] == [("Ada", "b2"), ("Cleo", "b1")]
    assert saved_bots(bots, NEW, "WXYZ") == []  # another room's bots stay where they were
    assert store.load_seat(NEW, "ABCD")["name"] == "Tess"  # a person's seat is never a bot's


async def test_the_look_after_the_client_exits_sees_this_game(server):
    async with open_table(server.url, ["Tess", "Ada", "Basil"]) as table:
        view = await start_game(table)
        room, token = table[0].room, table[0].token
        assert room is not None
        seen = await local.look_at_room(server.url, room, token)
        assert seen is not None and seen.game_id == view.game_id and seen.phase != "over"
    lines = local.summary(seen, server.replays, seen.game_id)
    assert lines[0] == f"Game log: {server.replays / f'{view.game_id}.jsonl'}"
    assert "run make play again to resume it" in lines[-1]
    assert local.summary(None, server.replays, None) == []


def test_the_summary_fits_80_columns_and_keeps_the_replay_command_whole(tmp_path, monkeypatch):
    """The replay command wraps nowhere: on the line that says what it is for when both fit,
    else on a line of its own (with no $CONJURE_STATE_DIR to pass on)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONJURE_STATE_DIR", raising=False)
    replays = tmp_path / "replays"
    for program in ("conjure", ".venv/bin/conjure"):
        monkeypatch.setattr(
            "conjure.protocol.program.program_here", lambda program=program: program
        )
        lines = local.summary(None, replays, "ged969acd311b8870")
        command = f"{program} replay replays/ged969acd311b8870.jsonl"
        assert all(len(line) <= 80 for line in lines), lines
        assert any(line.strip().endswith(command) for line in lines), lines
    assert lines[1:] == ["  check every point with:", f"    {command}"]


def test_the_replay_command_names_a_state_directory_given_by_the_environment(tmp_path, monkeypatch):
    """Seen: with $CONJURE_STATE_DIR set for make play, the printed replay command, run in
    another shell, found no receipts; it now says where they are."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("conjure.protocol.program.program_here", lambda: "conjure")
    monkeypatch.setenv("CONJURE_STATE_DIR", "my state")
    lines = local.summary(None, tmp_path / "replays", "ged969acd311b8870")
    assert any(
        line.strip().endswith("replay replays/ged969acd311b8870.jsonl --state-dir 'my state'")
        for line in lines
    ), lines
    monkeypatch.delenv("CONJURE_STATE_DIR")
    assert not any("--state-dir" in line for line in local.summary(None, tmp_path, "g1"))


async def test_the_look_uses_the_seat_when_spectators_are_not_allowed(server):
    settings = m.RoomSettings(spectators=False)
    async with open_table(server.url, ["Tess", "Ada", "Basil"], settings) as table:
        room, token = table[0].room, table[0].token
        assert room is not None and token is not None
    # Everyone left (the lobby keeps their seats a while): the token still shows the room.
    assert await local.look_at_room(server.url, room, None) is None
    seen = await local.look_at_room(server.url, room, token)
    assert seen is not None and seen.room == room and seen.game_id is None
    assert local.summary(seen, server.replays, None) == ["No game was started."]


async def test_the_look_at_a_server_that_is_gone_is_nothing():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        url = f"ws://127.0.0.1:{s.getsockname()[1]}"
    with trio.fail_after(10):
        assert await local.look_at_room(url, "ABCD", None) is None


def test_make_play_asks_the_name_once_and_remembers_it(tmp_path, monkeypatch, capsys):
    """A newcomer played a whole game as "root", the machine's login: the first run asks, Enter
    keeps the login name, a name the server would refuse is asked again, and the answer is
    remembered; --name and $CONJURE_NAME still win, and without a terminal nothing is asked."""
    monkeypatch.delenv("CONJURE_NAME", raising=False)
    monkeypatch.setattr(local.getpass, "getuser", lambda: "root")
    store = StateDir(tmp_path / "state")
    asked: list[str] = []

    def answers(*typed: str):
        queue = list(typed)

        def ask(prompt: str) -> str:
            asked.append(prompt)
            return queue.pop(0)

        return ask

    assert local.player_name(None, store, None) == "root"  # no terminal: not asked
    assert store.saved_name() is None and not asked
    assert local.player_name(None, store, answers("\u0001\u0002", "  Ann  ")) == "Ann"
    assert asked == ["Your name at the table (Enter: root): "] * 2
    assert "Try another" in capsys.readouterr().out
    assert store.saved_name() == "Ann"
    assert local.player_name(None, store, answers()) == "Ann"  # remembered: not asked again
    assert len(asked) == 2
    assert local.player_name("Bea", store, answers()) == "Bea"
    monkeypatch.setenv("CONJURE_NAME", "Cy")
    assert local.player_name(None, store, answers()) == "Cy"
    monkeypatch.delenv("CONJURE_NAME")
    fresh = StateDir(tmp_path / "other")
    assert local.player_name(None, fresh, answers("")) == "root"  # Enter: the login name
    assert fresh.saved_name() == "root"

    def closed(prompt: str) -> str:
        raise EOFError

    assert local.player_name(None, StateDir(tmp_path / "third"), closed) == "root"


def test_a_long_state_directory_continues_the_replay_command_on_a_line_of_its_own(
    tmp_path, monkeypatch
):
    """Seen at 80x24: '--state-dir /tmp/st' and 'new' on two lines, the path cut in two."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("conjure.protocol.program.program_here", lambda: ".venv/bin/conjure")
    monkeypatch.setenv("CONJURE_STATE_DIR", "/tmp/a-state-directory-of-some-length")
    lines = local.summary(None, tmp_path / "replays", "ged969acd311b8870")
    assert all(len(line) <= 80 for line in lines), lines
    assert lines[2:4] == [
        "    .venv/bin/conjure replay replays/ged969acd311b8870.jsonl \\",
        "      --state-dir /tmp/a-state-directory-of-some-length",
    ]


def test_leaving_a_finished_game_says_who_won_and_where_the_receipt_is(tmp_path, monkeypatch):
    """A newcomer left make play's finished game: the summary named the log, but not the winner
    nor the receipt that ``conjure play`` names (README: a player leaving a finished game is told
    where their client kept it)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONJURE_STATE_DIR", raising=False)
    names = ["Émilie🙂", "Cleo", "Basil", "Ada"]
    scores = [2, 7, 8, 10]
    players = [
        m.PlayerView(seat=i, id=f"p{i}", name=n, colour="red", score=s)
        for i, (n, s) in enumerate(zip(names, scores, strict=True))
    ]
    over = m.View(room="ABCD", game_id="g1", phase="over", players=players, winners=[3])
    receipt = tmp_path / "receipts" / "g1.json"
    receipt.parent.mkdir()
    receipt.write_text("{}")
    lines = local.summary(over, tmp_path / "replays", "g1", receipt)
    assert lines[0] == "Game over: Ada wins. Totals: Ada 10, Basil 8, Cleo 7, Émilie🙂 2."
    assert lines[-2:] == ["  Your receipt, for an audit of that log:", f"    {receipt}"]
    assert "unfinished" not in " ".join(lines)
    shared = msgspec.structs.replace(
        over,
        winners=[2, 3],
        players=[*players[:2], msgspec.structs.replace(players[2], score=10), players[3]],
    )
    assert local.summary(shared, tmp_path, "g1")[0].startswith(
        "Game over: Basil and Ada share the win."
    )
    gone = msgspec.structs.replace(over, winners=[], abandoned=True)
    said = " ".join(local.summary(gone, tmp_path, "g1"))
    assert said.startswith("The game was abandoned, with no winner: Ada 10, Basil 8")
    many = msgspec.structs.replace(
        over, players=[msgspec.structs.replace(p, name=p.name * 5) for p in players[1:]]
    )
    assert all(len(line) <= 80 for line in local.summary(many, tmp_path, "g1"))


def test_make_plays_resume_question_is_wrapped_in_cells():
    """Found by review: make play's resume question was wrapped in characters, so names of wide
    characters put its lines past 80 cells, which the terminal broke mid-word."""
    from conjure.client.local import LastGame, fit_lines
    from conjure.protocol.cells import cells

    others = ["山田太郎さん", "佐藤花子さん", "鈴木一郎さん", "高橋美咲さん", "田中健太さん"]
    last = LastGame(
        url="ws://127.0.0.1:8765",
        room="ABCD",
        name="Ann",
        game_id="g1",
        replays="/r",
        round=2,
        rounds=6,
        players=["Ann", *others],
    )
    lines = fit_lines(last.question())
    assert all(cells(line) <= 80 for line in lines), [(cells(x), x) for x in lines]


def test_a_game_not_resumed_is_said_to_stay_unfinished_with_its_log(tmp_path, monkeypatch, capsys):
    """Found by review: n started a new room and said nothing of the game left behind."""
    last = last_game(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    assert local.want_resume(last, argparse.Namespace(resume=False, new=False)) is False
    said = " ".join(capsys.readouterr().out.split())
    assert "The one in room ABCD stays unfinished" in said
    assert f"its log is {last.log.relative_to(tmp_path)}" in said
