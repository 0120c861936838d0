"""Table (e) of ``bench_board`` (issue 30): the scalars page of a run of 12,345 tags in
Chromium, sumlens against TensorBoard's Time Series page, both servers loaded, in
interleaved rounds."""

from __future__ import annotations

import argparse
import contextlib
import statistics
from dataclasses import asdict
from typing import Any

from playwright.sync_api import sync_playwright

from benchmarks import page_workloads, scale_workloads
from benchmarks.harness.browser import open_chromium
from benchmarks.harness.report import fmt_s, fmt_x
from benchmarks.harness.rounds import Table, Unit, run_rounds
from benchmarks.harness.stats import same_round_pairs, summary, verdict


def page_workload(quick: bool) -> scale_workloads.Workload:
    """The 12,345-tag run of (e): 1,000 steps, or table (d)'s 50-step one with ``--quick``."""
    return scale_workloads.WORKLOADS["tags"] if quick else page_workloads.PAGE


def run_pages(args: argparse.Namespace) -> dict[str, Any]:
    """Table (e): both servers loaded over the same run, then per round (``--page-rounds``,
    order rotated) each one's scalars page opened in a fresh context of one Chromium."""
    workload = page_workload(args.quick)
    table = Table()
    with contextlib.ExitStack() as stack:
        sumlens_url, sumlens_ready = stack.enter_context(page_workloads.serving_sumlens(workload))
        tb_url, tb_ready = stack.enter_context(
            scale_workloads.serving_tensorboard(workload, scale_workloads.TIMEOUT_S * 4)
        )
        playwright = stack.enter_context(sync_playwright())
        browser = open_chromium(playwright)
        stack.callback(browser.close)
        units = [
            Unit(
                "page/sumlens",
                lambda: {"page/sumlens": page_workloads.sumlens_page(browser, sumlens_url)},
                set(range(args.page_rounds)),
            ),
            Unit(
                "page/tensorboard",
                lambda: {"page/tensorboard": page_workloads.tensorboard_page(browser, tb_url)},
                set(range(args.page_rounds)),
            ),
        ]
        run_rounds(units, args.page_rounds, table)
    return {
        "workload": asdict(workload),
        "ready_s": {"sumlens": sumlens_ready, "tensorboard": tb_ready},
        "results": table.results,
        "failures": table.failures,
    }


def report_e(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Print table (e): medians per server, per-round ratio TensorBoard / sumlens (> 1 is
    sumlens sooner)."""
    shape = result["workload"]
    print(
        f"\n(e) scalars page of 1 run x {shape['tags']:,} tags x {shape['steps']:,} steps in "
        "Chromium, servers loaded: seconds until the tag groups are listed and the first "
        "screen of charts drawn (median, range)"
    )
    rows = []
    results = result["results"]
    for who in ("tensorboard", "sumlens"):
        found = results.get(f"page/{who}", [])
        if not found:
            print(f"  {who:12} FAILED: {result['failures'].get(f'page/{who}')}")
            continue
        seconds = [r["seconds"] for r in found]
        row = {"contender": who, "ready_s": result["ready_s"][who], **(summary(seconds) or {})}
        first = found[0]
        line = f"  {who:12} {fmt_s(row['median'])} s ({fmt_s(row['min'])}-{fmt_s(row['max'])})"
        line += f"; {first['groups']} groups, {first['drawn']} charts on screen, "
        line += f"{first['fetched']} data requests; server loaded in {row['ready_s']:.1f} s"
        tb = results.get("page/tensorboard", [])
        if who == "sumlens" and tb:
            ratios = [s["seconds"] / f["seconds"] for s, f in same_round_pairs(tb, found)]
            row["ratio"] = summary(ratios)
            tie = verdict(ratios, None)
            row["verdict"] = verdict(ratios, 1.0) + (f"; {tie}" if tie else "")
            line += f"\n  TensorBoard / sumlens {fmt_x(statistics.median(ratios))} "
            line += f"({fmt_x(min(ratios))}-{fmt_x(max(ratios))}), sumlens sooner: "
            line += row["verdict"]
        print(line)
        rows.append(row)
    return rows
