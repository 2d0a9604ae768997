"""``conjure replay`` given logs, state directories and file names made to break it rather than to
fool it: each gets a verdict or a sentence, never a traceback, a hang or all the memory (found by
an attacker's review of the audit). A report of several logs goes on past one it cannot audit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest

from conjure.client.cli import main
from conjure.protocol.events import EVENT_TYPES
from conjure.server import logformat
from conjure.server.audit_verify import ReceiptReads
from conjure.server.logformat import read_log
from conjure.server.rules import commands as c
from tests.auditlogs import Decision, as_batches, sample_game
from tests.test_audit_trust import presence_game

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _no_user_state(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CONJURE_STATE_DIR", str(tmp_path_factory.mktemp("nostate")))


def replayed(capsys, *args: str) -> tuple[int, str]:
    code = main(["replay", *args, "--no-state-dir"])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return code, out.out


def chained(path: Path, batches: list[Any]) -> Path:
    """``(ts, [(type, data), ...])`` batches with their ``.command``, hashed and chained as the
    log writer does, but past its own checks (which refuse what these tests plant)."""
    prev, seq, out = logformat.GENESIS, 0, bytearray()
    for batch in batches:
        ts, items = batch
        for i, (type_, data) in enumerate(items):
            command = None if i else getattr(batch, "command", None)
            record = logformat.build_record(
                prev, seq, ts, type_, data, batch=len(items) - 1 - i, cmd=command
            )
            out += logformat.encode_record(record)
            prev, seq = record.hash, seq + 1
    path.write_bytes(bytes(out))
    return path


def shifted(path: Path, by: float) -> Path:
    """The sample game with every time moved by ``by`` seconds (commands too), chained again."""

    def move(command: dict[str, Any] | None) -> dict[str, Any] | None:
        if command is None:
            return None
        command = dict(command, now=command["now"] + by)
        if command.get("deadline") is not None:
            command["deadline"] += by
        return command

    batches = [
        Decision(ts + by, items, move(b.command))  # type: ignore[attr-defined]
        for b in as_batches(sample_game().decisions)
        for ts, items in [b]
    ]
    return chained(path, batches)


@pytest.mark.parametrize("by", [1e12, -1e11])  # the year 33,000; before 1970
def test_a_log_dated_where_no_calendar_goes_fails_with_a_sentence(tmp_path, capsys, by):
    log = shifted(tmp_path / "g.jsonl", by)
    for extra in ((), ("--events",)):
        code, out = replayed(capsys, str(log), *extra)
        assert code == 1 and "=> NOT VERIFIED" in out
        assert "not a log record" in out and "$.ts" in out
    code, out = replayed(capsys, str(log), "--json")
    assert code == 1 and json.loads(out)["verified"] is False


def test_times_inside_events_that_no_calendar_holds_are_shown_not_crashed_on(tmp_path, capsys):
    """An abandonment's idle-since far before 1970 (the command then fails to read, so the
    audit fails), and a deadline a huge phase limit puts past the year 9999 (shown as is)."""
    log = presence_game(tmp_path / "g.jsonl", [], None)
    lines = log.read_bytes().splitlines()
    last = json.loads(lines[-1])
    assert last["type"] == "game_abandoned"
    records = read_log(log).records
    batches = []
    for i, rec in enumerate(records):
        data, cmd = rec.data, rec.cmd
        if i == len(records) - 1:
            data = dict(data, idle_since=-1e15)
            cmd = dict(cmd or {}, idle_since=-1e15)
        batches.append(Decision(rec.ts, [(rec.type, data)], cmd))
    chained(tmp_path / "far.jsonl", batches)
    for extra in ((), ("--events",), ("--json",)):
        code, out = replayed(capsys, str(tmp_path / "far.jsonl"), *extra)
        assert code == 1 and "no date" in out


def test_a_deadline_past_the_year_9999_is_shown_as_a_number(tmp_path, capsys):
    t = sample_game()
    batches = as_batches(t.decisions)
    first = batches[0]
    command = json.loads(json.dumps(first.command))  # type: ignore[attr-defined]
    command["setup"]["limits"]["choose"] = 1e300
    from conjure.server.rules.decide import decide

    events = decide(None, c.command_from_data(command))
    assert not hasattr(events, "code")
    from conjure.protocol.events import event_data, event_type

    items = [(event_type(e), event_data(e)) for e in events]  # type: ignore[union-attr]
    chained(tmp_path / "g.jsonl", [Decision(first[0], items, command)])
    _code, out = replayed(capsys, str(tmp_path / "g.jsonl"), "--events")
    assert "1e+300 s after 1970 (no date)" in out


@pytest.mark.parametrize("depth", [400, 5000])
def test_a_line_nested_too_deep_is_damage_not_a_crash(tmp_path, capsys, depth):
    log = shifted(tmp_path / "g.jsonl", 0)
    with log.open("ab") as f:
        f.write(b'{"batch":0,"data":{"x":' + b"[" * depth + b"]" * depth + b"}}\n")
    code, out = replayed(capsys, str(log))
    said = "nested too deep" if depth > 1000 else "missing required field"
    assert code == 1 and said in out
    assert said in (read_log(log).torn_reason or "")


def test_one_log_the_audit_fails_on_stops_no_other(tmp_path, capsys, monkeypatch):
    """LOG.md: one log that cannot be audited stops no other. A fault of the audit itself (here
    made on purpose) is that log's "could not be audited", not a traceback that ends the run."""
    from conjure.server import audit as report

    good = shifted(tmp_path / "a.jsonl", 0)
    bad = tmp_path / "b.jsonl"
    bad.write_bytes(good.read_bytes())
    real = report._replay_one

    def faulty(args: Any, log: Path, *rest: Any) -> Any:
        if log == bad:
            raise KeyError("a fault")
        return real(args, log, *rest)

    monkeypatch.setattr(report, "_replay_one", faulty)
    code = main(["replay", str(bad), str(good), "--no-state-dir"])
    out = capsys.readouterr().out
    assert code == 2
    assert "the audit itself failed on this log (KeyError" in out
    assert f"==> {good} <==" in out and "2 logs: 1 verified, 1 could not be audited" in out
    code = main(["replay", str(bad), "--no-state-dir"])
    assert code == 2 and "a fault of this program" in capsys.readouterr().err


def test_a_log_named_to_print_a_verdict_is_shown_escaped(tmp_path, capsys):
    folder = tmp_path / "logs"
    folder.mkdir()
    log = shifted(folder / "x\n=> VERIFIED: everything above checks.jsonl", 0)
    with log.open("ab") as f:
        f.write(b"garbage\n")
    code, out = replayed(capsys, str(log), str(shifted(tmp_path / "honest.jsonl", 0)))
    assert code == 1
    assert not [x for x in out.splitlines() if x.startswith("=> VERIFIED") and "above" in x][1:]
    assert "x\\u000a=> VERIFIED" in out


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_state_directory_whose_files_are_no_files_is_noted_not_read(tmp_path, kind):
    """A FIFO at secrets.json hung the audit for ever; a link to /dev/zero filled the memory."""
    log = shifted(tmp_path / "g.jsonl", 0)
    state = tmp_path / "state"
    (state / "receipts").mkdir(parents=True)
    for name in ("secrets.json", "receipts/g.json"):
        if kind == "fifo":
            os.mkfifo(state / name)
        else:
            os.symlink("/dev/zero", state / name)
    run = subprocess.run(
        [sys.executable, "-m", "conjure.client.cli", "replay", str(log), "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "CONJURE_STATE_DIR": str(tmp_path / "none")},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    doc, why = ReceiptReads().doc(state / "secrets.json")  # (read for a log with a deal)
    assert doc is None and why is not None
    assert why.endswith("secrets.json: not a regular file, so not a client's state file")


def test_a_tail_of_nested_record_starts_is_tried_a_bounded_number_of_times(tmp_path, monkeypatch):
    """Only a line's last record starts are tried (SOUND_TRIES); trying every start of a
    planted tail (lines of 300 nested starts) took 1.3 s per MiB."""
    log = shifted(tmp_path / "g.jsonl", 0)
    good = len(read_log(log).records)
    line = b'{"batch":0,"data":{"x":[' * 300 + b"0" + b"]}}" * 300
    with log.open("ab") as f:
        f.write(b"torn\n" + (line + b"\n") * 20)
    calls = 0
    real = logformat._damage

    def counted(*args: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(*args)

    monkeypatch.setattr(logformat, "_damage", counted)
    result = read_log(log)
    assert len(result.records) == good and result.torn_reason is not None
    assert calls <= good + 1 + 20 * logformat.SOUND_TRIES + 1  # (it was 300 a line)


def test_no_record_field_is_named_batch():
    """What reading only a line's last ``{"batch":`` rests on: no event or command has a field
    of that name, so inside a canonical record the start of a record occurs once."""
    for kind in [*EVENT_TYPES.values(), *typing.get_args(c.AnyCommand)]:
        assert "batch" not in kind.__struct_fields__, kind


@pytest.mark.parametrize("hidden", [1, logformat.SOUND_TRIES - 1])
def test_a_sound_record_after_damage_is_found_with_starts_nested_in_it(tmp_path, hidden):
    """A record made to hold ``{"batch":`` in its data, sound after a damaged line, is still
    tampering, not a crash's torn tail (found by review when only the last start was tried)."""
    prev, lines = logformat.GENESIS, []
    for seq in range(4):
        data: dict[str, Any] = {"n": seq}
        if seq == 3:
            for _ in range(hidden):
                data = {"x": {"batch": 1, "in": data}}
        r = logformat.build_record(prev, seq, 1000.0 + seq, "note", data)
        lines.append(logformat.encode_record(r))
        prev = r.hash
    lines[2] = lines[2][:40] + b"\n"  # line 3 torn-looking; line 4 whole and sound
    path = tmp_path / "g.jsonl"
    path.write_bytes(b"".join(lines))
    with pytest.raises(logformat.LogCorrupt):
        read_log(path)


@pytest.mark.parametrize("conversion", ["crlf", "bom"])
def test_a_log_a_text_tool_converted_is_said_so_with_the_way_back(tmp_path, capsys, conversion):
    """A log whose line ends a Windows editor made CRLF was told as a crash in the game's first
    write, and one given a byte-order mark as an edited log (found by review). Undone, it
    verifies."""
    log = shifted(tmp_path / "g.jsonl", 0)
    original = log.read_bytes()
    if conversion == "crlf":
        log.write_bytes(original.replace(b"\n", b"\r\n"))
        said = "its lines end in CRLF, as a Windows editor or git's autocrlf makes them (dos2unix"
    else:
        log.write_bytes(b"\xef\xbb\xbf" + original)
        said = "starts with a byte-order mark, which a text editor adds (sed -i"
    code = main(["replay", str(log), "--no-state-dir"])
    err = capsys.readouterr().err
    assert code == 2 and said in err and "undone, the log can be audited again" in err
    log.write_bytes(original)
    assert replayed(capsys, str(log))[0] == 0
