"""The server under load as a subprocess, shared by bench/load.py and bench/abuse.py; and ``pct``.

The server's stdout and stderr are drained in a thread (so a chatty server never blocks on a full
pipe), its last lines kept for a failure report, and its port read from the line every server here
prints once it is up: ``listening on ws://HOST:PORT`` (it is started with ``--port 0``).
"""

from __future__ import annotations

import re
import signal
import subprocess
import threading
from collections import deque
from pathlib import Path

LISTENING = re.compile(r"listening on ws://[^\s]+:(\d+)")
START_TIMEOUT = 30.0  # a server that has not said where it listens by then did not start
TERM_TIMEOUT = 15.0  # after SIGTERM, then it is killed
#: At most this many "trouble" lines are kept (a server in a loop of errors fills no memory).
TROUBLE_KEEP = 200


class ServerProcess:
    """A server started from ``argv``; ``port`` is known once the constructor returns.

    ``trouble``: lines matching it (an exception in the server, say) are collected in
    ``self.trouble``. ``tail``: how many of the last lines to keep in ``self.tail``; ``lines``
    counts them all. ``name`` says which server in the error raised when it does not start.
    """

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str | Path | None = None,
        name: str = "the server",
        trouble: re.Pattern[str] | None = None,
        tail: int = 40,
    ) -> None:
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        self.pid = self.proc.pid
        self.tail: deque[str] = deque(maxlen=tail)
        self.trouble: list[str] = []
        self.lines = 0
        self.port: int | None = None
        self._trouble_re = trouble
        self._listening = threading.Event()
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        if not self._listening.wait(START_TIMEOUT) or self.port is None:
            self.stop()
            raise RuntimeError(f"{name} did not start:\n" + "\n".join(self.tail))

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines += 1
            self.tail.append(line.rstrip())
            if (
                self._trouble_re is not None
                and len(self.trouble) < TROUBLE_KEEP
                and self._trouble_re.search(line)
            ):
                self.trouble.append(line.rstrip())
            m = LISTENING.search(line)
            if m and self.port is None:
                self.port = int(m.group(1))
                self._listening.set()
        self._listening.set()  # the output ended: whoever waits for the port need wait no more

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> int | None:
        """SIGTERM, then a kill if it has not exited in time; returns its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(TERM_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._drainer.join(timeout=5)  # the pipe ends with the process (or a child holding it)
        if not self._drainer.is_alive() and self.proc.stdout is not None:
            self.proc.stdout.close()
        return self.proc.returncode


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``: the sorted value at index ``int(q * n)``; NaN if none."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]
