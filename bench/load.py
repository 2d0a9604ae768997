"""Load benchmark: N rooms of 6 scripted players, over loopback, against the real server and baselines.

    .venv/bin/python bench/load.py --quick                 # smoke run: 5 rooms, under a minute
    .venv/bin/python bench/load.py --rooms 300,500         # paced and flat out, 300 then 500 rooms
    .venv/bin/python bench/load.py --rooms 300 --mode paced --target conjure

For every (room count, mode) it starts a fresh server as its own process -- first the bare
trio-websocket broadcast baseline (bench/loadlib/baseline_server.py: no rules, no log, ~1 KB
updates), then the same broadcast framing its own WebSocket frames on plain Trio streams
(bench/loadlib/framed_server.py: what trio-websocket itself costs), then that broadcast making
each action durable in a log of its room before it tells it (``framed_server.py --durable``,
through Conjure's own group commit: the floor under any server that keeps Conjure's promise on
this disk), then on Node with ``ws``
(bench/loadlib/node_baseline/server.js, the peer runtime's baseline; skipped when node or npm is
missing), then Conjure (``python -m conjure.client.cli serve --port 0 --replays <tmpdir>``, so
every action is appended and fsync'd) --
and drives the same game script against all of them from ``--procs`` generator processes (lean
clients: raw trio-websocket + msgspec; see bench/loadlib/players.py). Before the first Node run,
``ws`` is installed with npm into build/node-baseline/ (reused while package.json and the lock are
unchanged), never into the source tree.

* paced: each player acts 0.5-1.5 s (uniform) after it may; reports p50 / p99 / max latency from an
  action being sent to the LAST player of the room receiving the update reflecting it. The rooms
  start their games spread over ``--stagger`` s (default 12, about one round) so that 300 tables do
  not play their phases in lockstep, which no real server sees.
* flat: players act the moment they may; reports the actions per second sustained (completed
  actions per second between the moment every room's game had started and the moment the first
  room finished its game).

Also reported: the server's CPU (% of one core, from /proc/PID/stat, over the measured window) and
CPU time per action, its peak RSS, the generator processes' CPU and event-loop lag (a 10 ms sleep's
overshoot), and the machine's CPU. The output says when the generator, not the server, was the
bottleneck. On a shared machine it also says how much CPU other work took, and reports latency
and throughput again counting only the time when the machine had no other work (``p99 cl``);
``--wait-quiet`` waits for an idle machine before each run.
All traffic goes to 127.0.0.1; every run is bounded by ``--duration`` and stops by itself.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import multiprocessing as mp
import os
import queue
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_PY = ROOT / ".venv" / "bin" / "python"
for _p in (str(ROOT / "bench"), str(ROOT)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

try:
    import msgspec  # noqa: F401
    import trio  # noqa: F401
    import trio_websocket  # noqa: F401
except ImportError:  # run with a python that lacks the project's packages: use the venv's
    if VENV_PY.exists() and Path(sys.prefix).resolve() != VENV_PY.parent.parent.resolve():
        os.execv(str(VENV_PY), [str(VENV_PY), *sys.argv])
    raise

from loadlib import procstat  # noqa: E402
from loadlib.players import GenConfig, gen_main  # noqa: E402
from loadlib.serverproc import ServerProcess, pct  # noqa: E402

HOST = "127.0.0.1"
BASELINE = ROOT / "bench" / "loadlib" / "baseline_server.py"
#: The same broadcast with its WebSocket framing owned (no trio-websocket): what the library costs.
FRAMED = ROOT / "bench" / "loadlib" / "framed_server.py"
NODE_SRC = ROOT / "bench" / "loadlib" / "node_baseline"
#: Where npm installs the Node baseline's ``ws``: a cache under build/ (ignored), never NODE_SRC.
NODE_DIR = ROOT / "build" / "node-baseline"
NPM_TIMEOUT = 180.0
#: A registry that cannot be reached fails the install in seconds, not after npm's long retries.
NPM_INSTALL = (
    *("install", "--no-audit", "--no-fund", "--omit-lockfile-registry-resolved"),
    *("--fetch-retries=1", "--fetch-retry-mintimeout=1000", "--fetch-retry-maxtimeout=5000"),
)
#: The servers a run can load, in the order they run; "both" is the older spelling of the first and
#: last, kept for scripts that use it.
TARGETS = ("baseline", "framed", "durable", "node", "conjure")
# start, then per round: choose, 6 spells, mark, 6 commits, 6 reveals, 6 dones
ACTIONS_PER_GAME = 1 + 6 * 26
LAG_LIMIT_MS = 10.0  # generator event-loop lag (p99) above this: the generator was a bottleneck
GEN_CPU_LIMIT = 90.0  # % of one core


# ------------------------------------------------------------------ servers


#: The load comes from one address, so the per-address limits (which keep one visitor from
#: filling a server) are raised out of the way; the benchmark measures the game, not the limits.
UNLIMITED = [
    *("--max-connections", "100000"),
    *("--max-connections-per-address", "100000"),
    *("--max-rooms", "100000"),
    *("--max-rooms-per-address", "100000"),
    *("--rooms-per-minute", "1000000"),
    *("--address-rate", "1000000000"),
    *("--address-burst", "1000000000"),
    *("--connection-rate", "1000000"),
    *("--connection-burst", "1000000"),
    *("--rate", "1000000"),
    *("--burst", "1000000"),
    *("--log-level", "warning"),
]


class NodeUnavailable(RuntimeError):
    """The Node baseline cannot run here: no node or npm on PATH, or npm could not install ws."""


def node_baseline(dest: Path = NODE_DIR, timeout: float = NPM_TIMEOUT) -> list[str]:
    """The command that starts the Node baseline, its ``ws`` installed with npm first if need be.

    server.js, package.json and package-lock.json are copied to ``dest`` and ``npm install`` runs
    there; a stamp of the manifests says when an earlier install can be reused. Concurrent callers
    (a benchmark and a test) take turns on a lock file. Raises NodeUnavailable, with a reason that
    reads as one sentence, when it cannot be done.
    """
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise NodeUnavailable(f"{'node' if node is None else 'npm'} is not on PATH")
    manifests = ("package.json", "package-lock.json")
    stamp_text = b"".join(
        (NODE_SRC / n).read_bytes() if (NODE_SRC / n).exists() else b"-" for n in manifests
    )
    try:
        dest.mkdir(parents=True, exist_ok=True)
        with open(dest / ".install-lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            shutil.copyfile(NODE_SRC / "server.js", dest / "server.js")
            stamp = dest / ".installed"
            ws_here = (dest / "node_modules" / "ws" / "package.json").exists()
            if ws_here and stamp.exists() and stamp.read_bytes() == stamp_text:
                return [node, str(dest / "server.js")]
            stamp.unlink(missing_ok=True)
            for n in manifests:
                if (NODE_SRC / n).exists():
                    shutil.copyfile(NODE_SRC / n, dest / n)
                else:
                    (dest / n).unlink(missing_ok=True)
            done = subprocess.run(
                [npm, *NPM_INSTALL],
                cwd=dest,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                check=False,
            )
            if done.returncode != 0:
                said = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()
                why = [ln for ln in said if "reason:" in ln] or [
                    ln for ln in said if ln.startswith("npm error")
                ]
                raise NodeUnavailable(f"npm install of ws failed ({(why or said)[0][:200]})")
            stamp.write_bytes(stamp_text)
    except subprocess.TimeoutExpired as exc:
        raise NodeUnavailable(f"npm install of ws did not finish within {timeout:.0f} s") from exc
    except OSError as exc:
        raise NodeUnavailable(f"the Node baseline could not be set up in {dest} ({exc})") from exc
    return [node, str(dest / "server.js")]


def node_versions(argv: list[str]) -> str:
    """'node vX, ws Y' for the command node_baseline returned (for the report's machine line)."""
    try:
        node = subprocess.run(
            [argv[0], "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        node = "?"
    pkg = Path(argv[1]).parent / "node_modules" / "ws" / "package.json"
    ws = json.loads(pkg.read_text()).get("version", "?") if pkg.exists() else "?"
    return f"node {node}, ws {ws}"


class Server(ServerProcess):
    """One of the servers a run loads (``kind``: one of ``TARGETS``) on a free port."""

    def __init__(self, kind: str, replays: str, cmd: str | list[str] | None = None) -> None:
        py = str(VENV_PY) if VENV_PY.exists() else sys.executable
        base = shlex.split(cmd) if isinstance(cmd, str) else cmd  # a --*-cmd option, or an argv
        if kind == "conjure":
            base = base or [py, "-m", "conjure.client.cli", "serve"]
            argv = [*base, "--host", HOST, "--port", "0", "--replays", replays, *UNLIMITED]
        else:  # the baselines: each takes only where to listen
            if not base and kind == "node":
                raise RuntimeError("the node server needs the command node_baseline() returns")
            if not base:
                base = {
                    "framed": [py, str(FRAMED)],
                    "durable": [py, str(FRAMED), "--durable"],
                }.get(kind, [py, str(BASELINE)])
            argv = [*base, "--host", HOST, "--port", "0"]
        self.kind = kind
        super().__init__(argv, cwd=ROOT, name=f"{kind} server")


# ------------------------------------------------------------------ one run


def wait_quiet(limit: float, busy_max: float = 15.0) -> float:
    """Wait (at most ``limit`` s) for 3 s in a row with the machine under ``busy_max``% busy.

    Returns the busy % of the last 3 s sampled.
    """
    end = time.monotonic() + limit
    while True:
        m0 = procstat.machine_cpu()
        time.sleep(3.0)
        m1 = procstat.machine_cpu()
        busy = 100.0 * (m1[0] - m0[0]) / max(1, m1[1] - m0[1])
        if busy < busy_max or time.monotonic() >= end:
            return busy


def run_one(kind: str, mode: str, rooms: int, args) -> dict:
    """One server, one mode, one room count: start everything, measure, tear everything down."""
    tmp = tempfile.mkdtemp(prefix=f"conjure-bench-{kind}-")
    nprocs = max(1, min(args.procs, rooms))
    cap = args.duration if args.duration else (12.0 if args.quick and mode == "paced" else 180.0)
    stagger = 0.0 if mode == "flat" else (2.0 if args.quick else 12.0)
    if args.stagger is not None:
        stagger = args.stagger
    ctx = mp.get_context("spawn")
    ready_q, result_q, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs: list = []
    cmd = {
        "conjure": args.conjure_cmd,
        "node": args.node_argv,
        "framed": None,
        "durable": None,
    }.get(kind, args.baseline_cmd)
    server = Server(kind, tmp, cmd)
    out: dict = {
        "kind": kind,
        "mode": mode,
        "rooms": rooms,
        "procs": nprocs,
        "cap": cap,
        "fs": procstat.fs_type(tmp),
        "stagger": stagger,
        "server_tail": [],
    }
    try:
        split = [rooms // nprocs + (1 if i < rooms % nprocs else 0) for i in range(nprocs)]
        for i, n in enumerate(split):
            cfg = GenConfig(
                proc=i,
                kind="conjure" if kind == "conjure" else "baseline",  # all baselines speak it
                host=HOST,
                port=server.port,
                rooms=n,
                paced=mode == "paced",
                cap=cap,
                seed=args.seed,
                games=args.games,
                stagger=stagger,
                dump=bool(args.dump),
                setup_timeout=30.0 + 0.2 * rooms,
            )
            p = ctx.Process(target=gen_main, args=(cfg, ready_q, go, result_q), daemon=True)
            p.start()
            procs.append(p)
        seated, setup_s = 0, 0.0
        for _ in procs:
            tag, _proc, live, secs = ready_q.get(timeout=90.0 + 0.3 * rooms)
            if tag == "crash":
                raise RuntimeError(f"generator process crashed: {result_q.get(timeout=5)}")
            seated += live
            setup_s = max(setup_s, secs)
        out["seated"], out["setup_s"] = seated, setup_s
        rss_setup = procstat.status(server.pid).get("VmRSS", 0)
        ours_pids = [server.pid, os.getpid(), *(p.pid for p in procs)]
        sampler = procstat.Sampler(server.pid, ours_pids).start()
        ours = {os.getpid(), server.pid, *(p.pid for p in procs)}
        snap0 = procstat.all_cpu()
        out["loadavg_before"] = Path("/proc/loadavg").read_text().split()[0]
        me0 = procstat.cpu_seconds(os.getpid())
        cpu0, m0, t0 = procstat.cpu_seconds(server.pid), procstat.machine_cpu(), time.monotonic()
        spy = None
        if args.py_spy and kind == "conjure":
            dest = f"{args.profile_out or 'conjure-profile'}-{mode}-{rooms}.txt"
            spy = subprocess.Popen(
                [
                    args.py_spy,
                    "record",
                    "-p",
                    str(server.pid),
                    "-f",
                    "raw",
                    "-r",
                    "100",
                    "--nonblocking",
                    "-d",
                    str(int(cap) + 5),
                    "-o",
                    dest,
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            out["profile"] = dest
        go.set()
        results = []
        for _ in procs:
            r = result_q.get(timeout=cap + 120.0)
            if "crash" in r:
                raise RuntimeError(f"generator process crashed:\n{r['crash']}")
            results.append(r)
        cpu1, m1, t1 = procstat.cpu_seconds(server.pid), procstat.machine_cpu(), time.monotonic()
        if spy is not None:
            ours.add(spy.pid)
        me1 = procstat.cpu_seconds(os.getpid())
        out["other_procs_cpu"], out["other_top"] = procstat.others(
            snap0, procstat.all_cpu(), ours, t1 - t0
        )
        sampler.stop()
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            try:
                spy.wait(30)
            except subprocess.TimeoutExpired:
                spy.kill()
        st = procstat.status(server.pid)
        out.update(
            server_cpu_s=cpu1 - cpu0,
            server_cpu=100.0 * (cpu1 - cpu0) / (t1 - t0),
            machine_cpu=100.0 * (m1[0] - m0[0]) / max(1, m1[1] - m0[1]),
            rss_setup_mb=rss_setup / 1024,
            rss_peak_mb=max(sampler.peak_kb, st.get("VmRSS", 0)) / 1024,
            threads=st.get("Threads", 0),
            window_s=t1 - t0,
        )
        clean, dirty_s = sampler.clean()
        out.update(merge(results, clean))
        out["dirty_s"] = dirty_s
        if args.dump:
            dest = f"{args.dump}-{kind}-{mode}-{rooms}.tsv"
            with open(dest, "w") as f:
                f.write("t_sent_s\tlatency_ms\tkind\troom\n")
                for rec in sorted(x for r in results for x in r["dump"]):
                    f.write("\t".join(map(str, rec)) + "\n")
            out["dump"] = dest
        # Busy CPU on the machine not used by this benchmark's processes (includes processes that
        # came and went during the run, and kernel time charged to no process).
        residual = (
            out["machine_cpu"] * (os.cpu_count() or 1)
            - out["server_cpu"]
            - sum(g["cpu"] for g in out["gen"])
            - 100.0 * (me1 - me0) / (t1 - t0)
        )
        out["other_cpu"] = max(out["other_procs_cpu"], residual, 0.0)
        out["cpu_ms_per_action"] = 1000.0 * out["server_cpu_s"] / max(1, out["actions"])
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
        server.stop()
        out["server_tail"] = list(server.tail)[-args.server_output :] if args.server_output else []
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def merge(results: list[dict], clean=lambda t: True) -> dict:
    lat = sorted(x for r in results for x in r["latencies"])
    sent_lat = [(t, x) for r in results for t, x in zip(r["sent_at"], r["latencies"], strict=True)]
    done_at = sorted(x for r in results for x in r["done_at"])
    t_go = min(r["t_go"] for r in results)
    t_end = max(r["t_end"] for r in results)
    started = max(r["started_at"] for r in results)
    finished = [t for r in results for t in r["finished"]]
    first_done = min(finished) if finished else t_end
    # Steady window: every game under way, none over yet.
    w0, w1 = started, min(first_done, t_end)
    if w1 - w0 >= 2.0:
        steady = sum(1 for t in done_at if w0 <= t <= w1) / (w1 - w0)
    else:
        w0, w1 = t_go, (done_at[-1] if done_at else t_end)
        steady = len(done_at) / max(1e-9, w1 - w0)
    overall = len(done_at) / max(1e-9, (done_at[-1] if done_at else t_end) - t_go)
    # The same rate counted only over the parts of the window when the machine had no other work.
    steps = max(1, int((w1 - w0) / 0.1))
    clean_s = sum(0.1 for i in range(steps) if clean(w0 + (i + 0.5) * (w1 - w0) / steps))
    clean_s = min(clean_s, w1 - w0)
    steady_clean = (
        sum(1 for t in done_at if w0 <= t <= w1 and clean(t)) / clean_s
        if clean_s >= 2.0
        else float("nan")
    )
    # Latency over the actions sent while the machine had no other work (see Sampler.clean).
    clean_lat = sorted(x for t, x in sent_lat if clean(t))
    # Latency over the actions sent while every room was playing (none starting, none done).
    if min(first_done, t_end) - started >= 2.0:
        steady_lat = sorted(x for t, x in sent_lat if started <= t <= min(first_done, t_end))
    else:
        steady_lat = lat
    gen = [
        {
            "proc": r["proc"],
            "cpu": 100.0 * r["cpu"] / max(1e-9, r["t_end"] - r["t_go"]),
            "lag_p99": 1000.0 * r["lag_p99"],
            "lag_max": 1000.0 * r["lag_max"],
        }
        for r in results
    ]
    kinds: dict[str, tuple[int, float, float]] = {}
    for r in results:
        for k, (n, med, mx) in r["by_kind"].items():
            if k in kinds:
                n0, med0, mx0 = kinds[k]
                kinds[k] = (n0 + n, max(med0, med), max(mx0, mx))
            else:
                kinds[k] = (n, med, mx)
    return {
        "actions": len(lat),
        "p50": 1000.0 * pct(lat, 0.50),
        "p99": 1000.0 * pct(lat, 0.99),
        "max": 1000.0 * (lat[-1] if lat else float("nan")),
        "c_n": len(clean_lat),
        "c_p50": 1000.0 * pct(clean_lat, 0.50),
        "c_p99": 1000.0 * pct(clean_lat, 0.99),
        "c_max": 1000.0 * (clean_lat[-1] if clean_lat else float("nan")),
        "s_n": len(steady_lat),
        "s_p50": 1000.0 * pct(steady_lat, 0.50),
        "s_p99": 1000.0 * pct(steady_lat, 0.99),
        "s_max": 1000.0 * (steady_lat[-1] if steady_lat else float("nan")),
        "s_window": (started - t_go, min(first_done, t_end) - t_go),
        "steady": steady,
        "steady_clean": steady_clean,
        "steady_clean_s": clean_s,
        "steady_window": (w0 - t_go, w1 - t_go),
        "overall": overall,
        "incomplete": sum(r["incomplete"] for r in results),
        "games_done": len(finished),
        "unfinished": sum(r["unfinished"] for r in results),
        "failed": [f for r in results for f in r["failed"]],
        "n_errors": sum(r["n_errors"] for r in results),
        "errors": [e for r in results for e in r["errors"]][:5],
        "gen": gen,
        "kinds": kinds,
        "run_s": t_end - t_go,
        "frame_bytes": sum(r["nbytes"] for r in results)
        / max(1, sum(r["frames"] for r in results)),
    }


# ------------------------------------------------------------------ judging and printing


def bottlenecks(r: dict) -> list[str]:
    notes = []
    for g in r.get("gen", []):
        if g["cpu"] >= GEN_CPU_LIMIT:
            notes.append(f"GENERATOR-BOUND: generator {g['proc']} used {g['cpu']:.0f}% of a core")
        if g["lag_p99"] > LAG_LIMIT_MS and g["lag_p99"] <= 0.2 * r.get("p99", 0.0):
            notes.append(
                f"generator {g['proc']} event-loop lag p99 {g['lag_p99']:.0f} ms"
                f" (max {g['lag_max']:.0f} ms): small next to the p99 measured, not a bottleneck"
            )
        elif g["lag_p99"] > LAG_LIMIT_MS:
            why = (
                "saturated"
                if g["cpu"] >= GEN_CPU_LIMIT
                else f"at only {g['cpu']:.0f}% CPU: starved of CPU by the server, the other generators"
                " or other work"
            )
            notes.append(
                f"GENERATOR-LAG: generator {g['proc']} event-loop lag p99 {g['lag_p99']:.0f} ms"
                f" (max {g['lag_max']:.0f} ms), {why}; latencies include that lag"
            )
    if r.get("other_cpu", 0) >= 20.0:
        notes.append(
            f"SHARED MACHINE: {r['other_cpu']:.0f}% of a core was busy outside this benchmark"
            f" during the run (e.g. {', '.join(r['other_top']) or 'short-lived processes'});"
            f" {r['dirty_s']:.0f} s of the run were not clean, 'p99 cl' keeps the"
            f" {100.0 * r['c_n'] / max(1, r['actions']):.0f}% of actions sent outside them;"
            " best rerun on a quiet machine (--wait-quiet)"
        )
    if r.get("machine_cpu", 0) >= 95.0:
        notes.append(
            f"machine CPU {r['machine_cpu']:.0f}% busy: server and generators competed for the cores"
        )
    if r.get("server_cpu", 0) >= 90.0:
        notes.append(f"server-bound: the server used {r['server_cpu']:.0f}% of a core")
    if r.get("unfinished"):
        notes.append(f"{r['unfinished']} game(s) unfinished at the {r['cap']:.0f} s cap")
    if r.get("failed"):
        notes.append(f"{len(r['failed'])} room(s) failed, e.g. {r['failed'][0]}")
    if r.get("n_errors"):
        notes.append(f"{r['n_errors']} error message(s), e.g. {r['errors'][0]}")
    if r.get("incomplete") and not r.get("unfinished"):
        notes.append(f"{r['incomplete']} action(s) never reached all 6 players")
    return notes


def fmt_row(r: dict) -> str:
    gcpu = max((g["cpu"] for g in r["gen"]), default=0.0)
    glag = max((g["lag_p99"] for g in r["gen"]), default=0.0)
    rate = r["steady"] if r["mode"] == "flat" else r["overall"]
    cl = _clean_share(r)
    return (
        f"{r['mode']:<6} {r['rooms']:>5} {r['kind']:<9} {r['actions']:>7} {r['p50']:>8.1f}"
        f" {r['p99']:>8.1f} {r['max']:>8.1f} {r['c_p99']:>8.1f} {cl:>4.0f}"
        f" {rate:>8.0f} {r['server_cpu']:>6.0f}"
        f" {r['cpu_ms_per_action']:>6.2f} {r['rss_peak_mb']:>7.0f} {gcpu:>6.0f} {glag:>7.1f} {r['machine_cpu']:>6.0f}"
        f" {r.get('other_cpu', 0):>6.0f}"
    )


HEADER = (
    f"{'mode':<6} {'rooms':>5} {'server':<9} {'actions':>7} {'p50 ms':>8} {'p99 ms':>8}"
    f" {'max ms':>8} {'p99 cl':>8} {'cl%':>4} {'act/s':>8} {'srvCPU':>6} {'ms/act':>6}"
    f" {'RSS MB':>7} {'genCPU':>6} {'lag ms':>7} {'mach%':>6} {'other':>6}"
)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b and b == b and a == a else "n/a"


def _rate(r: dict) -> float:
    """The act/s column: sustained flat out, overall paced."""
    return r["steady"] if r["mode"] == "flat" else r["overall"]


#: (numerator, denominator) of the ratio table: Conjure against each baseline, and the other
#: baselines against trio-websocket's (Node's ws; the same broadcast framing its own frames, and
#: making each action durable first).
RATIO_PAIRS = (
    ("conjure", "baseline"),
    ("conjure", "node"),
    ("conjure", "framed"),
    ("conjure", "durable"),
    ("node", "baseline"),
    ("framed", "baseline"),
    ("durable", "baseline"),
)
RATIO_HEADER = (
    f"{'mode':<6} {'rooms':>5} {'ratio':<18} {'p50':>7} {'p99':>7} {'p99 cl':>7} {'act/s':>7}"
    f" {'ms/act':>7}"
)


def ratio_rows(runs: list[dict]) -> list[str]:
    """One row per (mode, rooms, pair) that both servers of the pair ran without error."""
    done = {(r["mode"], r["rooms"], r["kind"]): r for r in runs if "error" not in r}
    rows = []
    for mode, rooms in dict.fromkeys((r["mode"], r["rooms"]) for r in runs):
        for top, bottom in RATIO_PAIRS:
            a, b = done.get((mode, rooms, top)), done.get((mode, rooms, bottom))
            if a and b:
                rows.append(
                    f"{mode:<6} {rooms:>5} {top + ' / ' + bottom:<18}"
                    f" {ratio(a['p50'], b['p50']):>7} {ratio(a['p99'], b['p99']):>7}"
                    f" {ratio(a['c_p99'], b['c_p99']):>7} {ratio(_rate(a), _rate(b)):>7}"
                    f" {ratio(a['cpu_ms_per_action'], b['cpu_ms_per_action']):>7}"
                )
    return rows


def _caveats(*runs: dict) -> str:
    """The generator and shared-machine flags of the runs a summary line compares."""
    flags = {
        n.split(":")[0]
        for r in runs
        for n in bottlenecks(r)
        if n.startswith(("GENERATOR", "SHARED"))
    }
    return f" [caveats: {', '.join(sorted(flags))} -- see the notes above]" if flags else ""


#: How the summary names each peer baseline Conjure is set against (the trio one has its own).
PEER_NAMES = {
    "node": "the Node ws baseline",
    "durable": "the durable floor (the framed broadcast, each action durable first)",
}


def _peer_line(mode: str, rooms: int, c: dict, n: dict, peer: str = "node") -> str:
    """The summary line of Conjure against a peer baseline (``peer``: Node's, or the durable
    floor), with that baseline's figures themselves."""
    cpu = ratio(c["cpu_ms_per_action"], n["cpu_ms_per_action"])
    against = PEER_NAMES[peer]
    if mode == "paced":
        line = (
            f"paced, {rooms} rooms x 6 players, against {against} (p50"
            f" {n['p50']:.1f} ms, p99 {n['p99']:.1f} ms, {n['cpu_ms_per_action']:.2f} ms CPU per"
            f" action): Conjure p50 {ratio(c['p50'], n['p50'])}, p99 {ratio(c['p99'], n['p99'])},"
            f" CPU per action {cpu}"
        )
    else:
        line = (
            f"flat out, {rooms} rooms, against {against} ({n['steady']:.0f} actions/s"
            f" sustained, p99 {n['p99']:.0f} ms, {n['cpu_ms_per_action']:.2f} ms CPU per action):"
            f" Conjure actions/s {ratio(c['steady'], n['steady'])}, p99"
            f" {ratio(c['p99'], n['p99'])}, CPU per action {cpu}"
        )
    return line + _caveats(c, n)


def _clean_share(r: dict) -> float:
    """% of a run's actions sent while the machine had no other work."""
    return 100.0 * r["c_n"] / max(1, r["actions"])


def _clean_note(c: dict, b: dict) -> str:
    """The figures of the actions sent while the machine had no other work, if that differs."""
    if c["c_n"] == c["actions"] and b["c_n"] == b["actions"]:
        return ""
    pc, pb = _clean_share(c), _clean_share(b)
    return (
        f" [other work shared the machine during part of the runs; actions sent while it was"
        f" idle ({pc:.0f}% / {pb:.0f}%): Conjure p50 {c['c_p50']:.1f} ms, p99 {c['c_p99']:.1f} ms,"
        f" baseline p50 {b['c_p50']:.1f} ms, p99 {b['c_p99']:.1f} ms, ratio"
        f" {ratio(c['c_p99'], b['c_p99'])}]"
    )


def report(runs: list[dict], args) -> None:
    print()
    print("=" * len(HEADER))
    print(HEADER)
    print("-" * len(HEADER))
    for r in runs:
        if "error" in r:
            print(f"{r['mode']:<6} {r['rooms']:>5} {r['kind']:<9} FAILED: {r['error']}")
        else:
            print(fmt_row(r))
    print("-" * len(HEADER))
    for r in runs:
        if "error" not in r and r["mode"] == "flat":
            print(
                f"flat {r['rooms']} {r['kind']}: sustained {r['steady']:.0f} actions/s over"
                f" {r['steady_window'][1] - r['steady_window'][0]:.0f} s; counted only while the"
                f" machine had no other work: {r['steady_clean']:.0f}/s over"
                f" {r['steady_clean_s']:.0f} s"
            )
    print(
        "p50/p99/max: all actions. p99 cl: only the actions sent while the machine had no"
        " other work (cl%: their share; other work = more than 25% of a core busy outside this"
        " benchmark, within the 3 s before)."
        " act/s: flat = sustained (all games under way, none finished); paced = overall."
        " srvCPU/genCPU: % of one core over the measured window; ms/act: server CPU time per"
        " action; lag: generator event-loop"
        " lag p99; mach%: both cores busy; other: CPU of processes not in this benchmark"
        " (% of one core)."
    )
    rows = ratio_rows(runs)
    if rows:
        print()
        print(
            "Ratios (first server / second, same run): p50, p99, p99 cl and ms/act lower is"
            " better for the first, act/s higher"
        )
        print(RATIO_HEADER)
        print("-" * len(RATIO_HEADER))
        print("\n".join(rows))
    readme: list[str] = []
    pairs: dict[tuple[str, int], dict[str, dict]] = {}
    for r in runs:
        pairs.setdefault((r["mode"], r["rooms"]), {})[r["kind"]] = r
    print()
    for (mode, rooms), both in pairs.items():
        c, b, nb = both.get("conjure"), both.get("baseline"), both.get("node")
        head = f"[{mode}, {rooms} rooms]"
        for r in (b, both.get("framed"), both.get("durable"), nb, c):
            if r is None or "error" in r:
                continue
            notes = bottlenecks(r)
            print(f"{head} {r['kind']}: " + ("; ".join(notes) if notes else "no bottleneck flags"))
            print(f"{head} {r['kind']}: mean update frame {r['frame_bytes']:.0f} bytes")
            k = r.get("kinds", {})
            if k and r["kind"] == "conjure":
                slow = ", ".join(
                    f"{n} med {1000 * v[1]:.1f}/max {1000 * v[2]:.0f}" for n, v in sorted(k.items())
                )
                print(f"{head} conjure per action (ms): {slow}")
        if c and b and "error" not in c and "error" not in b:
            if mode == "paced":
                line = (
                    f"paced, {rooms} rooms x 6 players: Conjure p50 {c['p50']:.1f} ms, p99"
                    f" {c['p99']:.1f} ms, max {c['max']:.0f} ms (baseline p50 {b['p50']:.1f} ms,"
                    f" p99 {b['p99']:.1f} ms; p99 ratio {ratio(c['p99'], b['p99'])});"
                    f" server CPU {c['server_cpu']:.0f}% of a core"
                    f" ({c['cpu_ms_per_action']:.2f} ms per action; baseline"
                    f" {b['cpu_ms_per_action']:.2f}), RSS {c['rss_peak_mb']:.0f} MB"
                ) + _clean_note(c, b)
            else:
                line = (
                    f"flat out, {rooms} rooms: Conjure {c['steady']:.0f} actions/s sustained"
                    f" (baseline {b['steady']:.0f}/s; ratio {ratio(c['steady'], b['steady'])});"
                    f" p99 under that load {c['p99']:.0f} ms (baseline {b['p99']:.0f} ms);"
                    f" server CPU {c['server_cpu']:.0f}% ({c['cpu_ms_per_action']:.2f} ms per"
                    f" action; baseline {b['cpu_ms_per_action']:.2f}), RSS {c['rss_peak_mb']:.0f} MB"
                )
                if c["steady_clean_s"] < c["steady_window"][1] - c["steady_window"][0] - 0.5 or (
                    b["steady_clean_s"] < b["steady_window"][1] - b["steady_window"][0] - 0.5
                ):
                    line += (
                        f" [other work shared the machine during part of the runs; counted only"
                        f" while it was idle ({c['steady_clean_s']:.0f} s / {b['steady_clean_s']:.0f}"
                        f" s): Conjure {c['steady_clean']:.0f}/s, baseline {b['steady_clean']:.0f}/s,"
                        f" ratio {ratio(c['steady_clean'], b['steady_clean'])}]"
                    )
            readme.append(line + _caveats(b, c))
        for peer in PEER_NAMES:
            p = both.get(peer)
            if c and p and "error" not in c and "error" not in p:
                readme.append(_peer_line(mode, rooms, c, p, peer))
    fs = next((r["fs"] for r in runs if r.get("kind") == "conjure" and "fs" in r), "?")
    spread = next((r["stagger"] for r in runs if r.get("mode") == "paced" and "stagger" in r), 0)
    print()
    print("README performance figures (copy as is):")
    print(
        f"  machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; generator:"
        f" {args.procs} process(es); replays on {fs}; {args.games} game(s) per room;"
        f" paced games start spread over {spread:g} s"
        + (f"; Node baseline: {args.node_versions}" if args.node_versions else "")
    )
    for line in readme:
        print("  - " + line)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--rooms",
        default="300",
        help="room count, or a comma list run one after the other (default 300)",
    )
    ap.add_argument("--mode", choices=("paced", "flat", "both"), default="both")
    ap.add_argument(
        "--target",
        default="all",
        metavar="LIST",
        help="which servers to load, a comma list of baseline, framed, durable, node and conjure"
        " (default all: ratios need the baselines; 'both' is baseline,conjure; framed is the trio"
        " baseline framing its own WebSocket frames, without trio-websocket; durable is framed"
        " making each action durable in its room's log first); node is skipped, with a note,"
        " when node or npm is missing or ws cannot be installed",
    )
    ap.add_argument("--games", type=int, default=1, help="games each room plays in a row")
    ap.add_argument(
        "--duration",
        type=float,
        default=None,
        help="cap in seconds per run, from the start signal (default 180; --quick: 12 paced)",
    )
    ap.add_argument("--procs", type=int, default=2, help="generator processes (default 2)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--server-output",
        type=int,
        default=0,
        metavar="N",
        help="print the last N lines each server wrote (they are collected, not shown, otherwise)",
    )
    ap.add_argument(
        "--dump",
        metavar="PREFIX",
        help="write every action (time sent, latency, kind, room) to PREFIX-<server>-<mode>-<rooms>.tsv",
    )
    ap.add_argument(
        "--stagger",
        type=float,
        default=None,
        metavar="SECONDS",
        help="rooms start their games spread uniformly over this many seconds, so that their"
        " phases do not run in lockstep (default: 12, about one round, paced; 0 flat out)",
    )
    ap.add_argument(
        "--conjure-cmd",
        metavar="CMD",
        help="command that starts the Conjure server instead of '<venv python> -m conjure.client.cli"
        " serve' (e.g. another checkout's); '--host --port 0 --replays DIR' are appended",
    )
    ap.add_argument(
        "--baseline-cmd",
        metavar="CMD",
        help="command that starts the baseline instead of bench/loadlib/baseline_server.py"
        " (diagnostics); '--host --port 0' are appended",
    )
    ap.add_argument(
        "--wait-quiet",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each run, wait up to this long for the machine to be idle (shared machines)",
    )
    ap.add_argument(
        "--py-spy",
        metavar="PATH",
        help="a py-spy binary: profile the Conjure server during each measured run "
        "(install py-spy in a venv of its own, not the project's)",
    )
    ap.add_argument(
        "--profile-out",
        metavar="PREFIX",
        default="/tmp/conjure-profile",
        help="py-spy output prefix (collapsed stacks, one file per run)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 5 rooms, paced capped at 12 s (partial games), 1 generator",
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.rooms = "5"
        args.procs = 1 if args.procs == 2 else args.procs
    room_counts = [int(x) for x in str(args.rooms).split(",") if x.strip()]
    modes = ["paced", "flat"] if args.mode == "both" else [args.mode]
    wanted = {"all": TARGETS, "both": ("baseline", "conjure")}.get(args.target)
    wanted = wanted or tuple(x.strip() for x in args.target.split(",") if x.strip())
    if not wanted or set(wanted) - set(TARGETS):
        ap.error(f"--target: a comma list of {', '.join(TARGETS)} (or all, both)")
    targets = [t for t in TARGETS if t in wanted]
    args.node_argv, args.node_versions = None, None
    if "node" in targets:
        t = time.monotonic()
        try:
            args.node_argv = node_baseline()
        except NodeUnavailable as exc:
            targets.remove("node")
            print(f"-- skipping the Node baseline: {exc}.", flush=True)
        else:
            args.node_versions = node_versions(args.node_argv)
            print(
                f"-- Node baseline: {args.node_versions}, from"
                f" {NODE_DIR.relative_to(ROOT)}/ ({time.monotonic() - t:.1f} s to set up)",
                flush=True,
            )
    if not targets:
        return 1
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    runs: list[dict] = []
    t_all = time.monotonic()
    for rooms in room_counts:
        for mode in modes:
            for kind in targets:
                print(f"-- {mode}, {rooms} rooms x 6 players, {kind} server ...", flush=True)
                if args.wait_quiet:
                    busy = wait_quiet(args.wait_quiet)
                    print(f"   machine {busy:.0f}% busy before the run", flush=True)
                t = time.monotonic()
                try:
                    r = run_one(kind, mode, rooms, args)
                except (RuntimeError, OSError, queue.Empty) as exc:
                    r = {
                        "kind": kind,
                        "mode": mode,
                        "rooms": rooms,
                        "error": f"{type(exc).__name__}: {exc}"[:300],
                    }
                    print(f"   FAILED: {r['error']}", flush=True)
                else:
                    print(
                        f"   {r['seated']} rooms seated in {r['setup_s']:.1f} s;"
                        f" {r['actions']}/{rooms * args.games * ACTIONS_PER_GAME} actions,"
                        f" {r['games_done']} games done in {r['run_s']:.1f} s;"
                        f" p50 {r['p50']:.1f} ms p99 {r['p99']:.1f} ms;"
                        f" {'sustained' if mode == 'flat' else 'overall'}"
                        f" {r['steady'] if mode == 'flat' else r['overall']:.0f} actions/s;"
                        f" server CPU {r['server_cpu']:.0f}%, others {r['other_cpu']:.0f}%"
                        f" ({time.monotonic() - t:.0f} s)",
                        flush=True,
                    )
                for line in r.get("server_tail", []):
                    print(f"   server| {line}")
                runs.append(r)
    report(runs, args)
    print(f"\n(total {time.monotonic() - t_all:.0f} s)")
    return 0 if all("error" not in r for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
