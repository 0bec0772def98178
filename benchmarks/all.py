"""Every performance figure in one run: the request path (``request.py``: start-up, memory, cold encode, the same
request again, the next turn, per workload) and then the response path (``stream.py``: streaming per output kind
and push size, with the Python floor), each side by side with the reference where it has the operation.

    python benchmarks/all.py [--runs 5]

Each part runs in its own process, so that the first one's caches and memory do not colour the second. Before,
between and after the parts a fixed loop of Python additions is timed: a shared machine's speed can change within
a run (by half or more on some hosts), and when those times differ by more than a fifth the run says so, since
its ratios were then measured at different speeds.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: How far the machine's speed may drift during a run before the run says that its ratios are doubtful.
DRIFT = 1.2


def host_check() -> float:
    """Seconds a fixed loop of 2 million additions takes here (the best of three)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        total = 0
        for k in range(2_000_000):
            total += k
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    status = 0
    checks = [host_check()]
    print(f"host check: {checks[0] * 1000:.0f} ms", flush=True)
    for script in ("request.py", "stream.py"):
        print(f"== {script}", flush=True)
        done = subprocess.run([sys.executable, str(HERE / script), "--runs", str(args.runs)], check=False)
        status = status or done.returncode
        checks.append(host_check())
        print(f"\nhost check after {script}: {checks[-1] * 1000:.0f} ms", flush=True)
    if max(checks) > DRIFT * min(checks):
        print(
            f"the machine's speed changed during the run (host checks from {min(checks) * 1000:.0f} to "
            f"{max(checks) * 1000:.0f} ms): ratios measured at different speeds may be off; run again",
            flush=True,
        )
    sys.exit(status)


if __name__ == "__main__":
    main()
