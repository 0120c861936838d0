"""What the tables of ``bench_board`` share: where their data lives, how often they poll a
server, their targets, and the waits on a server's listing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from benchmarks.harness.clock import now
from benchmarks.harness.http import get_json
from benchmarks.harness.paths import DATA_DIR
from benchmarks.harness.servers import Waiter

BOARD_DATA = DATA_DIR / "board"


GENERATOR_VERSION = 1
"""Bump when the generated base directories change, so cached ones are rebuilt."""
SEED = 20_251_126
POLL_S = 0.02
"""Pause between polls of a listing (sumlens' /runs, TensorBoard's tags), for every server."""
SLOW_POLL_S = 0.25
"""Pause between polls of 1,010 runs once first data is served: a listing that large, asked
for every 20 ms, would slow the very load it waits for."""
LAUNCH_TIMEOUT_S = 300.0
VIEW_POINTS = 2_000
"""Points per series of the dashboard's downsampled view (the scalars API's default)."""
TARGETS = {
    "tensorboard": 3.0,  # TensorBoard time / sumlens time
    "data_server": 1.5,  # data server alone / sumlens
    "mindinsight": 100.0,  # MindInsight / sumlens
    "first_data_s": 5.0,
    "warm_reopen_s": 1.0,
    "query_p95_ms": 50.0,
    "peak_rss_mb": 1024.0,
    "browser_listed_s": 5.0,
    "browser_paint_s": 1.0,
    "scroll_p95_ms": 100.0,
    "dashboard_open_s": 1.0,
}


def wait_listed(
    client: httpx.Client, path: str, done: Callable[[Any], bool], waiter: Waiter
) -> tuple[Any, float, float]:
    """Poll ``path`` every ``POLL_S`` until ``done(body)``; the last body, when the server
    first answered and when ``done`` held (``now()`` values)."""
    answered = None
    while True:
        body = get_json(client, path)
        if body is not None:
            answered = answered or now()
            if done(body):
                return body, answered, now()
        waiter.pause(POLL_S)


def all_listed(body: dict[str, Any], expected: dict[str, int]) -> bool:
    """Every expected run listed ready with all its points."""
    runs = body.get("runs", [])
    if len(runs) != len(expected):
        return False
    return all(
        run["status"] == "ready" and expected.get(run["id"]) == run["points"] for run in runs
    )


RESOURCES_JS = """() => [
  ...performance.getEntriesByType('navigation'),
  ...performance.getEntriesByType('resource'),
].map((e) => [e.name.split('/').pop() || '/', Math.round(e.startTime), Math.round(e.responseEnd)])
"""
"""What the page fetched: ``[name, start ms, response end ms]`` since navigation started
(where the first paint's time went)."""
