"""Reading a process's CPU time and memory, and the machine's CPU, from /proc (Linux)."""

from __future__ import annotations

import bisect
import contextlib
import os
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    fields = data[data.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # fields 14 and 15 of stat(5)


def status(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM (kB) and Threads from /proc/PID/status."""
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM", "Threads"):
                out[key] = int(rest.split()[0])
    return out


def machine_cpu() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs since boot."""
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    total = sum(parts[:8])
    return total - idle, total


def fs_type(path: str) -> str:
    """The file system type a path lives on (longest mount point prefix in /proc/mounts)."""
    path = os.path.realpath(path)
    best, kind = "", "?"
    try:
        with open("/proc/mounts") as f:
            for line in f:
                dev, mnt, typ = line.split()[:3]
                inside = path == mnt or path.startswith(mnt.rstrip("/") + "/")
                if inside and len(mnt) >= len(best):
                    best, kind = mnt, f"{typ} on {dev}"
    except OSError:
        pass
    return kind


class Sampler:
    """Every ``interval`` s, in a thread: the server's RSS (``peak_kb``) and how busy the machine
    was outside ``ours`` (``others``: a list of (monotonic time, % of one core) per interval)."""

    def __init__(self, pid: int, ours: list[int], interval: float = 0.25) -> None:
        self.pid = pid
        self.ours = ours
        self.interval = interval
        self.peak_kb = 0
        self.others: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def _ours(self) -> float:
        total = 0.0
        for pid in self.ours:
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += cpu_seconds(pid)
        return total

    def _run(self) -> None:
        ncpu = os.cpu_count() or 1
        prev = (time.monotonic(), machine_cpu(), self._ours())
        while not self._stop.wait(self.interval):
            try:
                kb = status(self.pid).get("VmRSS", 0)
            except OSError:
                return
            self.peak_kb = max(self.peak_kb, kb)
            cur = (time.monotonic(), machine_cpu(), self._ours())
            dt = cur[0] - prev[0]
            busy = (cur[1][0] - prev[1][0]) / max(1, cur[1][1] - prev[1][1]) * ncpu  # cores
            mine = (cur[2] - prev[2]) / dt
            self.others.append((cur[0], max(0.0, 100.0 * (busy - mine))))
            prev = cur

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def clean(self, limit: float = 25.0, settle: float = 3.0):
        """A predicate on times: was the machine free of other work then and ``settle`` s before?

        Returns (predicate, seconds of the run that were not clean).
        """
        ranges: list[list[float]] = []
        for tb, pc in self.others:  # the interval ending at tb spoils (tb - interval, tb + settle]
            if pc > limit:
                lo, hi = tb - self.interval, tb + settle
                if ranges and lo <= ranges[-1][1]:
                    ranges[-1][1] = max(ranges[-1][1], hi)
                else:
                    ranges.append([lo, hi])
        starts = [r[0] for r in ranges]

        def ok(t: float) -> bool:
            i = bisect.bisect_right(starts, t) - 1
            return i < 0 or t > ranges[i][1]

        return ok, sum(hi - lo for lo, hi in ranges)


def now() -> float:
    return time.monotonic()


def all_cpu() -> dict[int, tuple[float, str]]:
    """pid -> (CPU seconds, short command line) for every process we can read."""
    out: dict[int, tuple[float, str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            secs = cpu_seconds(pid)
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read(300).replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError, IndexError):
            continue
        out[pid] = (secs, cmd)
    return out


def others(before: dict, after: dict, ours: set[int], seconds: float) -> tuple[float, list[str]]:
    """CPU (% of one core) used in the window by processes not in ``ours``, and the top three."""
    used: list[tuple[float, str]] = []
    for pid, (secs, cmd) in after.items():
        if pid in ours:
            continue
        d = secs - before[pid][0] if pid in before else secs
        if d > 0:
            used.append((100.0 * d / seconds, cmd))
    used.sort(reverse=True)
    top = [f"{pc:.0f}% {cmd[:60]}" for pc, cmd in used[:3] if pc >= 1]
    return sum(pc for pc, _ in used), top
