"""``conjure bot``: seat computer players in a room, or ask a bot for its guesses.

    conjure bot ws://127.0.0.1:8765 --room ABCD [--count 3] [--name Ada ...] [--seed 7]
                [--password P] [--pin sha256:HEX] [--delay 1-3] [--state-dir DIR] [--log FILE]
    conjure bot --guess Vehicle freighter hydrogen rocket

Each bot is an ordinary protocol client (:mod:`client.bots.player`); ``--count N`` runs N of them
in this one process, one Trio task each. They play until the game is over (then the command
exits), reconnect on their own when dropped, and stop on Ctrl-C or SIGTERM. With a state
directory (``--state-dir`` or ``$CONJURE_STATE_DIR``) each bot keeps its seat token and summoning
secrets there, so a restarted ``conjure bot`` resumes the seats and still reveals what it
committed: the names of the bots saved for that room come first (then ``--name``, then the
defaults), so the same bots come back to the same seats whatever names they ended up with.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from conjure.protocol.cells import wrap_words


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", nargs="?", help="server address, e.g. ws://127.0.0.1:8765")
    parser.add_argument("--room", metavar="CODE", help="the room's 4-letter code")
    parser.add_argument(
        "--count", type=int, default=1, help="how many bots to seat (default 1, at most 7)"
    )
    parser.add_argument(
        "--name",
        action="extend",
        nargs="+",
        default=[],
        metavar="NAME",
        help="the bots' names, in order (default: Ada, Basil, Cleo, ...; a taken one is skipped)",
    )
    parser.add_argument("--seed", type=int, help="seed of the first bot (the others: +1, +2...)")
    parser.add_argument("--password", help="the room's password, if it has one")
    parser.add_argument(
        "--pin",
        metavar="sha256:HEX",
        help="the wss:// server's certificate fingerprint, as the host's screen shows it",
    )
    parser.add_argument(
        "--delay",
        default="1-3",
        metavar="S|MIN-MAX",
        help="seconds a bot waits before each move, like a person (default 1-3; 0 = at once)",
    )
    parser.add_argument(
        "--state-dir",
        type=Path,
        help="keep seat tokens and summoning secrets here (default: $CONJURE_STATE_DIR, if set)",
    )
    parser.add_argument("--log", type=Path, help="write what the bots do to this file")
    parser.add_argument("--quiet", action="store_true", help="print only problems")
    parser.add_argument(
        "--guess",
        nargs="+",
        metavar=("CATEGORY", "WORD"),
        help="print a bot's ranked summoning words for these marked words (no server needed)",
    )


def print_guesses(words: list[str], k: int = 10) -> int:
    if len(words) < 2:
        print("conjure bot: --guess needs a category and at least one word", file=sys.stderr)
        return 2
    from conjure.client.bots.brain import guess, resolve

    category, marked = words[0], words[1:]
    ranked = guess(category, marked, k)
    cat = resolve(category)
    how = "a category the bots know" if cat.known else "a category the bots guess at"
    print(f"{category} ({how}) with {', '.join(marked)}:")
    if not ranked:
        print("  (no word fits)")
        return 1
    for i, (word, score) in enumerate(ranked, 1):
        print(f"  {i:2}. {word:<24} {score:.3f}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.guess:
        return print_guesses(args.guess)
    problem = _check(args)
    if problem:
        print(f"conjure bot: {problem}", file=sys.stderr)
        return 2
    delay = _delay(args.delay)
    if isinstance(delay, str):
        print(f"conjure bot: {delay}", file=sys.stderr)
        return 2
    state_dir = args.state_dir or (os.environ.get("CONJURE_STATE_DIR") or None)
    out = open(args.log, "a", encoding="utf-8", buffering=1) if args.log else sys.stdout  # noqa: SIM115
    try:
        return trio.run(
            main,
            args.url,
            args.room,
            args.count,
            list(args.name),
            args.seed,
            args.password,
            delay,
            state_dir,
            out,
            args.quiet,
            args.pin,
        )
    finally:
        if out is not sys.stdout:
            out.close()


def _check(args: argparse.Namespace) -> str | None:
    if not args.url:
        return "give the server address, e.g. conjure bot ws://127.0.0.1:8765 --room ABCD"
    if not (args.url.startswith("ws://") or args.url.startswith("wss://")):
        return f"{args.url!r} is not a ws:// or wss:// address"
    from conjure.client.pins import pin_problem

    if problem := pin_problem(args.url, args.pin):
        return problem
    if not args.room or not re.fullmatch(r"[A-Za-z]{4}", args.room):
        return "say which room with --room CODE (4 letters)"
    if not 1 <= args.count <= 7:
        return "--count must be between 1 and 7"
    return None


def _delay(text: str) -> tuple[float, float] | str:
    from conjure.client.bots.player import parse_delay

    try:
        return parse_delay(text)
    except ValueError as exc:
        return str(exc)


def bot_log(out: Any, quiet: bool) -> Callable[[str], None]:
    """What the bots say, printed to ``out``: in a terminal wrapped between words under the
    bot's name (the terminal broke "different thi" / "ngs", seen at 80 columns); to a pipe or a
    file one line each. ``quiet``: only what went wrong."""
    width = shutil.get_terminal_size().columns if out.isatty() else None

    def log(line: str) -> None:
        if not quiet or "refused" in line or "could not" in line or "unexpected" in line:
            lines = [line] if width is None else wrap_words(line, width, "", "    ")
            print("\n".join(lines), file=out, flush=True)

    return log


async def main(
    url: str,
    room: str,
    count: int,
    names: list[str],
    seed: int | None,
    password: str | None,
    delay: tuple[float, float],
    state_dir: str | Path | None,
    out,
    quiet: bool = False,
    pin: str | None = None,
) -> int:
    from conjure.client.bots.brain import load_data
    from conjure.client.bots.player import (
        Bot,
        BotOptions,
        NamePool,
        move_bot_seats,
        moved_bots_url,
        saved_bots,
    )
    from conjure.client.statefile import StateDir

    await trio.to_thread.run_sync(load_data)
    base = seed if seed is not None else random.SystemRandom().randrange(1_000_000)
    store = StateDir(state_dir) if state_dir else None

    log = bot_log(out, quiet)

    if store is not None and not saved_bots(store, url, room):
        old = moved_bots_url(store, url, room)
        if old is not None:
            log(f"the server of room {room.upper()} moved from {old}: taking its bots' seats there")
            move_bot_seats(store, old, url, room)
    saved = [e["name"] for e in saved_bots(store, url, room)] if store is not None else []
    if saved:
        log(f"resuming the seats of {', '.join(saved[:count])} in room {room.upper()}")
    pool = NamePool([*saved, *names])
    bots = [
        Bot(
            BotOptions(
                url=url,
                room=room,
                password=password,
                seed=base + i,
                delay=delay,
                store=store,
                log=log,
                pin=pin,
            ),
            pool,
        )
        for i in range(count)
    ]
    codes: list[int] = []

    async def play(bot: Bot) -> None:
        codes.append(await bot.run())

    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
        async with trio.open_nursery() as nursery:

            async def stop_on_signal() -> None:
                async for signum in signals:
                    log(f"{signal.Signals(signum).name}: the bots leave")
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(stop_on_signal)
            async with trio.open_nursery() as players:
                for bot in bots:
                    players.start_soon(play, bot)
            nursery.cancel_scope.cancel()
    if not codes:
        return 0
    with contextlib.suppress(Exception):
        statuses = ", ".join(f"{b.name}: {b.status}" for b in bots)
        log(f"bots finished ({statuses})")
    return max(codes)
