"""The ``conjure`` command lists its subcommands and every one of them has --help."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conjure.client.cli import SUBCOMMANDS

ROOT = Path(__file__).resolve().parent.parent


def conjure(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conjure.client.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_help_lists_every_subcommand():
    out = conjure("--help")
    assert out.returncode == 0
    for name in SUBCOMMANDS:
        assert name in out.stdout


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_subcommand_has_help(name):
    out = conjure(name, "--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: conjure " + name)


def test_unknown_subcommand_is_an_error():
    out = conjure("fly")
    assert out.returncode == 2
    assert "invalid choice" in out.stderr


def test_version_is_the_one_in_pyproject():
    """`conjure --version` reads the installed metadata, which pyproject.toml states (a stale
    install fails here: reinstall with `make setup`)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    out = conjure("--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"conjure {declared['project']['version']}\n"
