"""bench/audit.py still runs: its smoke run builds a real log, verifies it and prints a rate.

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
    assert re.search(r"conjure replay x1 \(subprocess\) .* [\d,]+ events/s", done.stdout)
    kept = list(tmp_path.glob("*.jsonl"))
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b'{"batch":')
