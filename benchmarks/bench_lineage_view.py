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
``.venv/bin/python benchmarks/bench_lineage_view.py [--runs 10000] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
from _browser import CHROMIUM, CHROMIUM_ARGS
from playwright.sync_api import Page, sync_playwright

from sumlens._proto import lineage_pb2
from sumlens.io import RecordWriter

DATA = Path(__file__).parent / "data" / "board"

OPTIMIZERS = ("SGD", "Momentum", "Adam")
TARGET_PAINT_S = 1.0
TARGET_BRUSH_S = 0.1
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


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


def get(url: str) -> bytes | None:
    try:
        with _NO_PROXY.open(url, timeout=60) as response:
            return response.read()
    except OSError:
        return None


def wait_loaded(url: str, runs: int, timeout: float = 600) -> float:
    """Seconds until /runs lists ``runs`` runs, none loading."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        body = get(f"{url}/api/v1/runs")
        if body:
            listed = json.loads(body)["runs"]
            if len(listed) >= runs and all(run["status"] != "loading" for run in listed):
                return time.perf_counter() - started
        time.sleep(0.5)
    raise RuntimeError(f"the server did not load {runs} runs in {timeout} s")


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
    exe = Path(sys.executable).with_name("sumlens")
    url = f"http://127.0.0.1:{args.port}"
    server = subprocess.Popen(
        [
            exe,
            "serve",
            "--summary-base-dir",
            base,
            "--workspace",
            workspace,
            "--port",
            str(args.port),
            "--reload-interval",
            "30",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    try:
        loaded = wait_loaded(url, args.runs)
        started = time.perf_counter()
        body = get(f"{url}/api/v1/lineage") or b""
        cold = time.perf_counter() - started
        started = time.perf_counter()
        get(f"{url}/api/v1/lineage")
        warm = time.perf_counter() - started
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
            )
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            paints = [first_paint(page, url) for _ in range(args.rounds)]
            brushes = brush_times(page, args.rounds)
            browser.close()
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(workspace, ignore_errors=True)
    load = os.getloadavg()
    print(f"\nlineage view, {args.runs:,} runs ({len(body) / 1e6:.2f} MB /lineage answer)")
    print(f"server: loaded in {loaded:.1f} s; /api/v1/lineage cold {cold:.3f} s, warm {warm:.4f} s")
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
