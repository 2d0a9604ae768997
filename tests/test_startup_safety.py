"""Start-up never harms a file, and a full disk is survivable on the log's side.

Real files in a real ``replays/`` and a real server (``start_server``): what is not a game log is
skipped byte for byte, without being opened if it is not a regular file; a hash-valid log that the
rules do not allow is refused (and ``conjure replay`` does not verify it); a torn tail is still
recovered. The full-disk tests fill a real 64 KiB tmpfs (they need root to mount it).
"""

from __future__ import annotations

import errno
import fcntl
import mmap
import os
import shutil
import socket
import subprocess
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conjure.client.cli import main
from conjure.protocol.deck import Card
from conjure.protocol.events import RULES_VERSION, Limits, SpellWritten
from conjure.protocol.words import MAX_WORD_LENGTH
from conjure.server.app import banner
from conjure.server.logformat import (
    GENESIS,
    MAX_LINE_BYTES,
    LogError,
    build_record,
    encode_record,
    last_batch,
    read_log,
)
from conjure.server.logstore import (
    LogFailure,
    open_for_append,
    open_writer,
    reopen_after_failure,
    reopen_writer,
)
from conjure.server.recovery import NOT_A_LOG, load_replays
from conjure.server.rules.legality import first_illegal
from tests.auditlogs import RecordingTable, as_batches, sample_game, write_log
from tests.rulestable import DEFAULT_CARDS
from tests.test_redecide import random_game
from tests.wsclient import open_client, open_table, start_game

#: No clocks: a resumed test game waits for its players instead of timing out and writing.
NO_CLOCK = Limits(choose=None, spell=None, mark=None, commit=None, reveal=None, review=None)


def five_seat_game(game_id: str = "game-1") -> RecordingTable:
    """Round 1 of a 5-seat game: the card is chosen, seats 0 and 1 wrote spell words."""
    t = RecordingTable(5, cards=DEFAULT_CARDS[:5], limits=NO_CLOCK, game_id=game_id)
    t.choose()
    t.spell("lava", "mountain")
    return t


def write_game(path: Path, edit: Any = None) -> bytes:
    """The 5-seat game as a hash-valid log, one batch per decision, as the server writes it
    (``edit`` may change an event's data first: a lying server's log still chains). Its game
    id is the file's name, as the server names every log."""
    lines = []
    prev, seq = GENESIS, 0
    game_id = path.name.removesuffix(".jsonl")
    for batch in as_batches(five_seat_game(game_id).decisions, edit):
        ts, items = batch
        for k, (type_, data) in enumerate(items):
            cmd = None if k else batch.command
            record = build_record(prev, seq, ts, type_, data, batch=len(items) - 1 - k, cmd=cmd)
            lines.append(encode_record(record))
            prev, seq = record.hash, seq + 1
    path.write_bytes(b"".join(lines))
    return path.read_bytes()


def line_of(path: Path, type_: str, **data: Any) -> int:
    """1-based line of the first record of ``type_`` whose data has these values."""
    for r in read_log(path).records:
        if r.type == type_ and all(r.data.get(k) == v for k, v in data.items()):
            return r.seq + 1
    raise AssertionError(f"no {type_} {data} in {path}")


def lines_about(said: list[str], path: Path) -> list[str]:
    return [line for line in said if f" {path}:" in line]


@pytest.fixture
def replays(tmp_path: Path) -> Path:
    path = tmp_path / "replays"  # where ``start_server`` looks by default
    path.mkdir()
    return path


async def start(start_server: Any) -> Any:
    with trio.fail_after(30):  # a hang guard, not a timing: start-up must finish at all
        return await start_server()


# ---------------------------------------------------------------------------- not game logs


async def test_junk_jsonl_is_skipped_byte_for_byte(start_server, replays, said):
    junk = replays / "junk.jsonl"
    content = os.urandom(4096)
    junk.write_bytes(content)
    # Another program holding a lock on it is not disturbed: start-up takes no lock on it.
    with junk.open("rb") as other:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        server = await start(start_server)
    assert junk.read_bytes() == content
    assert sorted(p.name for p in replays.iterdir()) == ["junk.jsonl"]  # no .torn
    (line,) = lines_about(said, junk)
    assert line.startswith(f"skipped {junk}: {NOT_A_LOG}") and "left as it is" in line
    assert server.report.skipped == [line] and not server.report.refused
    (counts,) = [x for x in banner(server) if "unfinished game(s) resumed" in x]
    assert counts.endswith("0 finished, 0 refused, 1 skipped (not game logs)")


async def test_other_names_and_records_are_not_game_logs(start_server, replays, said):
    """Only ``*.jsonl`` are candidates; a sound record that is not game_started is no header."""
    notes = replays / "notes.txt"
    notes.write_bytes(b"\xff" * 100)
    (replays / "g.jsonl.torn").write_bytes(b"{half")
    other = replays / "other.jsonl"
    hello = encode_record(build_record(GENESIS, 0, 1.0, "hello", {"x": 1}))
    other.write_bytes(hello + b"\x00" * 50)  # sound first line, then a torn-looking tail
    bad_start = replays / "bad-start.jsonl"
    bad_start.write_bytes(encode_record(build_record(GENESIS, 0, 1.0, "game_started", {"x": 1})))
    await start(start_server)
    assert other.read_bytes() == hello + b"\x00" * 50
    assert notes.read_bytes() == b"\xff" * 100
    assert not (replays / "other.jsonl.torn").exists()
    assert lines_about(said, notes) == [] and lines_about(said, replays / "g.jsonl.torn") == []
    (line,) = lines_about(said, other)
    assert line.startswith(f"skipped {other}: {NOT_A_LOG} (it is a 'hello' record)")
    (line,) = lines_about(said, bad_start)
    assert line.startswith(f"skipped {bad_start}: {NOT_A_LOG} (its data is not a game start")


async def test_a_150_mb_file_is_skipped_without_being_read(start_server, replays, said):
    big = replays / "big.jsonl"
    forged = build_record(GENESIS, 0, 1.0, "game_started", {"game_id": "g"})
    with big.open("wb") as f:
        f.write(encode_record(forged).replace(b'"g"', b'"h"'))  # looks right, hash wrong
        f.truncate(150 * 2**20)
    with big.open("rb") as f:
        first_mb = f.read(2**20)
    await start(start_server)
    (line,) = lines_about(said, big)
    assert line.startswith(f"skipped {big}: {NOT_A_LOG} (hash mismatch)")
    assert big.stat().st_size == 150 * 2**20
    with big.open("rb") as f:
        assert f.read(2**20) == first_mb
    assert list(replays.iterdir()) == [big]
    # Memory evidence: a direct call reads at most one line's worth of it.
    tracemalloc.start()
    try:
        report = load_replays(replays, lambda _: None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(report.skipped) == 1
    assert peak < 4 * MAX_LINE_BYTES


def test_a_huge_torn_tail_is_moved_aside_in_bounded_memory(replays):
    """A real log followed by 40 MB of zeros: a torn tail, read and copied in chunks."""
    log = replays / "game-1.jsonl"
    good = write_game(log)
    with log.open("r+b") as f:
        f.truncate(len(good) + 40 * 2**20)
    said: list[str] = []
    tracemalloc.start()
    try:
        report = load_replays(replays, said.append)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    for r in report.resumed:
        r.writer.close()
    assert len(report.resumed) == 1 and len(report.recovered) == 1
    assert "line longer than" in report.recovered[0]
    assert log.read_bytes() == good
    torn = log.with_name(log.name + ".torn")
    assert torn.stat().st_size == 40 * 2**20
    with torn.open("rb") as f:
        assert f.read(4096) == b"\x00" * 4096
    assert peak < 8 * MAX_LINE_BYTES


async def test_a_log_a_text_tool_converted_is_skipped_and_said_so(start_server, replays, said):
    """An unfinished game's log whose line ends a Windows editor made CRLF, or given a
    byte-order mark, was skipped as "not a game log" (found by review): it is one, changed."""
    crlf, bom = replays / "g-crlf.jsonl", replays / "g-bom.jsonl"
    crlf.write_bytes(write_game(crlf).replace(b"\n", b"\r\n"))
    bom.write_bytes(b"\xef\xbb\xbf" + write_game(bom))
    before = {p: p.read_bytes() for p in (crlf, bom)}
    server = await start(start_server)
    assert not server.report.resumed
    for path, what in ((crlf, "its lines end in CRLF"), (bom, "it starts with a byte-order mark")):
        assert path.read_bytes() == before[path]
        (line,) = lines_about(said, path)
        assert line.startswith(f"skipped {path}: a game log that a text tool changed: {what}")
        assert "undone, it loads" in line
    # ... and undone, it does
    crlf.write_bytes(before[crlf].replace(b"\r\n", b"\n"))
    await server.aclose()
    assert len((await start(start_server)).report.resumed) == 1


async def test_fifo_socket_directory_and_links_are_skipped_unopened(start_server, replays, said):
    fifo = replays / "x.jsonl"
    os.mkfifo(fifo)
    folder = replays / "d.jsonl"
    folder.mkdir()
    (folder / "inside.txt").write_text("kept")
    sock_path = replays / "s.jsonl"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(sock_path))
    dangling = replays / "dangling.jsonl"
    dangling.symlink_to(replays / "nowhere")
    to_fifo = replays / "to-fifo.jsonl"
    to_fifo.symlink_to(fifo)
    try:
        server = await start(start_server)  # a FIFO opened for reading would hang here
    finally:
        sock.close()
    reasons = {
        fifo: "a FIFO (named pipe), not a regular file, so it was not opened",
        folder: "a directory, not a regular file, so it was not opened",
        sock_path: "a socket, not a regular file, so it was not opened",
        dangling: "a symbolic link to nothing, so it was not opened",
        to_fifo: "a symbolic link to a FIFO (named pipe), so it was not opened",
    }
    for path, reason in reasons.items():
        (line,) = lines_about(said, path)
        assert line.startswith(f"skipped {path}: not a game log: {reason}"), line
    assert len(server.report.skipped) == len(reasons)
    assert fifo.is_fifo() and to_fifo.is_symlink() and dangling.is_symlink()
    assert (folder / "inside.txt").read_text() == "kept"
    assert not [p for p in replays.iterdir() if ".torn" in p.name]


async def test_a_link_to_an_unfinished_log_is_read_but_never_written(
    start_server, tmp_path, replays, said
):
    """A link's target may be anyone's file outside replays/: start-up cut one back and the
    resumed game wrote to it (found by review). It is refused, its target byte for byte."""
    outside = tmp_path / "outside"
    outside.mkdir()
    real = outside / "game-1.jsonl"
    write_game(real)
    with real.open("ab") as f:
        f.write(b'{"batch":0,"data":{"round":1,"seat":2,"wo')  # a torn tail to "recover"
    before = real.read_bytes()
    (replays / "game-1.jsonl").symlink_to(real)
    server = await start(start_server)
    assert "ABCD" not in server.rooms
    (line,) = lines_about(said, replays / "game-1.jsonl")
    assert "it is a symbolic link, and start-up writes through none" in line
    assert real.read_bytes() == before and not list(replays.glob("*.torn"))


async def test_a_log_not_named_for_its_game_is_not_resumed(start_server, replays, said):
    log = replays / "game-1.jsonl"
    write_game(log)
    planted = replays / "a.jsonl"
    planted.write_bytes(log.read_bytes())
    log.unlink()
    server = await start(start_server)
    assert "ABCD" not in server.rooms
    (line,) = lines_about(said, planted)
    assert "its name is not its game's (game-1.jsonl)" in line


async def test_a_huge_sparse_tail_is_refused_unread(start_server, replays, said, monkeypatch):
    """A planted file of a header and gigabytes of hole (taking no disk) held start-up for
    82 s at 20 GB: more bytes after the last whole batch than one append writes are no crash's
    torn tail, so they are refused without being read or hashed."""
    from conjure.server import logformat

    log = replays / "game-1.jsonl"
    good = write_game(log)
    with log.open("r+b") as f:
        f.truncate(len(good) + logformat.MAX_APPEND_BYTES * 64)  # 4 GiB, a hole
    scanned: list[int] = []
    monkeypatch.setattr(logformat, "_scan_tail", lambda *a: scanned.append(1) or (False, 0, ""))
    server = await start(start_server)
    assert "ABCD" not in server.rooms and not scanned
    (line,) = lines_about(said, log)
    assert "more than one append writes, so no crash left them" in line
    assert log.stat().st_size == len(good) + logformat.MAX_APPEND_BYTES * 64


# ---------------------------------------------------------------------------- refused logs


async def test_an_unknown_rules_version_is_refused_untouched(start_server, replays, said):
    log = replays / "game-1.jsonl"

    def edit(type_: str, data: dict[str, Any]) -> dict[str, Any]:
        return {**data, "rules_version": 99} if type_ == "game_started" else data

    before = write_game(log, edit)
    with log.open("ab") as f:
        f.write(b'{"batch":0,"da')  # a torn tail is not recovered in a refused log either
    before += b'{"batch":0,"da'
    server = await start(start_server)
    (line,) = lines_about(said, log)
    assert line.startswith(f"refused {log}: it names rules version 99, which this server")
    assert "the file is left as it is" in line
    assert log.read_bytes() == before and not log.with_name(log.name + ".torn").exists()
    assert "ABCD" not in server.rooms and server.report.refused == [line]
    # Its room's code is not given to a new room: the next start would find two unfinished
    # logs of room ABCD and resume neither (found by review).
    assert server.held_rooms == {"ABCD"}
    from conjure.server import service

    picks = iter(["ABCD", "WXYZ"])
    original = service.new_room_code
    seen: list[str] = []

    def code(taken: Any) -> str:
        while (c := next(picks)) in taken:
            seen.append(c)
        return c

    service.new_room_code = code
    try:
        async with open_client(server.url, "Ann") as ann:
            assert await ann.create(None) and ann.room == "WXYZ" and seen == ["ABCD"]
    finally:
        service.new_room_code = original


async def test_a_room_that_fails_with_its_game_unfinished_keeps_its_code(start_server, replays):
    """At run time too: a room closed on a fault leaves its log unfinished."""
    server = await start(start_server)
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        await start_game(table)
        room = server.rooms[table[0].room]
        server._room_closed(room)  # as the room's end does, its game unfinished
    assert server.held_rooms == {room.code}


@pytest.mark.parametrize(
    ("edit", "found", "why"),
    [
        pytest.param(
            lambda t, d: {**d, "seat": 7} if t == "spell_written" and d["seat"] == 1 else d,
            {"seat": 7},
            "spell_written: seat 7 is not a seat of this table (seats 0 to 4)",
            id="seat-7-of-5",
        ),
        pytest.param(
            lambda t, d: (
                {**d, "word": "a" * (MAX_WORD_LENGTH + 1)}
                if t == "spell_written" and d["seat"] == 0
                else d
            ),
            {"seat": 0},
            f"at most {MAX_WORD_LENGTH} characters",
            id="word-too-long",
        ),
        pytest.param(
            lambda t, d: {**d, "seat": 3} if t == "spell_written" and d["seat"] == 1 else d,
            {"seat": 3},
            "by seat 3, but it is seat 1's turn",
            id="out-of-turn",
        ),
    ],
)
async def test_an_illegal_hash_valid_log_is_refused_and_not_verified(
    start_server, replays, said, capsys, monkeypatch, tmp_path, edit, found, why
):
    log = replays / "game-1.jsonl"
    before = write_game(log, edit)
    read_log(log)  # the chain itself is sound
    n = line_of(log, "spell_written", **found)
    server = await start(start_server)
    (line,) = lines_about(said, log)
    assert line.startswith(
        f"refused {log}: line {n} is not legal under rules version {RULES_VERSION}: "
    )
    assert why in line
    assert log.read_bytes() == before and "ABCD" not in server.rooms
    assert len(server.report.refused) == 1
    # The audit does not verify it either, and names the line.
    monkeypatch.setenv("CONJURE_STATE_DIR", str(tmp_path / "nostate"))
    capsys.readouterr()
    assert main(["replay", str(log), "--no-state-dir"]) == 1
    out = capsys.readouterr().out
    assert f"FAIL  line {n} (seq {n - 1}) is not legal under rules version {RULES_VERSION}: " in out
    assert "FAIL  not what the rules decide at line" in out  # and the re-decided moves differ
    assert why in out and "NOT VERIFIED" in out


# ---------------------------------------------------------------------------- finished games


def test_a_finished_log_is_read_at_its_ends_alone(replays, capsys, monkeypatch, tmp_path):
    """Nothing of a finished game is loaded, so start-up reads its first and last lines and
    no more: damage in between is the audit's to find, not start-up's (which once read and
    decided again every finished game before it listened)."""
    log = replays / "game-1.jsonl"
    write_log(log, sample_game().decisions)
    whole = log.read_bytes()
    lines = whole.split(b"\n")
    assert b'"wing"' in lines[5]
    lines[5] = lines[5].replace(b'"wing"', b'"wind"')  # edited, its hash not made again
    log.write_bytes(b"\n".join(lines))
    said: list[str] = []
    report = load_replays(replays, said.append)
    assert (report.finished, report.refused, report.resumed, said) == (1, [], [], [])
    assert report.held_rooms == set()  # a finished game's room code is free again
    assert log.read_bytes() == b"\n".join(lines)
    # Read whole, as conjure replay reads it, the edit is found.
    monkeypatch.setenv("CONJURE_STATE_DIR", str(tmp_path / "nostate"))
    capsys.readouterr()
    assert main(["replay", str(log), "--no-state-dir"]) == 1
    assert "hash chain broken at line 6" in capsys.readouterr().out


def test_a_finished_log_with_bytes_after_its_end_is_read_whole(replays):
    """Only a final record that ends the file ends the reading: bytes after it (a torn
    write, whatever made it) are read and moved aside as any torn tail."""
    log = replays / "game-1.jsonl"
    write_log(log, sample_game().decisions)
    good = log.read_bytes()
    log.write_bytes(good + b'{"batch":0,"data":{"rou')
    said: list[str] = []
    report = load_replays(replays, said.append)
    assert (report.finished, report.refused, report.resumed) == (1, [], [])
    (line,) = said
    assert line.startswith(f"recovered {log}: the last write was cut short")
    assert log.read_bytes() == good
    assert log.with_name(log.name + ".torn").read_bytes() == b'{"batch":0,"data":{"rou'


def test_a_final_batch_with_a_line_lost_inside_is_no_finished_game(replays):
    """A crash that kept an append's end but not its middle (its blocks written out of order)
    leaves a game's end that was never acknowledged: read the long way, not counted finished
    from its last line (found by review)."""
    log = replays / "game-1.jsonl"
    records = write_log(log, sample_game().decisions)
    lines = log.read_bytes().split(b"\n")
    k = len(records) - 2  # a line of the final batch (a round scored, then the end)
    assert records[k].batch == 1
    lines[k] = b"\0" * len(lines[k])
    log.write_bytes(b"\n".join(lines))
    said: list[str] = []
    report = load_replays(replays, said.append)
    assert report.finished == 0 and len(report.refused) == 1, said
    assert f"line {k + 1} is damaged or was edited" in said[0]


def test_an_unfinished_log_is_still_read_and_decided_whole(replays):
    """An unfinished game's log is read whole, however its last line reads: an edit in it
    is refused, as before."""
    log = replays / "game-1.jsonl"
    write_game(log)
    lines = log.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b'"round":1', b'"round":2', 1)
    log.write_bytes(b"\n".join(lines))
    said: list[str] = []
    report = load_replays(replays, said.append)
    assert report.finished == 0 and report.resumed == [] and len(report.refused) == 1
    assert "line 4 is damaged or was edited" in said[0]


def test_last_batch_reads_a_whole_sound_chained_last_batch_and_nothing_else(tmp_path, monkeypatch):
    log = tmp_path / "game-1.jsonl"
    records = write_log(log, sample_game().decisions)
    whole = log.read_bytes()
    lines = whole.split(b"\n")[:-1]
    start = max(i for i, r in enumerate(records[:-1]) if r.batch == 0) + 1
    final = records[start:]
    assert len(final) > 1 and final[-1].type == "game_ended"  # a round scored, then the end

    def last(data: bytes) -> Any:
        log.write_bytes(data)
        fd = os.open(log, os.O_RDONLY)
        try:
            return last_batch(fd)
        finally:
            os.close(fd)

    assert last(whole) == final
    assert last(whole[:-1]) is None  # no newline: a torn write
    assert last(whole + b"x\n") is None  # not a record
    assert last(whole[:-2] + b" \n") is None  # not canonical
    assert last(b"") is None and last(b"\n") is None
    # A line of the batch lost (an append whose middle never reached the disk), or one before
    # it that does not end a batch: not a whole batch.
    gone = [*lines[:start], *lines[start + 1 :]]
    assert last(b"\n".join(gone) + b"\n") is None
    zeroed = [*lines[: start + 1], b"\0" * len(lines[start + 1]), *lines[start + 2 :]]
    assert last(b"\n".join(zeroed) + b"\n") is None
    cut = [*lines[: start - 1], *lines[start:]]  # the line before the batch is another's
    assert last(b"\n".join(cut) + b"\n") is None
    first = next(i for i, r in enumerate(records) if r.batch == 0) + 1
    assert last(b"\n".join(lines[:first]) + b"\n") == records[:first]  # it starts the file
    assert last(lines[0] + b"\n") is None  # a first line whose batch goes on
    # A batch longer than what is read from the end is not taken for one.
    monkeypatch.setattr("conjure.server.logformat.LAST_BATCH_READ", 300)
    assert last(whole) is None


async def test_a_crash_in_the_first_append_is_refused_untouched(start_server, replays, said):
    """A sound header inside an incomplete first batch: no game ever started; nothing is cut."""
    log = replays / "game-1.jsonl"
    whole = write_game(log)
    first_batch = whole.split(b"\n")[:2]  # 2 of the 3 records of the start decision
    log.write_bytes(b"\n".join(first_batch) + b"\n")
    before = log.read_bytes()
    await start(start_server)
    (line,) = lines_about(said, log)
    assert line.startswith(f"refused {log}: the log holds no complete record (")
    assert log.read_bytes() == before and not log.with_name(log.name + ".torn").exists()


async def test_a_valid_log_with_a_torn_tail_is_still_recovered(start_server, replays, said):
    log = replays / "game-1.jsonl"
    good = write_game(log)
    with log.open("ab") as f:
        f.write(b'{"batch":0,"data":{"round":1,"seat":2,"wo')
    server = await start(start_server)
    (line,) = lines_about(said, log)
    assert line.startswith(f"recovered {log}: the last write was cut short")
    after = log.read_bytes()
    assert after.startswith(good)  # every good record kept; the restart may add its own facts
    extra = read_log(log).records[len(good.splitlines()) :]
    assert {r.type for r in extra} <= {"presence_changed"}
    torn = log.with_name(log.name + ".torn")
    assert torn.read_bytes() == b'{"batch":0,"data":{"round":1,"seat":2,"wo'
    assert "ABCD" in server.rooms
    assert server.rooms["ABCD"].game.round.spells == {0: "lava", 1: "mountain"}
    (counts,) = [x for x in banner(server) if "unfinished game(s) resumed" in x]
    assert counts.endswith("0 refused, 0 skipped (not game logs)")


async def test_two_unfinished_games_of_one_room_code_are_both_refused(start_server, replays, said):
    """A room has one game at a time, so no server wrote both; the first in name order won,
    which let a planted log (named "a…") take a real game's room (found by review)."""
    write_game(replays / "game-1.jsonl")
    write_game(replays / "game-2.jsonl")  # the same room code: which one is room ABCD?
    server = await start(start_server)
    assert list(server.rooms) == []
    assert len(server.report.resumed) == 0 and len(server.report.refused) == 2
    (line,) = lines_about(said, replays / "game-2.jsonl")
    assert "room ABCD is held by another unfinished game too (game-1.jsonl)" in line
    (line,) = lines_about(said, replays / "game-1.jsonl")
    assert "room ABCD is held by another unfinished game too (game-2.jsonl)" in line
    (counts,) = [x for x in banner(server) if "unfinished game(s) resumed" in x]
    assert "0 unfinished game(s) resumed, 0 finished, 2 refused" in counts


async def test_a_log_refused_for_its_room_code_keeps_its_torn_tail_in_place(
    start_server, replays, said
):
    """Start-up moved the second log's tail aside and cut the file, then refused the log for
    its room code: a refused log is left as it is (docs/LOG.md), either of the two."""
    first = replays / "game-1.jsonl"
    second = replays / "game-2.jsonl"
    for log in (first, second):
        write_game(log)
        with log.open("ab") as f:
            f.write(b"NOTE: disputed\nmore\n")  # an organizer's notes, say
    before = [first.read_bytes(), second.read_bytes()]
    server = await start(start_server)
    assert list(server.rooms) == []
    for log in (first, second):
        (line,) = lines_about(said, log)
        assert "room ABCD is held by another unfinished game too" in line
        assert "left as it is" in line
    assert [first.read_bytes(), second.read_bytes()] == before
    assert not list(replays.glob("*.torn"))


# ---------------------------------------------------------------------------- legality, pure


def test_legality_names_the_first_illegal_event() -> None:
    events = five_seat_game().events
    assert first_illegal(events) is None
    spell = next(i for i, e in enumerate(events) if isinstance(e, SpellWritten))
    forged = [*events[:spell], SpellWritten(round=1, seat=0, word="lava"), *events[spell:]]
    assert first_illegal(forged[: spell + 1]) is None
    i, why = first_illegal(forged) or (None, "")
    assert i == spell + 1 and why.startswith("spell_written: ")
    assert first_illegal(events[1:]) == (
        0,
        "round_started: the log does not start with game_started",
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(3, 8), variant=st.sampled_from(["standard", "dark-magic"]))
def test_whatever_the_engine_decides_is_legal(data: st.DataObject, n: int, variant: str) -> None:
    """No false alarm: every sequence the engine accepts passes, so no real game is refused."""
    log = [e for _, events, _ in random_game(data, n, variant) for e in events]
    assert first_illegal(log) is None


# ---------------------------------------------------------------------------- a full disk


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 64 KiB tmpfs to fill; skipped where mounting is not permitted."""
    mount = shutil.which("mount")
    if os.geteuid() != 0 or mount is None:
        pytest.skip("filling a real filesystem needs root to mount a 64 KiB tmpfs (mount -t tmpfs)")
    where = tmp_path / "small"
    where.mkdir()
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"mounting a 64 KiB tmpfs is not permitted here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        umount = subprocess.run(["umount", str(where)], capture_output=True, check=False)
        if umount.returncode != 0:
            subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Write a file until the disk is full; returns it (unlink it to free the space)."""
    filler = disk / "filler"
    block = b"\xee" * mmap.PAGESIZE
    with filler.open("wb", buffering=0) as f:
        for _ in range(64 * 1024 // mmap.PAGESIZE + 2):
            try:
                f.write(block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                return filler
    raise AssertionError("the disk did not fill up")


async def test_full_disk_reopen_keeps_every_durable_record(small_disk: Path) -> None:
    log = small_disk / "g.jsonl"
    writer = await open_writer(log)
    acked = [await writer.append("small", {"i": i}, 1.0 + i) for i in range(3)]
    good = log.read_bytes()
    assert len(good) < mmap.PAGESIZE  # the log's page has room left: the next write is partial
    filler = fill(small_disk)
    with pytest.raises(LogFailure, match="write failed"):
        await writer.append("big", {"blob": "x" * (2 * mmap.PAGESIZE)}, 9.0)
    assert writer.broken and writer.last_seq == 2
    durable = writer.last_seq
    writer.close()
    written = log.read_bytes()
    assert written.startswith(good) and len(written) > len(good)  # part of the failed write
    assert read_log(log).records == acked  # ...which is no record: only a torn tail
    # Still full: saving the unacknowledged bytes fails, and nothing changes.
    with pytest.raises(OSError) as info:
        reopen_after_failure(log, durable)
    assert info.value.errno == errno.ENOSPC
    assert await trio.Path(log).read_bytes() == written
    assert sorted(p.name for p in await trio.Path(small_disk).iterdir()) == ["filler", "g.jsonl"]
    # Space again: the bytes go aside, the durable records stay, appends go on.
    filler.unlink()
    records, writer = await reopen_writer(log, durable)
    with writer:
        assert records == acked and log.read_bytes() == good
        assert (small_disk / "g.jsonl.torn").read_bytes() == written[len(good) :]
        more = await writer.append_many([("big", {"blob": "y" * 100}), ("small", {})], 10.0)
    result = read_log(log)
    assert result.records == [*acked, *more] and not result.torn
    assert more[0].prev == acked[-1].hash


async def test_full_disk_first_record_leaves_no_log(small_disk: Path) -> None:
    log = small_disk / "new.jsonl"
    writer = open_for_append(log)
    filler = fill(small_disk)
    with pytest.raises(LogFailure):
        await writer.append_many([("game_started", {"blob": "x" * mmap.PAGESIZE})], 1.0)
    writer.discard()
    assert not log.exists()
    filler.unlink()


async def test_reopen_moves_whole_unacknowledged_records_aside(tmp_path: Path) -> None:
    """A batch that was written but whose fsync failed is as unacknowledged as a partial one."""
    log = tmp_path / "g.jsonl"
    with open_for_append(log) as writer:
        kept = [await writer.append("a", {"i": i}, 1.0) for i in range(2)]
        lost = await writer.append_many([("b", {}), ("c", {})], 2.0)
    blob = log.read_bytes()
    cut = len(b"".join(encode_record(r) for r in kept))
    records, writer = reopen_after_failure(log, kept[-1].seq)
    with writer:
        assert records == kept and log.read_bytes() == blob[:cut]
        assert (tmp_path / "g.jsonl.torn").read_bytes() == blob[cut:]
        again = await writer.append_many([("b", {}), ("c", {})], 2.0)
    assert [r.hash for r in again] == [r.hash for r in lost]  # the same chain, written again
    # A durable record the file does not hold, or a seq inside a batch, is never "repaired".
    with pytest.raises(LogError, match="durable record seq 4 is not in the file"):
        reopen_after_failure(log, 4)
    with pytest.raises(LogError, match="does not end its batch"):
        reopen_after_failure(log, 2)
    assert read_log(log).records == [*kept, *again]
    # Only a log with nothing durable may be discarded.
    records, writer = reopen_after_failure(log, 3)
    with pytest.raises(LogError, match="never deleted"):
        writer.discard()
    writer.close()
    assert log.read_bytes() == blob


async def test_a_record_longer_than_a_line_is_refused_by_the_writer(tmp_path: Path) -> None:
    with open_for_append(tmp_path / "g.jsonl") as writer:
        with pytest.raises(ValueError, match="a log line holds at most"):
            await writer.append("big", {"blob": "x" * MAX_LINE_BYTES}, 1.0)
        assert writer.last_seq == -1 and not writer.broken
    assert (tmp_path / "g.jsonl").read_bytes() == b""


# ---------------------------------------------------------------------------- a full disk, live


async def test_a_full_disk_holds_the_game_and_it_goes_on_when_space_is_back(
    start_server, small_disk: Path
) -> None:
    """Appends fail: nothing unacknowledged is kept, everyone is told, the game waits; once the
    disk has room again the room reopens its log by itself and play goes on, no restart."""
    from conjure.protocol import messages as m
    from tests.clienthelpers import wait_until
    from tests.wsclient import open_table

    # (no floor of free space for a new game: this disk is small on purpose)
    server = await start_server(replays=small_disk / "replays", log_retry=0.2, min_free_mb=0)
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        ann = table[0]
        await ann.send(m.StartGame())
        await ann.wait_view(lambda v: v.round == 1)
        filler = fill(small_disk)
        refused = None
        for i in range(60):  # pause and resume (both logged) until the log's last page is full
            await ann.send(m.PauseGame() if i % 2 == 0 else m.ResumeGame())
            msg = await ann.recv_until(lambda x: isinstance(x, m.Update | m.Error))
            if isinstance(msg, m.Error):
                refused = msg
                break
        assert refused is not None and refused.code == "log_unavailable", refused
        receipt = ann.receipt
        assert receipt is not None
        for c in table:
            await wait_until(
                lambda c=c: any(
                    isinstance(x, m.Update) and any("on hold" in f for f in x.feed)
                    for x in c.received
                ),
                what=f"{c.name} to be told",
            )
        room = server.rooms[ann.room]
        log = read_log(room.writer.path)
        assert log.records[-1].hash == receipt.hash  # nothing unacknowledged is on the chain
        await ann.send(m.SendChat(text="still here?"))  # the room itself still answers
        await table[1].recv_until(lambda x: isinstance(x, m.Chat))
        filler.unlink()
        await wait_until(
            lambda: any(
                isinstance(x, m.Update) and any("written again" in f for f in x.feed)
                for x in ann.received
            ),
            what="the log to be written again",
        )
        paused = ann.view is not None and ann.view.paused
        await ann.send(m.ResumeGame() if paused else m.PauseGame())
        await ann.wait_view(lambda v: v.paused != paused)
        result = read_log(room.writer.path)
        assert not result.torn and result.records[-1].hash == ann.receipt.hash


async def test_a_game_that_cannot_write_its_first_record_leaves_no_log_and_no_promise(
    start_server, small_disk: Path
) -> None:
    from conjure.protocol import messages as m
    from tests.wsclient import open_table

    replays = small_disk / "replays"
    server = await start_server(replays=replays, min_free_mb=0)  # (a small disk on purpose)
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        ann = table[0]
        filler = fill(small_disk)
        big = [Card(text=f"{'x' * 50} {i}", stars=1) for i in range(200)]
        await ann.send(m.ChangeSettings(settings=m.RoomSettings(deck="custom", custom_cards=big)))
        await ann.wait_view(lambda v: len(v.settings.custom_cards) == 200)
        await ann.send(m.StartGame())
        err = await ann.expect_error("log_unavailable")
        assert "did not start" in err.message and "resume" not in err.message
        assert list(replays.glob("*.jsonl")) == []  # no log left behind
        assert ann.view is not None and ann.view.phase == "lobby"
        filler.unlink()
        await ann.send(m.StartGame())
        await ann.wait_view(lambda v: v.round == 1)
        assert len(list(replays.glob("*.jsonl"))) == 1


async def test_a_game_does_not_start_on_a_disk_under_its_floor_of_free_space(
    start_server, tmp_path
):
    """Found by review: each log is bounded, their sum is not (from one address, games started
    and left to time out wrote ~250 MB a day), and a full disk holds every game under way. A
    new game needs ``min_free_mb`` free; the lobby stays as it was, told why."""
    import shutil

    from conjure.protocol import messages as m
    from tests.wsclient import open_table

    free_mb = shutil.disk_usage(tmp_path).free >> 20
    server = await start_server(min_free_mb=free_mb + 1024)
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        ann = table[0]
        await ann.send(m.StartGame())
        err = await ann.expect_error("log_unavailable")
        assert "MB free" in err.message and "games under way go on" in err.message
        v = await ann.wait_view(lambda v: v.phase == "lobby")
        assert len(v.players) == 3
    assert not list((tmp_path / "replays").glob("*.jsonl"))
