"""Dashboard speed: the sumlens board server against TensorBoard, its data server and MindInsight.

Generates the data if needed, warms up, runs the tables asked for (``--only``), prints them
and saves the raw timings; ``benchmarks/bench_board.py`` says what each table measures.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from benchmarks.board.anchors import MINDINSIGHT_BIN, brief, build_units
from benchmarks.board.anchors_report import report_a
from benchmarks.board.base_dirs import (
    FULL_PLUGINS,
    FULL_SHAPE,
    QUICK_PLUGINS,
    QUICK_SHAPE,
    anchors,
    browser_dir,
    scale_dir,
    scale_plugins_dir,
)
from benchmarks.board.browser import ROW_SELECTOR
from benchmarks.board.groups import report_f, run_groups
from benchmarks.board.many import run_scale_d
from benchmarks.board.pages import report_e, run_pages
from benchmarks.board.plugins import report_c, run_plugins
from benchmarks.board.scale import report_b, run_scale
from benchmarks.board.snapshot import report_g, run_snapshot
from benchmarks.harness.clock import now
from benchmarks.harness.machine import commit_facts, fingerprint, machine_facts, module_fingerprint
from benchmarks.harness.paths import DATA_DIR, RESULTS_DIR
from benchmarks.harness.rounds import Table, run_rounds
from benchmarks.harness.servers import Processes, prime_numba

FASTSCAN = "sumlens.io._fastscan"
"""The reader's numba module: a change during the run means the servers compiled."""


def board_fingerprint() -> str:
    """Of the dashboard's code and pages (another engineer edits them while we measure)."""
    root = Path(str(resources.files("sumlens.board")))
    return fingerprint(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def machine_meta() -> dict[str, Any]:
    """Versions, machine and commit, for the JSON."""
    mi_dists = sorted(MINDINSIGHT_BIN.parent.parent.glob("lib/python*/site-packages/mindinsight-*"))
    packages = ("sumlens", "numba", "fastapi", "uvicorn", "orjson", "httpx", "tensorboard")
    return {
        **machine_facts((*packages, "tensorboard-data-server", "playwright")),
        **commit_facts(),
        "mindinsight": mi_dists[0].name if mi_dists else None,
    }


TABLES = "abcdefg"
"""The letters of the tables, for ``--only``."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The options (``--quick`` shrinks the rounds and the data)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of table (a) (default 5)")
    parser.add_argument(
        "--mi-rounds", type=int, default=1, help="rounds that also run MindInsight (default 1)"
    )
    parser.add_argument(
        "--mi-timeout", type=float, default=120.0, help="MindInsight's cap in seconds (120)"
    )
    parser.add_argument(
        "--cold-numba-rounds",
        type=int,
        default=1,
        help="rounds that also start sumlens with an empty numba cache (default 1)",
    )
    parser.add_argument(
        "--scale-rounds", type=int, default=1, help="cold starts over the scale directory (1)"
    )
    parser.add_argument(
        "--reopens", type=int, default=3, help="warm re-opens after each cold start (3)"
    )
    parser.add_argument(
        "--queries", type=int, default=200, help="scalars requests timed per cold start (200)"
    )
    parser.add_argument(
        "--scale-timeout", type=float, default=600.0, help="seconds a cold scale load may take"
    )
    parser.add_argument("--scrolls", type=int, default=60, help="scrolls timed in Chromium (60)")
    parser.add_argument(
        "--browser-timeout", type=float, default=120.0, help="seconds to wait for the page (120)"
    )
    parser.add_argument(
        "--row-selector", default=ROW_SELECTOR, help=f"CSS of a run row (default {ROW_SELECTOR!r})"
    )
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium part of (b)")
    parser.add_argument(
        "--dashboard-opens", type=int, default=5, help="opens of the plugin dashboard (5)"
    )
    parser.add_argument(
        "--only",
        default=TABLES,
        help=f"the tables to run, as letters (default {TABLES}: all; 'efg': issue 30's)",
    )
    parser.add_argument(
        "--page-rounds", type=int, default=3, help="interleaved page openings of table (e) (3)"
    )
    parser.add_argument(
        "--group-requests", type=int, default=50, help="groups requests timed in table (f) (50)"
    )
    parser.add_argument(
        "--snapshot-rounds", type=int, default=3, help="opens of the snapshot in table (g) (3)"
    )
    parser.add_argument(
        "--scale-d-rounds", type=int, default=5, help="interleaved rounds of table (d) (5)"
    )
    parser.add_argument(
        "--idle-rounds", type=int, default=2, help="idle measurements of table (d) (2)"
    )
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="the src folder of another checkout, timed beside this one in table (d)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run on small data: 2,000-step files, 2 rounds, a 1.2k-run scale directory",
    )
    parser.add_argument(
        "--numba-cache-dir",
        type=Path,
        default=DATA_DIR / "numba-cache",
        help="NUMBA_CACHE_DIR of the servers (default benchmarks/data/numba-cache, as bench_read)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="raw timings (default benchmarks/results/...)"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.mi_timeout, args.queries, args.scrolls = 2, 60.0, 20, 10
        args.reopens, args.page_rounds, args.group_requests, args.snapshot_rounds = 2, 2, 10, 1
    if not args.only or set(args.only) - set(TABLES):
        parser.error(f"--only={args.only!r}: give letters out of {TABLES!r}, such as 'a' or 'efg'")
    if args.rounds < 1 or min(args.mi_rounds, args.cold_numba_rounds, args.reopens) < 0:
        parser.error("--rounds must be >= 1; --mi-rounds, --cold-numba-rounds, --reopens >= 0")
    if args.out is None:
        part = "" if args.only == TABLES else f"_{args.only}"  # a part keeps the whole run's file
        args.out = RESULTS_DIR / f"bench_board{part}{'_quick' if args.quick else ''}.json"
    return args


def save(out: dict[str, Any], path: Path) -> None:
    """Write the raw timings gathered so far."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2, default=str) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Generate the data if needed, warm up, run the tables, print them and save the JSON."""
    args = parse_args(argv)
    # One compile cache for every server of the run (as bench_read), filled before timing.
    os.environ["NUMBA_CACHE_DIR"] = str(args.numba_cache_dir.resolve())
    os.environ["PYTHONUNBUFFERED"] = "1"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: end every server
    shape = QUICK_SHAPE if args.quick else FULL_SHAPE
    meta = machine_meta()
    out: dict[str, Any] = {"meta": meta, "args": {k: str(v) for k, v in vars(args).items()}}
    plugins = QUICK_PLUGINS if args.quick else FULL_PLUGINS
    files = anchors(args.quick) if "a" in args.only else []
    if "b" in args.only:
        scale_dir(shape)
        if not args.no_browser:
            browser_dir(shape)
    if "c" in args.only:
        scale_plugins_dir(shape, plugins)
    print("warming up (untimed):", flush=True)
    print(f"  numba cache ready ({prime_numba():.1f} s)", flush=True)
    if args.before is not None:
        print(f"  numba cache ready ({prime_numba(args.before):.1f} s)", flush=True)
    for anchor in files:  # page cache
        for path in anchor.base_dir.iterdir():
            path.read_bytes()
    code_before = board_fingerprint(), module_fingerprint(FASTSCAN)
    meta["load_average_before"] = os.getloadavg()
    print(f"load average (1, 5, 15 min) before: {meta['load_average_before']}", flush=True)
    procs = Processes("bench-board-logs-")
    started = now()
    try:
        if files:
            table = Table()
            units = build_units(procs, files, args, table)
            run_rounds(units, args.rounds, table, brief=brief)
            out["a"] = {
                "files": {a.key: {"label": a.label, "base_dir": str(a.base_dir)} for a in files},
                "results": table.results,
                "failures": table.failures,
                "unavailable": table.unavailable,
                **report_a(files, table, args),
            }
            save(out, args.out)  # table (a) is kept even if (b) fails
        if "b" in args.only:
            scale = run_scale(procs, shape, args)
            out["b"] = {**scale, "rows": report_b(scale, shape)}
            save(out, args.out)
        if "c" in args.only:
            result = run_plugins(procs, shape, plugins, args)
            out["c"] = {**result, "rows": report_c(result, shape, plugins)}
            save(out, args.out)
        if "d" in args.only:
            out["d"] = run_scale_d(args)
            save(out, args.out)
        for letter, run, report in (
            ("e", run_pages, report_e),
            ("f", run_groups, report_f),
            ("g", run_snapshot, report_g),
        ):
            if letter in args.only:
                result = run(args)
                out[letter] = {**result, "rows": report(result)}
                save(out, args.out)
    finally:
        procs.close()
    meta["total_s"] = now() - started
    meta["load_average_after"] = os.getloadavg()
    took, load = meta["total_s"], meta["load_average_after"]
    print(f"\ntimed part took {took:.0f} s; load average (1, 5, 15 min) after: {load}")
    if (board_fingerprint(), module_fingerprint(FASTSCAN)) != code_before:
        meta["code_changed_during_run"] = True
        print("WARNING: src/sumlens/board or _fastscan.py changed during the run: run again.")
    save(out, args.out)
    print(f"raw timings written to {args.out}")
    return 0
