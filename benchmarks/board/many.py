"""Table (d) of ``bench_board``: many tags, many runs, many tiny runs (issue 26), sumlens
against TensorBoard in interleaved rounds (``--before``: another checkout's sumlens
beside), and what a server costs idling over 20,000 empty directories."""

from __future__ import annotations

import argparse
import functools
import statistics
from collections.abc import Callable
from typing import Any

from benchmarks import scale_workloads
from benchmarks.board.idle import empty_tree, idle_cpu_share
from benchmarks.harness.report import fmt_s, fmt_x
from benchmarks.harness.rounds import Table, Unit, run_rounds
from benchmarks.harness.stats import same_round_pairs, summary, verdict

SCALE_TARGET = 2.0
"""TensorBoard's time over sumlens' on the tags and runs workloads (issue 26)."""
TINY_TARGET_S = 5.0
"""Seconds for 10,000 tiny runs to be fully loaded after a cold start (issue 26)."""


def scale_units(args: argparse.Namespace) -> list[Unit]:
    """One unit per (contender, workload) of table (d): TensorBoard and sumlens (and the
    ``--before`` checkout's sumlens) on ``tags`` and ``runs``, sumlens on ``tiny``."""
    every = set(range(args.scale_d_rounds))
    before = {"PYTHONPATH": str(args.before)} if args.before else None
    units = []
    for name, workload in scale_workloads.WORKLOADS.items():
        contenders: list[tuple[str, Callable[[], dict[str, Any]]]] = [
            ("sumlens", functools.partial(scale_workloads.time_sumlens, workload))
        ]
        if before is not None:
            run_before = functools.partial(scale_workloads.time_sumlens, workload, before)
            contenders.append(("before", run_before))
        if name != "tiny":
            contenders.append(
                ("tensorboard", functools.partial(scale_workloads.time_tensorboard, workload))
            )
        for who, run in contenders:
            key = f"{name}/{who}"
            units.append(Unit(key, lambda run=run, key=key: {key: run()}, every))
    return units


def report_d(table: Table, idle: dict[str, list[float]]) -> list[dict[str, Any]]:
    """Print table (d): medians and ranges per row, per-round ratios against TensorBoard."""
    print("\n(d) many tags, many runs: seconds from launch (median, range), cold starts")
    rows = []
    for name in scale_workloads.WORKLOADS:
        for who in ("tensorboard", "before", "sumlens"):
            found = [r["seconds"] for r in table.results.get(f"{name}/{who}", [])]
            if not found:
                continue
            row = {"workload": name, "contender": who, **(summary(found) or {})}
            line = f"  {name:5} {who:12} {fmt_s(row['median'])} s ({fmt_s(row['min'])}-"
            line += f"{fmt_s(row['max'])})"
            tb = table.results.get(f"{name}/tensorboard", [])
            if who == "sumlens" and tb:
                ratios = [
                    slow["seconds"] / fast["seconds"]
                    for slow, fast in same_round_pairs(tb, table.results[f"{name}/sumlens"])
                ]
                row["ratio"] = summary(ratios)
                row["verdict"] = verdict(ratios, SCALE_TARGET)
                line += f"  TensorBoard / sumlens {fmt_x(statistics.median(ratios))}"
                line += f" ({fmt_x(min(ratios))}-{fmt_x(max(ratios))}): {row['verdict']}"
            if who == "sumlens" and name == "tiny":
                row["verdict"] = verdict([TINY_TARGET_S / s for s in found], 1.0)
                line += f"  under {TINY_TARGET_S:.0f} s: {row['verdict']}"
            print(line)
            rows.append(row)
    for who, shares in idle.items():
        median = statistics.median(shares)
        print(f"  idle over 20,000 empty directories, {who}: {median:.1%} of a core (median)")
        rows.append({"workload": "idle", "contender": who, **(summary(shares) or {})})
    return rows


def run_scale_d(args: argparse.Namespace) -> dict[str, Any]:
    """Table (d): the scale rounds, then the idle cost (sumlens, and ``--before``)."""
    for workload in scale_workloads.WORKLOADS.values():
        scale_workloads.ensure(workload)
    table = Table()
    run_rounds(scale_units(args), args.scale_d_rounds, table)
    idle: dict[str, list[float]] = {}
    tree = empty_tree()
    sources = {"sumlens": None, **({"before": str(args.before)} if args.before else {})}
    for _ in range(args.idle_rounds):
        for who, source in sources.items():
            result = idle_cpu_share(tree, pythonpath=source)
            idle.setdefault(who, []).append(result.share)
    return {
        "results": table.results,
        "failures": table.failures,
        "idle": idle,
        "rows": report_d(table, idle),
    }
