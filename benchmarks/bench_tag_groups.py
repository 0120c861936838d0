"""The Scalars page of a run of 12,345 scalar tags x 1,000 steps, in Chromium (issue 30).

The run (12.3M points; tags ``group00/tag00000`` ... in 100 prefixes) is written once by
``SummaryRecord`` (TensorBoard's format, so TensorBoard reads the same file) and cached by
``scale_workloads.ensure``. ``sumlens serve`` is started over it and waited on until the run
is loaded (reported: "server ready"); then a fresh browser page opens
``#/scalars?run=./r00000`` and is timed, in the page's own clock (``performance.now()``
from the navigation's start), until every prefix group is listed and every chart card on
the first screen is drawn. Each opening uses a fresh browser context (nothing cached,
nothing in localStorage). TensorBoard's scalars page is not driven here yet: its groups
live in Angular components whose "drawn" state this script does not read.

Usage: ``.venv/bin/python benchmarks/bench_tag_groups.py [--opens 3] [--steps 1000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path

import scale_workloads
from _browser import CHROMIUM, CHROMIUM_ARGS
from _data import RESULTS_DIR
from _harness import free_port, serve_args, server_until
from playwright.sync_api import Browser, sync_playwright

TAGS = 12_345
PREFIXES = 100  # scale_workloads.Workload.tag_name: group{i % 100}
VIEWPORT = {"width": 1440, "height": 900}
WAIT_MS = 600_000

DONE_JS = """(prefixes) => {
  const groups = document.querySelectorAll('.prefix-group');
  if (groups.length < prefixes) return false;
  const onScreen = [...document.querySelectorAll('.prefix-group .card')].filter((card) => {
    const box = card.getBoundingClientRect();
    return box.width > 0 && box.bottom > 0 && box.top < innerHeight;
  });
  if (!onScreen.length || !onScreen.every((card) => card.dataset.state === 'ready')) return false;
  return { ms: performance.now(), drawn: onScreen.length,
    cards: document.querySelectorAll('.card').length,
    fetched: performance.getEntriesByType('resource')
      .filter((e) => e.name.includes('/api/v1/scalars?')).length };
}"""


def open_page(browser: Browser, url: str, run: str) -> dict[str, float]:
    """Open the Scalars page of ``run`` in a fresh context; what ``DONE_JS`` returned."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(f"{url}/#/scalars?run=./{run}")
        done = page.wait_for_function(DONE_JS, arg=PREFIXES, timeout=WAIT_MS, polling=20)
        return done.json_value()
    finally:
        context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opens", type=int, default=3, help="page openings timed (3)")
    parser.add_argument("--steps", type=int, default=1_000, help="steps per tag (1000)")
    args = parser.parse_args(argv)
    workload = scale_workloads.Workload("page", runs=1, tags=TAGS, steps=args.steps, poll_s=0.25)
    base_dir = scale_workloads.ensure(workload)
    workspace = Path(tempfile.mkdtemp(prefix="bench-taggroups-ws-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    try:
        with (
            server_until(
                "sumlens",
                serve_args(base_dir, port, workspace),
                dict(os.environ),
                port,
                lambda client: scale_workloads.sumlens_done(client, workload),
                workload.poll_s,
                scale_workloads.TIMEOUT_S * 4,
            ) as (_, ready_s),
            sync_playwright() as playwright,
        ):
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            run = workload.run_name(0)
            opens = [open_page(browser, url, run) for _ in range(args.opens)]
            browser.close()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    median_s = statistics.median(o["ms"] for o in opens) / 1000
    print(f"server ready (run of {TAGS:,} tags x {args.steps:,} steps loaded): {ready_s:.1f} s")
    each = ", ".join(f"{o['ms'] / 1000:.2f}" for o in opens)
    print(
        f"{TAGS:,} tags: scalars page, groups listed + first screen drawn: "
        f"{median_s:.2f} s median of {len(opens)} ({each} s); "
        f"{opens[0]['drawn']} charts drawn, {opens[0]['cards']} cards built, "
        f"{opens[0]['fetched']} scalars requests"
    )
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = {"tags": TAGS, "steps": args.steps, "server_ready_s": ready_s, "opens": opens}
    (RESULTS_DIR / "bench_tag_groups.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
