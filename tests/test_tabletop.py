"""``conjure score`` on the sample sheets in tests/sheets, both output forms, and broken sheets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SHEETS = Path(__file__).parent / "sheets"


def conjure(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "client.cli", *args], capture_output=True, text=True, timeout=60
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
