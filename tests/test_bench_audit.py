"""bench/audit.py still runs: its smoke run builds two real logs, verifies them, replays them one
run each and both in one run, and prints a rate.

No timing is asserted: the figure is the benchmark's to report, not the test's to judge.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quick_audit_benchmark_verifies_its_log_and_prints_events_per_second(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "audit.py"), "--quick", "--keep", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"conjure replay's audit: [\d,]+ events/s", done.stdout), done.stdout
    assert re.search(r"conjure replay x2 \(subprocess\) .* [\d,]+ events/s", done.stdout)
    assert re.search(r"conjure replay of all 2 at once .* [\d,]+ events/s", done.stdout)
    assert re.search(r"Start-up over 4 finished games .* best [\d.]+ s", done.stdout)
    kept = list(tmp_path.glob("*.jsonl"))
    assert len(kept) == 2 and all(k.read_bytes().startswith(b'{"batch":') for k in kept)
