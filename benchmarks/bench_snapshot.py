"""A 50-run snapshot: how big the file is, how long ``sumlens snapshot`` takes to write it,
and how long Chromium takes to open it from disk with the network off.

``benchmarks/snapshot_workload.py`` says what is written and timed. Usage:
``.venv/bin/python -m benchmarks.bench_snapshot [--runs 50 --tags 8 --steps 5000]``
(``make bench-snapshot``). Raw results go to ``benchmarks/results/bench_snapshot.json``.
"""

from __future__ import annotations

import argparse
import json

from benchmarks.harness.paths import RESULTS_DIR
from benchmarks.snapshot_workload import describe, measure

RESULTS = RESULTS_DIR / "bench_snapshot.json"


def main(argv: list[str] | None = None) -> int:
    """Measure, save the raw results and print what was measured."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--tags", type=int, default=8)
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    result = measure(args.runs, args.tags, args.steps, args.rounds)
    if result is None:
        return 1
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(describe(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
