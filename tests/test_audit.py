"""``conjure replay``: verify a real log (real engine, real LogWriter), then explain it.

The logs come from ``tests/auditlogs.py``: scripted games on the pure engine, one ``append_many`` per
decision, exactly as the server writes them. Tampering is fuzzed on the bytes of such a log.
"""

from __future__ import annotations

import gc
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conjure.client.cli import main
from conjure.client.statefile import StateDir
from conjure.protocol.statedir import (
    RECEIPTS_DIR,
    STATE_DIR_ENV,
    default_state_dir,
    receipt_file_name,
)
from conjure.server.audit_verify import Audit, Receipt, Unusable, audit
from conjure.server.logformat import LogRecord, read_log
from tests.auditlogs import (
    SAMPLE_CASES,
    SAMPLE_SCORES,
    SAMPLE_TOTALS,
    as_batches,
    dark_game,
    sample_game,
    write_log,
    write_records,
)

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _no_user_state(tmp_path_factory, monkeypatch):
    """Never read the real user's receipts: point the default state dir at an empty folder."""
    monkeypatch.setenv("CONJURE_STATE_DIR", str(tmp_path_factory.mktemp("nostate")))


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> tuple[Path, list[LogRecord]]:
    path = tmp_path_factory.mktemp("sample") / "game-1.jsonl"
    records = write_log(path, sample_game().decisions)
    return path, records


@pytest.fixture(scope="module")
def sample_bytes(sample) -> bytes:
    return sample[0].read_bytes()


def replay(*args: str) -> int:
    return main(["replay", *args])


def run_json(capsys, *args: str) -> tuple[int, dict]:
    code = replay(*args, "--json")
    out = capsys.readouterr().out
    return code, json.loads(out)


# ---------------------------------------------------------------------------------------------
# The report in a terminal


def test_a_name_with_an_emoji_keeps_the_reports_columns_and_its_80_columns(tmp_path, capsys):
    """A newcomer's "Émilie🙂" (the emoji takes two cells): the report wrapped lines one cell
    past 80, so the terminal broke them mid-word, and every table of names was one column out."""
    from conjure.protocol.cells import cells
    from conjure.server.audit import fitted
    from tests.test_audit_trust import renamed

    path = renamed(tmp_path / "g.jsonl", {0: "Émilie🙂", 2: "李小龍"})
    assert replay(str(path), "--no-state-dir") == 0
    fit = fitted(capsys.readouterr().out, 80)
    assert "Émilie🙂" in fit and "李小龍" in fit
    for line in fit.splitlines():
        assert cells(line) <= 80 or " " not in line.strip(), line
    rows = [x for x in fit.splitlines() if x.startswith("    ") and " committed +" in x]
    assert len(rows) >= 8  # the commit-then-reveal tables: "committed" in one column
    assert len({cells(x[: x.index(" committed +")]) for x in rows}) == 1, rows
    totals = [x for x in fit.splitlines() if re.match(r"  \d\. \S", x)]
    assert len(totals) == 4 and len({cells(x.rstrip()) for x in totals}) == 1, totals


def test_a_report_read_in_an_80_column_terminal_is_wrapped_between_words(sample, capsys):
    """Read at 80 columns, report lines of 100-200 characters broke words and hashes mid-way
    (an organizer's run after a friends' game). In a terminal they wrap between words, each
    continuation under its line's text; to a pipe or a file each fact stays on one line."""
    from conjure.server.audit import fitted

    path, _ = sample
    assert replay(str(path), "--state-dir", str(path.parent)) == 0
    whole = capsys.readouterr().out  # captured: not a terminal
    assert max(len(line) for line in whole.splitlines()) > 100  # (so there is something to fit)
    fit = fitted(whole, 80)
    assert fit.split() == whole.split()  # nothing lost, added or reordered
    for line in fit.splitlines():
        assert len(line) <= 80 or " " not in line.strip(), line  # (a hash alone may be longer)
    # No wrapped text begins a line as the report's own lines do (a verdict, a heading).
    starts = [line for line in fit.splitlines() if line and not line.startswith(" ")]
    own = [line for line in whole.splitlines() if line and not line.startswith(" ")]
    assert all(o.startswith(f) for f, o in zip(starts, own, strict=True))
    assert fitted(whole, None) == whole
    # a point's reason goes on under its text, not a column left of it (seen at 80 columns)
    point = (
        "          0  matched neither the conjurer nor anyone else, and no crystal: no points [P2]"
    )
    first, rest = fitted(point, 80).splitlines()
    assert first.index("matched") == 13 and rest.startswith(" " * 13) and rest[13] != " "
    # and the crystals stand in one column, whatever the words' lengths
    marked = [line for line in whole.splitlines() if line.endswith("◆ crystal")]
    assert len(marked) > 2 and len({line.index("◆") for line in marked[:2]}) == 1


def test_the_replay_command_fits_its_report_to_the_terminal_it_prints_to(sample):
    """The real command, its output a terminal 80 columns wide (a pseudo-terminal)."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios

    path, _ = sample
    main_fd, tty_fd = pty.openpty()
    fcntl.ioctl(tty_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "conjure.client.cli", "replay", str(path), "--no-state-dir"],
        stdout=tty_fd,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    os.close(tty_fd)
    got = b""
    while True:  # until the command closes its end (bounded: the report is a few KB)
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # EIO: the other end is closed
            break
        if not chunk:
            break
        got += chunk
    os.close(main_fd)
    assert proc.wait(timeout=60) == 0
    lines = got.decode().replace("\r\n", "\n").splitlines()
    assert any("=> VERIFIED" in line for line in lines)
    assert all(len(line) <= 80 or " " not in line.strip() for line in lines), lines


# ---------------------------------------------------------------------------------------------
# A clean game


def test_clean_game_verifies_and_explains_every_round(sample, capsys):
    path, _ = sample
    assert replay(str(path)) == 0
    out = capsys.readouterr().out
    assert "=> VERIFIED" in out
    for n, case in SAMPLE_CASES.items():
        assert f"Round {n} of 4" in out
        if case != "void":
            assert f"Case: {case}:" in out
    assert "VOID at +1:30: Cy, the conjurer, ran out of time" in out
    # the ruling behind every point, the words as written, the commit-then-reveal timing
    assert "+2  1 player matched you (Bob): 2 points each [P2a]" in out
    assert "'sky diver': INVALID: 'sky diver' contains the written word 'sky'" in out
    assert "Bob  committed +0:20, replaced +0:22, revealed +0:32, opens the commitment" in out
    assert "Dee  committed +0:25, never revealed" in out
    assert (
        "#1 Dee proposed that 'big cat' and 'lion' are the same thing (+0:42): CARRIED 1-0" in out
    )
    # the proposer's yes is the engine's, not a reason Ann typed
    assert "votes: Ann yes (the proposer's own vote); Bob no ('zebra is a noun'); Dee no" in out
    assert "Ann voted yes on #2 (the proposer's own vote)" in out and "'proposed it'" not in out
    assert "Ann paused the game" in out
    assert "Running totals: Ann 5, Bob 6, Cy -3, Dee 1" in out
    assert "Winner: Bob" in out
    # Said again at the end: the verdict at the top had scrolled far out of a 24-row screen
    assert out.rstrip("\n").splitlines()[-1] == (
        "Verdict (the Verification block at the top says what was checked): VERIFIED. "
        "One round alone: --round N."
    )


def test_an_audit_leaves_no_cycles_for_the_collector(sample):
    """Why the audit may pause the cyclic collector, and why its records and steps need not be
    tracked: auditing a whole game makes no cyclic garbage, and what it holds most of is not
    tracked (msgspec's gc=False)."""
    path, _ = sample
    audit(path)  # the first one loads the word data and fills the memos: not the audit's own
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        a = audit(path)
        assert a.verified and a.steps
        assert not any(gc.is_tracked(s) or gc.is_tracked(s.record) for s in a.steps)
        del a
        assert gc.collect() == 0  # nothing left unreachable: refcounting freed it all
    finally:
        if was:
            gc.enable()


def test_clean_game_json(sample, capsys):
    path, records = sample
    code, doc = run_json(capsys, str(path))
    assert code == 0
    assert doc["verified"] is True and doc["problems"] == []
    assert doc["game_id"] == "game-1" and doc["finished"] is True
    assert doc["records"] == len(records) and doc["last_hash"] == records[-1].hash
    assert doc["chain"] == {"ok": True, "first_bad": None} and doc["torn"] is None
    assert doc["totals"] == SAMPLE_TOTALS == doc["recorded_totals"]
    assert doc["winners"] == ["Bob"] == doc["recorded_winners"]
    assert [r["round"] for r in doc["rounds"]] == [1, 2, 3, 4]
    for r in doc["rounds"]:
        assert r["case"] == SAMPLE_CASES[r["round"]]
        assert r["scores"] == SAMPLE_SCORES[r["round"]]
        assert r["agrees"] is True
    r1, r2, r3, _ = doc["rounds"]
    assert r1["conjurer"] == "Ann" and r1["card"] == {"index": 0, "text": "Vehicle", "stars": 2}
    assert r1["spells"]["Ann"] == {"word": "wing", "crystal": True}
    assert len(r1["commitments"]["Bob"]["committed"]) == 2
    assert r1["reasons"]["Bob"][0]["rule"] == "P2b"
    assert r2["proposals"][1]["votes"]["Bob"] == {"yes": False, "reason": "zebra is a noun"}
    assert r2["proposals"][0]["carried"] is True
    assert r3["void_reason"] == "Cy, the conjurer, ran out of time" and r3["scores"] == {}


def test_round_option_explains_one_round(sample, capsys):
    path, _ = sample
    assert replay(str(path), "--round", "2") == 0
    out = capsys.readouterr().out
    assert "Round 2 of 4: Animal ★, conjurer Bob" in out
    assert "Round 1 of 4" not in out and "Round 4 of 4" not in out
    code, doc = run_json(capsys, str(path), "--round", "4")
    assert code == 0 and [r["round"] for r in doc["rounds"]] == [4]
    assert doc["totals"] == SAMPLE_TOTALS  # the totals are still the whole game's


def test_events_option_lists_one_event_per_line(sample, capsys):
    path, records = sample
    assert replay(str(path), "--events") == 0
    out = capsys.readouterr().out
    lines = [x for x in out.splitlines() if x[:5].strip().isdigit()]
    assert len(lines) == len(records)
    assert [int(x.split()[0]) for x in lines] == list(range(len(records)))
    spell = next(x for x in lines if "'mane'" in x)
    assert spell.split()[1:4] == ["00:00:52.500", "spell_written", "Bob"]
    assert any("vote_cast" in x and "Cy" in x and "'a lion is a big cat'" in x for x in lines)
    code, doc = run_json(capsys, str(path), "--events", "--round", "3")
    assert code == 0
    assert doc["events"][0]["type"] == "round_started"
    assert doc["events"][-1]["type"] == "round_voided"
    assert doc["events"][-1]["summary"] == "round 3: void: Cy, the conjurer, ran out of time"


def test_a_summon_closed_by_its_clock_says_whose_word_is_missing(tmp_path, capsys):
    """Found by an auditor's review: the timeline said "the summon closed: every commitment
    in" of a summon whose time ran out without Dee's word, and said nothing of the reveal's
    time running out; and ``--events`` named a presence record by its class name."""
    from conjure.server.rules import commands as c
    from tests.auditlogs import RecordingTable

    t = RecordingTable(4)
    t.choose(0)
    t.spell_by({"Ann": "wing", "Bob": "engine", "Cy": "sky", "Dee": "wheel"})
    t.mark("Ann", "Bob")
    t.run(c.Presence(now=t.now, seat=3, connected=False))
    for name, word in (("Ann", "airplane"), ("Bob", "jet"), ("Cy", "kite")):
        t.commit(name, word)
    t.timeout()  # Dee's word never came
    t.reveal("Ann", "airplane")
    t.reveal("Bob", "jet")
    t.timeout()  # nor Cy's reveal
    path = tmp_path / "g.jsonl"
    write_log(path, t.decisions)
    assert replay(str(path), "--round", "1") == 0
    out = capsys.readouterr().out
    assert "its time ran out with no word from Dee: reveals open" in out
    assert "every commitment in" not in out
    assert "the reveal's time ran out: the review opened" in out
    assert replay(str(path), "--events") == 0
    (went,) = [x for x in capsys.readouterr().out.splitlines() if "presence_changed" in x]
    assert went.split()[3:] == ["Dee", "went", "away"] and "PresenceChanged" not in went
    # Nobody committed: the reveal opened and closed in one batch, and had no time to run out
    t = RecordingTable(4)
    t.choose(0)
    t.spell_by({"Ann": "wing", "Bob": "engine", "Cy": "sky", "Dee": "wheel"})
    t.mark("Ann", "Bob")
    t.timeout()
    none = tmp_path / "none.jsonl"
    write_log(none, t.decisions)
    assert replay(str(none), "--round", "1") == 0
    out = capsys.readouterr().out
    assert "with no word from Ann, Bob, Cy and Dee" in out
    assert "the reveal's time ran out" not in out and "the review opened" in out


def test_summoning_words_that_only_look_the_same_are_said_to_differ(tmp_path, capsys):
    """Found by an auditor's review: four 'aunt's, one with a Cyrillic 'а', and the report
    said that player matched nobody without saying why."""
    from tests.auditlogs import RecordingTable

    t = RecordingTable(4)
    t.choose(0)
    t.spell_by({"Ann": "wing", "Bob": "engine", "Cy": "sky", "Dee": "wheel"})
    t.mark("Ann", "Bob")
    t.summon({"Ann": "\u0430unt", "Bob": "aunt", "Cy": "aunt", "Dee": "modem"})
    t.done()
    path = tmp_path / "g.jsonl"
    write_log(path, t.decisions)
    assert replay(str(path), "--round", "1") == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "look alike" in x]
    assert line.strip() == (  # one line, the odd one first seated or not
        "Ann's '\u0430unt' and Bob and Cy's 'aunt' look alike but are different words "
        "(U+0430 CYRILLIC SMALL LETTER A)"
    )


def test_dark_magic_game_verifies(tmp_path, capsys):
    path = tmp_path / "dark.jsonl"
    write_log(path, dark_game().decisions)
    code, doc = run_json(capsys, str(path))
    assert code == 0, doc["problems"]
    assert doc["variant"] == "dark-magic"
    r1 = doc["rounds"][0]
    assert r1["flags"]["Bob"] == ["'ship' (Bob's spell word) is hidden inside 'spaceship'"]
    assert doc["totals"] == {"Ann": 6, "Bob": 4, "Cy": 4}


# ---------------------------------------------------------------------------------------------
# Tampering: the first bad record is named, or the cut is recognised as a torn tail


def _lines(buf: bytes) -> list[bytes]:
    return buf.splitlines(keepends=True)


def _audit_bytes(folder: Path, data: bytes, receipts=()) -> Audit:
    path = folder / "tampered.jsonl"
    path.write_bytes(data)
    return audit(path, receipts)


def _batch_starts(records: list[LogRecord]) -> set[int]:
    """Seqs where a batch starts (a torn tail always starts at one)."""
    return {0} | {r.seq + 1 for r in records if r.batch == 0}


def _expect_corrupt_at(a: Audit, line: int) -> None:
    assert not a.verified
    assert a.first_bad is not None, (a.torn, a.problems)
    assert (a.first_bad["line"], a.first_bad["seq"]) == (line, line - 1), a.first_bad
    assert a.problems[0].startswith(f"hash chain broken at line {line} (seq {line - 1} expected")


def _expect_torn(a: Audit, records: list[LogRecord], at_most_line: int) -> None:
    assert not a.verified
    assert a.corrupt is None and a.torn is not None, a.problems
    assert a.torn["line"] <= at_most_line
    assert a.torn["seq"] == a.torn["line"] - 1 in _batch_starts(records)
    assert "torn tail" in a.problems[0] and "last action was cut" in a.problems[0]


def _expect_byte_change(a: Audit, buf: bytes, records, offset: int) -> None:
    line = buf.count(b"\n", 0, offset) + 1
    if line == len(records):  # anything in the last line looks like a torn write
        _expect_torn(a, records, line)
    else:
        _expect_corrupt_at(a, line)


def _changed(buf: bytes, offset: int, value: int) -> bytes:
    return buf[:offset] + bytes([value]) + buf[offset + 1 :]


def test_every_line_edge_byte_change_is_detected(sample, sample_bytes, tmp_path):
    """Exhaustive where it matters most: the first and last bytes of every line and its newline."""
    _, records = sample
    buf = sample_bytes
    ends = [i for i, b in enumerate(buf) if b == 0x0A]
    offsets = sorted({0, *ends, *(e - 1 for e in ends), *(e + 1 for e in ends[:-1])})
    for offset in offsets:
        a = _audit_bytes(tmp_path, _changed(buf, offset, buf[offset] ^ 0x01))
        _expect_byte_change(a, buf, records, offset)


def test_every_byte_of_three_lines_changed_is_detected(sample, sample_bytes, tmp_path):
    """Exhaustive over whole lines: the first, one in the middle, and the last."""
    _, records = sample
    buf = sample_bytes
    starts = [0, *[i + 1 for i, b in enumerate(buf) if b == 0x0A][:-1]]
    ends = [*starts[1:], len(buf)]
    for k in (0, len(starts) // 2, len(starts) - 1):
        for offset in range(starts[k], ends[k]):
            a = _audit_bytes(tmp_path, _changed(buf, offset, buf[offset] ^ 0x01))
            _expect_byte_change(a, buf, records, offset)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_single_byte_change_is_detected(sample, sample_bytes, tmp_path_factory, data):
    _, records = sample
    buf = sample_bytes
    offset = data.draw(st.integers(0, len(buf) - 1), label="offset")
    value = data.draw(st.integers(0, 255).filter(lambda v: v != buf[offset]), label="value")
    a = _audit_bytes(tmp_path_factory.getbasetemp(), _changed(buf, offset, value))
    _expect_byte_change(a, buf, records, offset)


def test_every_deleted_line_is_detected(sample, sample_bytes, tmp_path):
    _, records = sample
    lines = _lines(sample_bytes)
    final = Receipt(records[-1].seq, records[-1].hash, "test")
    for k in range(len(lines)):
        data = b"".join(lines[:k] + lines[k + 1 :])
        a = _audit_bytes(tmp_path, data)
        if k < len(lines) - 1:
            _expect_corrupt_at(a, k + 1)
            assert a.first_bad["reason"] == f"sequence {k} expected, found {k + 1}"
        else:  # the last batch (round_scored, game_ended) lost its last record: as a crash would
            assert records[-2].batch == 1
            _expect_torn(a, records, k + 1)
        # whatever else, the client's final receipt catches it
        assert not _audit_bytes(tmp_path, data, [final]).verified


def test_every_swap_of_adjacent_lines_is_detected(sample, sample_bytes, tmp_path):
    lines = _lines(sample_bytes)
    for i in range(len(lines) - 1):
        swapped = [*lines[:i], lines[i + 1], lines[i], *lines[i + 2 :]]
        _expect_corrupt_at(_audit_bytes(tmp_path, b"".join(swapped)), i + 1)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_two_lines_swapped_are_detected(sample_bytes, tmp_path_factory, data):
    lines = _lines(sample_bytes)
    i = data.draw(st.integers(0, len(lines) - 2), label="i")
    j = data.draw(st.integers(i + 1, len(lines) - 1), label="j")
    swapped = list(lines)
    swapped[i], swapped[j] = swapped[j], swapped[i]
    _expect_corrupt_at(_audit_bytes(tmp_path_factory.getbasetemp(), b"".join(swapped)), i + 1)


def test_every_inserted_line_is_detected(sample, sample_bytes, tmp_path):
    """A copied record anywhere (even appended at the end), or a line of garbage."""
    _, records = sample
    lines = _lines(sample_bytes)
    n = len(lines)
    for k in range(n + 1):
        copy = lines[k - 1] if k else lines[1]
        _expect_corrupt_at(_audit_bytes(tmp_path, b"".join([*lines[:k], copy, *lines[k:]])), k + 1)
        junk = b'{"batch":0,"note":"added by hand"}\n'
        a = _audit_bytes(tmp_path, b"".join([*lines[:k], junk, *lines[k:]]))
        if k < n:
            _expect_corrupt_at(a, k + 1)
        else:  # garbage after the last record is what a torn append leaves
            _expect_torn(a, records, n + 1)


def _expect_cut(a: Audit, records, offset: int, buf: bytes) -> None:
    if a.torn is None:
        # cut exactly at the end of a batch: a valid, shorter log; the final receipt catches it
        assert a.corrupt is None and a.verified
        assert buf[offset - 1 : offset] == b"\n" and records[len(a.records) - 1].batch == 0
        assert any("unfinished" in note for note in a.notes)
        return
    _expect_torn(a, records, len(records))
    assert a.torn["offset"] <= offset


def test_every_cut_near_a_line_end_is_a_torn_tail_or_caught_by_a_receipt(
    sample, sample_bytes, tmp_path
):
    _, records = sample
    buf = sample_bytes
    final = Receipt(records[-1].seq, records[-1].hash, "test")
    ends = [i + 1 for i, b in enumerate(buf) if b == 0x0A][:-1]
    for offset in sorted({1, *ends, *(e - 1 for e in ends), *(e + 1 for e in ends)}):
        a = _audit_bytes(tmp_path, buf[:offset])
        _expect_cut(a, records, offset, buf)
        if a.verified:  # cut at the end of a batch: only the client's final receipt can tell
            b = _audit_bytes(tmp_path, buf[:offset], [final])
            assert not b.verified and final.status == "beyond-end", b.problems
            assert any("truncated" in p for p in b.problems)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_tail_cut_at_any_offset_is_recognised(sample, sample_bytes, tmp_path_factory, data):
    _, records = sample
    buf = sample_bytes
    offset = data.draw(st.integers(1, len(buf) - 1), label="offset")
    a = _audit_bytes(tmp_path_factory.getbasetemp(), buf[:offset])
    _expect_cut(a, records, offset, buf)


def test_cli_names_the_first_bad_record_and_the_torn_tail(sample, sample_bytes, tmp_path, capsys):
    lines = _lines(sample_bytes)
    k = next(i for i, line in enumerate(lines) if b'"word":"lion"' in line)
    edited = tmp_path / "edited.jsonl"
    lines_edited = [*lines[:k], lines[k].replace(b'"lion"', b'"tiger"'), *lines[k + 1 :]]
    edited.write_bytes(b"".join(lines_edited))
    code, doc = run_json(capsys, str(edited))
    assert code == 1 and doc["verified"] is False
    assert doc["chain"]["first_bad"] == {
        "line": k + 1,
        "seq": k,
        "offset": sum(map(len, lines[:k])),
        "reason": "hash mismatch",
    }
    assert doc["problems"][0].startswith(f"hash chain broken at line {k + 1} (seq {k} expected")
    # the records before the damage are still explained; nothing after it is trusted
    assert doc["records"] == k and doc["rounds"][-1]["round"] == 2
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(sample_bytes[:-30])
    assert replay(str(torn)) == 1
    out = capsys.readouterr().out
    assert "torn tail" in out and "last action was cut" in out and "NOT VERIFIED" in out


# ---------------------------------------------------------------------------------------------
# A log that lies about the score (its chain is valid)


def test_recorded_scores_that_disagree_with_the_engine_are_named(tmp_path, capsys):
    def edit(type_, data):
        if type_ == "round_scored" and data["round"] == 2:
            data = {**data, "points": {**data["points"], "1": data["points"]["1"] + 2}}
        if type_ == "round_scored" and data["round"] == 4:
            data = {**data, "case": "failed"}
        return data

    path = tmp_path / "liar.jsonl"
    write_log(path, sample_game().decisions, edit)
    read_log(path)  # the chain itself is sound
    code, doc = run_json(capsys, str(path))
    assert code == 1 and not doc["verified"]
    assert doc["chain"]["ok"] is True
    probs = doc["problems"]
    assert any(
        p.startswith("round 2: Bob: the log records +5") and "computes +3" in p for p in probs
    )
    assert any(
        p.startswith("round 4: the log records case 'failed'") and "'missed-conjurer'" in p
        for p in probs
    )
    assert any(p.startswith("final totals: Bob:") for p in probs)
    rounds = {r["round"]: r for r in doc["rounds"]}
    assert rounds[2]["agrees"] is False and rounds[2]["recorded"]["scores"]["Bob"] == 5
    assert rounds[2]["scores"]["Bob"] == 3 and rounds[1]["agrees"] is True
    assert doc["totals"] == SAMPLE_TOTALS  # the engine's, not the log's
    assert replay(str(path), "--round", "2") == 1
    out = capsys.readouterr().out
    assert "PROBLEM: round 2: Bob: the log records +5" in out


def test_a_reveal_that_does_not_open_its_commitment_is_named(tmp_path, capsys):
    def edit(type_, data):
        if type_ == "revealed" and data["round"] == 1 and data["seat"] == 3:
            return {**data, "word": "airplane"}
        if type_ == "summons_published" and data["round"] == 1:
            return {**data, "words": {**data["words"], "3": "airplane"}}
        return data

    path = tmp_path / "swapped-word.jsonl"
    write_log(path, sample_game().decisions, edit)
    code, doc = run_json(capsys, str(path))
    assert code == 1
    assert any(
        p.startswith("round 1: Dee's reveal of 'airplane'") and "does not open" in p
        for p in doc["problems"]
    )
    assert doc["rounds"][0]["commitments"]["Dee"]["opens"] is False


def test_a_record_the_engine_cannot_read_stops_the_replay_there(tmp_path, capsys):
    batches = as_batches(sample_game().decisions)
    head = batches[:10]
    n = sum(len(items) for _, items in head)
    path = tmp_path / "odd.jsonl"
    write_records(path, [*head, (head[-1][0] + 1, [("mystery", {"round": 1})]), *batches[10:]])
    code, doc = run_json(capsys, str(path))
    assert code == 1 and doc["chain"]["ok"] is True
    assert doc["replay_stopped"].startswith(f"line {n + 1} (seq {n}): a 'mystery' record")
    assert doc["problems"][0] == (
        f"line {n + 1} (seq {n}): a 'mystery' record the rules engine cannot read "
        "(unknown event type 'mystery'); the replay stops there."
    )
    # ... and no rule produced it: the batch has no command, so deciding again stops there too
    assert doc["problems"][1:] == [
        f"not what the rules decide at line {n + 1}: no command is recorded for this batch, so "
        "no rule produced it"
    ]


# ---------------------------------------------------------------------------------------------
# Receipts


def test_a_receipt_from_a_rewritten_log_is_caught(tmp_path, capsys):
    original = tmp_path / "original.jsonl"
    kept = write_log(original, sample_game().decisions)
    early, late = kept[0], kept[40]  # before and after the rewritten word (round 1)
    rewritten = tmp_path / "rewritten.jsonl"
    write_log(rewritten, sample_game(round1_spell="feather").decisions)
    assert replay(str(rewritten), "--no-state-dir") == 0  # on its own it looks fine
    capsys.readouterr()
    code, doc = run_json(
        capsys,
        str(rewritten),
        "--no-state-dir",
        "--receipt",
        f"{early.seq}:{early.hash}",
        "--receipt",
        f"{late.seq}:{late.hash}",
    )
    assert code == 1
    statuses = [(r["seq"], r["status"]) for r in doc["receipts"]]
    assert statuses == [(0, "on-chain"), (40, "not-on-chain")]
    (problem,) = doc["problems"]
    assert problem.startswith(f"receipt seq 40 hash {late.hash[:12]}… (--receipt) does not lie")
    assert "rewritten after this receipt was sent" in problem


def test_receipts_are_read_from_the_state_directory(tmp_path, monkeypatch, capsys):
    path = tmp_path / "game-1.jsonl"
    records = write_log(path, sample_game().decisions)
    state = tmp_path / "state"
    StateDir(state).save_receipt(
        "game-1", records[-1].seq, records[-1].hash, server="ws://x:8765", room="ABCD"
    )
    monkeypatch.setenv("CONJURE_STATE_DIR", str(state))
    code, doc = run_json(capsys, str(path))
    assert code == 0
    (r,) = doc["receipts"]
    assert r["status"] == "on-chain" and r["source"].endswith("receipts/game-1.json")
    # a list of receipts, another game's receipt, and junk are read defensively
    other = tmp_path / "other-state"
    (other / "receipts").mkdir(parents=True)
    (other / "receipts" / "game-1.json").write_text(
        json.dumps(
            [
                {"game_id": "game-1", "seq": 3, "hash": records[3].hash},
                {"game_id": "game-2", "seq": 3, "hash": "0" * 64},
                {"game_id": "game-1", "seq": "x"},
            ]
        )
    )
    (other / "receipts" / "broken.json").write_text("{not json")
    # the log is then cut at the end of a batch: a receipt beyond the end proves it
    cut = tmp_path / "cut.jsonl"
    scored = next(r.seq for r in records if r.type == "round_scored")
    keep = next(r.seq for r in records[scored:] if r.batch == 0)  # the end of its batch
    cut.write_bytes(b"".join(_lines(path.read_bytes())[: keep + 1]))
    assert read_log(cut).torn is False
    code, doc = run_json(capsys, str(cut), "--state-dir", str(state), "--state-dir", str(other))
    assert code == 1
    assert sorted((r["seq"], r["status"]) for r in doc["receipts"]) == [
        (3, "on-chain"),
        (records[-1].seq, "beyond-end"),
    ]
    assert any("lies beyond the end of the log" in p and "truncated" in p for p in doc["problems"])
    assert any("no usable seq" in n for n in doc["notes"])
    assert doc["finished"] is False


def test_the_client_keeps_receipts_where_the_audit_looks(tmp_path, monkeypatch):
    """One state directory and receipt file name (protocol/statedir.py) for both sides."""
    monkeypatch.setenv(STATE_DIR_ENV, str(tmp_path / "env-state"))
    assert StateDir().path == default_state_dir() == tmp_path / "env-state"
    for game_id in ("game-1", "../escape", "..", "a" * 101, "ünï"):
        expected = tmp_path / "s" / RECEIPTS_DIR / receipt_file_name(game_id)
        assert StateDir(tmp_path / "s").receipt_path(game_id) == expected
    assert receipt_file_name("game-1") == "game-1.json"
    assert "/" not in receipt_file_name("../escape")
    assert "\n" not in receipt_file_name("game-1\n")  # a server's game id may end in anything


def test_a_receipt_file_can_be_given_directly(tmp_path, capsys):
    path = tmp_path / "game-1.jsonl"
    records = write_log(path, sample_game().decisions)
    receipt = tmp_path / "from-bob.json"
    receipt.write_text(json.dumps({"game_id": "game-1", "seq": 10, "hash": records[11].hash}))
    code, doc = run_json(capsys, str(path), "--no-state-dir", "--receipt", str(receipt))
    assert code == 1 and doc["receipts"][0]["status"] == "not-on-chain"
    # A hash spelt with a newline after it is no hash: ignored with a note, not checked.
    receipt.write_text(
        json.dumps({"game_id": "game-1", "seq": 11, "hash": records[11].hash + "\n"})
    )
    code, doc = run_json(capsys, str(path), "--no-state-dir", "--receipt", str(receipt))
    assert code == 0 and doc["receipts"] == []
    assert any("no usable hash" in n for n in doc["notes"])


# ---------------------------------------------------------------------------------------------
# Unusable input: exit 2 with a sentence that says what and where


@pytest.mark.parametrize(
    "content, words",
    [
        (b"hello world\nthis is not a log\n", "not a game log: line 1 is not JSON"),
        (b'{"a": 1}\n{"b": 2}\n', "not a game log: line 1 is not a log record"),
        (b"", "is empty"),
    ],
)
def test_not_a_log_is_unusable(tmp_path, capsys, content, words):
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    assert replay(str(path)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"conjure replay: {path}: ") and words in err


def test_directory_missing_file_and_bad_arguments_are_unusable(tmp_path, sample, capsys):
    assert replay(str(tmp_path)) == 2
    assert "is a directory" in capsys.readouterr().err
    assert replay(str(tmp_path / "nope.jsonl")) == 2
    assert "no such file" in capsys.readouterr().err
    path, _ = sample
    assert replay(str(path), "--receipt", "12:abc") == 2
    assert "expected SEQ:HASH" in capsys.readouterr().err
    # a digit int() refuses ("²") was a traceback and exit 1, "not verified" (found by review)
    for seq in ("²", "١٢"):
        assert replay(str(path), "--receipt", f"{seq}:{'ab' * 32}") == 2
        assert "expected SEQ:HASH" in capsys.readouterr().err
    assert replay(str(path), "--round", "9") == 2
    assert "round 9 is not in this log (it holds rounds 1-4)" in capsys.readouterr().err


def test_unreadable_file_is_unusable(sample_bytes, tmp_path, monkeypatch, capsys):
    path = tmp_path / "locked.jsonl"
    path.write_bytes(sample_bytes)
    real_open = os.open

    def refuse(file, flags, *args):  # chmod 0 does not stop root, so refuse like the OS would
        if Path(file) == path:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, flags, *args)

    monkeypatch.setattr(os, "open", refuse)
    assert replay(str(path)) == 2
    assert capsys.readouterr().err == (
        f"conjure replay: {path}: cannot read it: Permission denied\n"
    )


def test_a_log_of_something_else_is_unusable(tmp_path, capsys):
    path = tmp_path / "other.jsonl"
    write_records(path, [(1.0, [("hello", {"x": 1})])])
    assert replay(str(path)) == 2
    assert capsys.readouterr().err == (
        f"conjure replay: {path}: not a Conjure game log: line 1 (seq 0) is a 'hello' record, "
        "not game_started\n"
    )


def test_an_unknown_rules_version_is_refused(tmp_path, capsys):
    def edit(type_, data):
        return {**data, "rules_version": 99} if type_ == "game_started" else data

    path = tmp_path / "future.jsonl"
    write_log(path, sample_game().decisions, edit)
    assert replay(str(path)) == 2
    err = capsys.readouterr().err
    assert "rules version 99, which this program does not know" in err
    with pytest.raises(Unusable):
        audit(path)


# ---------------------------------------------------------------------------------------------
# The committed sample (a game played through the real server)

#: Pinned from the committed samples, games played by computer players through the real server
#: (``conjure demo``): file -> (final totals by name, case of each round).
GOLDEN = {
    # rules version 2, re-recorded through the real server: `conjure demo` (computer players)
    "sample-standard.jsonl": (
        {"Ada": 9, "Dora": 6, "Cleo": 16, "Basil": 7, "Emil": 5},
        {1: "everyone", 2: "everyone", 3: "conjured", 4: "everyone", 5: "conjured"},
    ),
    "sample-dark-magic.jsonl": (
        {"Ada": 12, "Basil": 4, "Cleo": 9, "Dora": 8},
        {1: "conjured", 2: "missed-conjurer", 3: "conjured", 4: "missed-conjurer"},
    ),
    # scripted players (tests/test_server_game.py): a challenge carried 2-1, an invalid word
    "sample-review.jsonl": (
        {"Ann": 9, "Bob": 4, "Cy": 1, "Dee": 1},
        {1: "conjured", 2: "everyone", 3: "missed-conjurer", 4: "failed"},
    ),
    # the rules version 1 samples they replace, still audited (by folding, not re-deciding)
    "sample-v1-standard.jsonl": (
        {"Ada": 14, "Emil": 18, "Dora": 11, "Cleo": 12, "Basil": 13},
        {1: "conjured", 2: "conjured", 3: "missed-conjurer", 4: "everyone", 5: "conjured"},
    ),
    "sample-v1-dark-magic.jsonl": (
        {"Ada": 7, "Basil": 3, "Cleo": 5, "Dora": 8},
        {1: "failed", 2: "missed-conjurer", 3: "conjured", 4: "conjured"},
    ),
    "sample-v1-review.jsonl": (
        {"Ann": 9, "Bob": 4, "Cy": 1, "Dee": 1},
        {1: "conjured", 2: "everyone", 3: "missed-conjurer", 4: "failed"},
    ),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_sample_replay(name):
    totals, cases = GOLDEN[name]
    path = REPO / "replays" / name
    a = audit(path)
    assert a.verified, a.problems
    assert a.finished
    assert {a.name(s): t for s, t in a.totals.items()} == totals
    assert {r.number: r.case for r in a.rounds} == cases
    assert main(["replay", str(path), "--no-state-dir"]) == 0


def test_text_from_the_log_cannot_drive_the_terminal(tmp_path, capsys):
    """A log is someone else's evidence: its names are shown escaped, never interpreted."""
    evil = "\x1b]0;pwned\x07Bob\u202e"

    def edit(type_, data):
        if type_ == "game_started":
            players = [dict(p) for p in data["players"]]
            players[1]["name"] = evil
            return {**data, "players": players}
        return data

    path = tmp_path / "evil.jsonl"
    write_log(path, sample_game().decisions, edit)
    for args in ((str(path),), (str(path), "--json"), (str(path), "--events")):
        replay(*args)
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
        assert "\\u001b]0;pwned\\u0007Bob\\u202e" in out
    replay(str(path), "--json")
    doc = json.loads(capsys.readouterr().out)
    assert doc["players"][1]["name"] == evil  # the JSON still carries the exact text


# ---------------------------------------------------------------------------------------------
# Several logs in one run: `conjure replay replays/*.jsonl`


@pytest.fixture
def night(tmp_path) -> dict[str, Path]:
    """A night's replays: two good games and one whose line 6 was edited afterwards."""
    logs = {"a": tmp_path / "game-a.jsonl", "dark": tmp_path / "game-dark.jsonl"}
    write_log(logs["a"], sample_game().decisions)
    write_log(logs["dark"], dark_game("game-dark").decisions)
    lines = _lines(logs["a"].read_bytes())
    edited = lines[5].replace(b'"ts":', b'"ts":1', 1)
    assert edited != lines[5]
    logs["edited"] = tmp_path / "game-edited.jsonl"
    logs["edited"].write_bytes(b"".join([*lines[:5], edited, *lines[6:]]))
    return logs


def test_several_logs_are_reported_in_turn_and_summed_up(night, capsys):
    a, dark, edited = night["a"], night["dark"], night["edited"]
    assert replay(str(a), str(dark), "--no-state-dir") == 0
    out = capsys.readouterr().out
    assert out.startswith(f"==> {a} <==\n")
    assert out.index(f"==> {a} <==") < out.index(f"==> {dark} <==")
    assert out.rstrip().endswith("2 logs: 2 verified")
    alone = replay(str(dark), "--no-state-dir")
    assert alone == 0 and capsys.readouterr().out.strip() in out  # each report as it is alone

    assert replay(str(a), str(edited), str(dark), "--no-state-dir") == 1
    out = capsys.readouterr().out
    assert out.rstrip().endswith(f"3 logs: 2 verified, 1 NOT VERIFIED\n  NOT VERIFIED: {edited}")


def test_a_log_that_cannot_be_audited_does_not_stop_the_others(night, tmp_path, capsys):
    a, dark = night["a"], night["dark"]
    missing = tmp_path / "nope.jsonl"
    assert replay(str(a), str(missing), str(tmp_path), str(dark), "--no-state-dir") == 2
    captured = capsys.readouterr()
    assert f"==> {dark} <==" in captured.out
    summary = captured.out.rstrip().split("\n")[-3:]
    assert summary[0] == "4 logs: 2 verified, 2 could not be audited"
    assert summary[1] == f"  could not be audited: {missing}: no such file"
    assert summary[2].startswith(f"  could not be audited: {tmp_path}: is a directory")
    assert f"conjure replay: {missing}: no such file" in captured.err
    assert f"conjure replay {tmp_path}/*.jsonl" in captured.err  # a folder: how to give its logs


def test_several_logs_as_json_are_one_document_of_their_reports_in_order(night, tmp_path, capsys):
    missing = tmp_path / "nope.jsonl"
    args = [str(night["a"]), str(night["edited"]), str(missing), "--no-state-dir", "--json"]
    assert replay(*args) == 2
    doc = json.loads(capsys.readouterr().out)
    docs = doc["logs"]
    assert [d["log"] for d in docs] == args[:3]
    assert [d.get("verified") for d in docs] == [True, False, None]
    assert "no such file" in docs[2]["unusable"]
    assert doc["verified"] == 1 and doc["not_verified"] == args[1:2]
    assert len(doc["unusable"]) == 1 and "no such file" in doc["unusable"][0]


def test_with_several_logs_a_receipt_must_say_its_game(night, tmp_path, capsys):
    a, dark = night["a"], night["dark"]
    records = read_log(a).records
    assert replay(str(a), str(dark), "--receipt", f"3:{records[3].hash}") == 2
    assert "SEQ:HASH receipt names no game" in capsys.readouterr().err
    # A receipt file without game ids belongs to the one log it is given with, and to none of
    # several: each is told it was ignored rather than failed on another game's receipt.
    anon = tmp_path / "anon.json"
    anon.write_text(json.dumps({"seq": 3, "hash": records[3].hash}))
    code, doc = run_json(capsys, str(a), "--no-state-dir", "--receipt", str(anon))
    assert code == 0 and [r["status"] for r in doc["receipts"]] == ["on-chain"]
    assert replay(str(a), str(dark), "--no-state-dir", "--receipt", str(anon), "--json") == 0
    docs = json.loads(capsys.readouterr().out)["logs"]
    assert [d["receipts"] for d in docs] == [[], []]
    assert all(any("no game_id" in n for n in d["notes"]) for d in docs)


def test_round_n_of_several_logs_is_round_n_of_each(night, capsys):
    """A log without round N is still verified and counted: N is only what to explain."""
    a, dark, edited = night["a"], night["dark"], night["edited"]
    assert replay(str(a), str(dark), "--no-state-dir", "--round", "1", "--json") == 0
    docs = json.loads(capsys.readouterr().out)["logs"]
    assert [[r["round"] for r in d["rounds"]] for d in docs] == [[1], [1]]
    short, long_ = sorted((a, dark), key=lambda p: len(audit(p).rounds))
    beyond = len(audit(long_).rounds)
    assert len(audit(short).rounds) < beyond
    args = [str(short), str(long_), str(edited), "--no-state-dir", "--round", str(beyond)]
    assert replay(*args, "--json") == 1
    docs = json.loads(capsys.readouterr().out)["logs"]
    assert [d["verified"] for d in docs] == [True, True, False]
    assert docs[0]["rounds"] == [] and [r["round"] for r in docs[1]["rounds"]] == [beyond]
    assert any(f"round {beyond} is not in this log" in n for n in docs[0]["notes"])
    assert replay(*args) == 1
    assert capsys.readouterr().out.rstrip().endswith(f"NOT VERIFIED: {edited}")


def test_a_hostile_log_name_cannot_drive_the_terminal(night, tmp_path, capsys):
    evil = tmp_path / "evil\x1b[2J.jsonl"
    evil.write_bytes(night["a"].read_bytes())
    missing = tmp_path / "gone\x1b]0;owned\x07.jsonl"
    assert replay(str(evil), str(missing), "--no-state-dir") == 2
    captured = capsys.readouterr()
    assert "\x1b" not in captured.out and "\x1b" not in captured.err
    assert "\\u001b[2J" in captured.out and "\\u001b]0;owned" in captured.err


def test_among_several_logs_receipts_go_to_their_own_game(night, tmp_path, monkeypatch, capsys):
    a, dark = night["a"], night["dark"]
    ra, rd = read_log(a).records, read_log(dark).records
    gid_a, gid_d = (audit(p).start.game_id for p in (a, dark))
    assert gid_a != gid_d
    state = tmp_path / "state"
    StateDir(state).save_receipt(gid_a, ra[-1].seq, ra[-1].hash, server="ws://x:1", room="ABCD")
    StateDir(state).save_receipt(gid_d, rd[5].seq, rd[5].hash, server="ws://x:1", room="ABCD")
    given = tmp_path / "from-bob.json"  # names its game: counts for that log only
    given.write_text(json.dumps({"game_id": gid_d, "seq": 3, "hash": ra[3].hash}))
    monkeypatch.setenv(STATE_DIR_ENV, str(state))
    assert replay(str(a), str(dark), "--receipt", str(given), "--json") == 1
    docs = json.loads(capsys.readouterr().out)["logs"]
    assert [(r["seq"], r["status"]) for r in docs[0]["receipts"]] == [(ra[-1].seq, "on-chain")]
    assert sorted((r["seq"], r["status"]) for r in docs[1]["receipts"]) == [
        (3, "not-on-chain"),  # Bob's receipt for the dark game is another game's hash
        (5, "on-chain"),
    ]
    assert [d["verified"] for d in docs] == [True, False]


def test_two_logs_of_one_game_are_compared(night, tmp_path, capsys):
    """A copy, a copy cut short, and a game written again (each chain sound on its own)."""
    a = night["a"]
    lines = _lines(a.read_bytes())
    copy, cut, other = tmp_path / "copy.jsonl", tmp_path / "cut.jsonl", tmp_path / "other.jsonl"
    copy.write_bytes(a.read_bytes())
    records = read_log(a).records
    end = next(r.seq for r in records[20:] if r.batch == 0)  # the end of a batch
    cut.write_bytes(b"".join(lines[: end + 1]))
    assert replay(str(a), str(copy), str(cut), "--no-state-dir") == 0
    out = capsys.readouterr().out
    assert f"  note: game game-1 is in 3 logs: {a}; {copy} holds the same" in out
    assert f"{cut} is a copy of it cut after seq {end}" in out
    write_log(other, sample_game(round1_spell="feather").decisions)  # round 1 went otherwise
    assert replay(str(other), "--no-state-dir") == 0  # sound on its own
    capsys.readouterr()
    assert replay(str(a), str(other), "--no-state-dir", "--json") == 1
    (same,) = json.loads(capsys.readouterr().out)["same_game"]
    assert same["parted"] and "one of the two was written again" in same["text"]


def test_logs_and_options_come_in_any_order(night, capsys):
    a, dark = night["a"], night["dark"]
    assert replay(str(a), "--no-state-dir", str(dark), "--json") == 0
    assert [d["log"] for d in json.loads(capsys.readouterr().out)["logs"]] == [str(a), str(dark)]
    with pytest.raises(SystemExit) as info:  # and a usage error is the command's own
        replay("--no-state-dir")
    assert info.value.code == 2
    assert "conjure replay: error: the following arguments are required: LOG" in (
        capsys.readouterr().err
    )


def test_a_log_with_nothing_yet_to_check_says_so_plainly(tmp_path, capsys):
    """Read by a newcomer organizer: "0 reveals, each opens its commitment" and "0 scored rounds
    recomputed ... agree" on a log cut early."""
    path = tmp_path / "early.jsonl"
    write_records(path, as_batches(sample_game().decisions)[:6])  # the start, a few spell words
    assert main(["replay", str(path), "--no-state-dir"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "commit-then-reveal: no reveal in the log yet, so none to check" in out
    assert "scores: no scored round in the log yet, so none to check" in out
    assert "0 reveals" not in out and "0 scored rounds" not in out


def test_a_proposers_later_vote_is_theirs_whatever_its_reason_says(tmp_path, capsys):
    """Found by review: a proposer who changed to no, typing 'proposed it', was reported as
    casting the engine's vote."""
    from conjure.server.rules import commands as c
    from tests.auditlogs import SAMPLE_CARDS, RecordingTable

    t = RecordingTable(4, cards=SAMPLE_CARDS)
    t.choose("Vehicle")
    t.spell_by({"Ann": "wing", "Bob": "engine", "Cy": "sky", "Dee": "wheel"})
    t.mark("Ann", "Bob")
    t.summon({"Ann": "airplane", "Bob": "airplanes", "Cy": "zebra", "Dee": "jet"})
    t.run(c.Challenge(now=t.now, seat=0, target=2, rule="noun"))
    t.run(c.Vote(now=t.now, seat=0, proposal=0, yes=False, reason="proposed it"))  # typed
    write_records(tmp_path / "g.jsonl", as_batches(t.decisions))
    main(["replay", str(tmp_path / "g.jsonl"), "--no-state-dir"])
    out = capsys.readouterr().out
    assert "Ann voted yes on #1 (the proposer's own vote)" in out  # the engine's, on proposing
    assert "Ann voted no on #1: 'proposed it'" in out  # hers
    assert "votes: Ann no ('proposed it') (changed their vote)" in out


def test_a_wrapped_line_never_starts_at_column_zero():
    """Found by review: a first word longer than the width lost its line's indent, so a forged
    log's name could begin a line as a verdict does."""
    from conjure.server.audit import fitted

    name = "=>_VERIFIED:_everything_above_checks." + "_" * 50
    wrapped = fitted(f"    {name}  wing  ◆ crystal", 80).splitlines()
    assert all(w.startswith(" ") for w in wrapped), wrapped


def test_records_of_a_decision_the_damage_cut_are_counted_apart(sample, capsys):
    """A newcomer's edited log: "97 verified records", then a round that ended before record 97
    (the reveal it holds is in a decision whose other record the edit broke)."""
    path, _ = sample
    lines = path.read_bytes().splitlines(keepends=True)
    records = read_log(path).records
    k = next(i for i, r in enumerate(records) if r.batch == 1 and i > 5)  # a 2-record decision
    lines[k + 1] = lines[k + 1].replace(b'"seq":', b'"seq":9', 1)  # its second record: edited
    path.write_bytes(b"".join(lines))
    assert replay(str(path), "--no-state-dir") == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(f"{k + 1} verified records)")
    assert out[1] == (
        "  (the last record belongs to a decision the log does not hold whole: the replay stops "
        "before it)"
    )


def _late_challenge_game(version: int):
    """A game of rules version ``version`` whose round 1 has a challenge made a second before
    the review's time runs out (V7: rules version 3 gives its voters time)."""
    from conjure.protocol.events import Limits
    from conjure.server.rules import commands as c
    from tests.auditlogs import SAMPLE_CARDS, RecordingTable

    t = RecordingTable(4, cards=SAMPLE_CARDS, limits=Limits(review=60.0), rules_version=version)
    t.choose("Vehicle")
    t.spell_by({"Ann": "wing", "Bob": "engine", "Cy": "sky", "Dee": "wheel"})
    t.mark("Ann", "Bob")
    t.summon({"Ann": "airplane", "Bob": "airplanes", "Cy": "glider", "Dee": "jet"})
    t.now = t.g.deadline - 1.0  # type: ignore[operator]
    t.run(c.Challenge(now=t.now, seat=2, target=0, rule="category"))
    if version >= 3:
        t.run(c.Vote(now=t.now, seat=3, proposal=0, yes=False))
    t.timeout()
    return t


@pytest.mark.parametrize("version", [2, 3])
def test_a_game_is_audited_by_the_rules_of_its_own_version(tmp_path, capsys, version):
    """Rules version 3 changed the engine (V7 among others): a version 2 game is decided again
    by version 2's rules, a version 3 game by version 3's, and both verify."""
    t = _late_challenge_game(version)
    path = tmp_path / f"v{version}.jsonl"
    write_log(path, t.decisions)
    a = audit(path)
    assert a.verified, a.problems
    assert a.start is not None and a.start.rules_version == version
    assert main(["replay", str(path), "--no-state-dir"]) == 0
    out = capsys.readouterr().out
    extended = "so that its voters can vote" in out
    assert extended == (version >= 3)
    case = t.g.results[0].case
    # version 2: carried 1-0 on the challenger's vote alone, the matching words invalid
    assert case == ("conjured" if version >= 3 else "failed"), case


def test_an_unfinished_version_2_game_is_resumed_and_plays_on_by_its_rules(tmp_path):
    """A server upgraded to rules version 3 goes on with a version 2 game it finds unfinished
    (as it refuses a version 1 one, whose log holds no commands): same state, same rules."""
    from conjure.server.recovery import load_replays
    from conjure.server.rules import commands as c
    from tests.auditlogs import SAMPLE_CARDS, RecordingTable

    t = RecordingTable(4, cards=SAMPLE_CARDS, rules_version=2)
    t.choose("Vehicle")
    t.spell_by({"Ann": "wing", "Bob": "engine", "Cy": "sky", "Dee": "wheel"})
    replays = tmp_path / "replays"
    replays.mkdir()
    write_log(replays / "game-1.jsonl", t.decisions)
    said: list[str] = []
    report = load_replays(replays, said.append)
    assert len(report.resumed) == 1, said
    game = report.resumed[0].game
    assert game.rules_version == 2 and game.phase == "mark"
    from conjure.server.rules import decide

    out = decide(game, c.MarkBoards(now=t.now, seat=0, boards=(0, 1)))
    assert isinstance(out, list) and out  # played on
    for w in report.resumed:
        w.writer.close()


def test_every_player_gone_at_once_is_said_as_such(tmp_path, capsys):
    """Found by friends playing over TLS: across a server restart the report read "... went
    away (quit, or lost the connection)" once a player, and never said the server had stopped.
    One line says everyone's connection went at once; one player's going is said as before."""
    from conjure.server.audit import EVERYONE_GONE
    from conjure.server.rules import commands as c
    from tests.auditlogs import RecordingTable

    t = RecordingTable(4)
    t.choose(0)
    t.run(c.Presence(now=t.now, seat=2, connected=False))  # Cy alone
    t.run(c.Presence(now=t.now, seat=2, connected=True))
    at = t.now
    for seat in range(4):  # the server stopped: every seat's going, logged as it came back
        t.run(c.Presence(now=at + 0.01 * seat, seat=seat, connected=False))
    path = tmp_path / "g.jsonl"
    write_log(path, t.decisions)
    assert replay(str(path), "--round", "1") == 0
    out = capsys.readouterr().out
    assert out.count(f"everyone's connection went at once ({EVERYONE_GONE})") == 1
    assert out.count("went away (quit, or lost the connection)") == 1  # Cy's own, earlier
