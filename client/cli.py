"""The ``conjure`` command: one entry point, a subcommand per job.

Each subcommand lives in its own module exposing ``add_arguments(parser)`` and ``run(args) -> int``;
modules are imported only when their subcommand runs, so ``conjure score`` never loads the UI.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Sequence

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("conjure.server.app", "run a game server (rooms, the event log, crash recovery)"),
    "play": ("conjure.client.app", "join or create a room and play in the terminal"),
    "watch": ("conjure.client.watch", "watch a room as a spectator"),
    "bot": (
        "conjure.client.bots.runner",
        "seat computer players in a room, or ask a bot for guesses",
    ),
    "demo": ("conjure.client.demo", "a whole game among computer players on a local server"),
    "replay": ("conjure.server.audit", "verify a saved game log and explain every point"),
    "score": ("conjure.server.tabletop", "score tabletop round sheets (TOML) with the same engine"),
}


def version() -> str:
    """The installed distribution's version: pyproject.toml's ``version``, read back from the
    package metadata so that it is stated in one place."""
    try:
        return importlib.metadata.version("conjure")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def _available() -> dict[str, tuple[str, str]]:
    found = {}
    for name, (module, help_) in SUBCOMMANDS.items():
        if importlib.util.find_spec(module) is not None:
            found[name] = (module, help_)
    return found


def build_parsers(
    available: dict[str, tuple[str, str]], command: str | None = None
) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser | None]:
    """The whole parser, and ``command``'s own (with its arguments) when one is given."""
    parser = argparse.ArgumentParser(
        prog="conjure",
        description="Conjure: the party game of summoning words, over the network.",
    )
    parser.add_argument("--version", action="version", version=f"conjure {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = None
    for name, (module, help_) in available.items():
        sp = sub.add_parser(name, help=help_, description=help_)
        if name == command:
            importlib.import_module(module).add_arguments(sp)
            chosen = sp
    return parser, chosen


def parse(
    parser: argparse.ArgumentParser,
    chosen: argparse.ArgumentParser | None,
    command: str | None,
    argv: list[str],
) -> argparse.Namespace:
    """The arguments. A command given first is parsed by its own parser, its options and names
    in any order (``conjure replay a.jsonl --json b.jsonl``), which argparse does not do under
    a parser with subcommands; anything else (``--version``, no command) by the whole parser."""
    if chosen is None or argv[:1] != [command]:
        return parser.parse_args(argv)
    args = chosen.parse_intermixed_args(argv[1:])
    args.command = command
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    available = _available()
    command = next((a for a in argv if not a.startswith("-")), None)
    if command not in available:
        command = None
    parser, chosen = build_parsers(available, command)
    if not argv:  # the commands, as --help lists them (only "COMMAND is required" was said)
        parser.print_help(sys.stderr)
        return 2
    args = parse(parser, chosen, command, argv)
    module = importlib.import_module(available[args.command][0])
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BaseExceptionGroup as group:  # Ctrl-C inside a Trio nursery comes wrapped
        if group.split(KeyboardInterrupt)[1] is None:
            return 130  # (a newcomer's Ctrl-C on conjure bot printed a traceback)
        raise
    except BrokenPipeError:
        # `conjure replay LOG | head`: the reader left; say nothing more (Python docs' recipe).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
