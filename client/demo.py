"""``conjure demo``: a whole game among computer players on a local server, to watch or to read.

    conjure demo [--watch] [--variant standard|dark-magic] [--players N] [--replays DIR]
                 [--delay S|MIN-MAX] [--seed S] [--linger S]

A server runs in this process on 127.0.0.1 (a free port; its logs go to ``--replays``, default
``replays/``), one bot creates a room and hosts, the others join, and they play every round.
Without ``--watch`` a short summary of each round is printed as it is scored, then the totals and
the path of the game's log (check it with ``conjure replay``). With ``--watch`` the spectator
screen (``conjure watch``) follows the game; the bots take their time like people (``--delay``,
default 1-2 s), and the final standings stay on screen for ``--linger`` seconds (or until Ctrl-Q)
before the summary is printed.

With ``--watch`` the server and the bots run on a Trio loop in a background thread while the
screen owns the main thread.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from conjure.protocol import messages as m
from conjure.protocol.counts import MAX_PLAYERS, MIN_PLAYERS
from conjure.protocol.events import Variant

CASES = ("everyone", "conjured", "missed-conjurer", "failed", "void")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--watch", action="store_true", help="follow the game on the spectator screen"
    )
    parser.add_argument("--variant", choices=("standard", "dark-magic"), default="standard")
    parser.add_argument(
        "--players", type=int, default=4, help="computer players at the table (3-8, default 4)"
    )
    parser.add_argument(
        "--replays",
        type=Path,
        default=Path("replays"),
        help="where the game's log is written (default: replays/)",
    )
    parser.add_argument(
        "--delay",
        metavar="S|MIN-MAX",
        help="seconds a bot waits before each move (default: 1-2 with --watch, else 0)",
    )
    parser.add_argument("--seed", type=int, help="seed of the first bot (default: random)")
    parser.add_argument(
        "--linger",
        type=float,
        default=8.0,
        help="with --watch: seconds the final standings stay on screen (default 8)",
    )


# ------------------------------------------------------------------ a game among bots


@dataclass
class Game:
    """A finished (or stopped) bot game: the bots, the host's last view, the log's path."""

    bots: list[Any] = field(default_factory=list)
    view: m.View | None = None
    log_path: Path | None = None

    @property
    def host(self) -> Any:
        return self.bots[0] if self.bots else None


async def bot_game(
    url: str,
    *,
    players: int = 4,
    variant: Variant = "standard",
    delay: tuple[float, float] = (0.0, 0.0),
    seed: int = 0,
    log: Callable[[str], None] = lambda line: None,
    on_view: Callable[[m.View], None] | None = None,
    wait_for_spectators: int = 0,
    challenge_rate: float = 0.1,
    settings: m.RoomSettings | None = None,
    on_room: Callable[[str], None] | None = None,
    game: Game | None = None,
) -> Game:
    """Seat ``players`` bots on the server at ``url`` (the first creates the room and starts the
    game once everyone, and ``wait_for_spectators`` spectators, are there); play to the end."""
    from conjure.client.bots.brain import load_data
    from conjure.client.bots.player import Bot, BotOptions, NamePool

    await trio.to_thread.run_sync(load_data)
    game = game or Game()
    pool = NamePool()
    settings = settings or m.RoomSettings(variant=variant)

    def ready(v: m.View) -> bool:
        return len(v.players) >= players and v.spectators >= wait_for_spectators

    host = Bot(
        BotOptions(
            url=url,
            create=settings,
            start_when=ready,
            seed=seed,
            delay=delay,
            log=log,
            on_view=on_view,
            challenge_rate=challenge_rate,
        ),
        pool,
    )
    game.bots.append(host)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(host.run)
        with trio.fail_after(30):
            while not host.seated.is_set():
                if host.status is not None:
                    raise RuntimeError(f"the host bot could not create a room: {host.status}")
                await trio.sleep(0.01)
        assert host.room is not None
        if on_room is not None:
            on_room(host.room)
        for i in range(1, players):
            bot = Bot(
                BotOptions(
                    url=url,
                    room=host.room,
                    seed=seed + i,
                    delay=delay,
                    log=log,
                    challenge_rate=challenge_rate,
                ),
                pool,
            )
            game.bots.append(bot)
            nursery.start_soon(bot.run)
    game.view = host.view
    return game


# ------------------------------------------------------------------ the summary


def names_of(v: m.View) -> dict[int, str]:
    return {p.seat: p.name for p in v.players}


def round_lines(result: m.ResultView, names: dict[int, str], review: m.View | None) -> list[str]:
    """A compact account of one scored round."""
    card = result.card
    what = f"{card.text!r} ({card.stars} star{'s' if card.stars != 1 else ''})" if card else "-"
    who = names.get(result.conjurer, f"seat {result.conjurer}")
    lines = [f"Round {result.round}: {who} conjures {what} -> {result.case}"]
    if result.case == "void":
        lines.append(f"  void: {result.reason}")
        return lines
    if review is not None:
        spells = []
        for p in review.players:
            if p.spell:
                spells.append(f"{p.spell}{' *' if p.marked else ''}")
        if spells:
            lines.append("  spell words (* = crystal): " + ", ".join(spells))
    words = []
    for seat, word in sorted(result.words.items()):
        mark = " (invalid)" if seat in result.invalid else ""
        words.append(f"{names.get(seat, seat)} {word}{mark}")
    lines.append("  summoned: " + ", ".join(words))
    points = [f"{names.get(s, s)} {p:+d}" for s, p in sorted(result.points.items()) if p]
    lines.append("  points: " + (", ".join(points) if points else "none"))
    return lines


def final_lines(v: m.View, log_path: Path | None) -> list[str]:
    names = names_of(v)
    ranking = sorted(v.players, key=lambda p: (-p.score, p.seat))
    lines = ["Final scores: " + ", ".join(f"{p.name} {p.score}" for p in ranking)]
    if len(v.winners) == 1:
        lines.append(f"Winner: {names[v.winners[0]]}")
    elif v.winners:
        *most, last = (names[s] for s in v.winners)
        lines.append(f"{', '.join(most)} and {last} share the win")
    counts = {c: sum(r.case == c for r in v.results) for c in CASES}
    lines.append("Cases: " + ", ".join(f"{c} {n}" for c, n in counts.items() if n))
    if log_path is not None:
        lines.append(f"Game log: {log_path}")
        lines.append(f"Check every point with: conjure replay {log_path}")
    return lines


class Commentary:
    """Prints each round as it is scored (from the host bot's views)."""

    def __init__(self, out: Callable[[str], None]) -> None:
        self.out = out
        self.printed = 0
        self.review: dict[int, m.View] = {}
        self.started = False

    def __call__(self, v: m.View) -> None:
        if v.phase == "review":
            self.review[v.round] = v
        if not self.started and v.game_id is not None:
            self.started = True
            setting = v.settings.variant
            seated = ", ".join(p.name for p in v.players)
            self.out(f"Room {v.room}, game {v.game_id} ({setting}): {seated}")
        names = names_of(v)
        while self.printed < len(v.results):
            result = v.results[self.printed]
            for line in round_lines(result, names, self.review.get(result.round)):
                self.out(line)
            self.printed += 1


# ------------------------------------------------------------------ running


def _parse_delay(text: str | None, watch: bool) -> tuple[float, float]:
    from conjure.client.bots.player import parse_delay

    if text is None:
        return (1.0, 2.0) if watch else (0.0, 0.0)
    return parse_delay(text)


async def play_demo(
    replays: Path,
    *,
    players: int = 4,
    variant: Variant = "standard",
    delay: tuple[float, float] = (0.0, 0.0),
    seed: int = 0,
    out: Callable[[str], None] = print,
    challenge_rate: float = 0.1,
) -> Game:
    """The demo without a screen: server and bots in this Trio run, a line per round."""
    from conjure.server.service import serve

    said: list[str] = []
    game = Game()
    async with trio.open_nursery() as nursery:
        server = await nursery.start(
            lambda task_status: serve(
                replays, host="127.0.0.1", port=0, say=said.append, task_status=task_status
            )
        )
        try:
            await bot_game(
                server.url,
                players=players,
                variant=variant,
                delay=delay,
                seed=seed,
                on_view=Commentary(out),
                challenge_rate=challenge_rate,
                game=game,
            )
        finally:
            await server.aclose()
    _finish(game, replays)
    return game


def _finish(game: Game, replays: Path) -> None:
    v = game.host.view if game.host is not None else None
    game.view = v
    if v is not None and v.game_id is not None:
        game.log_path = replays / f"{v.game_id}.jsonl"


def run(args: argparse.Namespace) -> int:
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        print(
            f"conjure demo: --players must be between {MIN_PLAYERS} and {MAX_PLAYERS}",
            file=sys.stderr,
        )
        return 2
    try:
        delay = _parse_delay(args.delay, args.watch)
    except ValueError as exc:
        print(f"conjure demo: {exc}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")
    if args.watch:
        game = _run_watching(args, delay, seed)
        if game.view is not None:
            names = names_of(game.view)
            for result in game.view.results:
                for line in round_lines(result, names, game.host.reviews.get(result.round)):
                    print(line)
    else:
        game = trio.run(
            lambda: play_demo(
                args.replays, players=args.players, variant=args.variant, delay=delay, seed=seed
            )
        )
    if game.view is None:
        print("conjure demo: the game did not start", file=sys.stderr)
        return 1
    if game.view.phase != "over":
        print(f"The game was stopped in round {game.view.round}; it is unfinished.")
        if game.log_path is not None:
            print(f"Its log so far: {game.log_path}")
        return 0 if args.watch else 1  # quitting the screen early is fine
    for line in final_lines(game.view, game.log_path):
        print(line)
    return 0


def _run_watching(args: argparse.Namespace, delay: tuple[float, float], seed: int) -> Game:
    """Server and bots on a Trio loop in a thread; the spectator screen in the main thread."""
    from conjure.client.app import ClientApp, Options
    from conjure.server.service import serve

    box: dict[str, Any] = {}
    ready = threading.Event()
    screen_closed = threading.Event()
    game = Game()

    def close_screen() -> None:
        loop, client = box.get("loop"), box.get("client")
        if loop is not None and client is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_exit_app, client)

    async def backend() -> None:
        box["token"] = trio.lowlevel.current_trio_token()
        said: list[str] = []
        with trio.CancelScope() as scope:
            box["scope"] = scope
            async with trio.open_nursery() as nursery:
                server = await nursery.start(
                    lambda task_status: serve(
                        args.replays,
                        host="127.0.0.1",
                        port=0,
                        say=said.append,
                        task_status=task_status,
                    )
                )

                def on_room(code: str) -> None:
                    box["url"], box["room"] = server.url, code
                    ready.set()

                try:
                    await bot_game(
                        server.url,
                        players=args.players,
                        variant=args.variant,
                        delay=delay,
                        seed=seed,
                        wait_for_spectators=1,
                        on_room=on_room,
                        game=game,
                    )
                    await trio.sleep(max(0.0, args.linger))
                finally:
                    close_screen()
                    # the screen goes first: it must not see the server leave as it closes
                    with trio.move_on_after(10):
                        while not screen_closed.is_set() and "loop" in box:
                            await trio.sleep(0.05)
                    await server.aclose()

    def background() -> None:
        try:
            trio.run(backend)
        except BaseException as exc:  # shown after the screen closes
            box["error"] = exc
        finally:
            ready.set()
            close_screen()

    thread = threading.Thread(target=background, name="conjure-demo", daemon=True)
    thread.start()
    ready.wait()
    if "error" not in box and "room" in box:
        client = ClientApp(
            Options(
                url=box["url"],
                room=box["room"],
                spectator=True,
                state_dir=os.environ.get("CONJURE_STATE_DIR") or None,
            )
        )

        async def screen() -> int:
            box["loop"] = asyncio.get_running_loop()
            box["client"] = client
            return await client.run_async()

        try:
            asyncio.run(screen())
        finally:
            screen_closed.set()
            box.pop("loop", None)
            token, scope = box.get("token"), box.get("scope")
            if token is not None and scope is not None:
                with contextlib.suppress(trio.RunFinishedError):
                    token.run_sync_soon(scope.cancel)
    thread.join()
    if "error" in box:
        raise box["error"]
    _finish(game, args.replays)
    return game


def _exit_app(client: Any) -> None:
    with contextlib.suppress(Exception):
        if client.app.is_running:
            client.app.exit(result=0)
