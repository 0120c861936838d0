"""Table (b) of ``bench_board``: a base directory of 1,010 runs (20M points): first data after
a cold start, every run loaded, the scalars API on a 1M-point series, the server's peak
memory, warm re-opens; then the browser part (``benchmarks.board.browser``)."""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

import httpx
import orjson

from benchmarks.board.base_dirs import Shape, browser_dir, scale_dir
from benchmarks.board.browser import report_browser, run_browser
from benchmarks.board.common import (
    LAUNCH_TIMEOUT_S,
    POLL_S,
    SLOW_POLL_S,
    TARGETS,
    VIEW_POINTS,
    all_listed,
    wait_listed,
)
from benchmarks.datasets import LOSS_TAG
from benchmarks.harness.clock import now
from benchmarks.harness.http import connect, get_json, local
from benchmarks.harness.machine import read_status_kb
from benchmarks.harness.report import MeasureTable, fmt_spread_s
from benchmarks.harness.servers import Processes, serve_args
from benchmarks.harness.stats import percentile_ms


def first_data(client: httpx.Client, body: dict[str, Any]) -> str | None:
    """The id of a listed run whose scalars the API serves, if there is one yet."""
    for run in body.get("runs", []):
        if run["points"] > 0:
            got = get_json(client, "/api/v1/scalars", {"run": run["id"], "points": VIEW_POINTS})
            if got and any(s["total"] > 0 and s["shown"] > 0 for s in got["series"]):
                return str(run["id"])
            return None
    return None


def query_latencies(
    client: httpx.Client, runs: list[str], total: int, count: int, smoothing: float
) -> list[float]:
    """Seconds per ``/api/v1/scalars`` request of one ``total``-point series -> 2,000 points."""
    seconds = []
    for i in range(count):
        params = {"run": runs[i % len(runs)], "tag": LOSS_TAG, "points": VIEW_POINTS}
        params["smoothing"] = smoothing
        started = now()
        response = client.get("/api/v1/scalars", params=params)
        seconds.append(now() - started)
        body = orjson.loads(response.content) if response.status_code == 200 else {}
        series = body.get("series", [])
        if len(series) != 1 or series[0]["total"] != total or series[0]["shown"] > VIEW_POINTS:
            raise AssertionError(f"scalars query {params}: {str(body)[:300]}")
    return seconds


def scale_cold(
    procs: Processes, root: Path, shape: Shape, workspace: Path, args: argparse.Namespace
) -> dict[str, Any]:
    """A cold start over the scale directory: first data, full load, queries, peak memory."""
    expected = shape.scale_points()
    port = procs.port()
    started = now()
    proc = procs.start("sumlens-scale", serve_args(root, port, workspace))
    first_at = None
    first_run = None
    rss_kb = 0
    try:
        waiter = procs.waiter(proc, "sumlens serve (scale)", started, args.scale_timeout)
        with connect(local(port)) as client:
            while True:
                body = get_json(client, "/api/v1/runs")
                rss_kb = max(rss_kb, read_status_kb(proc.pid, "VmRSS") or 0)
                if body is not None:
                    if first_at is None:
                        first_run = first_data(client, body)
                        first_at = now() if first_run else None
                        if first_at is not None:
                            print(f"  first data after {first_at - started:.2f} s", flush=True)
                    if all_listed(body, expected):
                        break
                waiter.pause(POLL_S if first_at is None else SLOW_POLL_S)
            ready_at = now()
            print(f"  every run loaded after {ready_at - started:.1f} s", flush=True)
            plain = query_latencies(client, shape.big_ids(), shape.big_steps, args.queries, 0.0)
            smoothed = query_latencies(client, shape.big_ids(), shape.big_steps, args.queries, 0.6)
        peak_kb = read_status_kb(proc.pid, "VmHWM")
    finally:
        stop_s = procs.end(proc)
    assert first_at is not None
    return {
        "first_data_s": first_at - started,
        "first_run": first_run,
        "all_loaded_s": ready_at - started,
        "engine": body["engine"],
        "query_s": plain,
        "query_smoothed_s": smoothed,
        "peak_rss_mb": (peak_kb or 0) / 1024,
        "max_sampled_rss_mb": rss_kb / 1024,
        "stop_s": stop_s,
    }


def scale_warm(procs: Processes, root: Path, shape: Shape, workspace: Path) -> dict[str, Any]:
    """A re-open over the same workspace: until every run is listed ready, then idle.

    Idle (the first pass over the files done) is read from ``/api/v1/health``: the run
    list's own ``loading`` flag is cached with the list and is not refreshed when only the
    flag changes, so it can say ``true`` long after the pass; whether it did is recorded.
    """
    expected = shape.scale_points()
    port = procs.port()
    started = now()
    proc = procs.start("sumlens-reopen", serve_args(root, port, workspace))
    try:
        waiter = procs.waiter(proc, "sumlens serve (re-open)", started, LAUNCH_TIMEOUT_S)
        with connect(local(port)) as client:
            _, answered, listed = wait_listed(
                client, "/api/v1/runs", lambda got: all_listed(got, expected), waiter
            )
            while (get_json(client, "/api/v1/health") or {}).get("loading", True):
                waiter.pause(POLL_S)
            idle = now()
            stale = bool((get_json(client, "/api/v1/runs") or {}).get("loading"))
    finally:
        stop_s = procs.end(proc)
    return {
        "seconds": listed - started,
        "answered_s": answered - started,
        "idle_s": idle - started,
        "runs_still_loading": stale,
        "stop_s": stop_s,
    }


def run_scale(procs: Processes, shape: Shape, args: argparse.Namespace) -> dict[str, Any]:
    """Table (b): cold start(s) with queries, warm re-opens, then the browser part."""
    root = scale_dir(shape)
    out: dict[str, Any] = {"base_dir": str(root), "cold": [], "warm": []}
    for r in range(args.scale_rounds):
        workspace = Path(tempfile.mkdtemp(prefix="bench-board-ws-"))
        try:
            print(f"scale round {r + 1}/{args.scale_rounds}: cold start over {root}", flush=True)
            out["cold"].append(scale_cold(procs, root, shape, workspace, args))
            for _ in range(args.reopens):
                warm = scale_warm(procs, root, shape, workspace)
                print(f"  re-open: every run listed after {warm['seconds']:.2f} s", flush=True)
                out["warm"].append(warm)
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
    if args.no_browser:
        out["browser"] = {"skipped": "--no-browser"}
    else:
        broot = browser_dir(shape)
        print(f"browser: cold start over {broot} ({shape.browser_runs:,} runs)", flush=True)
        out["browser"] = run_browser(procs, broot, shape, args)
        out["browser_base_dir"] = str(broot)
    return out


def report_b(scale: dict[str, Any], shape: Shape) -> list[dict[str, Any]]:
    """Print table (b); return its rows for the JSON."""
    runs = len(shape.scale_points())
    points = sum(shape.scale_points().values())
    big = f"{shape.big_steps / 1e6:g}M" if shape.big_steps >= 1e6 else f"{shape.big_steps:,}"
    table = MeasureTable()
    row = table.row
    notes: list[str] = []

    print()
    print(f"Table (b): scale, {runs:,} runs, {points / 1e6:.1f}M points ({scale['base_dir']})")
    print()
    print("| measure | target | measured | verdict |")
    print("|---|---|---|---|")
    cold, warm = scale["cold"], scale["warm"]
    if cold:
        first = [c["first_data_s"] for c in cold]
        row(
            "first data served after a cold start",
            f"< {TARGETS['first_data_s']:g} s",
            fmt_spread_s(first),
            max(first) < TARGETS["first_data_s"],
            first,
        )
        loaded = [c["all_loaded_s"] for c in cold]
        row(
            f"every run loaded (cold; engine {cold[0]['engine']})",
            "-",
            fmt_spread_s(loaded),
            None,
            loaded,
        )
        plain = [s for c in cold for s in c["query_s"]]
        p50, p95 = percentile_ms(plain, 50), percentile_ms(plain, 95)
        row(
            f"scalars API, one {big}-point series -> {VIEW_POINTS:,} points: p50 / p95",
            f"p95 < {TARGETS['query_p95_ms']:g} ms",
            f"{p50:.1f} / {p95:.1f} ms (n={len(plain)})",
            p95 < TARGETS["query_p95_ms"],
            {"p50_ms": p50, "p95_ms": p95},
        )
        smooth = [s for c in cold for s in c["query_smoothed_s"]]
        s50, s95 = percentile_ms(smooth, 50), percentile_ms(smooth, 95)
        row(
            "the same with smoothing 0.6 (EMA over the full series): p50 / p95",
            "-",
            f"{s50:.1f} / {s95:.1f} ms (n={len(smooth)})",
            None,
            {"p50_ms": s50, "p95_ms": s95},
        )
        peak = max(c["peak_rss_mb"] for c in cold)
        row(
            "server peak RSS (VmHWM) over the cold load and the queries",
            f"< {TARGETS['peak_rss_mb']:g} MB",
            f"{peak:.0f} MB",
            peak < TARGETS["peak_rss_mb"],
            peak,
        )
    if warm:
        listed = [w["seconds"] for w in warm]
        row(
            "warm re-open: every run listed ready",
            f"< {TARGETS['warm_reopen_s']:g} s",
            fmt_spread_s(listed),
            statistics.median(listed) < TARGETS["warm_reopen_s"],
            listed,
        )
        answered = [w["answered_s"] for w in warm]
        row("warm re-open: first HTTP answer", "-", fmt_spread_s(answered), None, answered)
        idle = [w["idle_s"] for w in warm]
        row(
            "warm re-open: first pass over the files done (health: loading false)",
            "-",
            fmt_spread_s(idle),
            None,
            idle,
        )
        stale = sum(w["runs_still_loading"] for w in warm)
        if stale:
            notes.append(
                f"BUG: in {stale} of {len(warm)} re-opens /api/v1/runs still said loading=true "
                "after /api/v1/health said the first pass was over (the list is cached by "
                "version, and the end of the pass does not bump it)"
            )
    browser = scale["browser"]
    if "skipped" in browser or "failed" in browser:
        print(f"| browser part | | {browser.get('skipped') or browser.get('failed')} | |")
    else:
        report_browser(browser, shape, row, notes)
    print()
    for note in notes:
        print(f"  {note}")
    return table.rows
