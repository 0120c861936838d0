"""The Scalars page of a run of 12,345 scalar tags x 1,000 steps, in Chromium (issue 30).

The run (12.3M points; tags ``group00/tag00000`` ... in 100 prefixes) is written once by
``SummaryRecord`` (TensorBoard's format, so TensorBoard reads the same file) and cached by
``benchmarks.scale_workloads.ensure``. ``sumlens serve`` is started over it and waited on
until the run is loaded (reported: "server ready"); then a fresh browser page opens
``#/scalars?run=./r00000`` and is timed, in the page's own clock (``performance.now()``
from the navigation's start), until every prefix group is listed and every chart card on
the first screen is drawn (``benchmarks.page_workloads.SUMLENS_DONE_JS``). Each opening
uses a fresh browser context (nothing cached, nothing in localStorage). TensorBoard's Time
Series page on the same run is timed beside it by ``bench_board --only e``.

Usage: ``.venv/bin/python -m benchmarks.bench_tag_groups [--opens 3] [--steps 1000]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics

from playwright.sync_api import sync_playwright

from benchmarks import page_workloads
from benchmarks.harness.browser import open_chromium
from benchmarks.harness.paths import RESULTS_DIR


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opens", type=int, default=3, help="page openings timed (3)")
    parser.add_argument("--steps", type=int, default=1_000, help="steps per tag (1000)")
    args = parser.parse_args(argv)
    workload = dataclasses.replace(page_workloads.PAGE, steps=args.steps)
    with (
        page_workloads.serving_sumlens(workload) as (url, ready_s),
        sync_playwright() as playwright,
    ):
        browser = open_chromium(playwright)
        opens = [page_workloads.sumlens_page(browser, url) for _ in range(args.opens)]
        browser.close()
    median_s = statistics.median(o["seconds"] for o in opens)
    tags = workload.tags
    print(f"server ready (run of {tags:,} tags x {args.steps:,} steps loaded): {ready_s:.1f} s")
    each = ", ".join(f"{o['seconds']:.2f}" for o in opens)
    print(
        f"{tags:,} tags: scalars page, groups listed + first screen drawn: "
        f"{median_s:.2f} s median of {len(opens)} ({each} s); "
        f"{opens[0]['drawn']} charts drawn, {opens[0]['cards']} cards built, "
        f"{opens[0]['fetched']} scalars requests"
    )
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = {"tags": tags, "steps": args.steps, "server_ready_s": ready_s, "opens": opens}
    (RESULTS_DIR / "bench_tag_groups.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
