"""A snapshot of many runs: how big the file is, how long ``sumlens snapshot`` takes to write
it, and how long Chromium takes to open it from disk with the network off.

The runs (``runs`` x ``tags`` scalar tags x ``steps`` steps, an 8-bit RGB 64x64 image
every ``steps / 10`` steps) are written once by sumlens' ``SummaryRecord`` into a
temporary folder. *Open* is timed from ``page.goto`` of the file until every chart of the
first screen is drawn (the charts below it are drawn as they scroll into view); *all
charts* until every chart is drawn after scrolling to the bottom. Medians over ``rounds``
fresh browser contexts. Measured by ``bench_snapshot`` and ``bench_board``'s table (g).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from playwright.sync_api import sync_playwright

import sumlens
from benchmarks.harness.browser import open_chromium
from benchmarks.harness.clock import now
from sumlens.cli import main as sumlens_main

_DRAWN_IN_VIEW = """() => {
    const shown = [...document.querySelectorAll('.chart')].filter((c) => {
        const box = c.getBoundingClientRect();
        return box.top < window.innerHeight && box.bottom > 0;
    });
    return shown.length > 0 && shown.every((c) => c.querySelector('.main-svg'));
}"""


def write_runs(base: Path, runs: int, tags: int, steps: int) -> None:
    """``runs`` runs of ``tags`` noisy scalar tags over ``steps`` steps, and images."""
    rng = np.random.default_rng(0)
    every = max(1, steps // 10)
    for run in range(runs):
        values = np.cumsum(rng.normal(size=(steps, tags)), axis=0).astype(np.float32)
        with sumlens.SummaryRecord(str(base / f"lr{run % 5}" / f"seed{run // 5}")) as record:
            for step in range(steps):
                for tag in range(tags):
                    record.add_value("scalar", f"train/metric{tag}", values[step, tag])
                if step % every == 0:
                    picture = rng.integers(0, 256, (1, 3, 64, 64), dtype=np.uint8)
                    record.add_value("image", "samples", picture)
                record.record(step)


def open_times(path: Path, rounds: int) -> list[dict[str, float]]:
    """Per round: seconds until the first screen's charts are drawn, and all of them."""
    times = []
    with sync_playwright() as playwright:
        browser = open_chromium(playwright)
        for _ in range(rounds):
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            context.set_offline(True)
            page = context.new_page()
            start = now()
            page.goto(path.as_uri())
            page.wait_for_function(_DRAWN_IN_VIEW, timeout=120_000)
            first = now() - start
            for chart in page.locator(".chart").all():  # as a reader scrolls down
                chart.scroll_into_view_if_needed()
                chart.locator(".main-svg").first.wait_for(state="attached", timeout=120_000)
            times.append({"first_screen_s": first, "all_charts_s": now() - start})
            context.close()
        browser.close()
    return times


def measure(runs: int, tags: int, steps: int, rounds: int) -> dict[str, Any] | None:
    """Write the runs, time ``sumlens snapshot`` over them and open its file ``rounds``
    times; the result (None when the command failed)."""
    with tempfile.TemporaryDirectory(prefix="bench-snapshot-") as tmp:
        base, out = Path(tmp) / "logs", Path(tmp) / "report.html"
        start = now()
        write_runs(base, runs, tags, steps)
        print(f"wrote {runs} runs x {tags} tags x {steps} steps "
              f"in {now() - start:.1f} s", file=sys.stderr)  # fmt: skip
        start = now()
        argv = ["snapshot", "--summary-base-dir", str(base), "--workspace", f"{tmp}/ws"]
        if sumlens_main([*argv, "-o", str(out)]) != 0:
            return None
        build_s = now() - start
        size = out.stat().st_size
        times = open_times(out, rounds)
    return {
        "runs": runs,
        "tags": tags,
        "steps": steps,
        "file_bytes": size,
        "command_s": build_s,
        "open_first_screen_s": statistics.median(t["first_screen_s"] for t in times),
        "open_all_charts_s": statistics.median(t["all_charts_s"] for t in times),
        "rounds": times,
    }


def describe(result: dict[str, Any]) -> str:
    """One line saying what :func:`measure` measured."""
    runs, tags, steps = result["runs"], result["tags"], result["steps"]
    return (
        f"snapshot of {runs} runs x {tags} tags x {steps} steps: "
        f"{result['file_bytes'] / 1e6:.1f} MB, written in {result['command_s']:.1f} s "
        "(sumlens snapshot, cold workspace); opened in Chromium from disk, offline: first screen "
        f"{result['open_first_screen_s']:.2f} s, all {tags} charts "
        f"{result['open_all_charts_s']:.2f} s (median of {len(result['rounds'])})"
    )
