"""The browser part of ``bench_board``'s table (b): Chromium over 10,000 small runs after a
cold start: every run listed, the first paint of the run list (during the cold load and
on a reload), scrolling one viewport at a time."""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from benchmarks.board.base_dirs import Shape
from benchmarks.board.common import (
    LAUNCH_TIMEOUT_S,
    POLL_S,
    RESOURCES_JS,
    SLOW_POLL_S,
    TARGETS,
    all_listed,
)
from benchmarks.harness.browser import CHROMIUM, open_chromium
from benchmarks.harness.clock import now
from benchmarks.harness.http import connect, get_json, local
from benchmarks.harness.servers import Processes, serve_args
from benchmarks.harness.stats import percentile

ROW_SELECTOR = ".run-row:not([hidden])"
"""The run list's rows as ``static/runs/runlist.js`` draws them (pooled; unused ones are hidden)."""
INIT_JS = """
(() => {
  const selector = %s;
  const bench = (window.__bench = { firstRow: null });
  const observer = new MutationObserver(() => {
    if (bench.firstRow !== null || !document.querySelector(selector)) return;
    observer.disconnect();
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { bench.firstRow = performance.now(); };
      channel.port2.postMessage(null);
    });
  });
  observer.observe(document, { childList: true, subtree: true, attributes: true });
})();
"""
"""Records when the first run row was painted: the task after the frame that showed it, in
ms since navigation started (``performance.now()``)."""
HELPERS_JS = """
  const scrollerOf = (selector) => {
    let node = document.querySelector(selector);
    while (node && node !== document.body) {
      const style = getComputedStyle(node);
      if (/(auto|scroll)/.test(style.overflowY) && node.scrollHeight > node.clientHeight) {
        return node;
      }
      node = node.parentElement;
    }
    return document.scrollingElement;
  };
  const afterPaint = () => new Promise((resolve) => requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(null);
  }));
"""
LISTED_JS = (
    "async ([selector, runs]) => {"
    + HELPERS_JS
    + """
  const row = document.querySelector(selector);
  if (!row) return false;
  const height = row.getBoundingClientRect().height;
  return height > 0 && scrollerOf(selector).scrollHeight >= runs * height - 1;
}"""
)
"""Whether the virtualised list is as tall as ``runs`` rows: all of them are listed,
whatever their order (only the rows in sight exist as elements)."""
SCROLL_JS = (
    "async ([selector]) => {"
    + HELPERS_JS
    + """
  const scroller = scrollerOf(selector);
  const whole = scroller === document.scrollingElement;
  const view = whole ? { top: 0, bottom: innerHeight } : scroller.getBoundingClientRect();
  const key = (row) => row.getAttribute('data-run-id') || row.textContent;
  const visible = () => [...document.querySelectorAll(selector)].filter((row) => {
    const box = row.getBoundingClientRect();
    return box.height > 0 && box.bottom > view.top && box.top < view.bottom;
  });
  const covered = (rows) => rows.reduce((sum, row) => {
    const box = row.getBoundingClientRect();
    return sum + Math.min(box.bottom, view.bottom) - Math.max(box.top, view.top);
  }, 0);
  const before = new Set(visible().map(key));
  const atEnd = () => scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 1;
  const started = performance.now();
  scroller.scrollTop += scroller.clientHeight;
  for (;;) {
    await afterPaint();
    const rows = visible();
    const fresh = rows.some((row) => !before.has(key(row)));
    const full = atEnd() || covered(rows) >= 0.8 * (view.bottom - view.top);
    if (fresh && full) return performance.now() - started;
    if (performance.now() - started > 5000) return null;
  }
}"""
)
"""Scrolls the run list down one viewport; ms until a painted frame shows new rows filling
at least 80% of the viewport (a header inside it may take the rest), or null after 5 s."""


def static_dir() -> Path:
    """The dashboard's page files in the installed package."""
    return Path(str(resources.files("sumlens.board") / "static"))


def run_browser(
    procs: Processes, root: Path, shape: Shape, args: argparse.Namespace
) -> dict[str, Any]:
    """Chromium over the browser directory (see :func:`browse`); skipped without the page."""
    index = static_dir() / "index.html"
    if not index.is_file():
        return {"skipped": f"the page is not there yet ({index} is missing)"}
    if not Path(CHROMIUM).is_file():
        return {"skipped": f"{CHROMIUM} is missing"}
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    workspace = Path(tempfile.mkdtemp(prefix="bench-board-ws-"))
    try:
        with sync_playwright() as playwright:
            browser = open_chromium(playwright)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.add_init_script(INIT_JS % json.dumps(args.row_selector))
                return {
                    "chromium": browser.version,
                    **browse(page, procs, root, shape, args, workspace),
                }
            finally:
                browser.close()
    except (PlaywrightError, RuntimeError, TimeoutError) as err:
        return {"failed": f"{type(err).__name__}: {str(err).splitlines()[0]}"}
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def browse(
    page: Any,
    procs: Processes,
    root: Path,
    shape: Shape,
    args: argparse.Namespace,
    workspace: Path,
) -> dict[str, Any]:
    """A cold start of the server, the page opened as soon as it answers; then, timed:
    every run listed in the page, the first paint of the list (during the cold load, and
    after a reload once every run is loaded), and scrolling one viewport at a time.
    """
    expected = {
        f"./{shape.browser_name(i)}": shape.browser_steps for i in range(shape.browser_runs)
    }
    port = procs.port()
    started = now()
    proc = procs.start("sumlens-browser", serve_args(root, port, workspace))
    try:
        waiter = procs.waiter(proc, "sumlens serve (browser)", started, LAUNCH_TIMEOUT_S)
        with connect(local(port)) as client:
            while get_json(client, "/api/v1/health") is None:
                waiter.pause(POLL_S)
            answered = now() - started
            page.goto(f"http://127.0.0.1:{port}/", wait_until="commit")
            cold_paint = wait_first_row(page, args.browser_timeout)
            cold_requests = page.evaluate(RESOURCES_JS)
            while not page.evaluate(LISTED_JS, [args.row_selector, shape.browser_runs]):
                waiter.pause(0.05)
            listed = now() - started
            while not all_listed(get_json(client, "/api/v1/runs") or {}, expected):
                waiter.pause(SLOW_POLL_S)
            loaded = now() - started
        page.reload(wait_until="commit")
        paint = wait_first_row(page, args.browser_timeout)
        page.wait_for_timeout(500)  # let the first render settle before scrolling
        scrolls = [page.evaluate(SCROLL_JS, [args.row_selector]) for _ in range(args.scrolls)]
    finally:
        procs.end(proc)
    return {
        "server_answered_s": answered,
        "listed_s": listed,
        "api_all_loaded_s": loaded,
        "cold_paint_s": cold_paint,
        "cold_requests": cold_requests,
        "paint_s": paint,
        "requests": page.evaluate(RESOURCES_JS),
        "scroll_ms": scrolls,
    }


def wait_first_row(page: Any, timeout: float) -> float:
    """Seconds from navigation start until the first run row was painted."""
    page.wait_for_function(
        "window.__bench && window.__bench.firstRow !== null", timeout=timeout * 1000
    )
    return float(page.evaluate("window.__bench.firstRow")) / 1000


def report_browser(
    browser: dict[str, Any],
    shape: Shape,
    row: Callable[[str, str, str, bool | None, Any], None],
    notes: list[str],
) -> None:
    """The browser rows of table (b), through ``row``; where the page's time went to ``notes``."""
    n = shape.browser_runs
    row(
        f"browser: all {n:,} runs listed after a cold start",
        f"< {TARGETS['browser_listed_s']:g} s",
        f"{browser['listed_s']:.2f} s (server answered {browser['server_answered_s']:.2f} s)",
        browser["listed_s"] < TARGETS["browser_listed_s"],
        browser["listed_s"],
    )
    row(
        "browser: every run loaded (as the API says; information)",
        "-",
        f"{browser['api_all_loaded_s']:.2f} s",
        None,
        browser["api_all_loaded_s"],
    )
    for key, what in (
        ("cold_paint_s", "during the cold load"),
        ("paint_s", "once loaded (reload)"),
    ):
        row(
            f"browser: run list painted, {what}",
            f"<= {TARGETS['browser_paint_s']:g} s",
            f"{browser[key]:.2f} s",
            browser[key] <= TARGETS["browser_paint_s"],
            browser[key],
        )
    scrolls = browser["scroll_ms"]
    done = [s for s in scrolls if s is not None]
    if done:
        q50, q95 = percentile(done, 50), percentile(done, 95)
        ok = q95 < TARGETS["scroll_p95_ms"] and len(done) == len(scrolls)
        row(
            "browser: scroll one viewport, new rows painted: p50 / p95",
            f"p95 < {TARGETS['scroll_p95_ms']:g} ms",
            f"{q50:.1f} / {q95:.1f} ms (n={len(done)}, {len(scrolls) - len(done)} never filled)",
            ok,
            {"p50_ms": q50, "p95_ms": q95},
        )
    for key, when in (("cold_requests", "cold load"), ("requests", "reload")):
        last = sorted(browser[key], key=lambda entry: entry[2])[-3:]
        ends = ", ".join(f"{name} {start}-{end} ms" for name, start, end in last)
        notes.append(f"page requests that ended last ({when}; since navigation start): {ends}")
