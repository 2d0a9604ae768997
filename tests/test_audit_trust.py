"""``conjure replay`` against forgers who know the audit: each test is a forgery an earlier audit
let through (a fake verdict printed, a downgraded rules version, a receipt ignored, an
abandonment the log's own presence contradicts, ...).

The logs are real: scripted games on the engine (tests/auditlogs.py), rewritten and chained again
by the real LogWriter, so every hash checks and only the audit's other checks can catch them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conjure.client.cli import main
from conjure.server.audit_verify import audit
from conjure.server.logformat import read_log
from tests.auditlogs import (
    Decision,
    RecordingTable,
    as_batches,
    sample_game,
    write_log,
    write_records,
)

FAKE = "=> VERIFIED: everything above checks."


@pytest.fixture(autouse=True)
def _no_user_state(tmp_path_factory, monkeypatch):
    """Never read the real user's receipts: point the default state dir at an empty folder."""
    monkeypatch.setenv("CONJURE_STATE_DIR", str(tmp_path_factory.mktemp("nostate")))


def replay(*args: str) -> int:
    return main(["replay", *args])


def forged(path: Path, changes: dict[str, str]) -> Path:
    """The sample game with each text ``old`` written ``new`` wherever it is logged (the events,
    the commands and the score's reasons alike, so deciding again agrees), chained again."""

    def swap(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: swap(v) for k, v in x.items()}
        if isinstance(x, list):
            return [swap(v) for v in x]
        if isinstance(x, str):
            for old, new in changes.items():
                x = x.replace(old, new)
        return x

    batches = [
        Decision(ts, [(t, swap(d)) for t, d in items], swap(b.command))  # type: ignore[attr-defined]
        for b in as_batches(sample_game().decisions)
        for ts, items in [b]
    ]
    write_records(path, batches)  # type: ignore[arg-type]
    return path


NAMES = ("Ann", "Bob", "Cy", "Dee")


def renamed(path: Path, names: dict[int, str]) -> Path:
    """The sample game with some players called otherwise."""
    return forged(path, {NAMES[seat]: name for seat, name in names.items()})


def lines_of(capsys, *args: str) -> tuple[int, list[str]]:
    code = replay(*args, "--no-state-dir")
    return code, capsys.readouterr().out.splitlines()


def verdicts(lines: list[str]) -> list[str]:
    return [x for x in lines if x.startswith("=>")]


# ---------------------------------------------------------------------------------------------
# 1. A logged string never starts a report line; names the server refuses fail


@pytest.mark.parametrize("sep", ["\n", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x1e"])
def test_a_name_cannot_print_a_verdict_of_its_own(tmp_path, capsys, sep):
    """Every character str.splitlines cuts at (a terminal or a viewer may start a line there)."""
    path = renamed(tmp_path / "g.jsonl", {1: f"Bob{sep}{FAKE}"})
    for extra in ((), ("--events",), ("--round", "2")):
        code, lines = lines_of(capsys, str(path), *extra)
        assert code == 1
        assert verdicts(lines) == ["=> NOT VERIFIED: 1 problem."], lines
        assert any("Bob\\u" in x and "=> VERIFIED" in x for x in lines)
    # the JSON still carries the exact name, and its sentences are one line each
    replay(str(path), "--no-state-dir", "--json")
    doc = json.loads(capsys.readouterr().out)
    assert doc["players"][1]["name"] == f"Bob{sep}{FAKE}"
    assert all("\n" not in p for p in doc["problems"])


def test_a_logged_word_cannot_print_a_verdict_either(tmp_path, capsys):
    """Spell words are quoted as written by the engine's explanation (no repr there)."""
    path = tmp_path / "g.jsonl"
    forged(path, {"engine": f"engine\n{FAKE}"})
    for extra in ((), ("--events",), ("--house-rule", "pairs-per-star")):
        code, lines = lines_of(capsys, str(path), *extra)
        assert code == 1
        assert [x for x in verdicts(lines) if "NOT" not in x] == []
        assert any("engine\\u000a=> VERIFIED" in x for x in lines)


@pytest.mark.parametrize(
    "names, words",
    [
        ({1: "\u0410nn"}, "can be mistaken for 'Ann', seated before it"),  # Cyrillic А
        ({3: "B0b"}, "can be mistaken for 'Bob', seated before it"),
        ({1: "Ann"}, "can be mistaken for 'Ann', seated before it"),  # the very same name
        ({1: "Strauß", 2: "Strauss"}, "can be mistaken for 'Strauß', seated before it"),  # ß: ss
        ({1: "Bob\u200b"}, "is one the server refuses: Names cannot hold"),
        ({2: "\u2800"}, "is one the server refuses"),
        ({2: "Cy  Young"}, "is not as the server stores names: it stores 'Cy Young'"),
        ({1: "x" * 30}, "is one the server refuses: A name has at most 24 characters"),
    ],
)
def test_a_name_the_server_refuses_at_join_fails(tmp_path, capsys, names, words):
    path = renamed(tmp_path / "g.jsonl", names)
    code, lines = lines_of(capsys, str(path))
    assert code == 1
    fails = [x for x in lines if x.startswith("  FAIL  line 1 (seq 0): seat ")]
    assert len(fails) == 1 and words in fails[0], lines
    assert not audit(path).verified


def test_the_names_of_a_real_game_pass(tmp_path):
    path = renamed(tmp_path / "g.jsonl", {1: "Zoë Müller-Łukasz", 2: "李小龍", 3: "Dee Dee"})
    a = audit(path)
    assert a.verified, a.problems


# ---------------------------------------------------------------------------------------------
# 2. A rules version downgrade


def downgraded(path: Path, strip: dict[str, tuple[str, ...]]) -> Path:
    """The sample game (rules version 2) with its commands stripped and ``rules_version`` 1, each
    record's ``strip[type]`` keys dropped too, chained again: what a forger who wants the
    version 1 audit (no deciding again) writes."""
    batches = []
    for ts, items in as_batches(sample_game().decisions):
        out = []
        for type_, data in items:
            data = {k: v for k, v in data.items() if k not in strip.get(type_, ())}
            if type_ == "game_started":
                data["rules_version"] = 1
            out.append((type_, data))
        batches.append((ts, out))  # no command
    write_records(path, batches)
    return path


V2_START = ("log_format", "words", "house_rules", "deal")


@pytest.mark.parametrize(
    "strip, holds",
    [
        ({}, "line 1 (seq 0) holds a 'log_format' in game_started"),
        ({"game_started": V2_START}, "holds a round_scored with 'reasons'"),
        (
            {"game_started": V2_START, "round_scored": ("reasons",)},
            "holds a proposal_made with 'voters'",
        ),
    ],
)
def test_a_log_downgraded_to_rules_version_1_fails(tmp_path, capsys, strip, holds):
    path = downgraded(tmp_path / "g.jsonl", strip)
    code, lines = lines_of(capsys, str(path))
    assert code == 1
    fails = [x for x in lines if x.startswith("  FAIL  the log says rules version 1, but ")]
    assert any(holds in x for x in fails), lines
    assert all("only rules version 2 writes" in x for x in fails)


def test_a_command_left_in_a_version_1_log_fails(tmp_path):
    batches = as_batches(sample_game().decisions)
    first = batches[0]
    first[1][0][1]["rules_version"] = 1
    for key in V2_START:
        del first[1][0][1][key]
    first.command["setup"]["log_format"] = 1  # type: ignore[attr-defined]
    path = tmp_path / "g.jsonl"
    write_records(path, batches)
    a = audit(path)
    assert any("holds a recorded command (cmd)" in p for p in a.problems), a.problems


def test_a_genuine_version_1_log_says_which_checks_did_not_run():
    a = audit(Path(__file__).resolve().parent.parent / "replays" / "sample-v1-review.jsonl")
    assert a.verified, a.problems
    (note,) = [n for n in a.notes if n.startswith("rules version 1:")]
    for words in ("no move was decided again", "no clock", "not the deal"):
        assert words in note


# ---------------------------------------------------------------------------------------------
# 3. Two logs of one game that part: the summary does not count them verified


def test_two_logs_of_one_game_that_part_are_not_counted_verified(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_records(a, as_batches(sample_game().decisions))
    write_records(b, as_batches(sample_game(round1_spell="feather").decisions))
    assert audit(a).verified and audit(b).verified  # each chain is sound on its own
    code, lines = lines_of(capsys, str(a), str(b))
    assert code == 1
    summary = lines[lines.index("2 logs: 0 verified, 2 NOT VERIFIED") :]
    assert summary[1:3] == [
        f"  NOT VERIFIED: {a} (another log of its game parts from it)",
        f"  NOT VERIFIED: {b} (another log of its game parts from it)",
    ]
    assert "one of the two was written again" in summary[3]
    assert replay(str(a), str(b), "--no-state-dir", "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["verified"] == 0 and doc["not_verified"] == [str(a), str(b)]
    assert [d["verified"] for d in doc["logs"]] == [False, False]
    assert all("parts from it at seq" in d["problems"][-1] for d in doc["logs"])
    # a copy cut short is no parting: both still count
    cut = tmp_path / "cut.jsonl"
    end = next(r.seq for r in read_log(a).records if r.batch == 0)  # the end of the first batch
    cut.write_bytes(b"".join(a.read_bytes().splitlines(keepends=True)[: end + 1]))
    code, lines = lines_of(capsys, str(a), str(cut))
    assert code == 0 and "2 logs: 2 verified" in lines


# ---------------------------------------------------------------------------------------------
# 4. Receipts: none ignored in silence, a named state directory read, no overclaiming


def test_a_receipt_file_for_another_game_is_said_to_prove_nothing_here(tmp_path, capsys):
    path = tmp_path / "game-1.jsonl"
    records = write_records(path, as_batches(sample_game().decisions))
    given = tmp_path / "from-bob.json"
    given.write_text(json.dumps({"game_id": "game-2", "seq": 3, "hash": records[3].hash}))
    code, lines = lines_of(capsys, str(path), "--receipt", str(given))
    assert code == 0
    assert (
        f"  note  ignored {given}: the receipt is for game 'game-2', not this log's game "
        "'game-1', so it proves nothing here" in lines
    )


def test_a_state_directory_given_by_name_is_read_even_with_no_state_dir(tmp_path, capsys):
    from conjure.client.statefile import StateDir

    path = tmp_path / "game-1.jsonl"
    records = write_records(path, as_batches(sample_game().decisions))
    ann = tmp_path / "from-ann"
    StateDir(ann).save_receipt("game-1", 3, "ab" * 32, server="ws://x:1", room="ABCD")
    code = replay(str(path), "--no-state-dir", "--state-dir", str(ann), "--json")
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and [(r["seq"], r["status"]) for r in doc["receipts"]] == [(3, "not-on-chain")]
    (problem,) = doc["problems"]
    assert "either the log was rewritten after this receipt was sent" in problem
    assert "or the receipt is not genuine (this one is not signed" in problem
    assert records[3].hash[:12] in problem


# ---------------------------------------------------------------------------------------------
# 5. An abandonment the log's own presence contradicts


def presence_game(path: Path, comings: list[tuple[int, bool]], idle_at: float | None) -> Path:
    """Round 1 and round 2 up to the summon (tests/test_abandon.py), everyone's going logged,
    then ``comings`` (seat, connected) one by one; abandoned half an hour on with ``idle_since``
    ``idle_at`` seconds after everyone went (None: when the last of ``comings`` was logged)."""
    from conjure.server.rules import commands as c
    from tests.auditlogs import round_one_then_animal

    t = round_one_then_animal()
    for seat in range(4):
        t.run(c.Presence(now=t.now, seat=seat, connected=False))
    gone = t.now
    for seat, connected in comings:
        t.run(c.Presence(now=t.now, seat=seat, connected=connected))
    since = t.decisions[-1][0] if idle_at is None else gone + idle_at
    t.now += 1800
    t.run(c.Abandon(now=t.now, idle_since=since))
    assert t.g.abandoned
    write_records(path, as_batches(t.decisions))
    return path


def test_an_honest_abandonment_with_presence_verifies(tmp_path):
    a = audit(presence_game(tmp_path / "g.jsonl", [(0, True), (0, False)], None))
    assert a.verified, a.problems


@pytest.mark.parametrize(
    "comings, idle_at, says",
    [
        # Ann came back and never went: "nobody was connected" is the log's own contradiction
        ([(0, True)], 0.0, "no going of theirs is logged after it"),
        # Ann came back and went, but Bob came and went in between: her going is no restart's
        ([(0, True), (1, True), (1, False), (0, False)], 1.0, "their going is logged only at"),
    ],
)
def test_an_abandonment_while_the_log_has_a_player_connected_fails(
    tmp_path, capsys, comings, idle_at, says
):
    path = presence_game(tmp_path / "g.jsonl", comings, idle_at)
    code, lines = lines_of(capsys, str(path))
    assert code == 1
    fails = [x for x in lines if x.startswith("  FAIL") and "game_abandoned says nobody" in x]
    assert len(fails) == 1 and "has Ann connected then" in fails[0] and says in fails[0], lines
    assert "presence_changed at line" in fails[0]


async def _abandoned_on_a_real_server(start_server, tmp_path: Path, *, restart: bool) -> Path:
    """A game played on the real server that nobody plays on: the players leave (``restart``:
    the server stops while they are still there, and a restarted one abandons the game)."""
    from conjure.protocol import messages as m
    from tests.clienthelpers import wait_until
    from tests.test_server_hardening import NO_CLOCKS
    from tests.wsclient import open_table

    server = await start_server(abandon_after=1800.0 if restart else 0.5)
    async with open_table(server.url, ["Ann", "Bob", "Cy"], m.RoomSettings(limits=NO_CLOCKS)) as t:
        await t[0].send(m.StartGame())
        await t[0].wait_view(lambda v: v.round == 1)
        game_id = t[0].view.game_id
        if restart:
            await server.aclose()
    if restart:
        server = await start_server(abandon_after=0.5)
    await wait_until(lambda: not server.rooms, timeout=20, what="the game to be abandoned")
    await server.aclose()
    return tmp_path / "replays" / f"{game_id}.jsonl"


@pytest.mark.parametrize("restart", [False, True])
async def test_a_real_abandoned_game_with_its_presence_verifies(start_server, tmp_path, restart):
    path = await _abandoned_on_a_real_server(start_server, tmp_path, restart=restart)
    a = audit(path)
    assert a.verified, a.problems
    assert a.abandoned is not None
    goings = [s for s in a.steps if s.record.type == "presence_changed"]
    assert len(goings) >= 3  # each player's going is logged: the check had something to check
    if restart:  # the restart's goings come after the time it counts nobody connected from
        assert all(s.record.ts > a.abandoned.idle_since for s in goings)


# ---------------------------------------------------------------------------------------------
# 6. A clock set back


def test_a_batch_dated_before_the_one_before_it_is_shown_so_and_noted(tmp_path, capsys):
    batches = as_batches(sample_game().decisions)
    k = next(
        i for i, (_, items) in enumerate(batches) if any(t == "spell_written" for t, _ in items)
    )
    _, items = batches[k]
    earlier = batches[k - 1][0] - 300.0  # the wall clock set back five minutes
    command = dict(batches[k].command, now=earlier)  # type: ignore[attr-defined]
    batches[k] = Decision(earlier, items, command)  # type: ignore[arg-type]
    path = tmp_path / "g.jsonl"
    write_records(path, batches)  # type: ignore[arg-type]
    _, lines = lines_of(capsys, str(path))
    word = items[0][1]["word"]
    (spell,) = [x for x in lines if f"wrote the spell word {word!r}" in x]
    assert spell.split()[0].startswith("-4:"), spell  # not +0:00
    line = f"line {sum(len(b[1]) for b in batches[:k]) + 1} "
    assert any(x.startswith(f"  note  {line}") and "before the batch before it" in x for x in lines)


def test_a_commitment_logged_after_the_summon_closed_fails_the_audit(tmp_path, capsys):
    """RULES A3: when the summon's time runs out it closes with the commitments that are in;
    the room's timer goes before any queued request. A server that lets a friend commit two
    minutes after the deadline (no tick first) writes a log whose every batch the rules
    produce from its command (decide never compares a move's ``now`` with the deadline), so
    ``conjure replay`` passes it. The audit's own note for version 1 logs says version 2
    checks 'no clock (that no deadline passed early or was ignored)'."""
    t = RecordingTable(3)
    t.choose(0)
    t.spell_by({"Ann": "wing", "Bob": "engine", "Cy": "sky"})
    t.mark("Ann", "Bob")
    t.commit("Ann", "airplane")
    t.commit("Bob", "airplanes")
    deadline = t.g.deadline
    assert deadline is not None and t.g.phase == "commit"
    t.now = deadline + 120.0  # the summon should have closed two minutes ago
    t.commit("Cy", "jet")  # ... yet Cy's commitment is taken
    assert t.g.phase == "reveal"
    for name, word in (("Ann", "airplane"), ("Bob", "airplanes"), ("Cy", "jet")):
        t.reveal(name, word)
    t.done()
    path = tmp_path / "late.jsonl"
    write_log(path, t.decisions)
    code, lines = lines_of(capsys, str(path))
    assert code == 1 and verdicts(lines) == ["=> NOT VERIFIED: 1 problem."], lines
    late = next(x for x in lines if "after the commit phase's deadline" in x)
    assert "Cy's commit is dated 120.000 s after" in late and "(A3)" in late


# ---------------------------------------------------------------------------------------------
# 7. What no receipt covers, and a game under another id (found by a review of the audit)


def test_a_game_id_no_server_makes_fails(tmp_path, capsys):
    """A look-alike of the game's real id (a Cyrillic "а") made every receipt and kept deal of
    its players count for another game, and the two ids look the same on screen."""
    path = forged(tmp_path / "g.jsonl", {"game-1": "g\u0430me-1"})
    code, lines = lines_of(capsys, str(path))
    assert code == 1
    assert any(
        "is none a server of this program makes" in x and x.startswith("  FAIL") for x in lines
    )


def test_the_records_after_the_newest_receipt_are_said_to_be_the_servers_word(tmp_path, capsys):
    """A player who left in round 3 holds a signed receipt: rounds 3 and 4 were rewritten and
    verified, explained as if proven."""
    path = tmp_path / "game-1.jsonl"
    records = write_records(path, as_batches(sample_game().decisions))
    held = 40
    code, lines = lines_of(capsys, str(path), "--receipt", f"{held}:{records[held].hash}")
    assert code == 0
    (note,) = [x for x in lines if "covered by no receipt given" in x]
    later = len(records) - 1 - held
    assert note.startswith(f"  note  records after seq {held} ({later} records, round ")
    assert "the server's word alone" in note
    code, lines = lines_of(capsys, str(path), "--receipt", f"{len(records) - 1}:{records[-1].hash}")
    assert code == 0 and not [x for x in lines if "covered by no receipt" in x]


def other_games_receipt(tmp_path: Path) -> tuple[Path, Path, Any]:
    """The sample game's log, Bob's state directory holding a receipt of game-7 in the same
    room, and a function that dates it so many seconds after the log's last record."""
    from conjure.client.statefile import StateDir

    path = tmp_path / "game-1.jsonl"
    records = write_records(path, as_batches(sample_game().decisions))
    bob = tmp_path / "from-bob"
    StateDir(bob).save_receipt("game-7", 3, "ab" * 32, server="ws://x:1", room="ABCD")
    receipt = bob / "receipts" / "game-7.json"
    doc = json.loads(receipt.read_text())

    def saved_at(after: float) -> None:
        receipt.write_text(json.dumps(dict(doc, saved_at=records[-1].ts + after)))

    return path, bob, saved_at


def test_a_state_directory_with_only_other_games_receipts_is_said_so(tmp_path, capsys):
    """The players' receipts, kept under the id they were told, were skipped in silence, and
    the report said no receipts were found (a log given a new game id)."""
    path, bob, saved_at = other_games_receipt(tmp_path)
    saved_at(-30)  # during this game
    code, lines = lines_of(capsys, str(path), "--state-dir", str(bob))
    assert code == 0
    text = "\n".join(lines)
    assert f"{bob} holds no receipt and no kept deal of this game, only of 1 other game: " in text
    assert "game-7 (room ABCD)" in text and "if the two clocks agree" in text
    assert "no receipt of this game was given or found in the state directories given" in text
    assert "no receipts were given or found" not in text


@pytest.mark.parametrize("after", [0.004, 30.0])
def test_a_receipt_saved_as_the_game_ended_counts_as_during_it(tmp_path, capsys, after):
    """Found by an auditor's review: the warning above never came for a player who saw the
    game's end, as a client saves its receipt just after the record it is for (a few ms)."""
    path, bob, saved_at = other_games_receipt(tmp_path)
    saved_at(after)
    code, lines = lines_of(capsys, str(path), "--state-dir", str(bob))
    assert code == 0 and "if the two clocks agree" in "\n".join(lines)
    saved_at(3600)  # a later game
    code, lines = lines_of(capsys, str(path), "--state-dir", str(bob))
    assert code == 0 and "if the two clocks agree" not in "\n".join(lines)


def test_a_log_with_no_deal_where_a_player_was_shown_one_fails(tmp_path, capsys):
    """Found by an auditor's review: a game rewritten under a new game id, its deal taken out
    (or its rules version said to be 1), verified with every player's state directory and the
    server's key, as the kept deal was checked only against a logged one. A client shown a
    deal for this room as this game began, where the log records none, now fails it."""
    from conjure.client.statefile import StateDir

    path = tmp_path / "game-1.jsonl"
    records = write_records(path, as_batches(sample_game().decisions))
    assert "deal" not in records[0].data or records[0].data["deal"] is None
    bob = tmp_path / "from-bob"
    StateDir(bob).save_deal("ws://x:1", "ABCD", commitment="cd" * 32, share="ab" * 32, seat=1)
    secrets = bob / "secrets.json"
    doc = json.loads(secrets.read_text())
    for kept in doc["deals"].values():
        kept["saved_at"] = records[0].ts - 5  # the deal, seconds before the game began
    secrets.write_text(json.dumps(doc))
    code, lines = lines_of(capsys, str(path), "--state-dir", str(bob))
    assert code == 1
    (fail,) = [x for x in lines if x.startswith("  FAIL")]
    assert "was shown a deal (commitment cdcdcdcdcdcdcdcd…) for room ABCD" in fail
    assert "and the log records none" in fail
    for kept in doc["deals"].values():
        kept["room"] = "WXYZ"  # another room's deal says nothing of this game
    secrets.write_text(json.dumps(doc))
    code, lines = lines_of(capsys, str(path), "--state-dir", str(bob))
    assert code == 0 and verdicts(lines) == [FAKE]


def test_more_comings_and_goings_than_a_server_logs_are_noted(tmp_path, capsys):
    """200,000 presence flips in one round verified without a word (found by review): more
    records of one kind than a server of this program logs by default are noted (the budget
    is the server's setting, not in the log)."""
    from conjure.server.config import ServerConfig

    most = ServerConfig.max_actions_per_round
    flips = [(1, k % 2 == 1) for k in range(most + 2)]
    path = presence_game(tmp_path / "g.jsonl", flips, None)
    _code, lines = lines_of(capsys, str(path))
    (note,) = [x for x in lines if x.startswith("  note  Bob has ")]
    assert note.startswith(f"  note  Bob has {most + 3:,} comings and goings logged in round 2")
    assert f"more than the {most} a server of this program logs by default" in note
