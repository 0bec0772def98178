"""Every performance figure in one run: the request path (``request.py``: start-up, memory, cold encode, the same
request again, the next turn, per workload) and then the response path (``stream.py``: streaming per output kind
and push size, with the Python floor), each side by side with the reference where it has the operation.

    python benchmarks/all.py [--runs 5]

Each part runs in its own process, so that the first one's caches and memory do not colour the second.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    status = 0
    for script in ("request.py", "stream.py"):
        print(f"== {script}", flush=True)
        done = subprocess.run([sys.executable, str(HERE / script), "--runs", str(args.runs)], check=False)
        status = status or done.returncode
        print(flush=True)
    sys.exit(status)


if __name__ == "__main__":
    main()
