"""Table (f) of ``bench_board`` (issue 30): the groups request over 100 runs in 10 groups
with std bands over 10,000 steps each."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from benchmarks import page_workloads
from benchmarks.harness.stats import percentile_ms

GROUP_P95_TARGET_MS = 100.0
"""The groups request's p95 over 100 runs in 10 groups of 10,000 steps (issue 30)."""


def run_groups(args: argparse.Namespace) -> dict[str, Any]:
    """Table (f): ``sumlens serve`` over 100 runs x 10,000 steps until loaded, then
    ``--group-requests`` groups requests (10 groups, mean and std band, smoothed, 1,000
    points) one after another; the first one apart (nothing computed before it)."""
    workload = page_workloads.GROUPS
    with page_workloads.serving_sumlens(workload) as (url, ready_s):
        first, _ = page_workloads.group_latencies(url, 1)
        seconds, shape = page_workloads.group_latencies(url, args.group_requests)
    return {
        "workload": asdict(workload),
        "ready_s": ready_s,
        "first_s": first[0],
        "seconds": seconds,
        "shape": shape,
    }


def report_f(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Print table (f): the groups request's p50 and p95 against its target."""
    shape, seconds = result["workload"], result["seconds"]
    p50, p95 = percentile_ms(seconds, 50), percentile_ms(seconds, 95)
    met = "met" if p95 < GROUP_P95_TARGET_MS else "NOT MET"
    got = result["shape"]
    print(
        f"\n(f) groups request, {shape['runs']} runs x {shape['steps']:,} steps in "
        f"{got['groups']} groups of {got['members']} (mean, std band, smoothing, "
        f"{got['points']} points each): p50 / p95 {p50:.1f} / {p95:.1f} ms "
        f"(n={len(seconds)}; first {result['first_s'] * 1000:.1f} ms); "
        f"p95 < {GROUP_P95_TARGET_MS:.0f} ms: {met}"
    )
    return [{"p50_ms": p50, "p95_ms": p95, "first_ms": result["first_s"] * 1000, "met": met}]
