"""``conjure serve``'s limits and logging, from the command line and a TOML file.

Every tunable field of ``ServerConfig`` (``server.config.TUNABLE``) can be set in a ``--config``
file, flat, under its own name (``max_connections_per_address = 32``), and on the command line as
``--max-connections-per-address 32``; the command line wins. Unknown keys and wrong types are errors
with a sentence, never ignored: a typo must not leave a server unprotected.
"""

from __future__ import annotations

import argparse
import logging
import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any

from conjure.server.config import TUNABLE, ServerConfig

#: Help for each limit option (defaults are read from ServerConfig, so they are stated once).
HELP: dict[str, str] = {
    "host_grace": "seconds a disconnected host keeps the role",
    "rate": "messages per second one connection may send on average",
    "burst": "messages one connection may send in a burst",
    "frame_rate": "WebSocket frames (pings, fragments) per second one connection may send",
    "frame_burst": "WebSocket frames one connection may send in a burst",
    "max_actions_per_round": "game actions one player may take in one round",
    "max_changes_per_round": "votes cast again, words replaced, pauses and resumes per player and round",
    "max_connections_per_address": "open connections from one address",
    "connection_rate": "new connections per second from one address",
    "connection_burst": "new connections one address may open in a burst",
    "address_rate": "messages per second over all of one address's connections",
    "address_burst": "messages one address may send in a burst",
    "guess_rate": "wrong room codes and passwords per second from one address",
    "guess_burst": "wrong room codes and passwords one address may send in a burst",
    "view_rate": "whole views per second one address may ask for again (resync) or cause (lobby changes)",
    "view_burst": "whole views one address may ask for again or cause in a burst",
    "rooms_per_minute": "rooms one address may create in a minute",
    "max_rooms_per_address": "live rooms created by one address",
    "max_connections": "connections to the whole server",
    "max_rooms": "rooms on the whole server",
    "max_spectators": "spectators per room (a host may allow fewer)",
    "hello_timeout": "seconds a new connection has to say hello",
    "roomless_timeout": "seconds a connection may stay in no room",
    "lobby_idle_close": "seconds an empty lobby stays open",
    "idle_close": "seconds a finished game's room stays open once no player is connected",
    "abandon_after": "seconds a started game may have no connected player before it is abandoned",
    "min_free_mb": "megabytes the disk holding the replays must keep free for a new game to start",
}
LOG_LEVELS = ("debug", "info", "warning", "error")


class SettingsError(ValueError):
    """A config file or option that cannot be used, with a sentence that says why."""


def _defaults() -> dict[str, Any]:
    return {f.name: f.default for f in fields(ServerConfig) if f.name in TUNABLE}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("limits (also settable in --config FILE)")
    defaults = _defaults()
    for name, help_ in HELP.items():
        group.add_argument(
            "--" + name.replace("_", "-"),
            type=TUNABLE[name],
            default=None,
            metavar="N",
            help=f"{help_} (default {defaults[name]:g})",
        )
    parser.add_argument(
        "--config", type=Path, help="a TOML file of settings (keys as the options, with _)"
    )
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default=None,
        help="how much the server logs (default info)",
    )


def read_file(path: Path) -> dict[str, Any]:
    """The settings in a TOML file, checked against ``TUNABLE``."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path} is not valid TOML: {exc}") from None
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "log_level":
            if value not in LOG_LEVELS:
                raise SettingsError(f"{path}: log_level must be one of {', '.join(LOG_LEVELS)}")
            out[key] = value
            continue
        if key == "replays":
            if not isinstance(value, str):
                raise SettingsError(f"{path}: replays must be a path (a string)")
            out[key] = Path(value)
            continue
        kind = TUNABLE.get(key)
        if kind is None:
            known = ", ".join(sorted([*TUNABLE, "log_level", "replays"]))
            raise SettingsError(f"{path}: unknown setting {key!r} (known: {known})")
        out[key] = check(key, value, kind, str(path))
    return out


def check(key: str, value: Any, kind: type, where: str) -> Any:
    """``value`` as a ``kind``, or a SettingsError naming ``key``."""
    if kind is str:
        if not isinstance(value, str):
            raise SettingsError(f"{where}: {key} must be a string")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SettingsError(f"{where}: {key} must be a number")
    if kind is int and not isinstance(value, int):
        raise SettingsError(f"{where}: {key} must be a whole number")
    if value != value:  # NaN (``float("nan")`` and TOML's ``nan``): no comparison refuses it
        raise SettingsError(f"{where}: {key} must be a number, not nan")
    if value < 0:
        raise SettingsError(f"{where}: {key} cannot be negative")
    return kind(value)


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Settings from ``--config`` and then the command line (which wins)."""
    out: dict[str, Any] = {}
    if getattr(args, "config", None) is not None:
        out.update(read_file(args.config))
    for name in HELP:
        value = getattr(args, name, None)
        if value is not None:
            out[name] = check(name, value, TUNABLE[name], "--" + name.replace("_", "-"))
    if getattr(args, "log_level", None) is not None:
        out["log_level"] = args.log_level
    return out


def setup_logging(level: str = "info") -> None:
    """Timestamped lines on stderr for the operator (the banner goes to stdout)."""
    logging.basicConfig(
        level=getattr(logging, level.upper()),
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
    )
    logging.getLogger("conjure").setLevel(getattr(logging, level.upper()))
