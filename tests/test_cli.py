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


def test_no_command_at_all_lists_the_commands():
    """Found by review: "the following arguments are required: COMMAND", and nothing said
    which commands there are."""
    out = conjure()
    assert out.returncode == 2
    for name in SUBCOMMANDS:
        assert name in out.stderr


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


def test_ctrl_c_on_conjure_bot_stops_it_without_a_traceback(tmp_path):
    """A newcomer's Ctrl-C on ``conjure bot`` printed an exception group's traceback; and with no
    server it said "connection lost ... reconnecting" again and again, never having connected."""
    import os
    import signal
    import socket
    import time

    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "CONJURE_STATE_DIR": str(tmp_path)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "conjure.client.cli",
            "bot",
            f"ws://127.0.0.1:{port}",
            "--room",
            "ABCD",
            "--count",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        time.sleep(3)  # it retries for a while: no more than one line about it
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Traceback" not in out
    said = [x for x in out.splitlines() if "trying again" in x]
    assert len(said) == 1 and "cannot reach the server" in said[0], out


def test_make_plays_help_shows_options_as_make_passes_them():
    """Found by review: "usage: make play [--bots BOTS] ..." invited "make play --bots 5", which
    is make's own option list; options go through ARGS."""
    out = subprocess.run(
        [sys.executable, "-m", "conjure.client.local", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert out.returncode == 0
    assert out.stdout.startswith('usage: make play ARGS="')
    assert "make play [" not in out.stdout
    help_of = {line.split()[0]: line for line in out.stdout.splitlines() if line.startswith("  --")}
    assert set(help_of) >= {"--bots", "--variant", "--name", "--resume", "--new"}
    assert "the name you gave last time" in out.stdout
