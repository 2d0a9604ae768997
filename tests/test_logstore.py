"""The game log on real files: round trips, durability, torn tails, tamper detection."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conjure.server import groupsync, logformat, logstore
from conjure.server.logformat import (
    DOMAIN_TAG,
    GENESIS,
    LogCorrupt,
    LogError,
    LogRecord,
    build_record,
    canonical,
    chain_hash,
    encode_record,
    read_log,
    verify_receipt,
)
from conjure.server.logstore import (
    LogFailure,
    LogLocked,
    open_for_append,
    open_writer,
    recover_torn_tail,
)

TS = 1767225600.0

# --- helpers ----------------------------------------------------------------------------------


def sample_data(i: int) -> dict[str, Any]:
    """Varied, JSON-native data: nesting, unicode, floats, escapes, lists, null."""
    return {
        "round": i,
        "word": ["sphinx", "élan", 'qu"ote\\', "tab\t", "日本"][i % 5],
        "nested": {"z": [i, i * 0.5, None, True], "a": {"deep": -i}},
        "deadline": TS + i / 3,
    }


def chain(n: int) -> list[LogRecord]:
    records: list[LogRecord] = []
    prev = GENESIS
    for i in range(n):
        rec = build_record(prev, i, TS + i * 1.25, f"event_{i % 3}", sample_data(i))
        records.append(rec)
        prev = rec.hash
    return records


def lines_of(records: list[LogRecord]) -> list[bytes]:
    return [encode_record(r) for r in records]


def first_diff(a: list[bytes], b: list[bytes]) -> int:
    """0-based index of the first line that differs (the first bad line of a tampered log)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def batched_chain(sizes: list[int]) -> list[LogRecord]:
    """Records as ``append_many`` writes them: one ts per batch, counts n-1, ..., 0."""
    records: list[LogRecord] = []
    prev = GENESIS
    for b, n in enumerate(sizes):
        for left in range(n - 1, -1, -1):
            i = len(records)
            rec = build_record(prev, i, TS + b * 10, f"event_{i % 3}", sample_data(i), batch=left)
            records.append(rec)
            prev = rec.hash
    return records


def with_counts(counts: list[int]) -> list[LogRecord]:
    """A correctly hashed chain whose batch counts are exactly ``counts`` (sane or not)."""
    records: list[LogRecord] = []
    prev = GENESIS
    for i, k in enumerate(counts):
        rec = build_record(prev, i, TS + i, f"event_{i % 3}", sample_data(i), batch=k)
        records.append(rec)
        prev = rec.hash
    return records


def batch_start(records: list[LogRecord], k: int) -> int:
    """How many of the first ``k`` records form whole batches (what recovery keeps)."""
    while k and records[k - 1].batch:
        k -= 1
    return k


CHAIN = chain(8)
LINES = lines_of(CHAIN)
BLOB = b"".join(LINES)

BATCH_SIZES = [1, 3, 2, 1, 3]
BCHAIN = batched_chain(BATCH_SIZES)  # counts 0 | 2 1 0 | 1 0 | 0 | 2 1 0
BLINES = lines_of(BCHAIN)
BBLOB = b"".join(BLINES)


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "g1.jsonl"


# --- the documented test vector (docs/LOG.md) --------------------------------------------------

VEC0_BODY = (
    b'{"batch":0,"data":{"game_id":"g-7f3a","players":3,"variant":"standard"},'
    b'"prev":"0000000000000000000000000000000000000000000000000000000000000000",'
    b'"seq":0,"ts":1767225600.0,"type":"game_started"}'
)
VEC0_HASH = "acf4a657053a97026b50ea1f9b4de67cfbd3420237e5c431caad110b54a41add"
VEC1_BODY = (
    b'{"batch":1,"data":{"card":2,"round":1},'
    b'"prev":"acf4a657053a97026b50ea1f9b4de67cfbd3420237e5c431caad110b54a41add",'
    b'"seq":1,"ts":1767225612.5,"type":"card_chosen"}'
)
VEC1_HASH = "42a967b4667c4f2b658d561ba060f509c36410d4362d3a607838c6427c028e30"
VEC2_BODY = (
    b'{"batch":0,"data":{"phase":"spell","round":1},'
    b'"prev":"42a967b4667c4f2b658d561ba060f509c36410d4362d3a607838c6427c028e30",'
    b'"seq":2,"ts":1767225612.5,"type":"phase_started"}'
)
VEC2_HASH = "ef2b9a74e35931b18b455f718cd0ddf336e0786e6d03644a41aa0f18932625c8"
VEC_LINE0 = (
    b'{"batch":0,"data":{"game_id":"g-7f3a","players":3,"variant":"standard"},'
    b'"hash":"acf4a657053a97026b50ea1f9b4de67cfbd3420237e5c431caad110b54a41add",'
    b'"prev":"0000000000000000000000000000000000000000000000000000000000000000",'
    b'"seq":0,"ts":1767225600.0,"type":"game_started"}\n'
)
VEC_FILE = (
    VEC_LINE0 + b'{"batch":1,"data":{"card":2,"round":1},'
    b'"hash":"42a967b4667c4f2b658d561ba060f509c36410d4362d3a607838c6427c028e30",'
    b'"prev":"acf4a657053a97026b50ea1f9b4de67cfbd3420237e5c431caad110b54a41add",'
    b'"seq":1,"ts":1767225612.5,"type":"card_chosen"}\n'
    b'{"batch":0,"data":{"phase":"spell","round":1},'
    b'"hash":"ef2b9a74e35931b18b455f718cd0ddf336e0786e6d03644a41aa0f18932625c8",'
    b'"prev":"42a967b4667c4f2b658d561ba060f509c36410d4362d3a607838c6427c028e30",'
    b'"seq":2,"ts":1767225612.5,"type":"phase_started"}\n'
)
VEC_CUT_REASON = "line 2 (seq 1): incomplete batch: 1 of 2 records written"
VEC_DATA = (
    {"game_id": "g-7f3a", "variant": "standard", "players": 3},
    {"round": 1, "card": 2},
    {"round": 1, "phase": "spell"},
)


def test_doc_vector_recomputed_by_code() -> None:
    d0, d1, d2 = VEC_DATA
    r0 = build_record(GENESIS, 0, 1767225600.0, "game_started", d0)
    r1 = build_record(r0.hash, 1, 1767225612.5, "card_chosen", d1, batch=1)
    r2 = build_record(r1.hash, 2, 1767225612.5, "phase_started", d2, batch=0)
    records = (r0, r1, r2)
    bodies = [
        {"seq": r.seq, "ts": r.ts, "type": r.type, "data": r.data, "prev": r.prev, "batch": r.batch}
        for r in records
    ]
    assert [canonical(b) for b in bodies] == [VEC0_BODY, VEC1_BODY, VEC2_BODY]
    assert [r.hash for r in records] == [VEC0_HASH, VEC1_HASH, VEC2_HASH]
    assert chain_hash(GENESIS, 0, 1767225600.0, "game_started", d0) == VEC0_HASH
    assert chain_hash(r0.hash, 1, 1767225612.5, "card_chosen", d1, batch=1) == VEC1_HASH
    assert b"".join(encode_record(r) for r in records) == VEC_FILE
    assert encode_record(r0) == VEC_LINE0
    # The body is the stored line minus its hash member (keys sort batch < data < hash < prev).
    for line, r, body in zip(VEC_FILE.splitlines(), records, bodies, strict=True):
        assert line.startswith(b'{"batch":')
        assert line.replace(f'"hash":"{r.hash}",'.encode(), b"") == canonical(body)
    # An independent recipe (stdlib json + hashlib), as an auditor would write it.
    for body, want in zip(bodies, (VEC0_HASH, VEC1_HASH, VEC2_HASH), strict=True):
        enc = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        digest = hashlib.sha256(DOMAIN_TAG + bytes.fromhex(body["prev"]) + enc.encode()).hexdigest()
        assert digest == want
    assert DOMAIN_TAG == b"conjure-log-v1\x00"


VEC_CMD_LINES = (
    b'{"batch":1,"cmd":{"card":2,"kind":"choose_card","now":1767225612.5,"seat":0},'
    b'"data":{"card":2,"round":1,"seat":0},'
    b'"hash":"af019266bc25cb395c195988cc04bdde483585e97116039b6150787800565a1a",'
    b'"prev":"acf4a657053a97026b50ea1f9b4de67cfbd3420237e5c431caad110b54a41add",'
    b'"seq":1,"ts":1767225612.5,"type":"card_chosen"}',
    b'{"batch":0,"data":{"deadline":1767225672.5,"phase":"spell","round":1,"turn":0},'
    b'"hash":"8172ba4c9bbb61f41097259e9e81b322fa867187442220ee66159d6dbada35b1",'
    b'"prev":"af019266bc25cb395c195988cc04bdde483585e97116039b6150787800565a1a",'
    b'"seq":2,"ts":1767225612.5,"type":"phase_started"}',
)


def test_doc_command_vector_recomputed_by_code() -> None:
    from conjure.server.rules import commands as c

    cmd = c.command_data(c.ChooseCard(now=1767225612.5, seat=0, card=2))
    data1 = {"round": 1, "seat": 0, "card": 2}
    r1 = build_record(VEC0_HASH, 1, 1767225612.5, "card_chosen", data1, batch=1, cmd=cmd)
    data2 = {"round": 1, "phase": "spell", "turn": 0, "deadline": 1767225672.5}
    r2 = build_record(r1.hash, 2, 1767225612.5, "phase_started", data2)
    assert (encode_record(r1).rstrip(b"\n"), encode_record(r2).rstrip(b"\n")) == VEC_CMD_LINES
    # stdlib recipe: the body is the line without its hash, cmd included
    body = {**json.loads(VEC_CMD_LINES[0])}
    del body["hash"]
    enc = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert hashlib.sha256(DOMAIN_TAG + bytes.fromhex(VEC0_HASH) + enc.encode()).hexdigest() == (
        r1.hash
    )
    doc = (Path(__file__).resolve().parents[1] / "docs" / "LOG.md").read_text()
    for line in VEC_CMD_LINES:
        assert line.decode() in doc


def test_doc_canonical_string_escapes() -> None:
    """LOG.md, "Canonical encoding": which characters of a string are escaped, and how."""
    escaped = {'"': b'\\"', "\\": b"\\\\", "\x08": b"\\b", "\t": b"\\t", "\n": b"\\n"}
    escaped |= {"\x0c": b"\\f", "\r": b"\\r", "\x00": b"\\u0000", "\x01": b"\\u0001"}
    escaped |= {"\x1f": b"\\u001f"}
    for char, want in escaped.items():
        assert canonical(char) == b'"' + want + b'"', repr(char)
    for char in ("/", "\x7f", "\u2028", "\u2029", "é", "😀"):
        assert canonical(char) == b'"' + char.encode() + b'"', repr(char)
    every = "".join(escaped) + "/\x7f\u2028\u2029é😀" + "".join(map(chr, range(32)))
    assert canonical(every) == json.dumps(every, ensure_ascii=False).encode()
    doc = (Path(__file__).resolve().parents[1] / "docs" / "LOG.md").read_text()
    assert "`\\u001f`" in doc and "DEL (U+007F), U+2028 and" in doc


def test_doc_vector_reads_back(log_path: Path) -> None:
    log_path.write_bytes(VEC_FILE)
    result = read_log(log_path)
    assert not result.torn
    assert [(r.seq, r.type, r.batch, r.hash) for r in result.records] == [
        (0, "game_started", 0, VEC0_HASH),
        (1, "card_chosen", 1, VEC1_HASH),
        (2, "phase_started", 0, VEC2_HASH),
    ]
    # The documented crash: only the first two lines survived.
    log_path.write_bytes(b"".join(VEC_FILE.splitlines(keepends=True)[:2]))
    cut = read_log(log_path)
    assert [r.hash for r in cut.records] == [VEC0_HASH]
    assert cut.valid_end == len(VEC_LINE0) and cut.torn_reason == VEC_CUT_REASON


def test_doc_contains_vector() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "LOG.md").read_text()
    for piece in (VEC0_BODY, VEC1_BODY, VEC2_BODY, *VEC_FILE.splitlines()):
        assert piece.decode() in doc
    for text in (VEC0_HASH, VEC1_HASH, VEC2_HASH, VEC_CUT_REASON):
        assert text in doc


# --- writing ----------------------------------------------------------------------------------


async def test_append_read_round_trip(log_path: Path) -> None:
    w = await open_writer(log_path)
    assert (w.last_seq, w.last_hash) == (-1, GENESIS)
    got = [await w.append(f"event_{i % 3}", sample_data(i), TS + i * 1.25) for i in range(8)]
    assert got == CHAIN
    assert (w.last_seq, w.last_hash) == (7, CHAIN[-1].hash)
    w.close()
    assert await trio.Path(log_path).read_bytes() == BLOB
    result = read_log(log_path)
    assert result.records == CHAIN and not result.torn and result.valid_end == len(BLOB)
    # The file is canonical: re-encoding every parsed line gives the same bytes.
    on_disk = await trio.Path(log_path).read_bytes()
    assert b"".join(encode_record(r) for r in result.records) == on_disk


def pwritev_flags(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The flags of every ``os.pwritev`` call from now on, in order."""
    flags: list[int] = []
    real = os.pwritev

    def count(fd: int, buffers: list, offset: int, f: int = 0) -> int:
        flags.append(f)
        return real(fd, buffers, offset, f)

    monkeypatch.setattr(os, "pwritev", count)
    return flags


@pytest.mark.skipif(not hasattr(os, "RWF_DSYNC"), reason="pwritev2(RWF_DSYNC) is Linux's")
async def test_append_many_is_one_durable_write(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of records is one ``pwritev2(RWF_DSYNC)``: written and durable in one call."""
    w = open_for_append(log_path)
    flags = pwritev_flags(monkeypatch)
    recs = await w.append_many([("a", {"x": 1}), ("b", {"x": 2})], TS)
    assert flags == [os.RWF_DSYNC]
    w.close()
    monkeypatch.undo()
    assert read_log(log_path).records == recs


async def test_append_many_one_write_one_fsync(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the kernel has no ``RWF_DSYNC``: one write and one fsync per batch."""
    monkeypatch.setattr(groupsync, "RWF_DSYNC", None)
    w = open_for_append(log_path)
    calls = {"write": 0, "fsync": 0}
    real_write, real_fsync = os.write, os.fsync

    def count_write(fd: int, b: Any) -> int:
        calls["write"] += 1
        return real_write(fd, b)

    def count_fsync(fd: int) -> None:
        calls["fsync"] += 1
        real_fsync(fd)

    monkeypatch.setattr(os, "write", count_write)
    monkeypatch.setattr(os, "fsync", count_fsync)
    assert await w.append_many([], TS) == []
    assert calls == {"write": 0, "fsync": 0}
    recs = await w.append_many([("a", {"x": 1}), ("b", {"x": 2}), ("c", {})], TS)
    assert calls == {"write": 1, "fsync": 1}
    assert [r.seq for r in recs] == [0, 1, 2]
    assert [r.batch for r in recs] == [2, 1, 0]
    assert recs[1].prev == recs[0].hash and recs[2].prev == recs[1].hash
    one = await w.append("d", {"y": [1, 2]}, TS + 1)
    assert calls == {"write": 2, "fsync": 2} and one.seq == 3 and one.prev == recs[2].hash
    assert one.batch == 0
    w.close()
    monkeypatch.undo()
    assert read_log(log_path).records == [*recs, one]


async def test_append_many_writes_batch_counts(log_path: Path) -> None:
    w = await open_writer(log_path)
    start = 0
    for b, n in enumerate(BATCH_SIZES):
        items = [(f"event_{i % 3}", sample_data(i)) for i in range(start, start + n)]
        got = await w.append_many(items, TS + b * 10)
        assert got == BCHAIN[start : start + n]
        start += n
    w.close()
    assert [r.batch for r in BCHAIN] == [0, 2, 1, 0, 1, 0, 0, 2, 1, 0]
    assert await trio.Path(log_path).read_bytes() == BBLOB
    result = read_log(log_path)
    assert result.records == BCHAIN and not result.torn


@pytest.mark.skipif(not hasattr(os, "RWF_DSYNC"), reason="pwritev2(RWF_DSYNC) is Linux's")
async def test_append_batches_writes_several_decisions_with_one_write_and_one_sync(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A room's group commit: the log reads exactly as if each batch had been appended alone."""
    w = open_for_append(log_path)
    writes = pwritev_flags(monkeypatch)
    start, batches = 0, []
    for b, n in enumerate(BATCH_SIZES):
        items = [(f"event_{i % 3}", sample_data(i)) for i in range(start, start + n)]
        batches.append(logstore.Batch(items, TS + b * 10))
        start += n
    got = await w.append_batches([*batches[:2], logstore.Batch([], TS), *batches[2:]])
    assert writes == [os.RWF_DSYNC]  # one write, synced with it
    assert [r for batch in got for r in batch] == BCHAIN and len(got) == len(BATCH_SIZES)
    assert w.last_seq == BCHAIN[-1].seq and w.last_hash == BCHAIN[-1].hash
    w.close()
    monkeypatch.undo()
    assert await trio.Path(log_path).read_bytes() == BBLOB


@pytest.mark.parametrize("cut", [BBLOB.index(BLINES[5]) + 7, len(b"".join(BLINES[:5])) - 1])
def test_a_crash_inside_a_group_write_keeps_its_whole_batches(log_path: Path, cut: int) -> None:
    """Any prefix of a group's write reads back as its whole batches and a torn tail."""
    log_path.write_bytes(BBLOB[:cut])
    result = read_log(log_path)
    assert result.torn
    kept = len(result.records)
    assert result.records == BCHAIN[:kept] and BCHAIN[kept - 1].batch == 0
    assert kept == 4  # the first two batches; the third (records 4 and 5) was cut


def test_build_record_rejects_bad_batch() -> None:
    for bad in (-1, True, 1.0, "0", None):
        with pytest.raises(ValueError, match="batch"):
            build_record(GENESIS, 0, TS, "x", {}, batch=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="batch"):
            chain_hash(GENESIS, 0, TS, "x", {}, batch=bad)  # type: ignore[arg-type]
    assert build_record(GENESIS, 0, TS, "x", {}).batch == 0


async def test_new_log_fsyncs_directory(log_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Path] = []
    real = logstore._fsync_dir
    monkeypatch.setattr(logstore, "_fsync_dir", lambda p: (seen.append(p), real(p)))
    with open_for_append(log_path):
        pass
    assert seen == [log_path.parent]


async def test_reopen_and_continue(log_path: Path) -> None:
    await trio.Path(log_path).write_bytes(b"".join(LINES[:5]))
    result = read_log(log_path)
    w = await open_writer(log_path, result.records)
    assert (w.last_seq, w.last_hash) == (4, CHAIN[4].hash)
    more = [await w.append(f"event_{i % 3}", sample_data(i), TS + i * 1.25) for i in range(5, 8)]
    w.close()
    assert more == CHAIN[5:]
    assert read_log(log_path).records == CHAIN


async def test_open_refuses_stale_records_and_second_writer(log_path: Path) -> None:
    await trio.Path(log_path).write_bytes(BLOB)
    with pytest.raises(LogError, match="does not end with record seq 6"):
        open_for_append(log_path, CHAIN[:7])
    with pytest.raises(LogError, match="not empty"):
        open_for_append(log_path)
    with pytest.raises(FileNotFoundError):
        open_for_append(log_path.with_name("missing.jsonl"), CHAIN)
    w = open_for_append(log_path, CHAIN)
    with pytest.raises(LogLocked):
        open_for_append(log_path, CHAIN)
    w.close()
    w.close()  # idempotent
    with pytest.raises(trio.ClosedResourceError):
        await w.append("x", {}, TS)
    open_for_append(log_path, CHAIN).close()  # the lock went with the fd


def test_open_refuses_records_inside_an_incomplete_batch(log_path: Path) -> None:
    log_path.write_bytes(b"".join(BLINES[:3]))  # a batch of 3 cut after 2 lines
    with pytest.raises(LogError, match="incomplete batch"):
        open_for_append(log_path, BCHAIN[:3])
    result = read_log(log_path)
    with pytest.raises(LogError, match="does not end with record seq 0"):
        open_for_append(log_path, result.records)  # the torn tail is still there
    recover_torn_tail(log_path, result)
    open_for_append(log_path, result.records).close()


async def test_rejects_data_that_would_not_read_back(log_path: Path) -> None:
    w = open_for_append(log_path)
    for bad in ({"t": (1, 2)}, {"f": float("nan")}, {1: "int key"}, {"s": {1, 2}}):
        with pytest.raises((ValueError, TypeError)):
            await w.append("bad", bad, TS)
    for ts in (float("inf"), float("nan")):
        with pytest.raises(ValueError, match="finite"):
            await w.append("bad", {}, ts)
    with pytest.raises(TypeError):
        await w.append_many([("ok", {}), ("bad", [])], TS)  # type: ignore[list-item]
    assert await trio.Path(log_path).read_bytes() == b"" and w.last_seq == -1 and not w.broken
    rec = await w.append("ok", {"fine": [1, "two", None, 3.5]}, 7)
    assert rec.ts == 7.0 and rec.seq == 0
    w.close()
    assert read_log(log_path).records == [rec]


async def test_concurrent_appends_stay_chained(log_path: Path) -> None:
    w = open_for_append(log_path)
    async with trio.open_nursery() as nursery:
        for i in range(20):
            nursery.start_soon(w.append_many, [("e", {"i": i}), ("f", {"i": i})], TS + i)
    w.close()
    records = read_log(log_path).records
    assert [r.seq for r in records] == list(range(40))
    # Each batch stayed contiguous, counted 1 then 0.
    assert all(records[k].data == records[k + 1].data for k in range(0, 40, 2))
    assert [r.batch for r in records] == [1, 0] * 20


async def test_cancelled_before_write_writes_nothing(log_path: Path) -> None:
    w = open_for_append(log_path)
    with trio.CancelScope() as scope:
        scope.cancel()
        await w.append("e", {}, TS)
    assert await trio.Path(log_path).read_bytes() == b"" and w.last_seq == -1
    await w.append("e", {}, TS)
    w.close()
    assert len(read_log(log_path).records) == 1


# --- failures ---------------------------------------------------------------------------------


async def test_writer_broken_when_fd_pulled(log_path: Path) -> None:
    w = open_for_append(log_path)
    good = await w.append("a", {}, TS)
    os.close(w._fd)  # simulate the file going away under the writer
    with pytest.raises(LogFailure, match="write failed"):
        await w.append("b", {}, TS)
    assert w.broken and w.last_seq == 0
    with pytest.raises(LogFailure, match="broken"):
        await w.append("c", {}, TS)
    w._fd = -1  # already closed above; nothing to release
    w.close()
    assert read_log(log_path).records == [good]


async def test_fsync_failure_is_fatal_and_never_retried(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(groupsync, "RWF_DSYNC", None)  # the write-and-fsync path
    w = open_for_append(log_path)
    await w.append("a", {}, TS)
    calls = 0

    def failing_fsync(fd: int) -> None:
        nonlocal calls
        calls += 1
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(LogFailure, match="fsync failed") as info:
        await w.append("b", {}, TS)
    assert isinstance(info.value.__cause__, OSError)
    assert w.broken and w.last_seq == 0
    with pytest.raises(LogFailure):
        await w.append_many([("c", {})], TS)
    assert calls == 1
    monkeypatch.undo()
    w.close()
    # The write went through before the fsync failed: the file holds the unacknowledged record
    # (never durable, so after a real crash it may be gone) and stays a valid log.
    assert [r.type for r in read_log(log_path).records] == ["a", "b"]


# --- reading: torn tails ----------------------------------------------------------------------


def test_empty_and_missing(log_path: Path) -> None:
    log_path.write_bytes(b"")
    result = read_log(log_path)
    assert result.records == [] and not result.torn and result.last_hash == GENESIS
    with pytest.raises(FileNotFoundError):
        read_log(log_path.with_name("nope.jsonl"))


def test_truncation_at_line_boundaries_is_a_shorter_valid_log(log_path: Path) -> None:
    for k in range(len(LINES) + 1):
        log_path.write_bytes(b"".join(LINES[:k]))
        result = read_log(log_path)
        assert result.records == CHAIN[:k] and not result.torn


async def test_torn_tail_at_every_offset_of_last_line(tmp_path: Path) -> None:
    start = len(BLOB) - len(LINES[-1])
    for cut in range(start + 1, len(BLOB)):  # every cut inside the last line, incl. its newline
        path = tmp_path / f"cut{cut}.jsonl"
        path.write_bytes(BLOB[:cut])
        result = read_log(path)
        assert result.torn, cut
        assert result.records == CHAIN[:-1] and result.valid_end == start
        assert result.tail == BLOB[start:cut]
        assert result.torn_reason is not None and "line 8 (seq 7)" in result.torn_reason
        torn = recover_torn_tail(path, result)
        assert torn == path.with_name(path.name + ".torn")
        assert torn.read_bytes() == BLOB[start:cut]
        assert path.read_bytes() == BLOB[:start]
        again = read_log(path)
        assert again.records == CHAIN[:-1] and not again.torn
        w = open_for_append(path, again.records)
        rec = await w.append("event_1", sample_data(7), TS + 7 * 1.25)
        w.close()
        assert rec == CHAIN[-1]
        assert path.read_bytes() == BLOB


def test_missing_final_newline_is_torn(log_path: Path) -> None:
    log_path.write_bytes(BLOB[:-1])
    result = read_log(log_path)
    assert result.torn and result.torn_reason.endswith("missing trailing newline")
    assert result.records == CHAIN[:-1]


def test_garbage_last_line_is_torn(log_path: Path) -> None:
    for junk in (b"\x00" * 300, b"\x00" * 40 + b"\n", b"{}\n", b"\n", b"garbage"):
        log_path.write_bytes(BLOB + junk)
        result = read_log(log_path)
        assert result.torn and result.records == CHAIN and result.tail == junk


def test_recover_numbers_torn_files_and_checks_for_changes(log_path: Path) -> None:
    log_path.write_bytes(BLOB + b"{half")
    first = recover_torn_tail(log_path, read_log(log_path))
    log_path.write_bytes(BLOB + b"{other")
    second = recover_torn_tail(log_path, read_log(log_path))
    assert first is not None and second is not None
    assert first.name == "g1.jsonl.torn" and second.name == "g1.jsonl.torn.1"
    assert (first.read_bytes(), second.read_bytes()) == (b"{half", b"{other")
    assert recover_torn_tail(log_path, read_log(log_path)) is None
    log_path.write_bytes(BLOB + b"{x")
    stale = read_log(log_path)
    log_path.write_bytes(BLOB + b"{y")
    with pytest.raises(LogError, match="changed"):
        recover_torn_tail(log_path, stale)
    assert log_path.read_bytes() == BLOB + b"{y"


def test_a_tail_too_big_for_the_free_space_is_left_where_it_is(log_path: Path, monkeypatch) -> None:
    """Found by review: a planted log's sparse tail of "nothing" was copied byte for byte, so a
    file taking no space could fill the disk. A tail that would take more than half the free
    space is not saved: the log is left as it is, and no ``.torn`` file is made."""
    tail = b"\x00" * 5000
    log_path.write_bytes(BLOB + tail)
    result = read_log(log_path)
    real = os.statvfs

    def nearly_full(where: object) -> os.statvfs_result:
        st = real(where)  # type: ignore[arg-type]
        fields = list(st)
        fields[4] = 9999 // st.f_frsize  # f_bavail: under 10 KB left to users
        return os.statvfs_result(fields)

    monkeypatch.setattr(os, "statvfs", nearly_full)
    with pytest.raises(OSError, match="more than half the disk's free space") as caught:
        recover_torn_tail(log_path, result)
    assert caught.value.errno == errno.ENOSPC
    assert log_path.read_bytes() == BLOB + tail
    assert [p.name for p in log_path.parent.iterdir()] == [log_path.name]
    monkeypatch.setattr(os, "statvfs", real)
    torn = recover_torn_tail(log_path, result)
    assert torn is not None and torn.read_bytes() == tail and log_path.read_bytes() == BLOB


# --- reading: incomplete batches ---------------------------------------------------------------


@pytest.mark.parametrize("first", [1, 7])  # the two batches of 3: lines 2-4 and lines 8-10
@pytest.mark.parametrize("kept", [1, 2])
async def test_batch_cut_after_whole_lines_recovers_to_before_it(
    log_path: Path, first: int, kept: int
) -> None:
    assert [r.batch for r in BCHAIN[first : first + 3]] == [2, 1, 0]
    before = b"".join(BLINES[:first])
    written = b"".join(BLINES[first : first + kept])
    await trio.Path(log_path).write_bytes(before + written)
    result = read_log(log_path)
    assert result.torn and result.records == BCHAIN[:first]
    assert result.valid_end == len(before) and result.tail == written
    assert result.torn_reason == (
        f"line {first + 1} (seq {first}): incomplete batch: {kept} of 3 records written"
    )
    torn = recover_torn_tail(log_path, result)
    assert torn is not None and torn.read_bytes() == written
    assert await trio.Path(log_path).read_bytes() == before
    again = read_log(log_path)
    assert again.records == BCHAIN[:first] and not again.torn
    # The decision is made again, whole this time: same bytes as if no crash had happened.
    w = open_for_append(log_path, again.records)
    items = [(r.type, r.data) for r in BCHAIN[first : first + 3]]
    await w.append_many(items, BCHAIN[first].ts)
    w.close()
    assert await trio.Path(log_path).read_bytes() == b"".join(BLINES[: first + 3])


def test_truncation_at_line_boundaries_keeps_whole_batches(log_path: Path) -> None:
    for k in range(len(BLINES) + 1):
        log_path.write_bytes(b"".join(BLINES[:k]))
        result = read_log(log_path)
        keep = batch_start(BCHAIN, k)
        assert result.records == BCHAIN[:keep], k
        assert result.valid_end == len(b"".join(BLINES[:keep]))
        assert result.torn == (keep != k)


def test_torn_tail_at_every_byte_offset_recovers_to_last_complete_batch(tmp_path: Path) -> None:
    ends = [len(b"".join(BLINES[: k + 1])) for k in range(len(BLINES))]
    for cut in range(len(BBLOB) + 1):
        path = tmp_path / f"cut{cut}.jsonl"
        path.write_bytes(BBLOB[:cut])
        result = read_log(path)
        whole = sum(end <= cut for end in ends)  # lines that survived with their newline
        keep = batch_start(BCHAIN, whole)
        valid_end = len(b"".join(BLINES[:keep]))
        assert result.records == BCHAIN[:keep], cut
        assert result.valid_end == valid_end and result.tail == BBLOB[valid_end:cut]
        assert result.torn == (cut != valid_end)
        if whole > keep:
            first = BCHAIN[keep]
            assert result.torn_reason is not None
            assert result.torn_reason.startswith(
                f"line {keep + 1} (seq {keep}): incomplete batch: "
                f"{whole - keep} of {first.batch + 1} records written"
            ), (cut, result.torn_reason)
            assert ("; then line" in result.torn_reason) == (cut != ends[whole - 1])
        elif result.torn:
            assert result.torn_reason is not None
            assert result.torn_reason.startswith(f"line {whole + 1} (seq {whole}): ")
        if result.torn:
            torn = recover_torn_tail(path, result)
            assert torn is not None and torn.read_bytes() == BBLOB[valid_end:cut]
        assert path.read_bytes() == BBLOB[:valid_end]
        again = read_log(path)
        assert again.records == BCHAIN[:keep] and not again.torn


def test_incomplete_batch_then_torn_line(log_path: Path) -> None:
    # Batch of 3 at lines 8-10: two whole lines, then half of the third.
    data = b"".join(BLINES[:9]) + BLINES[9][:40]
    log_path.write_bytes(data)
    result = read_log(log_path)
    assert result.records == BCHAIN[:7] and result.tail == data[len(b"".join(BLINES[:7])) :]
    assert result.torn_reason == (
        "line 8 (seq 7): incomplete batch: 2 of 3 records written; "
        "then line 10 (seq 9): not valid JSON"
    )
    # The whole last line without its newline is torn too: the batch goes with it.
    log_path.write_bytes(BBLOB[:-1])
    result = read_log(log_path)
    assert result.records == BCHAIN[:7]
    assert result.torn_reason is not None
    assert result.torn_reason.endswith("then line 10 (seq 9): missing trailing newline")


def test_new_batch_may_start_with_any_count(log_path: Path) -> None:
    """A count k-1 right after a 0 is not "k missing": it starts a batch of k records."""
    records = with_counts([0, 3, 2, 1, 0, 1, 0, 0])
    log_path.write_bytes(b"".join(lines_of(records)))
    result = read_log(log_path)
    assert result.records == records and not result.torn


@pytest.mark.parametrize(
    ("counts", "bad", "reason"),
    [
        ([0, 2, 0, 0, 0], 2, "batch 1 expected (line 2 has batch 2), found 0"),  # ends early
        ([0, 1, 1, 0, 0], 2, "batch 0 expected (line 2 has batch 1), found 1"),  # repeats
        ([2, 1, 2, 1, 0], 2, "batch 0 expected (line 2 has batch 1), found 2"),  # restarts
        ([1, 0, 0, 3, 1, 0], 4, "batch 2 expected (line 4 has batch 3), found 1"),  # skips
        ([0, 0, 2, 0], 3, "batch 1 expected (line 3 has batch 2), found 0"),  # even at the end
    ],
)
def test_batch_count_inconsistency_is_corruption(
    log_path: Path, counts: list[int], bad: int, reason: str
) -> None:
    """Every line is sound and chained, but the counts break the fit rule: only an edit does that."""
    lines = lines_of(with_counts(counts))
    err = expect_corrupt(log_path, b"".join(lines), bad, reason)
    assert err.reason == reason
    # Also when the offending record is the last line and lost its newline.
    expect_corrupt(log_path, b"".join(lines[: bad + 1])[:-1], bad, reason)


def test_edited_batch_count_is_caught_at_its_line(log_path: Path) -> None:
    # Changing a count without rehashing is a hash mismatch on that line.
    line = BLINES[2].replace(b'"batch":1,', b'"batch":0,')
    expect_corrupt(log_path, b"".join([*BLINES[:2], line, *BLINES[3:]]), 2, "hash mismatch")
    # Rehashed, it is sound but breaks the fit rule on its own line (before the next prev link).
    r = BCHAIN[2]
    edited = build_record(r.prev, r.seq, r.ts, r.type, r.data, batch=0)
    data = b"".join([*BLINES[:2], encode_record(edited), *BLINES[3:]])
    expect_corrupt(log_path, data, 2, "batch 1 expected (line 2 has batch 2), found 0")
    # Rehashing the whole batch to end early still leaves line 4 breaking the prev link.
    first = build_record(BCHAIN[1].prev, 1, TS + 10, BCHAIN[1].type, BCHAIN[1].data, batch=1)
    second = build_record(first.hash, 2, TS + 10, r.type, r.data, batch=0)
    data = b"".join([BLINES[0], encode_record(first), encode_record(second), *BLINES[3:]])
    expect_corrupt(log_path, data, 3, "prev does not match line 3's hash")


# --- reading: corruption ----------------------------------------------------------------------


def expect_corrupt(path: Path, data: bytes, line0: int, reason: str | None = None) -> LogCorrupt:
    path.write_bytes(data)
    with pytest.raises(LogCorrupt) as info:
        read_log(path)
    err = info.value
    assert err.line == line0 + 1, (err, line0)
    assert err.expected_seq == line0
    assert err.offset == sum(len(x) for x in data.splitlines(keepends=True)[:line0])
    if reason is not None:
        assert reason in err.reason, err.reason
    return err


FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(pos=st.integers(0, len(BLOB) - 1), mask=st.integers(1, 255))
@example(pos=len(BLOB) - len(LINES[-1]) - 1, mask=0x2A)  # merges the last two lines
@example(pos=len(BLOB) - 1, mask=0x0A)  # the final newline becomes NUL
@example(pos=len(LINES[0]) + 5, mask=0x0A ^ ord("t"))  # a newline inside line 2
def test_any_flipped_byte_is_caught_at_its_line(log_path: Path, pos: int, mask: int) -> None:
    tampered = bytearray(BLOB)
    tampered[pos] ^= mask
    line0 = first_diff(LINES, bytes(tampered).splitlines(keepends=True))
    assert line0 == BLOB.count(b"\n", 0, pos)  # the line holding the byte
    if line0 == len(LINES) - 1:
        log_path.write_bytes(bytes(tampered))
        result = read_log(log_path)
        assert result.torn and result.records == CHAIN[:-1]
    else:
        expect_corrupt(log_path, bytes(tampered), line0)


@FUZZ
@given(pos=st.integers(0, len(BBLOB) - 1), mask=st.integers(1, 255))
@example(pos=len(BBLOB) - len(BLINES[-1]) - 1, mask=0x2A)  # merges the last two lines
@example(pos=len(BBLOB) - 1, mask=0x0A)  # the final newline becomes NUL
@example(pos=len(BBLOB) - len(BLINES[-1]) + 9, mask=ord("0") ^ ord("1"))  # last count 0 -> 1
@example(pos=len(BLINES[0]) + 9, mask=ord("2") ^ ord("0"))  # a batch's first count 2 -> 0
def test_any_flipped_byte_in_a_batched_log_is_caught_at_its_line(
    log_path: Path, pos: int, mask: int
) -> None:
    tampered = bytearray(BBLOB)
    tampered[pos] ^= mask
    line0 = first_diff(BLINES, bytes(tampered).splitlines(keepends=True))
    assert line0 == BBLOB.count(b"\n", 0, pos)
    if line0 == len(BLINES) - 1:
        # Indistinguishable from a torn write: the whole last batch (3 records) goes with it.
        log_path.write_bytes(bytes(tampered))
        result = read_log(log_path)
        assert result.torn and result.records == BCHAIN[:7]
        assert result.valid_end == len(b"".join(BLINES[:7]))
    else:
        expect_corrupt(log_path, bytes(tampered), line0)


CHAINS = {"single": LINES, "batched": BLINES}
BOTH = pytest.mark.parametrize("which", list(CHAINS))


@BOTH
@FUZZ
@given(data=st.data())
def test_deleted_line_is_caught(log_path: Path, which: str, data: st.DataObject) -> None:
    lines = CHAINS[which]
    i = data.draw(st.integers(0, len(lines) - 2), label="i")
    tampered = lines[:i] + lines[i + 1 :]
    expect_corrupt(log_path, b"".join(tampered), i, f"sequence {i} expected, found {i + 1}")


@BOTH
@FUZZ
@given(data=st.data())
def test_swapped_lines_are_caught(log_path: Path, which: str, data: st.DataObject) -> None:
    lines = CHAINS[which]
    pair = st.lists(st.integers(0, len(lines) - 1), min_size=2, max_size=2, unique=True)
    i, j = sorted(data.draw(pair, label="ij"))
    tampered = list(lines)
    tampered[i], tampered[j] = tampered[j], tampered[i]
    expect_corrupt(log_path, b"".join(tampered), i, f"sequence {i} expected, found {j}")


@BOTH
@FUZZ
@given(data=st.data())
def test_inserted_copy_is_caught(log_path: Path, which: str, data: st.DataObject) -> None:
    lines = CHAINS[which]
    src = data.draw(st.integers(0, len(lines) - 1), label="src")
    at = data.draw(st.integers(0, len(lines)), label="at")
    tampered = [*lines[:at], lines[src], *lines[at:]]
    line0 = first_diff(lines, tampered)
    expect_corrupt(log_path, b"".join(tampered), line0, "sequence")


def test_deleting_the_last_lines_of_a_batch_looks_like_a_crash(log_path: Path) -> None:
    """Cutting lines off the end is what a crash does: the batch is set aside, not lost."""
    log_path.write_bytes(b"".join(BLINES[:-1]))
    result = read_log(log_path)
    assert result.records == BCHAIN[:7]
    assert result.torn_reason == "line 8 (seq 7): incomplete batch: 2 of 3 records written"


def test_foreign_record_with_valid_hash_at_end_is_corruption(log_path: Path) -> None:
    """A well-formed record that does not fit is an edit, not a torn write, even at the end."""
    other = build_record("ab" * 32, 8, TS, "forged", {})
    expect_corrupt(log_path, BLOB + encode_record(other), 8, "prev does not match line 8's hash")
    # ...and without its newline too.
    expect_corrupt(log_path, BLOB + encode_record(CHAIN[2])[:-1], 8, "sequence 8 expected")


def test_reason_messages(log_path: Path) -> None:
    fake0 = build_record("11" * 32, 0, TS, "x", {})
    expect_corrupt(log_path, encode_record(fake0) + BLOB, 0, "prev of the first record")
    spaced = json.dumps(json.loads(LINES[2]), sort_keys=True).encode() + b"\n"
    expect_corrupt(log_path, b"".join([*LINES[:2], spaced, *LINES[3:]]), 2, "not canonical")
    expect_corrupt(log_path, b"".join([*LINES[:3], b"{\n", *LINES[3:]]), 3, "not valid JSON")
    extra = LINES[1].replace(b'{"batch"', b'{"x":1,"batch"')
    expect_corrupt(log_path, b"".join([LINES[0], extra, *LINES[2:]]), 1, "not a log record")
    for bad_batch in (b"", b'"batch":-1,', b'"batch":true,', b'"batch":"0",', b'"batch":0.0,'):
        line = LINES[1].replace(b'"batch":0,', bad_batch)
        expect_corrupt(log_path, b"".join([LINES[0], line, *LINES[2:]]), 1, "not a log record")
    forged = LINES[4].replace(b'"round":4', b'"round":5')
    expect_corrupt(log_path, b"".join([*LINES[:4], forged, *LINES[5:]]), 4, "hash mismatch")
    # A correctly rehashed edit still breaks the next line's prev link.
    rec = CHAIN[4]
    edited = build_record(rec.prev, 4, rec.ts, rec.type, {**rec.data, "round": 99})
    err = expect_corrupt(
        log_path,
        b"".join([*LINES[:4], encode_record(edited), *LINES[5:]]),
        5,
        "prev does not match line 5's hash",
    )
    assert str(err).startswith(f"{log_path}: line 6 (seq 5 expected there)")


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(str.upper, id="uppercase"),
        pytest.param(lambda h: h + "\n", id="trailing-newline"),
        pytest.param(lambda h: h[:-1], id="63-digits"),
        pytest.param(lambda h: h + "0", id="65-digits"),
        pytest.param(lambda h: h[:-1] + "é", id="not-ascii"),
        pytest.param(lambda h: h[:32] + " " + h[32:], id="spaced"),
    ],
)
@pytest.mark.parametrize("field", ["prev", "hash"])
def test_prev_and_hash_are_exactly_64_lowercase_hex_digits(
    log_path: Path, shape: Any, field: str
) -> None:
    """A line whose ``prev`` or ``hash`` is another spelling of hex is damage, even when its own
    hash is right for it: ``bytes.fromhex`` would take most of these, and a pattern's ``$``
    takes a trailing newline."""
    rec = CHAIN[3]
    value = shape(getattr(rec, field))
    line = LINES[3].replace(
        json.dumps(getattr(rec, field)).encode(), json.dumps(value, ensure_ascii=False).encode()
    )
    assert line != LINES[3]
    expect_corrupt(log_path, b"".join([*LINES[:3], line, *LINES[4:]]), 3, "not a log record")
    if field == "prev":  # rehashed so the line is consistent with itself: still not a record
        try:
            rehashed = encode_record(build_record(value, 3, rec.ts, rec.type, rec.data))
        except ValueError:  # bytes.fromhex refuses this one outright
            return
        expect_corrupt(
            log_path, b"".join([*LINES[:3], rehashed, *LINES[4:]]), 3, "not a log record"
        )


# --- receipts ---------------------------------------------------------------------------------


def test_receipts() -> None:
    for r in CHAIN:
        assert verify_receipt(CHAIN, r.seq, r.hash)
    assert not verify_receipt(CHAIN, 3, CHAIN[4].hash)
    assert not verify_receipt(CHAIN, 8, CHAIN[-1].hash)
    assert not verify_receipt(CHAIN, -1, CHAIN[-1].hash)
    assert not verify_receipt(CHAIN, True, CHAIN[1].hash)
    assert not verify_receipt(CHAIN[:3], 5, CHAIN[5].hash)  # a log cut short loses the receipt
    other = build_record(GENESIS, 0, TS + 1, "event_0", {})
    assert not verify_receipt(CHAIN, 0, other.hash)
    assert not verify_receipt([], 0, GENESIS)


def test_damage_spanning_several_tail_lines_is_torn_unless_a_sound_line_follows(
    log_path: Path,
) -> None:
    last = LINES[-1]
    split = last[:50] + b"\n" + last[51:]  # a newline landed inside the last record
    log_path.write_bytes(b"".join(LINES[:-1]) + split)
    result = read_log(log_path)
    assert result.torn and result.records == CHAIN[:-1] and result.tail == split
    log_path.write_bytes(BLOB + b"\x00" * 10 + b"\n" + b"junk\n" + b"{")
    assert read_log(log_path).valid_end == len(BLOB)
    # Damage followed by a whole, sound record is not a crash artifact.
    expect_corrupt(log_path, b"".join(LINES[:-1]) + b"\x00" * 10 + b"\n" + LINES[-1], 7)


# --- bounded reading ----------------------------------------------------------------------------


def test_a_line_longer_than_the_limit_is_damage(log_path: Path) -> None:
    long = b"x" * (logformat.MAX_LINE_BYTES + 10)
    log_path.write_bytes(BLOB + long + b"\n")
    result = read_log(log_path)
    assert result.records == CHAIN and result.valid_end == len(BLOB)
    assert result.torn_reason == (
        f"line 9 (seq 8): line longer than {logformat.MAX_LINE_BYTES} bytes (no record is that long)"
    )
    assert result.tail == long + b"\n"
    # A sound record after it, on its own line or at the end of the long line: corruption.
    for after in (b"\n" + LINES[3], LINES[3]):
        expect_corrupt(log_path, b"".join(LINES[:-1]) + long + after, 7, "line longer than")
    # Exactly the limit is still a line (and this one is merely not JSON).
    log_path.write_bytes(BLOB + b"x" * logformat.MAX_LINE_BYTES + b"\n")
    assert read_log(log_path).torn_reason == "line 9 (seq 8): not valid JSON"


def test_the_tail_is_read_again_and_checked(log_path: Path) -> None:
    log_path.write_bytes(BLOB + b"{half")
    result = read_log(log_path)
    assert result.tail == b"{half" and len(result.tail_sha256) == 64
    log_path.write_bytes(BLOB + b"{hal!")
    with pytest.raises(LogError, match="changed"):
        _ = result.tail


def test_recover_refuses_a_file_replaced_since_it_was_read(log_path: Path) -> None:
    log_path.write_bytes(BLOB + b"{half")
    result = read_log(log_path)
    replacement = log_path.with_name("new.jsonl")
    replacement.write_bytes(BLOB + b"{half")  # the same bytes, another file
    os.replace(replacement, log_path)
    with pytest.raises(LogError, match="changed"):
        recover_torn_tail(log_path, result)
    assert log_path.read_bytes() == BLOB + b"{half"
    assert not log_path.with_name(log_path.name + ".torn").exists()


def test_read_log_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "x.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        read_log(fifo)  # no writer: a blocking open would hang here
    with pytest.raises(IsADirectoryError):
        read_log(tmp_path)


def test_first_record_reads_one_bounded_line(log_path: Path) -> None:
    def first(data: bytes) -> tuple[LogRecord | None, str]:
        log_path.write_bytes(data)
        fd = os.open(log_path, os.O_RDONLY)
        try:
            return logformat.first_record(fd)
        finally:
            os.close(fd)

    assert first(BLOB) == (CHAIN[0], "")
    assert first(LINES[0][:-1]) == (CHAIN[0], "")  # a crash in the first append
    assert first(b"") == (None, "the file is empty")
    assert first(LINES[1]) == (None, "its seq is 1, not 0")
    assert first(b"x" * (2 * logformat.MAX_LINE_BYTES))[1].startswith("line longer than")
    assert first(b"\x00junk\n" + BLOB) == (None, "not valid JSON")


def test_a_record_whose_data_holds_hash_keys_is_read_and_hashed_right(tmp_path: Path) -> None:
    """The reader hashes a line's body cut from the line itself (``"hash":"H",`` taken out): a
    ``hash`` key inside the data or the command, even one holding the record's own prev, is not
    the record's and changes nothing; and a line edited there is still caught."""
    first = build_record(GENESIS, 0, TS, "a", {"hash": GENESIS, "z": [{"hash": "x"}]})
    second = build_record(
        first.hash, 1, TS, "b", {"hash": first.hash, "prev": first.hash}, cmd={"hash": 1}
    )
    path = tmp_path / "log.jsonl"
    path.write_bytes(encode_record(first) + encode_record(second))
    assert read_log(path).records == [first, second]
    edited = encode_record(second).replace(b'"hash":1', b'"hash":2')
    path.write_bytes(encode_record(first) + edited)
    result = read_log(path)
    assert result.records == [first] and result.torn
    assert result.torn_reason is not None and "hash mismatch" in result.torn_reason


def test_a_log_is_written_through_no_link(tmp_path):
    """A link swapped in for a log (its target anyone's file) is refused by every open that
    writes, not only by start-up's check (found by review: the check and the open were apart)."""
    import errno as _errno

    from conjure.server.logstore import open_for_append as opened

    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(b"")
    link = tmp_path / "g.jsonl"
    link.symlink_to(target)
    with pytest.raises(OSError) as caught:
        opened(link)
    assert caught.value.errno == _errno.ELOOP and target.read_bytes() == b""
