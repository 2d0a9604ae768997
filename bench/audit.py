"""Audit speed: how many logged events a second ``conjure replay`` verifies and decides again.

    .venv/bin/python bench/audit.py                  # 10,000+ events, 5 runs (about a minute)
    .venv/bin/python bench/audit.py --quick          # smoke run: two games, one run, seconds
    .venv/bin/python bench/audit.py --events 50000 --runs 3 --keep /tmp/logs --profile

It plays seeded games on the real rules engine and writes them with the real log writer, one
synced ``append_many`` per decision with its command, as a server does (bench/loadlib/auditlog.py),
into a temporary folder. One game holds at most as many rounds as players, and only events the
engine does not cap (presence changes, pauses, replaced commitments, changed votes) could make one
log longer by repeating themselves; so the figure comes from several lively 8-player games that
add up to ``--events``, and the longest game the engine's caps allow is built apart and measured too.

For the same logs it times, best of ``--runs``, in this process: the bare fold (decode and
``evolve`` every event, nothing verified: the baseline), reading the hash chain alone, re-deciding
every batch alone, and ``server.audit_verify.audit`` (what ``conjure replay`` calls: chain,
re-decide, reveals, scores, totals); then the real command ``conjure replay LOG`` once per log, as
a subprocess (start-up included), and once over all the logs (``conjure replay LOG...``, one
start-up). Every log must verify (``conjure replay`` exits 0) or this
exits 1. The target, 50,000 events/s, is printed beside the figures, not asserted.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_PY = ROOT / ".venv" / "bin" / "python"
for _p in (str(ROOT / "bench"), str(ROOT)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

try:
    import msgspec  # noqa: F401
except ImportError:  # run with a python that lacks the project's packages: use the venv's
    if VENV_PY.exists() and Path(sys.prefix).resolve() != VENV_PY.parent.parent.resolve():
        os.execv(str(VENV_PY), [str(VENV_PY), *sys.argv])
    raise

from loadlib.auditlog import BUSY, LONGEST, START, GameLog, bare_fold, play_game, write_log  # noqa: E402

from conjure.server.audit_verify import audit  # noqa: E402
from conjure.server.logformat import read_log  # noqa: E402
from conjure.server.recovery import load_replays  # noqa: E402
from conjure.server.redecide import redecide  # noqa: E402

TARGET = 50_000  #: events per second re-decided (printed, not asserted)
GAME_GAP = 3600.0  #: seconds between two games' starts (times are data; any gap will do)


def conjure_command() -> list[str]:
    """The installed ``conjure`` beside this interpreter (the venv's), as a person runs it."""
    exe = Path(sys.executable).with_name("conjure")
    if not exe.exists():
        raise SystemExit(f"bench/audit.py: no conjure command beside {sys.executable}")
    return [str(exe)]


def build(folder: Path, events: int, seed: int) -> tuple[list[Path], list[GameLog]]:
    """Busy 8-player games, one log each, until they hold ``events`` events in all."""
    folder.mkdir()
    rng = random.Random(seed)
    paths: list[Path] = []
    games: list[GameLog] = []
    total = 0
    while total < events:
        n = len(games)
        game = play_game(rng, BUSY, f"bench{seed}-{n:03d}", START + n * GAME_GAP)
        path = folder / f"{game.game_id}.jsonl"
        written = write_log(path, game)
        assert written == game.events
        paths.append(path)
        games.append(game)
        total += written
    return paths, games


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def check_audits(paths: list[Path]) -> None:
    """Every log verifies in process; fail loudly otherwise."""
    for p in paths:
        a = audit(p)
        if not a.verified:
            raise SystemExit(f"bench/audit.py: {p} does NOT verify: {a.problems[:3]}")


def replay(paths: list[Path]) -> None:
    """One ``conjure replay LOG...`` run; any exit status but 0 ends the benchmark."""
    done = subprocess.run(
        [*conjure_command(), "replay", *map(str, paths), "--no-state-dir"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(
            f"bench/audit.py: conjure replay {' '.join(map(str, paths))} exited "
            f"{done.returncode}, not 0: a log does not verify"
        )


def replay_all(paths: list[Path]) -> None:
    """``conjure replay LOG`` once per log, as a person checks one game."""
    for p in paths:
        replay([p])


def line(label: str, seconds: list[float], events: int, fold: float | None = None) -> str:
    best = min(seconds)
    spread = (
        f"median {statistics.median(seconds):.3f}, worst {max(seconds):.3f}"
        if len(seconds) > 1
        else "one run"
    )
    rate = events / best
    vs_fold = f", {best / fold:5.1f}x the fold" if fold else ""
    return (
        f"  {label:<34} best {best:7.3f} s ({spread}): {rate:>9,.0f} events/s, "
        f"{rate / TARGET:.2f}x target{vs_fold}"
    )


def measure(paths: list[Path], events: int, runs: int) -> tuple[float, float, float]:
    """Time each stage on ``paths``; returns the best events/s of audit(), of the command run
    once per log, and of one command run over them all."""
    check_audits(paths)  # also warms the word data and every import
    fold = timed(lambda: [bare_fold(p) for p in paths], runs)
    chain = timed(lambda: [read_log(p) for p in paths], runs)
    records = [read_log(p).records for p in paths]
    again = timed(lambda: [redecide(r) for r in records], runs)
    full = timed(lambda: [audit(p) for p in paths], runs)
    best_fold = min(fold)
    print(line("bare fold (decode + evolve)", fold, events))
    print(line("hash chain only (read_log)", chain, events, best_fold))
    print(line("re-decide only (redecide)", again, events, best_fold))
    print(line("audit() in process", full, events, best_fold))
    cmd = timed(lambda: replay_all(paths), runs)
    print(line(f"conjure replay x{len(paths)} (subprocess)", cmd, events, best_fold))
    per = (min(cmd) - min(full)) / len(paths)
    print(f"  start-up and report per `conjure replay` run: about {per:.3f} s")
    together = cmd
    if len(paths) > 1:
        together = timed(lambda: replay(paths), runs)
        print(line(f"conjure replay of all {len(paths)} at once", together, events, best_fold))
    return events / min(full), events / min(cmd), events / min(together)


def startup(paths: list[Path], folder: Path, copies: int, runs: int) -> None:
    """Time a server's start-up (``load_replays``) over a ``replays/`` of finished games: the
    busy logs, ``copies`` times each (hard links where the filesystem allows), against reading
    and deciding each whole, which start-up once did for every finished log."""
    folder.mkdir()
    logs = []
    for i in range(copies):
        for p in paths:
            dest = folder / f"{p.stem}-{i}.jsonl"
            try:
                os.link(p, dest)
            except OSError:
                shutil.copy2(p, dest)
            logs.append(dest)
    said: list[str] = []
    found = load_replays(folder, said.append)
    if found.finished != len(logs) or said:
        raise SystemExit(
            f"bench/audit.py: start-up took {found.finished} of {len(logs)} logs "
            f"for finished games: {said[:3]}"
        )
    now = timed(lambda: load_replays(folder, said.append), runs)
    whole = timed(lambda: [redecide(read_log(p).records) for p in logs], 1)  # (seconds each)
    print(
        f"Start-up over {len(logs)} finished games ({copies} copies of each log): "
        f"best {min(now):.3f} s ({min(now) / len(logs) * 1e3:.2f} ms a log); read and decided "
        f"whole, as start-up once did (one run): {min(whole):.2f} s ({min(whole) / min(now):.0f}x)"
    )


def profile(paths: list[Path], top: int = 25) -> None:
    prof = cProfile.Profile()
    prof.enable()
    for p in paths:
        audit(p)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    print(out.getvalue())


def describe(games: list[GameLog]) -> str:
    types: Counter[str] = Counter()
    for g in games:
        types.update(g.types())
    total = sum(types.values())
    return ", ".join(f"{t} {n / total:.0%}" for t, n in types.most_common(8))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--events",
        type=int,
        default=10_000,
        help="whole games are built until they hold this many events (default 10000)",
    )
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each stage (best kept)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the scripted games")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="copy the built logs into DIR")
    parser.add_argument("--quick", action="store_true", help="two games, one run (smoke test)")
    parser.add_argument("--profile", action="store_true", help="also print audit()'s cProfile")
    parser.add_argument(
        "--startup-copies",
        type=int,
        default=34,
        help="start-up is timed over this many copies of each busy log (default 34: 510 games)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.events, args.runs = min(args.events, 1000), 1  # two games: both replay forms run
        args.startup_copies = min(args.startup_copies, 2)
    if args.events < 1 or args.runs < 1:
        parser.error("--events and --runs must be at least 1")
    if args.keep is not None and args.keep.resolve().is_relative_to((ROOT / "replays").resolve()):
        parser.error("--keep: not into replays/ (a server would take these logs for its games)")

    with tempfile.TemporaryDirectory(prefix="conjure-bench-audit-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        paths, games = build(folder / "busy", args.events, args.seed)
        events = sum(g.events for g in games)
        built = time.perf_counter() - t0
        refused = sum(sum(g.refused.values()) for g in games)
        print(
            f"Audit speed (seed {args.seed}, {os.cpu_count()} cores): {len(games)} busy "
            f"8-player game{'s' if len(games) > 1 else ''}, {events:,} events in "
            f"{sum(len(g.decisions) for g in games):,} batches, "
            f"{sum(p.stat().st_size for p in paths) / 1e6:.1f} MB, played on the rules engine and "
            f"written by the real log writer in {built:.1f} s ({refused} proposals tried that the "
            "engine refused, duplicates and words already invalid, were not logged)"
        )
        print(f"  events: {describe(games)}")
        if len(games) > 1:
            print(
                f"  several logs, not one: a game has at most as many rounds as players; these "
                f"hold {min(g.events for g in games):,} to {max(g.events for g in games):,} "
                "events each"
            )
        print(f"Timings over all {len(paths)} logs, {args.runs} run(s) each:")
        rate, command_rate, at_once = measure(paths, events, args.runs)
        if args.startup_copies > 0:
            startup(paths, folder / "startup", args.startup_copies, args.runs)

        if args.quick:
            print("(--quick: the longest single game is not built)")
        else:
            (folder / "longest").mkdir()
            longest = play_game(
                random.Random(args.seed), LONGEST, f"bench{args.seed}-longest", START
            )
            path = folder / "longest" / f"{longest.game_id}.jsonl"
            write_log(path, longest)
            print(
                f"The longest single game from events the engine caps (8 players, every proposal "
                f"it accepts, each voter voting once, every reopened review closed again): "
                f"{longest.events:,} events ({describe([longest])}). Longer logs need events it "
                "does not cap (presence changes, pauses, replaced commitments, changed votes) "
                "repeated."
            )
            measure([path], longest.events, args.runs)
            paths.append(path)
        print(
            f"=> conjure replay's audit: {rate:,.0f} events/s verified and re-decided "
            f"({rate / TARGET:.2f}x the {TARGET:,} events/s target); the command, start-up "
            f"included: {command_rate:,.0f} events/s run once per log"
            + (
                f", {at_once:,.0f} events/s run once over all {len(games)}"
                if len(games) > 1
                else ""
            )
        )
        if args.profile:
            profile(paths)
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            for p in paths:
                shutil.copy2(p, args.keep / p.name)
            print(f"kept {len(paths)} logs in {args.keep}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
