"""Lineage view speed at 10,000 runs: the table's first paint and a brush's re-filter.

Generates (once, cached under ``benchmarks/data/board/lineage_<runs>/``) a base directory
of small runs, each one ``_lineage`` file written with ``lineage_pb2`` + ``RecordWriter``:
a train lineage (learning rate, optimizer, epochs, batch size, dataset size), an
evaluation lineage (accuracy, loss) and custom fields. Starts ``sumlens serve``, waits
until every run is loaded, times ``GET /api/v1/lineage`` (cold and warm server cache),
then in headless Chromium (--disable-gpu, as the tests run it):

(a) from navigation to ``#/lineage`` until the table's first rows are in a painted frame;
(b) from a pointer move that changes a brush on the parallel-coordinates chart until the
    table shows the filtered rows (a real mouse drag, Playwright's mouse).

Medians of several rounds, printed with the targets. Usage:
``.venv/bin/python -m benchmarks.bench_lineage_view [--runs 10000] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
from playwright.sync_api import Page, sync_playwright

from benchmarks.harness.browser import open_chromium
from benchmarks.harness.clock import timed
from benchmarks.harness.http import fetch_bytes, get_json, local
from benchmarks.harness.paths import DATA_DIR
from benchmarks.harness.servers import serve_args, server_until
from sumlens._proto import lineage_pb2
from sumlens.io import RecordWriter

DATA = DATA_DIR / "board"

OPTIMIZERS = ("SGD", "Momentum", "Adam")
TARGET_PAINT_S = 1.0
TARGET_BRUSH_S = 0.1


def lineage_records(i: int, rng: np.random.Generator) -> list[bytes]:
    """The lineage events of run ``i``: train, evaluation and custom."""
    rate = float(10 ** rng.uniform(-4, -1))
    train = lineage_pb2.LineageEvent(wall_time=1.7e9 + i)
    hyper = train.train_lineage.hyper_parameters
    hyper.learning_rate = rate
    hyper.optimizer = OPTIMIZERS[i % 3]
    hyper.epoch = int(rng.integers(1, 50))
    hyper.batch_size = int(2 ** rng.integers(4, 9))
    train.train_lineage.train_dataset.train_dataset_size = 60000
    train.train_lineage.algorithm.network = "LeNet5"
    train.train_lineage.algorithm.loss = float(rng.uniform(0.01, 2))
    accuracy = float(np.clip(0.9 - abs(np.log10(rate) + 2.5) * 0.2 + rng.normal(0, 0.02), 0, 1))
    evaluation = lineage_pb2.LineageEvent(wall_time=1.7e9 + i + 1)
    evaluation.evaluation_lineage.metric = json.dumps(
        {"accuracy": accuracy, "loss": float(rng.uniform(0.01, 2))}
    )
    evaluation.evaluation_lineage.valid_dataset.valid_dataset_size = 10000
    custom = lineage_pb2.LineageEvent(wall_time=1.7e9 + i + 2)
    custom.user_defined_info.user_info.add().map_int32["seed"] = i
    custom.user_defined_info.user_info.add().map_double["dropout"] = float(rng.uniform(0, 0.5))
    return [event.SerializeToString() for event in (train, evaluation, custom)]


def base_dir(runs: int) -> Path:
    """The cached base directory of ``runs`` runs (built on first use)."""
    root = DATA / f"lineage_{runs}"
    done = root / "manifest.json"
    if done.is_file() and json.loads(done.read_text()).get("runs") == runs:
        return root
    print(f"generating {root} ...", flush=True)
    staging = root.with_name(f".{root.name}.staging")
    shutil.rmtree(staging, ignore_errors=True)
    rng = np.random.default_rng(0)
    for i in range(runs):
        run = staging / f"sweep_{i // 100:03d}" / f"run_{i:05d}"
        run.mkdir(parents=True)
        with RecordWriter(
            run / f"events.out.events.summary.{1_700_000_000 + i}.bench_lineage"
        ) as w:
            w.write_many(lineage_records(i, rng))
    (staging / "manifest.json").write_text(json.dumps({"runs": runs}))
    shutil.rmtree(root, ignore_errors=True)
    staging.rename(root)
    return root


def loaded(runs: int) -> Callable[[httpx.Client], bool]:
    """Whether the server lists ``runs`` runs, none of them loading (asked of its client)."""

    def done(http: httpx.Client) -> bool:
        listed = (get_json(http, "/api/v1/runs") or {}).get("runs", [])
        return len(listed) >= runs and all(run["status"] != "loading" for run in listed)

    return done


def first_paint(page: Page, url: str) -> float:
    """Seconds from navigation start until a frame in which the table shows rows."""
    page.goto("about:blank")
    page.goto(f"{url}/#/lineage", wait_until="commit")
    handle = page.wait_for_function(
        """() => document.querySelectorAll('.lin-row:not([hidden])').length >= 10
            && performance.now()""",
        polling="raf",
        timeout=60_000,
    )
    return float(handle.json_value()) / 1000


def brush_times(page: Page, rounds: int) -> list[float]:
    """Seconds from a brush-changing pointer move until the table shows the new rows."""
    page.wait_for_function("() => document.querySelector('.lin-pc-name')", timeout=60_000)
    page.evaluate(
        """() => window.addEventListener('pointermove',
            () => { window.__moved = performance.now(); }, true)"""
    )
    label = page.locator('.lin-pc-name[data-col="learning_rate"]').bounding_box()
    chart = page.locator(".lin-pc").bounding_box()
    assert label is not None and chart is not None
    x = label["x"] + label["width"] / 2
    times = []
    for i in range(rounds):
        page.mouse.move(x, chart["y"] + 50)
        page.mouse.down()
        before = page.evaluate("() => document.querySelector('.lin-count').textContent")
        page.mouse.move(x, chart["y"] + 100 + 15 * i)
        handle = page.wait_for_function(
            """(before) => document.querySelector('.lin-count').textContent !== before
                && performance.now() - window.__moved""",
            arg=before,
            polling="raf",
            timeout=30_000,
        )
        times.append(float(handle.json_value()) / 1000)
        page.mouse.up()
        page.wait_for_function("() => location.hash.includes('learning_rate')")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--port", type=int, default=18731)
    args = parser.parse_args()
    base = base_dir(args.runs)
    workspace = Path(tempfile.mkdtemp(prefix="bench-lineage-"))
    url = local(args.port)
    command = [*serve_args(base, args.port, workspace), "--reload-interval", "30"]
    try:
        with server_until(
            "sumlens", command, dict(os.environ), args.port, loaded(args.runs), 0.5, 600.0
        ) as (_, loaded_s):
            cold, body = timed(lambda: fetch_bytes(f"{url}/api/v1/lineage"))
            warm, _ = timed(lambda: fetch_bytes(f"{url}/api/v1/lineage"))
            with sync_playwright() as playwright:
                browser = open_chromium(playwright)
                page = browser.new_page(viewport={"width": 1440, "height": 900})
                paints = [first_paint(page, url) for _ in range(args.rounds)]
                brushes = brush_times(page, args.rounds)
                browser.close()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    load = os.getloadavg()
    print(f"\nlineage view, {args.runs:,} runs ({len(body) / 1e6:.2f} MB /lineage answer)")
    print(
        f"server: loaded in {loaded_s:.1f} s; /api/v1/lineage cold {cold:.3f} s, warm {warm:.4f} s"
    )
    print(f"{'measure':<44}{'median':>10}{'min':>10}{'max':>10}{'target':>10}")
    for name, values, target in (
        ("(a) navigation -> first rows painted", paints, TARGET_PAINT_S),
        ("(b) brush move -> table filtered", brushes, TARGET_BRUSH_S),
    ):
        print(
            f"{name:<44}{statistics.median(values):>9.3f}s{min(values):>9.3f}s"
            f"{max(values):>9.3f}s{'< ' + str(target) + ' s':>10}"
        )
    print(f"load average (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
