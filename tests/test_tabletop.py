"""``conjure score`` on the sample sheets in tests/sheets, both output forms, and broken sheets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SHEETS = Path(__file__).parent / "sheets"


def conjure(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conjure.client.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_score_json_one_object_per_sheet_in_order():
    names = ["rulebook", "everyone", "missed", "dark", "failed"]
    out = conjure("score", "--json", *(str(SHEETS / f"{n}.toml") for n in names))
    assert out.returncode == 0, out.stderr
    docs = [json.loads(line) for line in out.stdout.splitlines()]
    assert [d["case"] for d in docs] == [
        "conjured",
        "everyone",
        "missed-conjurer",
        "conjured",
        "failed",
    ]
    rulebook, everyone, missed, dark, failed = docs
    assert rulebook["scores"] == {"Ann": 3, "Bob": 3, "Cy": -2, "Dee": -3}
    assert set(rulebook["invalid"]) == {"Cy", "Dee"}
    assert "hydrogen" in rulebook["invalid"]["Dee"]
    assert everyone["scores"] == {"Ann": 1, "Bob": 0, "Cy": 1}
    assert missed["scores"] == {"Ann": 6, "Bob": 6, "Cy": 0, "Dee": 6, "Eve": 6}
    # D5: the conjurer's own "rocket" stands; Dee's "rockets" is the written word "rocket".
    assert dark["scores"] == {"Ann": 2, "Bob": 0, "Cy": 3, "Dee": -3}
    assert failed["scores"] == {"Ann": 0, "Bob": 0, "Cy": 0}
    assert "Bob" in failed["flags"]  # "ball" hidden inside "volleyball" is only a flag
    for d in docs:
        assert set(d) >= {"case", "scores", "invalid", "flags"}


def test_score_readable_breakdown_explains_every_point():
    out = conjure("score", str(SHEETS / "rulebook.toml"))
    assert out.returncode == 0
    text = out.stdout
    assert "Case: conjured" in text
    assert "'Spaceships' (compared as 'spaceships'): valid" in text
    assert "contains the written word 'hydrogen'" in text
    assert "[P2a]" in text and "[P2b]" in text and "[P2c]" in text and "[P5]" in text


def test_broken_sheets_are_reported_by_file_and_field_after_scoring_the_good_ones():
    broken = sorted((SHEETS / "broken").glob("*.toml"))
    out = conjure("score", "--json", str(SHEETS / "failed.toml"), *map(str, broken))
    assert out.returncode == 2
    assert len(out.stdout.splitlines()) == 1
    errors = out.stderr.splitlines()
    assert len(errors) == len(broken)
    expect = {
        "bad_toml.toml": "field `file`: is not valid TOML",
        "four_stars.toml": "field `stars`",
        "one_mark.toml": "field `marked`",
        "unknown_player.toml": "field `conjurer`",
    }
    for line in errors:
        name = next(n for n in expect if n in line)
        assert expect[name] in line


def test_missing_file_is_reported():
    out = conjure("score", "does-not-exist.toml")
    assert out.returncode == 2 and "cannot read" in out.stderr


def test_breakdown_says_why_words_matched_and_which_ruling_went_unused():
    out = conjure("score", str(SHEETS / "rulebook.toml"), str(SHEETS / "dark.toml"))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Bob = Ann: 'Spaceships' = 'spaceship' (plural) [W3]" in text
    assert "Cy = Ann: 'space shuttle' = 'rocket' (a table ruling) [C7]" in text
    assert (
        "Ruled the same thing: 'space ship' = 'spaceship' (unused: it applied to no two counted "
        "words)" in text
    )
    assert "Ruled the same thing: 'space shuttle' = 'rocket'\n" in text  # used: not flagged
    out = conjure("score", "--json", str(SHEETS / "everyone.toml"))
    doc = json.loads(out.stdout)
    assert [(m["players"], m["reason"], m["rule"]) for m in doc["matches"]] == [
        (["Bob", "Ann"], "plural", "W3"),  # 'Bananas' = 'banana'
        (["Cy", "Ann"], "same letters", "W2"),  # 'the banana' = 'banana'
    ]
    assert doc["unused_rulings"] == []


def test_score_house_rule_side_by_side_text_and_json():
    sheet = str(SHEETS / "house_conjured.toml")
    out = conjure("score", sheet, "--house-rule", "pairs-per-star")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    # The official breakdown first, unchanged: Cy 1 (P2c) + 2 (P2d) = 3.
    assert "+2  shared a word other than the conjurer's with Dee [P2d]" in text
    # Then beside it, s = 3: Cy 1 + 2 x 3 = 7, difference +4; Dee 2 x 3 = 6, difference +4.
    assert "House rule pairs-per-star (H3), beside the official score: case conjured" in text
    assert "  Cy         +3      +7          +4" in text
    assert "  Dee        +2      +6          +4" in text
    assert "+6  shared a word other than the conjurer's with Cy: 2 x 3 stars (house rule " in text
    out = conjure(
        "score",
        "--json",
        sheet,
        "--house-rule",
        "crystal-others-only",
        "--house-rule",
        "pairs-per-star",
    )
    doc = json.loads(out.stdout)
    assert doc["scores"] == {"Ann": 4, "Bob": 3, "Cy": 3, "Dee": 2, "Eve": 1}  # official
    assert doc["house_rules"] == ["crystal-others-only", "pairs-per-star"]
    # Ann 3 (P2a, no crystal by H2); Cy 1 + 6 and Dee 6 (H3).
    assert doc["house"]["scores"] == {"Ann": 3, "Bob": 3, "Cy": 7, "Dee": 6, "Eve": 1}
    official_fields = set(doc) - {
        "sheet",
        "category",
        "stars",
        "variant",
        "conjurer",
        "house",
        "house_rules",
    }
    assert set(doc["house"]) == official_fields
    plain = json.loads(conjure("score", "--json", sheet).stdout)
    assert "house" not in plain and "house_rules" not in plain


def test_score_unknown_house_rule_is_a_usage_error_listing_the_known_ones():
    out = conjure("score", str(SHEETS / "rulebook.toml"), "--house-rule", "double-crystals")
    assert out.returncode == 2
    assert out.stdout == ""
    assert (
        "argument --house-rule: unknown house rule 'double-crystals'; the known house rules are "
        "crystal-others-only, missed-per-match, pairs-per-star"
    ) in out.stderr


def test_a_sheet_made_to_break_the_terminal_or_the_scorer_is_refused(tmp_path):
    """An attacker's review: a name with a terminal escape reached the terminal raw (and a
    newline printed a line of its own), "Аnn" with a Cyrillic "А" was scored beside "Ann" as
    another player, a deeply nested array ended in a traceback, and a FIFO hung the read."""
    import os

    sheet = (SHEETS / "rulebook.toml").read_text()
    sheets = {
        "escape": sheet.replace('"Cy"', '"C\\u001b[2Ky\\n=> all fine"'),
        "lookalike": sheet.replace('"Dee"', '"\\u0410nn"'),
        "nested": sheet + "deep = " + "[" * 2000 + "]" * 2000 + "\n",
    }
    for name, text in sheets.items():
        (tmp_path / f"{name}.toml").write_text(text)
    os.mkfifo(tmp_path / "fifo.toml")
    out = conjure("score", *(str(tmp_path / f"{n}.toml") for n in [*sheets, "fifo"]))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "\x1b" not in out.stdout + out.stderr and "\n=> all fine" not in out.stderr
    lines = out.stderr.splitlines()
    assert any("escape.toml: field `players`" in x and "\\u001b" in x for x in lines), lines
    assert any(
        "lookalike.toml: field `players`: names must be different, and no two may look alike" in x
        for x in lines
    )
    assert any("nested.toml: field `file`: is nested too deep" in x for x in lines)
    assert any("fifo.toml: field `file`: is not a regular file" in x for x in lines)


def test_the_breakdown_is_fitted_to_a_terminal_between_words():
    """Seen at 80 columns: "contains the written word 'hydr / ogen'" broke mid-word."""
    import pty

    main, sub = pty.openpty()
    os_ = __import__("os")
    run = subprocess.run(
        [sys.executable, "-m", "conjure.client.cli", "score", str(SHEETS / "rulebook.toml")],
        stdin=sub, stdout=sub, stderr=subprocess.PIPE, timeout=60,
        env={**os_.environ, "COLUMNS": "60", "LINES": "24"},
    )  # fmt: skip
    os_.close(sub)
    data = b""
    while True:
        try:
            chunk = os_.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    os_.close(main)
    assert run.returncode == 0, run.stderr
    lines = data.decode().replace("\r\n", "\n").splitlines()
    assert max(len(x) for x in lines) <= 60, lines
    assert any("'hydrogen'" in x for x in lines)
