"""What the operator sets and sees: limits from options and a TOML file, the open-file budget, and
the log lines an operator needs (timestamps, levels, a limit hit logged at most once a minute)."""

from __future__ import annotations

import argparse
import logging
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from conjure.protocol import messages as m
from conjure.protocol.messages import RoomSettings
from conjure.server import app, fdbudget, settings
from conjure.server.config import TUNABLE, ServerConfig
from tests.wsclient import open_client

ROOT = Path(__file__).resolve().parent.parent


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    app.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_every_limit_has_an_option_and_a_documented_default():
    serving = (ROOT / "docs" / "SERVING.md").read_text(encoding="utf-8")
    defaults = {f: getattr(ServerConfig(replays=Path()), f) for f in TUNABLE}
    for name in settings.HELP:
        option = "--" + name.replace("_", "-")
        args = parse(option, "7")
        assert getattr(args, name) == 7
        assert f"`{option}`" in serving, f"{option} is not in docs/SERVING.md"
        assert f"`{name}`" in serving, f"{name} (the file key) is not in docs/SERVING.md"
        assert f"{defaults[name]:g}" in serving.split(f"`{option}`", 1)[1].split("\n", 1)[0]


def test_a_config_file_sets_limits_and_the_command_line_wins(tmp_path):
    conf = tmp_path / "conjure.toml"
    conf.write_text("max_connections_per_address = 4\nrooms_per_minute = 2\nlog_level = 'debug'\n")
    got = settings.overrides(parse("--config", str(conf), "--rooms-per-minute", "5"))
    assert got == {"max_connections_per_address": 4, "rooms_per_minute": 5, "log_level": "debug"}
    ServerConfig(replays=tmp_path, **{k: v for k, v in got.items() if k != "log_level"})


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("max_conections = 4\n", "unknown setting 'max_conections'"),
        ("max_rooms = 'many'\n", "max_rooms must be a number"),
        ("max_rooms = 2.5\n", "max_rooms must be a whole number"),
        ("address_rate = -1\n", "address_rate cannot be negative"),
        # nan passes every comparison a limit is checked with: found by review, it closed every
        # connection right after its welcome (hello_timeout) or kept lobbies open for good
        ("abandon_after = nan\n", "abandon_after must be a number, not nan"),
        ("lobby_idle_close = nan\n", "lobby_idle_close must be a number, not nan"),
        ("max_rooms = \n", "is not valid TOML"),
        ("log_level = 'loud'\n", "log_level must be one of"),
    ],
)
def test_a_config_file_with_a_mistake_is_refused_with_a_sentence(tmp_path, text, says):
    conf = tmp_path / "conjure.toml"
    conf.write_text(text)
    with pytest.raises(settings.SettingsError, match=says):
        settings.overrides(parse("--config", str(conf)))


def test_nan_on_the_command_line_is_refused_with_a_sentence():
    with pytest.raises(settings.SettingsError, match="--hello-timeout: hello_timeout must be"):
        settings.overrides(parse("--hello-timeout", "nan"))


def test_a_replays_folder_that_is_a_file_is_said_as_such_not_as_an_address(tmp_path):
    """Found by review: "cannot listen on 127.0.0.1:0: [Errno 17] File exists" for a
    --replays that named a file; the address was never the problem."""
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    for replays in (afile, afile / "below"):
        key = str(tmp_path / "receipt-key.pem")
        serve = ["serve", "--host", "127.0.0.1", "--port", "0", "--receipt-key", key]
        out = subprocess.run(
            [sys.executable, "-m", "conjure.client.cli", *serve, "--replays", str(replays)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 1
        assert "cannot listen" not in out.stderr
        assert f"cannot use the game logs' folder {replays}" in out.stderr, out.stderr
    assert afile.read_text() == "mine\n"


def test_serve_refuses_a_bad_config_file_before_starting(tmp_path):
    conf = tmp_path / "conjure.toml"
    conf.write_text("max_conections = 4\n")
    out = subprocess.run(
        [sys.executable, "-m", "conjure.client.cli", "serve", "--config", str(conf), "--port", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "unknown setting 'max_conections'" in out.stderr


def test_the_caps_fit_the_open_file_limit():
    assert fdbudget.fit(65536, 2000, 500) == fdbudget.Budget(65536, None, 2000, 500, False)
    small = fdbudget.fit(256, 2000, 500)
    assert small.clipped and small.connections + small.rooms <= 256 - 64
    assert small.connections > small.rooms > 0
    tiny = fdbudget.fit(32, 10, 10)
    assert tiny.connections >= 1 and tiny.rooms >= 1 and tiny.connections + tiny.rooms <= 16


def test_the_server_raises_its_soft_open_file_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowered = min(soft, 512, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (lowered, hard))
    try:
        budget = fdbudget.plan(2000, 500)
        now, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        assert now == hard or hard == resource.RLIM_INFINITY
        assert budget.limit == now
        if hard > lowered:
            assert budget.raised_from == lowered
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_small_open_file_limit_lowers_the_caps_and_says_so(tmp_path):
    """A server process whose hard limit is 256 descriptors keeps its caps within it."""

    def small_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    proc = subprocess.Popen(
        [
            *(
                sys.executable,
                "-m",
                "conjure.client.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
            ),
            *("--replays", str(tmp_path / "replays"), "--max-connections", "100000"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=small_limit,
    )
    lines = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # bounded: the server prints a few lines, then "listening on"
            lines.append(line)
            if line.startswith("listening on") or len(lines) > 50:
                break
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    text = "".join(lines)
    assert "open-file limit 256: at most" in text, text
    assert "listening on ws://127.0.0.1:" in text


async def test_a_limit_hit_is_logged_once_a_minute_per_address(start_server, caplog):
    caplog.set_level(logging.INFO, logger="conjure.server")
    server = await start_server(rooms_per_minute=1, max_rooms_per_address=100)
    for i in range(4):
        async with open_client(server.url, f"r{i}", source="127.0.0.3") as c:
            await c.send(m.CreateRoom(name=f"r{i}", settings=RoomSettings()))
            await c.recv_until(lambda x: isinstance(x, m.Seated | m.Error))
    async with open_client(server.url, "other", source="127.0.0.4") as c:
        await c.send(m.CreateRoom(name="o1", settings=RoomSettings()))
        await c.recv_until(lambda x: isinstance(x, m.Seated))
        await c.send(m.Leave())
    async with open_client(server.url, "other2", source="127.0.0.4") as c:
        await c.send(m.CreateRoom(name="o2", settings=RoomSettings()))
        await c.expect_error("room_rate")
    lines = [r.getMessage() for r in caplog.records if "limit:" in r.getMessage()]
    assert len([x for x in lines if "127.0.0.3" in x]) == 1  # three refusals, one line
    assert len([x for x in lines if "127.0.0.4" in x]) == 1
    assert server.book.refused["room_rate"] == 4
    created = [r for r in caplog.records if "created by" in r.getMessage()]
    assert len(created) == 2
    assert all(r.levelno == logging.INFO for r in created)


def test_operator_log_lines_carry_a_timestamp_and_level():
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from server.settings import setup_logging; import logging; setup_logging('info');"
            " logging.getLogger('conjure.server').info('room ABCD: created by 127.0.0.2')",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = out.stderr.strip()
    assert line.endswith("INFO    conjure.server: room ABCD: created by 127.0.0.2"), line
    assert line[:4].isdigit() and line[4] == "-"  # 2026-12-01 16:00:00 ...


def test_a_custom_card_named_as_a_default_one_takes_its_place_with_the_hosts_stars():
    """Found by review: in "default + custom", a custom "weapon ★★★" was dropped for the
    default "Weapon ★", without a word to the host."""
    from conjure.protocol.deck import Card, default_deck
    from conjure.protocol.messages import RoomSettings
    from conjure.server.lobby import build_deck

    default = default_deck()
    name = default[0].text
    stars = 3 if default[0].stars != 3 else 1
    own = [Card(text=name.lower(), stars=stars), Card(text="Famous bridge", stars=2)]
    deck = build_deck(RoomSettings(deck="default+custom", custom_cards=own))
    assert len(deck) == len(default) + 1
    assert deck[0] == own[0] and deck[-1] == own[1]
    assert sum(c.text.casefold() == name.casefold() for c in deck) == 1
