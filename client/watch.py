"""``conjure watch``: the player's screen, as a spectator (no seat, nothing to type but /quit)."""

from __future__ import annotations

import argparse

from conjure.client.app import DEFAULT_URL, add_pin_argument, options_from_args, run_client


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "url", nargs="?", default=DEFAULT_URL, help=f"server address (default {DEFAULT_URL})"
    )
    parser.add_argument("--room", metavar="CODE", required=True, help="the room's 4-letter code")
    parser.add_argument("--password", help="the room's password, if it has one")
    add_pin_argument(parser)


def run(args: argparse.Namespace) -> int:
    return run_client(options_from_args(args, spectator=True))
