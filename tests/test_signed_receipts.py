"""Signed receipts: the server's word that its log held a record, which nobody else can write.

An unsigned receipt the log disagrees with is one person's word against the log's; a signed one
is the server's own. These tests run a real server (its key from conftest's TEST_OPTIONS), the
real client's receipt file, the real key file, and ``conjure replay`` on logs the real writer made
and a forger rewrote.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from gamescripts import STANDARD
from hangguard import no_longer_than
from test_client_session import view
from test_server_game import play_game
from wsclient import open_table, start_game

from conjure.client.cli import main
from conjure.client.session import Session
from conjure.client.statefile import StateDir
from conjure.protocol.messages import Receipt, Update
from conjure.protocol.receiptsig import is_key, key_text, sign, signed_bytes, verify
from conjure.server import receiptkey
from conjure.server.app import banner
from conjure.server.audit_verify import audit
from conjure.server.logformat import read_log
from tests.auditlogs import as_batches, sample_game, write_records
from tests.test_audit_trust import forged

KEY = Ed25519PrivateKey.generate()
OTHER = Ed25519PrivateKey.generate()


@pytest.fixture(autouse=True)
def _no_user_state(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CONJURE_STATE_DIR", str(tmp_path_factory.mktemp("nostate")))


# ---------------------------------------------------------------------------------------------
# The signature


def test_a_signature_covers_the_game_the_position_and_the_hash():
    h = "ab" * 32
    sig = sign(KEY, "game-1", 7, h)
    key = key_text(KEY)
    assert is_key(key) and len(sig) == 128
    assert verify(key, sig, "game-1", 7, h)
    assert not verify(key, sig, "game-2", 7, h)  # moved to another game
    assert not verify(key, sig, "game-1", 8, h)  # moved to another record
    assert not verify(key, sig, "game-1", 7, "cd" * 32)  # another history
    assert not verify(key_text(OTHER), sig, "game-1", 7, h)  # someone else's key


@pytest.mark.parametrize(
    "key, sig",
    [
        ("ed25519:" + "0" * 63, None),
        ("ED25519:" + "0" * 64, None),
        ("rsa:" + "0" * 64, None),
        (None, "zz" * 64),
        (None, "ab" * 63),
        (None, "AB" * 64),
    ],
)
def test_a_malformed_key_or_signature_is_simply_not_valid(key, sig):
    good_key, good_sig = key_text(KEY), sign(KEY, "g", 1, "ab" * 32)
    assert not verify(key or good_key, sig or good_sig, "g", 1, "ab" * 32)


def test_the_signed_bytes_are_length_prefixed_and_cannot_collide():
    # "g1" + seq 23 and "g" + a longer id cannot be cut the same way
    assert signed_bytes("g1", 23, "x") != signed_bytes("g", 123, "x")
    assert signed_bytes("a", 1, "bc") != signed_bytes("ab", 1, "c")
    assert not verify(key_text(KEY), sign(KEY, "g", 1, "ab" * 32), "g", -1, "ab" * 32)
    assert not verify(key_text(KEY), sign(KEY, "g", 1, "ab" * 32), "g", 2**70, "ab" * 32)


# ---------------------------------------------------------------------------------------------
# The server signs the first receipt of each round, and the last of the game


def _batches(records) -> list[list]:
    """The log's records, batch by batch (``batch`` counts the records after one in its batch)."""
    out: list[list] = []
    for r in records:
        if not out or out[-1][-1].batch == 0:
            out.append([])
        out[-1].append(r)
    return out


async def test_the_server_signs_each_round_start_and_the_end_of_the_game(server):
    key = key_text(server.config.receipt_key)
    tables: list = []
    await play_game(server.url, "standard", STANDARD, tables)
    ann = tables[0][0]
    final = ann.view
    assert final is not None and final.phase == "over"
    game_id = final.game_id
    records = read_log(server.replays / f"{game_id}.jsonl").records
    # the batches that begin a round (the game's start with round 1) or end the game
    due = {
        b[-1].seq
        for b in _batches(records)
        if any(r.type in ("round_started", "game_ended") for r in b)
    }
    assert len(due) == len(STANDARD) + 1
    updates = [u for u in ann.received if isinstance(u, Update) and u.receipt is not None]
    seen = {u.receipt.seq for u in updates}
    signed = {u.receipt.seq for u in updates if u.receipt.sig is not None}
    assert signed == due & seen and due <= seen, "Ann was told of every round's start"
    assert len(signed) < len(seen), "a move within a round is not signed"
    for u in updates:
        r = u.receipt
        if r.sig is not None:
            assert r.key == key and verify(r.key, r.sig, game_id, r.seq, r.hash)
        else:
            assert r.key is None
    # the last receipt is signed and is the log's last record: it covers the whole game
    last = updates[-1].receipt
    assert last.sig is not None and (last.seq, last.hash) == (records[-1].seq, records[-1].hash)


async def test_a_server_without_a_key_sends_receipts_as_before(start_server):
    srv = await start_server(receipt_key=None)
    async with open_table(srv.url, ["Ann", "Bob", "Cy"]) as table:
        await start_game(table)
        updates = [u for u in table[0].received if isinstance(u, Update) and u.receipt]
    assert updates and all(u.receipt.sig is None and u.receipt.key is None for u in updates)
    # and on the wire a receipt is still just {"seq", "hash"}
    raw = [f for f in table[0].frames if isinstance(f, str) and '"receipt":{' in f]
    assert raw and all('"sig"' not in f for f in raw)


async def test_a_resumed_game_signs_where_its_log_ends(start_server):
    srv = await start_server()
    async with open_table(srv.url, ["Ann", "Bob", "Cy"]) as table:
        await start_game(table)
        code = table[0].room
        await table[0].wait_view(lambda v: v.phase == "choose")
    await srv.aclose()
    again = await start_server()
    room = again.rooms[code]
    assert room.receipt is not None and room.receipt.sig is not None
    game_id = room.game.setup.game_id
    assert verify(room.receipt.key, room.receipt.sig, game_id, room.receipt.seq, room.receipt.hash)


# ---------------------------------------------------------------------------------------------
# The client keeps the newest signed receipt beside the newest receipt


def _signed(seq: int, hash_: str, game_id: str = "g1", key=KEY) -> Receipt:
    return Receipt(seq, hash_, key=key_text(key), sig=sign(key, game_id, seq, hash_))


def test_the_client_keeps_the_newest_signed_receipt_beside_the_newest(tmp_path):
    store = StateDir(tmp_path)
    s = Session(server="ws://x:1", store=store, send=lambda m: None, name="Ann", room="ABCD")

    def show(receipt: Receipt) -> None:
        s.on_message(Update(view=view("spell", turn=1), receipt=receipt))

    show(_signed(5, "a" * 64))
    show(Receipt(7, "b" * 64))
    forged_sig = Receipt(9, "c" * 64, key=key_text(KEY), sig=sign(KEY, "g1", 8, "c" * 64))
    show(forged_sig)  # a signature that does not verify is not kept as one
    data = json.loads(store.receipt_path("g1").read_text())
    assert (data["seq"], data["hash"]) == (9, "c" * 64)
    assert data["signed"] == {
        "seq": 5,
        "hash": "a" * 64,
        "key": key_text(KEY),
        "sig": sign(KEY, "g1", 5, "a" * 64),
    }
    show(_signed(11, "d" * 64))
    show(_signed(10, "e" * 64))  # never backwards
    data = json.loads(store.receipt_path("g1").read_text())
    assert (data["seq"], data["signed"]["seq"]) == (11, 11)
    assert stat.S_IMODE(os.stat(store.receipt_path("g1")).st_mode) == 0o600


def test_a_receipt_signed_later_at_the_same_position_is_still_kept(tmp_path):
    """A restarted server signs where its log ends: the client had that position unsigned."""
    store = StateDir(tmp_path)
    store.save_receipt("g1", 4, "a" * 64, server="ws://x:1", room="ABCD")
    s = Session(server="ws://x:1", store=store, send=lambda m: None, name="Ann", room="ABCD")
    s.on_message(Update(view=view("spell", turn=1), receipt=_signed(4, "a" * 64)))
    assert json.loads(store.receipt_path("g1").read_text())["signed"]["seq"] == 4


# ---------------------------------------------------------------------------------------------
# The audit: a signed receipt the log disagrees with is the server's word against its own log


def replay(*args: str) -> int:
    return main(["replay", "--no-state-dir", *args])


def _game(tmp_path: Path) -> tuple[Path, list]:
    path = tmp_path / "g.jsonl"
    records = write_records(path, as_batches(sample_game().decisions))
    return path, records


def _receipt_file(tmp_path: Path, entries: list[dict], name: str = "r.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(entries))
    return path


def _entry(records, seq: int, key=KEY, game_id: str | None = None, **extra) -> dict:
    gid = game_id or read_game_id(records)
    h = records[seq].hash
    return {
        "game_id": gid,
        "seq": seq,
        "hash": h,
        "key": key_text(key),
        "sig": sign(key, gid, seq, h),
    } | extra


def read_game_id(records) -> str:
    return records[0].data["game_id"]


def test_a_signed_receipt_on_the_chain_says_whose_key_signed_it(tmp_path, capsys):
    path, records = _game(tmp_path)
    f = _receipt_file(tmp_path, [_entry(records, 20)])
    assert replay(str(path), "--receipt", str(f)) == 0
    out = capsys.readouterr().out
    assert "signed receipt seq 20" in out and f"signed with {key_text(KEY)[:24]}…" in out
    a = audit(path, receipt_files=[f])
    assert [(r.status, r.signature) for r in a.receipts] == [("on-chain", "valid")]


def test_a_log_rewritten_under_a_signed_receipt_is_the_servers_word_against_its_log(
    tmp_path, capsys
):
    honest, records = _game(tmp_path)
    f = _receipt_file(tmp_path, [_entry(records, len(records) - 1)])
    # the operator rewrites a spell word and chains the whole log again: every hash checks
    path = forged(tmp_path / "forged.jsonl", {"wing": "king"})
    assert read_log(path).records[-1].hash != records[-1].hash
    assert replay(str(path), "--receipt", str(f), "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    (problem,) = doc["problems"]
    assert f"It is signed with {key_text(KEY)[:24]}…: if that is the server's key" in problem
    assert "the log was rewritten after the server sent it" in problem
    (r,) = doc["receipts"]
    assert (r["status"], r["signature"], r["key"]) == ("not-on-chain", "valid", key_text(KEY))
    # with the server's key named, one reading only: nobody else could have signed it
    assert replay(str(path), "--receipt", str(f), "--server-key", key_text(KEY), "--json") == 1
    (problem,) = json.loads(capsys.readouterr().out)["problems"]
    assert "The server signed this receipt (with the key given as --server-key)" in problem
    assert "the log was rewritten after the server sent it" in problem
    assert "not genuine" not in problem and "if not" not in problem
    assert honest.exists()


def test_a_log_cut_short_under_a_signed_receipt_is_caught_the_same_way(tmp_path, capsys):
    path, records = _game(tmp_path)
    f = _receipt_file(tmp_path, [_entry(records, len(records) - 1)])
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: records[-1].seq - 5]))
    assert replay(str(path), "--receipt", str(f), "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    problem = next(p for p in doc["problems"] if "beyond the end" in p)
    assert "the log was truncated after the server sent it" in problem


def test_a_made_up_signature_proves_nothing_and_says_so(tmp_path, capsys):
    path, records = _game(tmp_path)
    entry = _entry(records, 20)
    entry["hash"] = "0" * 64  # a receipt the log never held, with the real signature of another
    f = _receipt_file(tmp_path, [entry])
    assert replay(str(path), "--receipt", str(f), "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    (problem,) = doc["problems"]
    assert "its signature does not verify" in problem and "altered or made up" in problem
    assert "rewritten" not in problem  # it says nothing against the log
    (r,) = doc["receipts"]
    assert (r["status"], r["signature"]) == ("unchecked", "invalid")


def test_a_receipt_signed_for_another_game_does_not_verify_here(tmp_path):
    path, records = _game(tmp_path)
    h = records[20].hash
    entry = {"seq": 20, "hash": h, "key": key_text(KEY), "sig": sign(KEY, "another-game", 20, h)}
    a = audit(path, receipt_files=[_receipt_file(tmp_path, [entry])])
    assert [r.signature for r in a.receipts] == ["invalid"] and not a.verified


def test_the_organizer_can_name_the_servers_key(tmp_path, capsys):
    path, records = _game(tmp_path)
    off_chain = _entry(records, 30, key=OTHER)
    off_chain["hash"], off_chain["sig"] = "1" * 64, sign(OTHER, read_game_id(records), 30, "1" * 64)
    f = _receipt_file(tmp_path, [_entry(records, 20), _entry(records, 25, key=OTHER)])
    # without --server-key: both verify, and the report says two keys cannot both be the server's
    assert replay(str(path), "--receipt", str(f), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert any("the signed receipts name 2 keys" in n for n in doc["notes"])
    assert [r["signature"] for r in doc["receipts"]] == ["valid", "valid"]
    # with it: the server's is the server's, the other counts as unsigned (it is on the chain)
    assert replay(str(path), "--receipt", str(f), "--server-key", key_text(KEY), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["signature"] for r in doc["receipts"]] == ["server", "other-key"]
    assert any("seq 25" in n and "checked as an unsigned receipt" in n for n in doc["notes"])
    # a forger's own key signing a receipt the log never held: both readings, as unsigned
    g = _receipt_file(tmp_path, [off_chain], "forged.json")
    assert replay(str(path), "--receipt", str(g), "--server-key", key_text(KEY), "--json") == 1
    (problem,) = json.loads(capsys.readouterr().out)["problems"]
    assert "or the receipt is not genuine" in problem and "server signed" not in problem
    # an old key and a new one, both the server's (its key file was lost once)
    both = ("--server-key", key_text(KEY), "--server-key", key_text(OTHER))
    assert replay(str(path), "--receipt", str(f), *both, "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["signature"] for r in doc["receipts"]] == ["server", "server"]
    assert replay(str(path), "--server-key", "ed25519:nothex") == 2
    assert "--server-key 'ed25519:nothex'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "key, sig",
    [
        ("ed25519:01" + "00" * 31, "01" + "00" * 63),  # order 1: verifies for every message
        ("ed25519:" + "00" * 32, "01" + "00" * 63),  # order 4
        # order 8 (as libsodium lists it): one message in eight
        ("ed25519:26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", None),
        ("ed25519:c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", None),
        ("ed25519:ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", None),
    ],
)
def test_a_key_of_small_order_signs_for_nobody(tmp_path, capsys, key, sig):
    """Found by review: with such a "key" a forger needs no private key at all, and OpenSSL's
    Ed25519 accepted the made-up signature."""
    path, records = _game(tmp_path)
    gid = read_game_id(records)
    sigs = [sig] if sig else ["01" + "00" * 63, "00" * 64, "01" + "00" * 31 + "00" * 32]
    entries = [{"game_id": gid, "seq": 20, "hash": "1" * 64, "key": key, "sig": x} for x in sigs]
    assert replay(str(path), "--receipt", str(_receipt_file(tmp_path, entries)), "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    assert {r["signature"] for r in doc["receipts"]} == {"invalid"}
    assert not any("rewritten" in p for p in doc["problems"])
    assert not verify(key, sigs[0], gid, 20, "1" * 64)


def test_the_client_file_is_audited_with_its_signed_receipt(tmp_path, capsys):
    """What the client writes (both receipts in one file) is what the audit reads."""
    path, records = _game(tmp_path)
    gid = read_game_id(records)
    state = tmp_path / "ann"
    last = records[-1]
    StateDir(state).save_receipt(
        gid,
        last.seq,
        last.hash,
        server="ws://x:1",
        room="ABCD",
        signed={k: v for k, v in _entry(records, 40).items() if k != "game_id"},
    )
    assert replay(str(path), "--state-dir", str(state), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(r["seq"], r["status"], r.get("signature")) for r in doc["receipts"]] == [
        (last.seq, "on-chain", None),
        (40, "on-chain", "valid"),
    ]


@pytest.mark.parametrize(
    "entry, note",
    [
        ({"seq": 3, "hash": "ab" * 32, "key": 5, "sig": "x"}, "needs both a key and a sig"),
        ({"seq": 3, "hash": "ab" * 32, "sig": "ab" * 64}, "needs both a key and a sig"),
    ],
)
def test_a_half_signed_entry_is_ignored_with_a_note(tmp_path, entry, note):
    path, records = _game(tmp_path)
    a = audit(
        path, receipt_files=[_receipt_file(tmp_path, [entry | {"game_id": read_game_id(records)}])]
    )
    assert a.receipts == [] and any(note in n for n in a.notes)


# ---------------------------------------------------------------------------------------------
# The key: made once, kept, never replaced


def test_the_key_is_made_once_and_kept(tmp_path):
    path = tmp_path / "state" / "receipt-key.pem"
    made = receiptkey.load_or_make(path)
    assert made.created and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    again = receiptkey.load_or_make(path)
    assert not again.created and again.public == made.public and is_key(made.public)


@pytest.mark.parametrize(
    "content, mode, words",
    [
        (b"not a key", 0o600, "is not an unencrypted PEM private key"),
        (None, 0o644, "can be read by other users"),
        ("ec", 0o600, "a key of another kind than Ed25519"),
    ],
)
def test_a_key_file_that_cannot_be_used_is_refused_and_left_alone(tmp_path, content, mode, words):
    path = tmp_path / "receipt-key.pem"
    receiptkey.load_or_make(path)
    if content == "ec":
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        content = ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    if content is not None:
        path.write_bytes(content)
    os.chmod(path, mode)
    before = path.read_bytes()
    with pytest.raises(receiptkey.ReceiptKeyError, match=words):
        receiptkey.load_or_make(path)
    assert path.read_bytes() == before and stat.S_IMODE(os.stat(path).st_mode) == mode


def test_a_key_path_that_is_a_folder_or_a_dangling_link_is_refused(tmp_path):
    folder = tmp_path / "k"
    folder.mkdir()
    with pytest.raises(receiptkey.ReceiptKeyError, match=r"k is not a regular file"):
        receiptkey.load_or_make(folder)
    link = tmp_path / "link.pem"
    link.symlink_to(tmp_path / "nowhere" / "key.pem")
    with pytest.raises(receiptkey.ReceiptKeyError):
        receiptkey.load_or_make(link)
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("kind", ["fifo", "huge"])
def test_a_key_path_that_is_no_file_a_key_is_kept_in_is_refused_at_once(tmp_path, kind):
    """Found by review: the key was read whole, so a FIFO there hung the start (and a link to
    ``/dev/zero`` would fill the memory). Now only a regular file of a key's size is read."""
    path = tmp_path / "receipt-key.pem"
    if kind == "fifo":
        os.mkfifo(path, 0o600)
        words = "is not a regular file"
    else:
        with path.open("wb") as f:
            f.truncate(1 << 30)  # sparse: a gigabyte of nothing, on no disk
        path.chmod(0o600)
        words = "too big"

    with (
        no_longer_than(5, "reading the key"),
        pytest.raises(receiptkey.ReceiptKeyError, match=words),
    ):
        receiptkey.load_or_make(path)
    assert path.is_fifo() if kind == "fifo" else path.stat().st_size == 1 << 30


def test_a_key_file_of_a_kind_the_library_cannot_read_is_a_sentence_and_exit_2(tmp_path, capsys):
    """Found by review: an algorithm ``cryptography`` does not know raised past the sentence
    (a traceback and exit 1)."""
    import base64

    from cryptography.hazmat.primitives import serialization

    der = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    der = der.replace(b"\x06\x03\x2b\x65\x70", b"\x06\x03\x2b\x65\x63")  # OID 1.3.101.99
    key = tmp_path / "receipt-key.pem"
    pem = (
        b"-----BEGIN PRIVATE KEY-----\n" + base64.encodebytes(der) + b"-----END PRIVATE KEY-----\n"
    )
    key.write_bytes(pem)
    key.chmod(0o600)
    args = ["serve", "--host", "127.0.0.1", "--port", "0", "--replays", str(tmp_path / "r")]
    assert main([*args, "--receipt-key", str(key)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("conjure serve: ") and "Traceback" not in err
    assert key.read_bytes() == pem


def test_making_the_key_never_writes_through_a_planted_link(tmp_path):
    """Found by review: the temporary file had a name anyone could guess (and plant a link at)."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    victim.chmod(0o644)
    shared = tmp_path / "shared"
    shared.mkdir()
    for pid in {os.getpid(), 1}:
        (shared / f".receipt-key.pem.{pid}.tmp").symlink_to(victim)
    made = receiptkey.load_or_make(shared / "receipt-key.pem")
    assert victim.read_text() == "precious\n" and stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert not made.path.is_symlink() and receiptkey.load_or_make(made.path).public == made.public
    assert sorted(p.name for p in shared.iterdir() if not p.is_symlink()) == ["receipt-key.pem"]


async def test_the_banner_names_the_receipt_key(start_server):
    srv = await start_server()
    lines = banner(srv)
    at = lines.index("receipts signed with the key (for conjure replay --server-key):")
    assert lines[at + 1] == f"  {key_text(srv.config.receipt_key)}"
    assert all(len(line) <= 80 for line in lines[at : at + 2])
    assert lines[-1].startswith("listening on ")


def test_the_games_last_receipt_kept_twice_counts_once(tmp_path, capsys):
    """The newcomer's cut log: the client's newest receipt is also its signed one (the game's
    last), and the report counted one file as two problems, saying "not signed" of the one."""
    path, records = _game(tmp_path)
    gid, last = read_game_id(records), records[-1]
    state = tmp_path / "ann"
    signed = {k: v for k, v in _entry(records, last.seq).items() if k != "game_id"}
    StateDir(state).save_receipt(
        gid, last.seq, last.hash, server="ws://x:1", room="ABCD", signed=signed
    )
    lines = path.read_bytes().splitlines(keepends=True)
    cut = lines[: last.seq - 5]
    path.write_bytes(b"".join(cut) + lines[last.seq - 5][:30])  # cut, and a torn tail
    assert replay(str(path), "--state-dir", str(state), "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    assert [(r["seq"], r.get("signature")) for r in doc["receipts"]] == [(last.seq, "valid")]
    (problem,) = [p for p in doc["problems"] if "receipt seq" in p]
    assert (
        "not signed" not in problem and "the log was truncated after the server sent it" in problem
    )
    # the torn tail is named for what it is, not as "covering" a receipt far beyond it
    assert f"records up to seq {last.seq} were written whole" in problem


def test_a_signed_receipt_in_a_damaged_log_still_says_whose_it_is(tmp_path, capsys):
    path, records = _game(tmp_path)
    f = _receipt_file(tmp_path, [_entry(records, len(records) - 1)])
    lines = path.read_bytes().splitlines(keepends=True)
    lines[7] = lines[7].replace(b'"seq":7', b'"seq":70')  # the chain breaks at line 8
    path.write_bytes(b"".join(lines))
    assert replay(str(path), "--receipt", str(f), "--no-state-dir") == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "unchecked: the log is damaged before seq" in out
    assert f"(its signature verifies with {key_text(KEY)[:24]}…)" in out


def test_a_bad_signature_on_the_signed_copy_does_not_hide_the_newest(tmp_path, capsys):
    """Found by review: the plain copy of the same position was dropped before the signed
    copy's signature was checked, so one changed digit turned 'not on the chain' into
    'unchecked'."""
    _, records = _game(tmp_path)
    last = records[-1]
    signed = {k: v for k, v in _entry(records, last.seq).items() if k != "game_id"}
    signed["sig"] = ("0" if signed["sig"][0] != "0" else "1") + signed["sig"][1:]
    item = {"game_id": read_game_id(records), "seq": last.seq, "hash": last.hash}
    f = _receipt_file(tmp_path, [item | {"signed": signed}])
    path = forged(tmp_path / "forged.jsonl", {"wing": "king"})  # rewritten after the game
    assert replay(str(path), "--receipt", str(f), "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    assert [(r["status"], r.get("signature")) for r in doc["receipts"]] == [
        ("not-on-chain", None),
        ("unchecked", "invalid"),
    ]


def test_an_unsigned_receipt_makes_a_torn_tail_a_cut_only_if_genuine(tmp_path, capsys):
    """Found by review: a made-up unsigned receipt far beyond a crash's torn tail was taken as
    proof that the end was cut after the game."""
    path, records = _game(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:30])  # a crash tore the last append
    entry = {"game_id": read_game_id(records), "seq": 10**6, "hash": "ab" * 32}
    assert replay(str(path), "--receipt", str(_receipt_file(tmp_path, [entry])), "--json") == 1
    (problem,) = [p for p in json.loads(capsys.readouterr().out)["problems"] if "beyond" in p]
    assert "if the receipt is genuine, records up to seq 1000000 were written whole" in problem


def test_players_agreeing_on_a_key_the_operator_did_not_name_is_noted(tmp_path, capsys):
    """The key given with --server-key comes from the operator, whose log is in question:
    receipts from several players that agree on another key are worth asking about."""
    path, records = _game(tmp_path)
    ann = _receipt_file(tmp_path, [_entry(records, 20, key=OTHER)], "ann.json")
    bob = _receipt_file(tmp_path, [_entry(records, 30, key=OTHER)], "bob.json")
    args = ("--receipt", str(ann), "--receipt", str(bob), "--server-key", key_text(KEY))
    assert replay(str(path), *args, "--json") == 0  # on the chain either way
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(
        n.startswith(f"2 receipt files carry signatures that verify with {key_text(OTHER)[:24]}")
        for n in notes
    ), notes
    # one file alone is one player's word: no such note
    assert replay(str(path), "--receipt", str(ann), "--server-key", key_text(KEY), "--json") == 0
    assert not any("receipt files carry" in n for n in json.loads(capsys.readouterr().out)["notes"])
