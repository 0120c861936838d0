"""Table (c) of ``bench_board``: a run with images and histograms beside the scale directory:
its training dashboard opened in Chromium, the plugin queries, the server's peak memory."""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

import httpx

from benchmarks.board.base_dirs import PLUGIN_RUN, Shape, scale_plugins_dir
from benchmarks.board.common import RESOURCES_JS, SLOW_POLL_S, TARGETS, all_listed
from benchmarks.board.plugin_run import PluginShape
from benchmarks.harness.browser import CHROMIUM, open_chromium
from benchmarks.harness.clock import now
from benchmarks.harness.http import connect, get_json, local
from benchmarks.harness.machine import read_status_kb
from benchmarks.harness.report import MeasureTable
from benchmarks.harness.servers import Processes, serve_args

PLUGIN_QUERIES = 50
"""Histogram tags whose samples are fetched (with every image tag's) before memory is read."""
DASHBOARD_DONE_JS = """(id) => {
  const view = document.getElementById('run-view');
  const run = view && view.querySelector('.dash-run');
  if (!run || view.hidden || run.textContent !== id) return false;
  const cards = [...view.querySelectorAll('.dash-card')];
  const images = [...view.querySelectorAll('.dash-card img')];
  const done = cards.length > 0
    && cards.every((c) => ['ready', 'empty', 'error'].includes(c.dataset.state))
    && images.length > 0 && images.every((img) => img.complete && img.naturalWidth > 0);
  if (done && window.__dashboardDone === undefined) window.__dashboardDone = performance.now();
  return done;
}"""
"""True once the training dashboard of run ``id`` shows every card loaded and its image
preview decoded; records when (ms since navigation started) on the first frame it holds."""
DASHBOARD_CARDS_JS = """() => [...document.querySelectorAll('#run-view .dash-card')]
  .map((card) => [card.dataset.plugin, card.dataset.state])"""


def plugin_queries(client: httpx.Client, plugins: PluginShape) -> int:
    """What the dashboard and the plugin views ask of the plugin run; the requests made.

    Every image tag's samples and newest picture, and the values of ``PLUGIN_QUERIES``
    histogram tags: so the peak memory includes serving them, not only loading.
    """
    tags = plugins.tags()
    run = f"./{PLUGIN_RUN}"
    requests = 0
    for tag in tags["image"]:
        listing = get_json(client, "/api/v1/samples", {"run": run, "plugin": "image", "tag": tag})
        if not listing or not listing["series"]:
            raise AssertionError(f"no image samples of {tag!r}: {str(listing)[:300]}")
        steps = listing["series"][0]["step"]
        picture = client.get("/api/v1/image", params={"run": run, "tag": tag, "step": steps[-1]})
        if picture.status_code != 200 or not picture.content.startswith(b"\x89PNG"):
            raise AssertionError(f"image {tag!r} at step {steps[-1]}: {picture.status_code}")
        requests += 2
    for tag in tags["histogram"][:PLUGIN_QUERIES]:
        got = get_json(client, "/api/v1/histograms", {"run": run, "tag": tag})
        if not got or not got["series"]:
            raise AssertionError(f"no histograms of {tag!r}: {str(got)[:300]}")
        requests += 1
    return requests


def open_dashboards(port: int, plugins: PluginShape, args: argparse.Namespace) -> dict[str, Any]:
    """Open the plugin run's training dashboard in Chromium ``args.dashboard_opens`` times.

    Each open is a new browser context (nothing cached), so it fetches the page, its
    modules, plotly and every preview; timed from navigation start until every card is
    loaded and the image preview decoded. One reload of the last context follows (cached).
    """
    if not Path(CHROMIUM).is_file():
        return {"skipped": f"{CHROMIUM} is missing"}
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    run_id = f"./{PLUGIN_RUN}"
    url = f"http://127.0.0.1:{port}/#/run?run=.%2F{PLUGIN_RUN}"
    opens: list[float] = []
    try:
        with sync_playwright() as playwright:
            browser = open_chromium(playwright)
            try:
                for _ in range(args.dashboard_opens):
                    context = browser.new_context(viewport={"width": 1400, "height": 900})
                    page = context.new_page()
                    page.goto(url, wait_until="commit")
                    page.wait_for_function(
                        DASHBOARD_DONE_JS, arg=run_id, timeout=args.browser_timeout * 1000
                    )
                    opens.append(float(page.evaluate("window.__dashboardDone")) / 1000)
                    cards = page.evaluate(DASHBOARD_CARDS_JS)
                    requests = page.evaluate(RESOURCES_JS)
                    page.reload(wait_until="commit")
                    page.wait_for_function(
                        DASHBOARD_DONE_JS, arg=run_id, timeout=args.browser_timeout * 1000
                    )
                    reload_s = float(page.evaluate("window.__dashboardDone")) / 1000
                    context.close()
                return {
                    "chromium": browser.version,
                    "open_s": opens,
                    "reload_s": reload_s,
                    "cards": cards,
                    "requests": requests,
                }
            finally:
                browser.close()
    except (PlaywrightError, RuntimeError, TimeoutError) as err:
        return {"failed": f"{type(err).__name__}: {str(err).splitlines()[0]}", "open_s": opens}


def run_plugins(
    procs: Processes, shape: Shape, plugins: PluginShape, args: argparse.Namespace
) -> dict[str, Any]:
    """Table (c): a cold start over the scale directory plus the plugin run; once it is all
    loaded, the plugin queries and the dashboard opens; the server's peak memory."""
    root = scale_plugins_dir(shape, plugins)
    expected = {**shape.scale_points(), f"./{PLUGIN_RUN}": 2 * plugins.steps}
    workspace = Path(tempfile.mkdtemp(prefix="bench-board-ws-"))
    port = procs.port()
    print(f"plugins: cold start over {root}", flush=True)
    started = now()
    proc = procs.start("sumlens-plugins", serve_args(root, port, workspace))
    try:
        waiter = procs.waiter(proc, "sumlens serve (plugins)", started, args.scale_timeout)
        with connect(local(port)) as client:
            while not all_listed(get_json(client, "/api/v1/runs") or {}, expected):
                waiter.pause(SLOW_POLL_S)
            while (get_json(client, "/api/v1/health") or {}).get("loading", True):
                waiter.pause(SLOW_POLL_S)
            loaded_s = now() - started
            print(f"  everything loaded after {loaded_s:.1f} s", flush=True)
            listing = get_json(client, "/api/v1/runs") or {}
            (run,) = [r for r in listing["runs"] if r["id"] == f"./{PLUGIN_RUN}"]
            counts = {plugin: len(run["tags"].get(plugin, [])) for plugin in plugins.tags()}
            if counts != {plugin: len(tags) for plugin, tags in plugins.tags().items()}:
                raise AssertionError(f"the plugin run lists {counts}")
            loaded_kb = read_status_kb(proc.pid, "VmHWM")
            requests = plugin_queries(client, plugins)
            if args.no_browser:
                dashboard: dict[str, Any] = {"skipped": "--no-browser"}
            else:
                dashboard = open_dashboards(port, plugins, args)
        peak_kb = read_status_kb(proc.pid, "VmHWM")
    finally:
        procs.end(proc)
        shutil.rmtree(workspace, ignore_errors=True)
    size = sum(p.stat().st_size for p in (root / PLUGIN_RUN).iterdir())
    return {
        "base_dir": str(root),
        "plugin_run_mb": size / 1e6,
        "all_loaded_s": loaded_s,
        "loaded_rss_mb": (loaded_kb or 0) / 1024,
        "queries": requests,
        "peak_rss_mb": (peak_kb or 0) / 1024,
        "dashboard": dashboard,
    }


def report_c(result: dict[str, Any], shape: Shape, plugins: PluginShape) -> list[dict[str, Any]]:
    """Print table (c); return its rows for the JSON."""
    table = MeasureTable()
    row = table.row

    run = (
        f"{plugins.steps:,} steps x {plugins.image_tags} image tags "
        f"({plugins.image_side}x{plugins.image_side} PNG) + {plugins.histogram_tags} histogram "
        f"tags ({plugins.buckets} buckets), {result['plugin_run_mb']:.0f} MB"
    )
    print()
    print(f"Table (c): a run of {run}, beside the scale directory ({result['base_dir']})")
    print()
    print("| measure | target | measured | verdict |")
    print("|---|---|---|---|")
    dashboard = result["dashboard"]
    opens = dashboard.get("open_s", [])
    if opens:
        mid, low, high = statistics.median(opens), min(opens), max(opens)
        target = TARGETS["dashboard_open_s"]
        row(
            "its training dashboard opened in Chromium, server warm, new browser context: "
            "every card loaded and the image shown (median of opens)",
            f"< {target:g} s",
            f"{mid:.3f} s ({low:.3f} - {high:.3f}, n={len(opens)})",
            mid < target,
            {"median_s": mid, "min_s": low, "max_s": high},
        )
    if "reload_s" in dashboard:
        row(
            "the same after a reload (browser cache warm)",
            "-",
            f"{dashboard['reload_s']:.3f} s",
            None,
            dashboard["reload_s"],
        )
    for why in ("skipped", "failed"):
        if why in dashboard:
            print(f"| dashboard in Chromium | < 1 s | {why}: {dashboard[why]} | |")
    peak = result["peak_rss_mb"]
    row(
        f"server peak RSS (VmHWM): cold load of {len(shape.scale_points()):,} scalar runs and the "
        f"plugin run, {result['queries']} plugin requests, the dashboard opens",
        f"< {TARGETS['peak_rss_mb']:g} MB",
        f"{peak:.0f} MB ({result['loaded_rss_mb']:.0f} MB once loaded)",
        peak < TARGETS["peak_rss_mb"],
        peak,
    )
    row(
        "everything loaded after a cold start (information)",
        "-",
        f"{result['all_loaded_s']:.1f} s",
        None,
        result["all_loaded_s"],
    )
    if "cards" in dashboard:
        cards = ", ".join(f"{plugin} {state}" for plugin, state in dashboard["cards"])
        print(f"\n  cards: {cards}")
        last = sorted(dashboard["requests"], key=lambda entry: entry[2])[-3:]
        ends = ", ".join(f"{name} {start}-{end} ms" for name, start, end in last)
        print(f"  page requests that ended last (first open; since navigation start): {ends}")
    return table.rows
