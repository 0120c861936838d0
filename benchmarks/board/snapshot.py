"""Table (g) of ``bench_board`` (issue 30): a snapshot file of 50 runs, its size, the
command's time and its opens in Chromium (``benchmarks/snapshot_workload.py``)."""

from __future__ import annotations

import argparse
from typing import Any

from benchmarks import snapshot_workload


def run_snapshot(args: argparse.Namespace) -> dict[str, Any]:
    """Table (g): ``bench_snapshot``'s measure, 50 runs (5 with ``--quick``)."""
    runs, steps = (5, 1_000) if args.quick else (50, 5_000)
    result = snapshot_workload.measure(runs, 8, steps, args.snapshot_rounds)
    if result is None:
        raise RuntimeError("sumlens snapshot failed")
    return result


def report_g(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Print table (g): the file's size, the command's time, the opens."""
    print(f"\n(g) {snapshot_workload.describe(result)}")
    keys = ("file_bytes", "command_s", "open_first_screen_s", "open_all_charts_s")
    return [{key: result[key] for key in keys}]
