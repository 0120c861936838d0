"""The comparing-runs workloads of issue 30, shared by ``bench_board`` (tables (e), (f)) and
the stand-alone ``bench_tag_groups``: the scalars page of a run of 12,345 tags in Chromium
(sumlens and TensorBoard) and the groups request over 100 runs.

The runs are ``scale_workloads`` directories (TensorBoard's format, written by
``SummaryRecord`` and cached under ``~/.cache/sumlens/bench/scale/``), so both servers read
the same files. ``benchmarks/README.md`` (table (e)) says what each probe waits for.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser

from benchmarks import scale_workloads
from benchmarks.harness.clock import timed
from benchmarks.harness.http import connect
from benchmarks.harness.servers import free_port, serve_args, server_until

PAGE = scale_workloads.Workload("page", runs=1, tags=12_345, steps=1_000, poll_s=0.25)
"""One run of 12,345 scalar tags x 1,000 steps (12.3M points) in 100 prefixes."""
PREFIXES = 100  # scale_workloads.Workload.tag_name: group{i % 100}
GROUPS = scale_workloads.Workload("groups", runs=100, tags=2, steps=10_000, poll_s=0.25)
"""100 runs of 2 tags x 10,000 steps; ``GROUP_REGEX`` puts them in 10 groups of 10."""
GROUP_REGEX = r"r000(\d)\d"
"""Over run ids ``./r00000`` ... ``./r00099``: the tens digit names the group."""
VIEWPORT = {"width": 1440, "height": 900}
WAIT_MS = 600_000

SUMLENS_DONE_JS = """(prefixes) => {
  const groups = document.querySelectorAll('.prefix-group');
  if (groups.length < prefixes) return false;
  const onScreen = [...document.querySelectorAll('.prefix-group .card')].filter((card) => {
    const box = card.getBoundingClientRect();
    return box.width > 0 && box.bottom > 0 && box.top < innerHeight;
  });
  if (!onScreen.length || !onScreen.every((card) => card.dataset.state === 'ready')) return false;
  return { ms: performance.now(), groups: groups.length, drawn: onScreen.length,
    cards: document.querySelectorAll('.card').length,
    fetched: performance.getEntriesByType('resource')
      .filter((e) => e.name.includes('/api/v1/scalars?')).length };
}"""
"""sumlens: every prefix group listed, and every chart card on the first screen drawn (its
``data-state`` is ``ready`` once its lines are in the chart)."""

TENSORBOARD_DONE_JS = """(prefixes) => {
  const groups = document.querySelectorAll('metrics-card-group-toolbar .group-title');
  if (groups.length < prefixes) return false;
  const onScreen = [...document.querySelectorAll('metrics-card-groups scalar-card')].filter(
    (card) => {
      const box = card.getBoundingClientRect();
      return box.width > 0 && box.bottom > 0 && box.top < innerHeight;
    });
  const check = (canvas) => {  // reads the canvas back; notes when it first showed ink
    canvas.benchChecking = true;
    const asked = performance.now();
    createImageBitmap(canvas).then((bitmap) => {
      const copy = new OffscreenCanvas(bitmap.width, bitmap.height).getContext('2d');
      copy.drawImage(bitmap, 0, 0);
      const pixels = copy.getImageData(0, 0, bitmap.width, bitmap.height).data;
      for (let i = 3; i < pixels.length; i += 4) {
        if (pixels[i]) { canvas.benchInkedAt = asked; break; }
      }
    }).finally(() => { canvas.benchChecking = false; });
  };
  let inked = onScreen.length > 0;
  for (const card of onScreen) {
    const canvas = card.querySelector('line-chart canvas');
    if (!canvas || !canvas.width || card.querySelector('mat-spinner')) { inked = false; continue; }
    if (canvas.benchInkedAt !== undefined) continue;
    inked = false;
    if (!canvas.benchChecking) check(canvas);
  }
  if (!inked) return false;
  const canvases = onScreen.map((card) => card.querySelector('line-chart canvas'));
  return { ms: Math.max(...canvases.map((c) => c.benchInkedAt)), groups: groups.length,
    drawn: onScreen.length,
    cards: document.querySelectorAll('metrics-card-groups scalar-card').length,
    fetched: performance.getEntriesByType('resource')
      .filter((e) => e.name.includes('timeSeries')).length };
}"""
"""TensorBoard 2.21's Time Series page: every prefix group's toolbar listed, and every
scalar card on the first screen past its loading spinner with ink in its line canvas (the
grid and axes are SVG around it; the canvas holds only the lines, so any pixel not fully
transparent is a drawn line). Each poll reads a canvas back through ``createImageBitmap``
(asynchronous, so the poll starts it and a later poll sees its answer); the time is when
the read that first found ink was asked for, the last of the cards on screen."""


def open_timed(browser: Browser, address: str, probe: str) -> dict[str, Any]:
    """Open ``address`` in a fresh context (nothing cached, nothing stored) and wait for
    ``probe``; what it returned, with ``seconds`` from the navigation's start (the page's
    own clock)."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(address)
        done = page.wait_for_function(probe, arg=PREFIXES, timeout=WAIT_MS, polling=20)
        result = done.json_value()
        return {"seconds": result["ms"] / 1000, **result}
    finally:
        context.close()


def sumlens_page(browser: Browser, url: str) -> dict[str, Any]:
    """sumlens' Scalars page of ``PAGE``'s run, timed by ``SUMLENS_DONE_JS``."""
    return open_timed(browser, f"{url}/#/scalars?run=./{PAGE.run_name(0)}", SUMLENS_DONE_JS)


def tensorboard_page(browser: Browser, url: str) -> dict[str, Any]:
    """TensorBoard's Time Series page of the same run, timed by ``TENSORBOARD_DONE_JS``."""
    return open_timed(browser, f"{url}/#timeseries", TENSORBOARD_DONE_JS)


@contextlib.contextmanager
def serving_sumlens(workload: scale_workloads.Workload) -> Iterator[tuple[str, float]]:
    """``sumlens serve`` over ``workload`` (cold workspace) until every run is loaded; yields
    its address and the seconds that took."""
    base_dir = scale_workloads.ensure(workload)
    workspace = Path(tempfile.mkdtemp(prefix="bench-page-ws-"))
    port = free_port()
    try:
        with server_until(
            "sumlens",
            serve_args(base_dir, port, workspace),
            dict(os.environ),
            port,
            lambda client: scale_workloads.sumlens_done(client, workload),
            workload.poll_s,
            scale_workloads.TIMEOUT_S * 4,
        ) as (_, ready_s):
            yield f"http://127.0.0.1:{port}", ready_s
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def group_params(smoothing: float, points: int = 1_000) -> list[tuple[str, str | float | int]]:
    """The groups request over every run of ``GROUPS`` (one tag, grouped by
    ``GROUP_REGEX``, mean with a std band)."""
    runs = [("run", f"./{GROUPS.run_name(i)}") for i in range(GROUPS.runs)]
    return [
        *runs,
        ("tag", GROUPS.tag_name(0)),
        ("by", "regex"),
        ("group_regex", GROUP_REGEX),
        ("stat", "mean"),
        ("band", "std"),
        ("smoothing", smoothing),
        ("points", points),
    ]


def group_latencies(url: str, requests: int) -> tuple[list[float], dict[str, Any]]:
    """Seconds of ``requests`` groups requests, one after another, each with a different
    smoothing weight (0.5 ... < 0.9, so no answer can be reused); and the first answer's
    shape (groups, members, points) to check that it is the workload asked for."""
    seconds = []
    shape: dict[str, Any] = {}
    with connect(url) as http:
        for i in range(requests):
            params = group_params(0.5 + 0.4 * i / max(requests, 1))
            took, response = timed(lambda p=params: http.get("/api/v1/scalars/groups", params=p))
            seconds.append(took)
            response.raise_for_status()
            if not shape:
                body = response.json()
                shape = {
                    "groups": len(body["groups"]),
                    "members": sorted({len(g["members"]) for g in body["groups"]}),
                    "points": sorted({g["shown"] for g in body["groups"]}),
                    "steps": sorted({g["total"] for g in body["groups"]}),
                    "single": len(body["single"]),
                }
    return seconds, shape
