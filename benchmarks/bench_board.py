"""Dashboard speed: the sumlens board server against TensorBoard, its data server and MindInsight.

Tables from one run (``benchmarks/README.md``, section ``bench_board.py``, says what each
row times and why):

(a) *Time to every point.* On the anchors' files (the 46 MB TensorBoard file of
    ``bench_read.py``; MindSpore files of 100k steps x 1 tag and x 10 tags), each alone in a
    base directory: from launching a server until every tag is listed and every point can
    be fetched over its API. Contenders: ``sumlens serve`` (cold workspace, warm workspace,
    and an empty numba cache apart), ``tensorboard``, the Rust data server alone, MindInsight
    (capped). They run interleaved, once per round in a rotating order; ratios are taken per
    round and summarised by median and range.
(b) *Scale.* A base directory of 1,000 runs x 10 tags x 1,000 steps plus 10 runs of one
    1M-point series (both formats, 20M points): first data served after a cold start, warm
    re-open, the scalars API on a 1M-point series, the server's peak memory; then, in
    Chromium driven by Playwright over 10,000 small runs: every run listed, first paint of
    the run list, scrolling.
(d) *Many tags, many runs* (issue 26), against TensorBoard in interleaved rounds: 1 run x
    12,345 tags x 50 steps (every tag listed, one series served) and 1,000 runs x 10 tags
    x 200 steps (every run loaded), cold starts of both; 10,000 tiny runs fully loaded
    (sumlens alone: under 5 s); and the CPU share of a server idling over 20,000 empty
    sub-directories. ``--before SRC`` adds another checkout's sumlens as a contender.
(e)-(g) *Comparing runs* (issue 30): (e) in Chromium, the scalars page of 1 run x 12,345
    tags x 1,000 steps until its tag groups are listed and the first screen of charts
    drawn, against TensorBoard's Time Series page on the same run, both servers loaded,
    interleaved rounds; (f) the groups request over 100 runs in 10 groups with std bands
    over 10,000 steps each (p95 < 100 ms); (g) a 50-run snapshot file's size and open time.

Usage: ``.venv/bin/python benchmarks/bench_board.py [--quick] [--only a|efg|...] [--rounds 5]``.
Data is generated once under ``benchmarks/data/board/``; raw timings go to
``benchmarks/results/bench_board.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import _page_workloads
import bench_snapshot
import httpx
import idle_workloads
import numpy as np
import orjson
import scale_workloads
from _browser import CHROMIUM, CHROMIUM_ARGS
from _data import (
    DATA_DIR,
    FILE_NAMES,
    LOSS_TAG,
    RESULTS_DIR,
    TAGS,
    Progress,
    Spec,
    cached_dir,
    ensure_data,
    write_one_tag,
    write_ten_tags,
)
from _data import KINDS as FORMATS
from _data_server import Unavailable, server_binary, time_data_server
from _harness import (
    Table,
    Unit,
    commit_facts,
    fingerprint,
    fmt_s,
    fmt_x,
    machine_facts,
    module_fingerprint,
    run_rounds,
    same_round_pairs,
    serve_args,
    spread_rounds,
    summary,
    tensorboard_args,
    verdict,
)
from board_plugin_data import PluginShape, write_plugin_run
from playwright.sync_api import sync_playwright

BOARD_DATA = DATA_DIR / "board"
GENERATOR_VERSION = 1
"""Bump when the generated base directories change, so cached ones are rebuilt."""
SEED = 20_251_126
POLL_S = 0.02
"""Pause between polls of a listing (sumlens' /runs, TensorBoard's tags), for every server."""
SLOW_POLL_S = 0.25
"""Pause between polls of 1,010 runs once first data is served: a listing that large, asked
for every 20 ms, would slow the very load it waits for."""
MI_POLL_S = 0.25
"""Pause between MindInsight polls (each asks for every tag's samples; it loads for seconds)."""
LAUNCH_TIMEOUT_S = 300.0
STOP_GRACE_S = 30.0
"""Seconds a server gets to exit after SIGTERM (sumlens saves its state then) before SIGKILL."""
VIEW_POINTS = 2_000
"""Points per series of the dashboard's downsampled view (the scalars API's default)."""
MI_SAMPLES = 1_000
"""Scalar samples MindInsight keeps per tag (its MAX_SCALAR_STEP_SIZE_PER_TAG)."""
MINDINSIGHT_BIN = Path(
    os.environ.get("MINDINSIGHT_BIN", "~/.cache/sumlens/mindinsight-venv/bin/mindinsight")
).expanduser()
ROW_SELECTOR = ".run-row:not([hidden])"
"""The run list's rows as ``static/runs/runlist.js`` draws them (pooled; unused ones are hidden)."""

FASTSCAN = "sumlens.io._fastscan"
"""The reader's numba module: a change during the run means the servers compiled."""

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


# --------------------------------------------------------------------------------------
# Test data
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Anchor:
    """One file of table (a), alone in its base directory, and what it holds."""

    key: str
    base_dir: Path
    kind: str
    tags: tuple[str, ...]
    steps: int
    spec: Spec | None = None
    """``bench_read``'s spec of the TensorBoard file (what its data-server timing checks)."""

    @property
    def points(self) -> int:
        """Scalar points in the file."""
        return self.steps * len(self.tags)

    @property
    def last_step(self) -> int:
        """The step every series ends at."""
        return self.steps - 1

    @property
    def label(self) -> str:
        """What the file is, for the report."""
        size = sum(p.stat().st_size for p in self.base_dir.iterdir()) / 1e6
        what = "TensorBoard" if self.kind == "tensorboard" else "MindSpore"
        extra = (
            f" + {self.spec.histograms} histograms" if self.spec and self.spec.histograms else ""
        )
        return f"{what} {size:.2f} MB: {len(self.tags)} tag(s) x {self.steps:,} steps{extra}"


def anchors(quick: bool) -> list[Anchor]:
    """The three files of table (a), generated if missing (``--quick``: 2,000 steps)."""
    spec = Spec(steps=2_000, histograms=4) if quick else Spec()
    data = ensure_data("quick" if quick else "full", spec)
    steps = spec.steps

    def build(staging: Path) -> None:
        (staging / "ms1").mkdir()
        write_one_tag(staging / "ms1" / FILE_NAMES["summary"], "summary", steps, SEED)
        (staging / "ms10").mkdir()
        write_ten_tags(staging / "ms10" / FILE_NAMES["summary"], "summary", Spec(steps, 0))

    root = cached_dir(
        BOARD_DATA / f"anchors-{steps}", {"generator": GENERATOR_VERSION, "steps": steps}, build
    )
    return [
        Anchor("tb", data.tb_logdir, "tensorboard", TAGS, steps, spec),
        Anchor("ms1", root / "ms1", "summary", (LOSS_TAG,), steps),
        Anchor("ms10", root / "ms10", "summary", TAGS, steps),
    ]


@dataclass(frozen=True)
class Shape:
    """Sizes of table (b)'s base directories; half the runs of each kind are TensorBoard."""

    small_runs: int = 500
    """Runs per format of ``len(TAGS)`` tags x ``small_steps``."""
    small_steps: int = 1_000
    big_runs: int = 5
    """Runs per format of one series of ``big_steps`` points."""
    big_steps: int = 1_000_000
    browser_runs: int = 10_000
    """Runs (all formats) of the browser's base directory, one tag x ``browser_steps``."""
    browser_steps: int = 10

    def scale_points(self) -> dict[str, int]:
        """Run id -> points, for every run of the scale base directory."""
        points = {}
        for fmt in FORMATS:
            for i in range(self.small_runs):
                points[f"./small/{fmt}/r{i:04d}"] = len(TAGS) * self.small_steps
            for i in range(self.big_runs):
                points[f"./big/{fmt}/r{i}"] = self.big_steps
        return points

    def browser_name(self, i: int) -> str:
        """The directory name of the browser base directory's ``i``-th run."""
        return f"r{i:05d}"

    def big_ids(self) -> list[str]:
        """The runs holding one ``big_steps``-point series, TB and MindSpore alternating."""
        return [f"./big/{fmt}/r{i}" for i in range(self.big_runs) for fmt in FORMATS]


FULL_SHAPE = Shape()
QUICK_SHAPE = Shape(small_runs=10, small_steps=100, big_runs=1, big_steps=20_000, browser_runs=300)


def scale_dir(shape: Shape) -> Path:
    """The scale base directory (``small/{tb,ms}/rNNNN``, ``big/{tb,ms}/rN``), cached."""

    def build(staging: Path) -> None:
        runs = 2 * (shape.small_runs + shape.big_runs)
        progress = Progress(runs, "scale runs written")
        for fmt, kind in FORMATS.items():
            for i in range(shape.small_runs):
                run = staging / "small" / fmt / f"r{i:04d}"
                run.mkdir(parents=True)
                write_ten_tags(run / FILE_NAMES[kind], kind, Spec(shape.small_steps, 0, seed=i))
                progress.step(len(TAGS) * shape.small_steps)
        for fmt, kind in FORMATS.items():
            for i in range(shape.big_runs):
                run = staging / "big" / fmt / f"r{i}"
                run.mkdir(parents=True)
                write_one_tag(run / FILE_NAMES[kind], kind, shape.big_steps, SEED + i)
                progress.step(shape.big_steps)

    wanted = {"generator": GENERATOR_VERSION, "shape": asdict(shape), "what": "scale"}
    name = f"scale-{shape.small_runs}x{shape.small_steps}-{shape.big_runs}x{shape.big_steps}"
    return cached_dir(BOARD_DATA / name, wanted, build)


def browser_dir(shape: Shape) -> Path:
    """The browser's base directory: ``rNNNNN`` runs of one tag, TB and MindSpore alternating."""

    def build(staging: Path) -> None:
        progress = Progress(shape.browser_runs, "browser runs written")
        for i in range(shape.browser_runs):
            kind = "tensorboard" if i % 2 == 0 else "summary"
            run = staging / shape.browser_name(i)
            run.mkdir()
            write_one_tag(run / FILE_NAMES[kind], kind, shape.browser_steps, SEED + i)
            progress.step(shape.browser_steps)

    wanted = {"generator": GENERATOR_VERSION, "shape": asdict(shape), "what": "browser"}
    return cached_dir(
        BOARD_DATA / f"browser-{shape.browser_runs}x{shape.browser_steps}", wanted, build
    )


# --------------------------------------------------------------------------------------
# Launching servers
# --------------------------------------------------------------------------------------


class Processes:
    """Every server this run starts: fresh ports, one log each, and an end for all of them.

    Each process leads a session of its own, so whatever it starts (TensorBoard's data
    server, sumlens' kernel compiler) is ended with it; :meth:`close` ends what is left,
    MindInsight included, even when the benchmark fails.
    """

    def __init__(self) -> None:
        self.log_dir = Path(tempfile.mkdtemp(prefix="bench-board-logs-"))
        self.mindinsight_ports: set[int] = set()
        self._live: list[subprocess.Popen[bytes]] = []
        self._logs: dict[int, Path] = {}
        self._ports: set[int] = set()

    def port(self) -> int:
        """A free port on 127.0.0.1, never handed out before in this run."""
        while True:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            if port not in self._ports:
                self._ports.add(port)
                return port

    def start(
        self, name: str, args: Sequence[str], env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """Start ``args`` with its output in a log file of its own."""
        log = self.log_dir / f"{len(self._logs):03d}-{name}.log"
        with open(log, "wb") as handle:
            proc = subprocess.Popen(
                list(args),
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        self._logs[proc.pid] = log
        self._live.append(proc)
        return proc

    def log_tail(self, proc: subprocess.Popen[bytes], lines: int = 20) -> str:
        """The last lines ``proc`` printed."""
        text = self._logs[proc.pid].read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def end(
        self, proc: subprocess.Popen[bytes], group: bool = False, grace: float = STOP_GRACE_S
    ) -> float:
        """SIGTERM ``proc`` (its whole group if ``group``), SIGKILL what is left after ``grace``.

        Returns the seconds ``proc`` took to exit. sumlens gets SIGTERM alone (it saves its
        state then); the rest of its group (a kernel compiler) is killed afterwards.
        """
        started = time.perf_counter()
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                if group:
                    os.killpg(proc.pid, signal.SIGTERM)
                else:
                    proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace)
        took = time.perf_counter() - started
        with contextlib.suppress(ProcessLookupError):  # the group is gone once all exited
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if proc in self._live:
            self._live.remove(proc)
        return took

    def close(self) -> None:
        """End every process still running and remove the logs."""
        for port in sorted(self.mindinsight_ports):
            stop_mindinsight(port)
        for proc in list(self._live):
            self.end(proc, group=True, grace=5.0)
        shutil.rmtree(self.log_dir, ignore_errors=True)


class Waiter:
    """Paces a polling loop: fails as soon as the server exited, or once time is up."""

    def __init__(
        self,
        procs: Processes,
        proc: subprocess.Popen[bytes] | None,
        name: str,
        started: float,
        timeout: float,
    ) -> None:
        self.procs, self.proc, self.name = procs, proc, name
        self.started, self.timeout = started, timeout

    def pause(self, seconds: float) -> None:
        """Sleep ``seconds``, unless the server died or the deadline passed (then raise)."""
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(
                f"{self.name} exited with status {self.proc.returncode}; its output ends:\n"
                + self.procs.log_tail(self.proc)
            )
        if time.perf_counter() - self.started > self.timeout:
            raise TimeoutError(f"{self.name}: not done after {self.timeout:.0f} s")
        time.sleep(seconds)


def http(port: int, prefix: str = "") -> httpx.Client:
    """A client of a server on 127.0.0.1 (no proxies from the environment)."""
    return httpx.Client(base_url=f"http://127.0.0.1:{port}{prefix}", trust_env=False, timeout=120)


def fetch(client: httpx.Client, path: str, params: Any = None) -> Any:
    """The JSON body of ``GET path``, or None while the server does not answer it (yet)."""
    try:
        response = client.get(path, params=params)
    except httpx.TransportError:
        return None
    if response.status_code != 200:
        return None
    return orjson.loads(response.content)


def wait_listed(
    client: httpx.Client, path: str, done: Callable[[Any], bool], waiter: Waiter
) -> tuple[Any, float, float]:
    """Poll ``path`` every ``POLL_S`` until ``done(body)``; the last body, when the server
    first answered and when ``done`` held (``time.perf_counter()`` values)."""
    answered = None
    while True:
        body = fetch(client, path)
        if body is not None:
            answered = answered or time.perf_counter()
            if done(body):
                return body, answered, time.perf_counter()
        waiter.pause(POLL_S)


def read_status_kb(pid: int, field_name: str) -> int | None:
    """A ``/proc/PID/status`` memory field (``VmHWM``, ``VmRSS``) in kB; None once gone."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


# --------------------------------------------------------------------------------------
# Table (a): time until every point is served
# --------------------------------------------------------------------------------------


def complete(steps: Sequence[int], anchor: Anchor) -> bool:
    """Whether ``steps`` are the whole series of one of ``anchor``'s tags."""
    return len(steps) == anchor.steps and steps[0] == 0 and steps[-1] == anchor.last_step


def fetch_every_point(tags: Sequence[str], served: Callable[[str], bool], waiter: Waiter) -> int:
    """Ask for each tag until ``served(tag)`` says its whole series came; the requests made."""
    pending = list(tags)
    requests = 0
    while True:
        requests += len(pending)
        pending = [tag for tag in pending if not served(tag)]
        if not pending:
            return requests
        waiter.pause(POLL_S)


def sumlens_listed(body: dict[str, Any], anchor: Anchor) -> bool:
    """``/api/v1/runs`` lists the one run ready, with every tag and every point.

    Its ``loading`` flag is not asked: that flag can stay true after the load (see
    :func:`scale_warm`), and a ready run with all its points is what a client needs.
    """
    runs = body.get("runs", [])
    if len(runs) != 1:
        return False
    run = runs[0]
    return (
        run["status"] == "ready"
        and sorted(run["tags"].get("scalar", [])) == sorted(anchor.tags)
        and run["points"] == anchor.points
    )


def time_sumlens(
    procs: Processes, anchor: Anchor, workspace: Path, env: dict[str, str]
) -> dict[str, Any]:
    """Launch ``sumlens serve``; time it until every point of ``anchor`` is served.

    Done when ``/api/v1/runs`` lists the run ready with all its tags and points, and
    ``/api/v1/scalars/download?run=./&tag=T&format=json`` (full resolution) returned every
    tag's whole series. Afterwards (untimed) one downsampled request of every tag, the
    dashboard's first view, is timed for information.
    """
    port = procs.port()
    started = time.perf_counter()
    proc = procs.start("sumlens", serve_args(anchor.base_dir, port, workspace), env)
    try:
        waiter = Waiter(procs, proc, "sumlens serve", started, LAUNCH_TIMEOUT_S)
        with http(port) as client:
            body, answered, listed = wait_listed(
                client, "/api/v1/runs", lambda got: sumlens_listed(got, anchor), waiter
            )

            def served(tag: str) -> bool:
                params = {"run": "./", "tag": tag, "format": "json"}
                got = fetch(client, "/api/v1/scalars/download", params)
                series = got["series"] if got else []
                return len(series) == 1 and complete(series[0]["step"], anchor)

            requests = fetch_every_point(anchor.tags, served, waiter)
            done = time.perf_counter()
            view = fetch(client, "/api/v1/scalars", {"run": "./", "points": VIEW_POINTS})
            view_s = time.perf_counter() - done
            totals = [series["total"] for series in view["series"]] if view else []
            if totals != [anchor.steps] * len(anchor.tags):
                raise AssertionError(f"sumlens: the downsampled view is wrong: {str(view)[:300]}")
    finally:
        stop_s = procs.end(proc)
    return {
        "seconds": done - started,
        "answered_s": answered - started,
        "listed_s": listed - started,
        "engine": body["engine"],
        "requests": requests,
        "view_s": view_s,
        "stop_s": stop_s,
    }


def sumlens_pair(procs: Processes, anchor: Anchor) -> dict[str, dict[str, Any]]:
    """sumlens over ``anchor`` in a new workspace (cold), then again over it (warm)."""
    workspace = Path(tempfile.mkdtemp(prefix="bench-board-ws-"))
    try:
        env = dict(os.environ)
        cold = time_sumlens(procs, anchor, workspace, env)
        warm = time_sumlens(procs, anchor, workspace, env)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return {f"{anchor.key}/sumlens_cold": cold, f"{anchor.key}/sumlens_warm": warm}


def sumlens_empty_numba(procs: Processes, anchor: Anchor) -> dict[str, dict[str, Any]]:
    """sumlens with a new workspace and an EMPTY numba cache (the first start after install)."""
    workspace = Path(tempfile.mkdtemp(prefix="bench-board-ws-"))
    cache = Path(tempfile.mkdtemp(prefix="bench-board-numba-"))
    try:
        env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
        result = time_sumlens(procs, anchor, workspace, env)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    return {f"{anchor.key}/sumlens_nonumba": result}


def time_tensorboard(procs: Processes, anchor: Anchor) -> dict[str, dict[str, Any]]:
    """Launch ``tensorboard``; time it until its scalars route serves every point.

    ``--samples_per_plugin scalars=N`` with N = points per tag: TensorBoard 2.21 loads
    through the Rust data server by default, and there ``scalars=0`` ("all") makes the
    scalars plugin ask the server for 0 points per tag, so it serves none.
    """
    port = procs.port()
    args = tensorboard_args(anchor.base_dir, port)
    args += ["--samples_per_plugin", f"scalars={anchor.steps}"]
    started = time.perf_counter()
    proc = procs.start("tensorboard", args)
    try:
        waiter = Waiter(procs, proc, "tensorboard", started, LAUNCH_TIMEOUT_S)
        with http(port) as client:
            _, answered, listed = wait_listed(
                client,
                "/data/plugin/scalars/tags",
                lambda got: set(got.get(".", {})) >= set(anchor.tags),
                waiter,
            )

            def served(tag: str) -> bool:
                rows = fetch(client, "/data/plugin/scalars/scalars", {"run": ".", "tag": tag})
                return bool(rows) and complete([row[1] for row in rows], anchor)

            requests = fetch_every_point(anchor.tags, served, waiter)
            done = time.perf_counter()
    finally:
        procs.end(proc, group=True)
    result = {
        "seconds": done - started,
        "answered_s": answered - started,
        "listed_s": listed - started,
        "requests": requests,
    }
    return {f"{anchor.key}/tensorboard": result}


def time_data_server_alone(anchor: Anchor) -> dict[str, dict[str, Any]]:
    """The Rust data server alone, over gRPC, as ``bench_read`` times it (its own cleanup)."""
    assert anchor.spec is not None
    return {f"{anchor.key}/data_server": time_data_server(anchor.base_dir, anchor.spec)}


def mindinsight_env() -> dict[str, str]:
    """MindInsight's start command needs its venv's ``gunicorn`` on PATH."""
    return {**os.environ, "PATH": f"{MINDINSIGHT_BIN.parent}{os.pathsep}{os.environ['PATH']}"}


def stop_mindinsight(port: int) -> str | None:
    """``mindinsight stop --port PORT``; None when it stopped, else what went wrong."""
    try:
        done = subprocess.run(
            [str(MINDINSIGHT_BIN), "stop", "--port", str(port)],
            env=mindinsight_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"mindinsight stop --port {port} took over 60 s"
    if done.returncode != 0:
        return f"mindinsight stop --port {port}: {(done.stdout + done.stderr)[-300:]}"
    return None


def mindinsight_served(client: httpx.Client, anchor: Anchor) -> bool:
    """Whether MindInsight lists every tag and serves its samples up to the last step."""
    wanted = [f"{tag}/scalar" for tag in anchor.tags]  # its names of scalar tags
    params = {"train_id": "./", "manual_update": "true"}  # also asks it to load the job
    plugins = fetch(client, "/datavisual/plugins", params) or {}
    if not set(plugins.get("plugins", {}).get("scalar", [])) >= set(wanted):
        return False
    for tag in wanted:
        got = fetch(client, "/datavisual/scalar/metadata", {"train_id": "./", "tag": tag}) or {}
        samples = got.get("metadatas") or []
        if len(samples) != min(anchor.steps, MI_SAMPLES) or samples[-1]["step"] != anchor.last_step:
            return False
    return True


def time_mindinsight(procs: Processes, anchor: Anchor, cap: float) -> dict[str, dict[str, Any]]:
    """``mindinsight start``, then its REST API until every tag's scalars are served.

    MindInsight keeps ``MI_SAMPLES`` samples per tag (reservoir sampling that always keeps
    the newest), so "served" means: every tag listed, and each tag's
    ``/datavisual/scalar/metadata`` holds ``min(steps, MI_SAMPLES)`` samples ending at the
    last step. Capped at ``cap`` seconds (reported as "> cap"); stopped in every case.
    """
    port = procs.port()
    workspace = Path(tempfile.mkdtemp(prefix="bench-board-mi-"))
    procs.mindinsight_ports.add(port)
    started = time.perf_counter()
    try:
        args = [str(MINDINSIGHT_BIN), "start", "--summary-base-dir", str(anchor.base_dir)]
        args += ["--port", str(port), "--workspace", str(workspace)]
        launched = subprocess.run(
            args, env=mindinsight_env(), capture_output=True, text=True, timeout=cap, check=False
        )
        if launched.returncode != 0:
            raise RuntimeError(f"mindinsight start failed: {launched.stdout[-500:]}")
        start_s = time.perf_counter() - started
        with http(port, "/v1/mindinsight") as client:
            while time.perf_counter() - started < cap:
                if mindinsight_served(client, anchor):
                    result = {"seconds": time.perf_counter() - started, "timed_out": False}
                    break
                time.sleep(MI_POLL_S)
            else:
                result = {"seconds": None, "timed_out": True, "cap_s": cap}
    finally:
        problem = stop_mindinsight(port)
        procs.mindinsight_ports.discard(port)
        shutil.rmtree(workspace, ignore_errors=True)
    result.update(start_s=start_s, stop_problem=problem)
    return {f"{anchor.key}/mindinsight": result}


IMPORT_CODE = "import sumlens.board.server.serve"


def time_imports() -> dict[str, dict[str, Any]]:
    """Info: a fresh interpreter importing the server's modules, and an empty one."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", IMPORT_CODE], check=True)
    middle = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    done = time.perf_counter()
    return {"info/import": {"seconds": middle - started, "python_s": done - middle}}


def build_units(
    procs: Processes, files: list[Anchor], args: argparse.Namespace, table: Table
) -> list[Unit]:
    """The contenders of table (a) and the rounds each runs in."""
    every = set(range(args.rounds))
    mi_rounds = spread_rounds(args.mi_rounds, args.rounds)
    cold_rounds = spread_rounds(args.cold_numba_rounds, args.rounds, args.rounds // 2)
    units = [Unit("info/import", time_imports, every)]
    for anchor in files:
        units.append(Unit(f"{anchor.key}/sumlens", lambda a=anchor: sumlens_pair(procs, a), every))
        units.append(
            Unit(
                f"{anchor.key}/sumlens_nonumba",
                lambda a=anchor: sumlens_empty_numba(procs, a),
                cold_rounds,
            )
        )
        if anchor.kind == "tensorboard":
            units.append(
                Unit(
                    f"{anchor.key}/tensorboard", lambda a=anchor: time_tensorboard(procs, a), every
                )
            )
            try:
                server_binary()
            except (ImportError, Unavailable) as err:
                table.unavailable[f"{anchor.key}/data_server"] = f"no data server: {err}"
            else:
                units.append(
                    Unit(
                        f"{anchor.key}/data_server",
                        lambda a=anchor: time_data_server_alone(a),
                        every,
                    )
                )
        elif not os.access(MINDINSIGHT_BIN, os.X_OK):
            table.unavailable[f"{anchor.key}/mindinsight"] = f"{MINDINSIGHT_BIN} not found"
        else:
            units.append(
                Unit(
                    f"{anchor.key}/mindinsight",
                    lambda a=anchor: time_mindinsight(procs, a, args.mi_timeout),
                    mi_rounds,
                )
            )
    return units


def _brief(result: dict[str, Any]) -> str:
    """A result's seconds for the progress line."""
    if result.get("timed_out"):
        return f"> {result['cap_s']:.0f}"
    return f"{result['seconds']:.2f}"


ROW_LABELS = {
    "sumlens_cold": "sumlens serve, cold workspace",
    "sumlens_warm": "sumlens serve, warm workspace (2nd start)",
    "sumlens_nonumba": "sumlens serve, cold workspace + EMPTY numba cache",
    "tensorboard": "tensorboard (whole product, HTTP)",
    "data_server": "tensorboard-data-server alone (gRPC)",
    "mindinsight": "MindInsight (HTTP, 1,000 samples/tag)",
}
SHORT_NAMES = {
    "sumlens_cold": "sumlens cold",
    "sumlens_warm": "sumlens warm",
    "sumlens_nonumba": "sumlens empty numba cache",
    "tensorboard": "TensorBoard",
    "data_server": "data server",
    "mindinsight": "MindInsight",
}
RATIOS = (
    # anchor file, slower row, sumlens row, target key
    ("tb", "tensorboard", "sumlens_cold", "tensorboard"),
    ("tb", "tensorboard", "sumlens_warm", "tensorboard"),
    ("tb", "data_server", "sumlens_cold", "data_server"),
    ("tb", "data_server", "sumlens_warm", "data_server"),
    ("tb", "tensorboard", "sumlens_nonumba", None),
    ("tb", "data_server", "sumlens_nonumba", None),
    ("ms1", "mindinsight", "sumlens_cold", "mindinsight"),
    ("ms1", "mindinsight", "sumlens_warm", "mindinsight"),
    ("ms1", "mindinsight", "sumlens_nonumba", None),
    ("ms10", "mindinsight", "sumlens_cold", "mindinsight"),
    ("ms10", "mindinsight", "sumlens_warm", "mindinsight"),
    ("ms10", "mindinsight", "sumlens_nonumba", None),
)


def _seconds(result: dict[str, Any]) -> float:
    """A result's time; a capped MindInsight run counts as its cap (a lower bound)."""
    return result["cap_s"] if result.get("timed_out") else result["seconds"]


def _median_of(results: list[dict[str, Any]], key: str) -> float | None:
    """The median of ``key`` over the results that have it."""
    values = [r[key] for r in results if r.get(key) is not None]
    return statistics.median(values) if values else None


def _notes(key: str, results: list[dict[str, Any]]) -> str:
    """What else a row measured (medians): when the server answered, listed, engine."""
    parts = []
    answered, listed = _median_of(results, "answered_s"), _median_of(results, "listed_s")
    if answered is not None:
        parts.append(f"first answer {answered:.2f} s")
    if listed is not None:
        parts.append(f"all listed {listed:.2f} s")
    # a warm start reads nothing, so it names no engine (None)
    engines = sorted({r["engine"] for r in results if r.get("engine")})
    if engines:
        parts.append("engine " + "/".join(engines))
    view = _median_of(results, "view_s")
    if view is not None:
        parts.append(f"then a {VIEW_POINTS:,}-point view of every tag {view * 1000:.0f} ms")
    if key.endswith("data_server"):
        parts.append(f"run listed {_median_of(results, 'run_listed_s'):.2f} s")
    if key.endswith("mindinsight"):
        parts.append(f"`start` command {_median_of(results, 'start_s'):.1f} s")
        if any(r.get("timed_out") for r in results):
            parts.append(f"capped at {results[0]['cap_s']:.0f} s")
        parts += [f"STOP FAILED: {r['stop_problem']}" for r in results if r.get("stop_problem")]
    return "; ".join(parts)


def report_a(files: list[Anchor], table: Table, args: argparse.Namespace) -> dict[str, Any]:
    """Print table (a) and its per-round ratios; return them for the JSON."""
    print()
    print(
        "Table (a): seconds from launching the server until every tag is listed and every "
        f"point can be fetched ({args.rounds} rounds, contenders interleaved)"
    )
    print()
    print("| file | server | runs | median s | min - max s | also measured (medians) |")
    print("|---|---|---:|---:|---:|---|")
    rows = []
    for anchor in files:
        for row, label in ROW_LABELS.items():
            key = f"{anchor.key}/{row}"
            results = table.results.get(key, [])
            if key in table.unavailable:
                print(f"| {anchor.key} | {label} | - | unavailable | | {table.unavailable[key]} |")
                continue
            if not results:
                continue
            values = [_seconds(r) for r in results]
            capped = any(r.get("timed_out") for r in results)
            gt = "> " if capped else ""
            stats = summary(values)
            assert stats is not None
            print(
                f"| {anchor.key} | {label} | {stats['n']} | {gt}{fmt_s(stats['median'])} | "
                f"{fmt_s(stats['min'])} - {gt}{fmt_s(stats['max'])} | {_notes(key, results)} |"
            )
            rows.append({"key": key, "label": label, "summary": stats, "capped": capped})
    info = table.results.get("info/import", [])
    if info:
        imp, bare = _median_of(info, "seconds"), _median_of(info, "python_s")
        print(
            f"\n  info: `python -c '{IMPORT_CODE}'` {imp:.2f} s (an empty interpreter "
            f"{bare:.2f} s), medians of {len(info)} rounds"
        )
    for name, messages in table.failures.items():
        print(f"  FAILED {name}: " + " | ".join(messages))
    for anchor in files:
        print(f"  {anchor.key}: {anchor.label} ({anchor.base_dir})")

    print()
    print("Ratios (other server's time / sumlens' time, per round, same round only):")
    print("| file | ratio | target | median | min - max | rounds | verdict |")
    print("|---|---|---:|---:|---:|---:|---|")
    ratios = []
    for file_key, slow, fast, target_key in RATIOS:
        pairs = same_round_pairs(
            table.results.get(f"{file_key}/{slow}", []), table.results.get(f"{file_key}/{fast}", [])
        )
        if not pairs:
            continue
        values = [_seconds(s) / f["seconds"] for s, f in pairs]
        capped = any(s.get("timed_out") for s, _ in pairs)
        target = TARGETS[target_key] if target_key else None
        stats = summary(values)
        assert stats is not None
        what = f"{SHORT_NAMES[slow]} / {SHORT_NAMES[fast]}"
        gt = "> " if capped else ""
        target_text = f">= {target:g}x" if target else "-"
        outcome = verdict(values, target, capped)
        print(
            f"| {file_key} | {what} | {target_text} | {gt}{fmt_x(stats['median'])} | "
            f"{gt}{fmt_x(stats['min'])} - {gt}{fmt_x(stats['max'])} | {stats['n']} | "
            f"{outcome} |"
        )
        ratios.append(
            {
                "file": file_key,
                "numerator": slow,
                "denominator": fast,
                "target": target,
                "per_round": values,
                "lower_bound": capped,
                "summary": stats,
                "verdict": outcome,
            }
        )
    print()
    print(
        "Targets: sumlens >= 3x sooner than TensorBoard, >= 1.5x sooner than the data server "
        "alone, >= 100x sooner than MindInsight. Ratios under 1.3x are ties on these machines."
    )
    return {"rows": rows, "ratios": ratios}


# --------------------------------------------------------------------------------------
# Table (b): scale
# --------------------------------------------------------------------------------------


def all_listed(body: dict[str, Any], expected: dict[str, int]) -> bool:
    """Every expected run listed ready with all its points."""
    runs = body.get("runs", [])
    if len(runs) != len(expected):
        return False
    return all(
        run["status"] == "ready" and expected.get(run["id"]) == run["points"] for run in runs
    )


def first_data(client: httpx.Client, body: dict[str, Any]) -> str | None:
    """The id of a listed run whose scalars the API serves, if there is one yet."""
    for run in body.get("runs", []):
        if run["points"] > 0:
            got = fetch(client, "/api/v1/scalars", {"run": run["id"], "points": VIEW_POINTS})
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
        started = time.perf_counter()
        response = client.get("/api/v1/scalars", params=params)
        seconds.append(time.perf_counter() - started)
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
    started = time.perf_counter()
    proc = procs.start("sumlens-scale", serve_args(root, port, workspace))
    first_at = None
    first_run = None
    rss_kb = 0
    try:
        waiter = Waiter(procs, proc, "sumlens serve (scale)", started, args.scale_timeout)
        with http(port) as client:
            while True:
                body = fetch(client, "/api/v1/runs")
                rss_kb = max(rss_kb, read_status_kb(proc.pid, "VmRSS") or 0)
                if body is not None:
                    if first_at is None:
                        first_run = first_data(client, body)
                        first_at = time.perf_counter() if first_run else None
                        if first_at is not None:
                            print(f"  first data after {first_at - started:.2f} s", flush=True)
                    if all_listed(body, expected):
                        break
                waiter.pause(POLL_S if first_at is None else SLOW_POLL_S)
            ready_at = time.perf_counter()
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
    started = time.perf_counter()
    proc = procs.start("sumlens-reopen", serve_args(root, port, workspace))
    try:
        waiter = Waiter(procs, proc, "sumlens serve (re-open)", started, LAUNCH_TIMEOUT_S)
        with http(port) as client:
            _, answered, listed = wait_listed(
                client, "/api/v1/runs", lambda got: all_listed(got, expected), waiter
            )
            while (fetch(client, "/api/v1/health") or {}).get("loading", True):
                waiter.pause(POLL_S)
            idle = time.perf_counter()
            stale = bool((fetch(client, "/api/v1/runs") or {}).get("loading"))
    finally:
        stop_s = procs.end(proc)
    return {
        "seconds": listed - started,
        "answered_s": answered - started,
        "idle_s": idle - started,
        "runs_still_loading": stale,
        "stop_s": stop_s,
    }


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


RESOURCES_JS = """() => [
  ...performance.getEntriesByType('navigation'),
  ...performance.getEntriesByType('resource'),
].map((e) => [e.name.split('/').pop() || '/', Math.round(e.startTime), Math.round(e.responseEnd)])
"""
"""What the page fetched: ``[name, start ms, response end ms]`` since navigation started
(where the first paint's time went)."""


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
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
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
    started = time.perf_counter()
    proc = procs.start("sumlens-browser", serve_args(root, port, workspace))
    try:
        waiter = Waiter(procs, proc, "sumlens serve (browser)", started, LAUNCH_TIMEOUT_S)
        with http(port) as client:
            while fetch(client, "/api/v1/health") is None:
                waiter.pause(POLL_S)
            answered = time.perf_counter() - started
            page.goto(f"http://127.0.0.1:{port}/", wait_until="commit")
            cold_paint = wait_first_row(page, args.browser_timeout)
            cold_requests = page.evaluate(RESOURCES_JS)
            while not page.evaluate(LISTED_JS, [args.row_selector, shape.browser_runs]):
                waiter.pause(0.05)
            listed = time.perf_counter() - started
            while not all_listed(fetch(client, "/api/v1/runs") or {}, expected):
                waiter.pause(SLOW_POLL_S)
            loaded = time.perf_counter() - started
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


def percentile_ms(seconds: list[float], q: float) -> float:
    """The ``q``-th percentile of ``seconds``, in milliseconds."""
    return float(np.percentile(np.asarray(seconds) * 1000, q))


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
    rows: list[dict[str, Any]] = []
    notes: list[str] = []

    def row(what: str, target: str, measured: str, met: bool | None, value: Any) -> None:
        outcome = "" if met is None else ("met" if met else "NOT MET")
        print(f"| {what} | {target} | {measured} | {outcome} |")
        rows.append({"what": what, "target": target, "value": value, "met": met})

    def spread_s(values: list[float]) -> str:
        low, mid, high = (fmt_s(v) for v in (min(values), statistics.median(values), max(values)))
        return f"{mid} s ({low} - {high}, n={len(values)})"

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
            spread_s(first),
            max(first) < TARGETS["first_data_s"],
            first,
        )
        loaded = [c["all_loaded_s"] for c in cold]
        row(
            f"every run loaded (cold; engine {cold[0]['engine']})",
            "-",
            spread_s(loaded),
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
            spread_s(listed),
            statistics.median(listed) < TARGETS["warm_reopen_s"],
            listed,
        )
        answered = [w["answered_s"] for w in warm]
        row("warm re-open: first HTTP answer", "-", spread_s(answered), None, answered)
        idle = [w["idle_s"] for w in warm]
        row(
            "warm re-open: first pass over the files done (health: loading false)",
            "-",
            spread_s(idle),
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
    return rows


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
        q50, q95 = np.percentile(done, 50), np.percentile(done, 95)
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


# --------------------------------------------------------------------------------------
# Table (c): a run with images and histograms
# --------------------------------------------------------------------------------------

PLUGIN_RUN = "plugins"
"""The plugin run's directory (and run id ``./plugins``) in its base directories."""
FULL_PLUGINS = PluginShape()
QUICK_PLUGINS = PluginShape(steps=50, image_tags=4, histogram_tags=20)
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


def plugin_dir(plugins: PluginShape) -> Path:
    """A base directory holding only the plugin run (``./plugins``, one MindSpore file)."""

    def build(staging: Path) -> None:
        run = staging / PLUGIN_RUN
        run.mkdir()
        print(f"  writing {plugins} ...", flush=True)
        write_plugin_run(str(run / FILE_NAMES["summary"]), plugins, SEED)

    wanted = {"generator": GENERATOR_VERSION, "shape": asdict(plugins), "what": "plugins"}
    name = f"plugins-{plugins.steps}x{plugins.image_tags}x{plugins.histogram_tags}"
    return cached_dir(BOARD_DATA / name, wanted, build)


def scale_plugins_dir(shape: Shape, plugins: PluginShape) -> Path:
    """Table (b)'s scale base directory with the plugin run added (hard links, no copies)."""
    sources = [scale_dir(shape), plugin_dir(plugins)]

    def build(staging: Path) -> None:
        for source in sources:
            for path in source.rglob("*"):
                if path.is_file() and path.name != "manifest.json":
                    target = staging / path.relative_to(source)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.link(path, target)

    wanted = {
        "generator": GENERATOR_VERSION,
        "what": "scale+plugins",
        "sources": {s.name: json.loads((s / "manifest.json").read_text()) for s in sources},
    }
    return cached_dir(BOARD_DATA / f"{sources[0].name}+{sources[1].name}", wanted, build)


def plugin_queries(client: httpx.Client, plugins: PluginShape) -> int:
    """What the dashboard and the plugin views ask of the plugin run; the requests made.

    Every image tag's samples and newest picture, and the values of ``PLUGIN_QUERIES``
    histogram tags: so the peak memory includes serving them, not only loading.
    """
    tags = plugins.tags()
    run = f"./{PLUGIN_RUN}"
    requests = 0
    for tag in tags["image"]:
        listing = fetch(client, "/api/v1/samples", {"run": run, "plugin": "image", "tag": tag})
        if not listing or not listing["series"]:
            raise AssertionError(f"no image samples of {tag!r}: {str(listing)[:300]}")
        steps = listing["series"][0]["step"]
        picture = client.get("/api/v1/image", params={"run": run, "tag": tag, "step": steps[-1]})
        if picture.status_code != 200 or not picture.content.startswith(b"\x89PNG"):
            raise AssertionError(f"image {tag!r} at step {steps[-1]}: {picture.status_code}")
        requests += 2
    for tag in tags["histogram"][:PLUGIN_QUERIES]:
        got = fetch(client, "/api/v1/histograms", {"run": run, "tag": tag})
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
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
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
    started = time.perf_counter()
    proc = procs.start("sumlens-plugins", serve_args(root, port, workspace))
    try:
        waiter = Waiter(procs, proc, "sumlens serve (plugins)", started, args.scale_timeout)
        with http(port) as client:
            while not all_listed(fetch(client, "/api/v1/runs") or {}, expected):
                waiter.pause(SLOW_POLL_S)
            while (fetch(client, "/api/v1/health") or {}).get("loading", True):
                waiter.pause(SLOW_POLL_S)
            loaded_s = time.perf_counter() - started
            print(f"  everything loaded after {loaded_s:.1f} s", flush=True)
            listing = fetch(client, "/api/v1/runs") or {}
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
    rows: list[dict[str, Any]] = []

    def row(what: str, target: str, measured: str, met: bool | None, value: Any) -> None:
        outcome = "" if met is None else ("met" if met else "NOT MET")
        print(f"| {what} | {target} | {measured} | {outcome} |")
        rows.append({"what": what, "target": target, "value": value, "met": met})

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
    return rows


# --------------------------------------------------------------------------------------
# Run
# --------------------------------------------------------------------------------------


def board_fingerprint() -> str:
    """Of the dashboard's code and pages (another engineer edits them while we measure)."""
    root = Path(str(resources.files("sumlens.board")))
    return fingerprint(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def prime_numba(source: Path | None = None) -> None:
    """Fill this run's numba cache with the reader's kernels, so servers only load them
    (those of the checkout whose ``src`` folder is ``source``, when given)."""
    started = time.perf_counter()
    code = (
        "import sys\n"
        "from sumlens.io.kernels import READER_KERNELS\n"
        "sys.exit(not READER_KERNELS.wait(900))\n"
    )
    env = {**os.environ, **({"PYTHONPATH": str(source)} if source else {})}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    print(f"  numba cache ready ({time.perf_counter() - started:.1f} s)", flush=True)


def machine_meta() -> dict[str, Any]:
    """Versions, machine and commit, for the JSON."""
    mi_dists = sorted(MINDINSIGHT_BIN.parent.parent.glob("lib/python*/site-packages/mindinsight-*"))
    packages = ("sumlens", "numba", "fastapi", "uvicorn", "orjson", "httpx", "tensorboard")
    return {
        **machine_facts((*packages, "tensorboard-data-server", "playwright")),
        **commit_facts(),
        "mindinsight": mi_dists[0].name if mi_dists else None,
    }


# ---- (d) many tags, many runs -------------------------------------------------------------

SCALE_TARGET = 2.0
"""TensorBoard's time over sumlens' on the tags and runs workloads (issue 26)."""
TINY_TARGET_S = 5.0
"""Seconds for 10,000 tiny runs to be fully loaded after a cold start (issue 26)."""


def scale_units(args: argparse.Namespace) -> list[Unit]:
    """One unit per (contender, workload) of table (d): TensorBoard and sumlens (and the
    ``--before`` checkout's sumlens) on ``tags`` and ``runs``, sumlens on ``tiny``."""
    every = set(range(args.scale_d_rounds))
    before = {"PYTHONPATH": str(args.before)} if args.before else None
    units = []
    for name, workload in scale_workloads.WORKLOADS.items():
        contenders: list[tuple[str, Callable[[], dict[str, Any]]]] = [
            ("sumlens", functools.partial(scale_workloads.time_sumlens, workload))
        ]
        if before is not None:
            run_before = functools.partial(scale_workloads.time_sumlens, workload, before)
            contenders.append(("before", run_before))
        if name != "tiny":
            contenders.append(
                ("tensorboard", functools.partial(scale_workloads.time_tensorboard, workload))
            )
        for who, run in contenders:
            key = f"{name}/{who}"
            units.append(Unit(key, lambda run=run, key=key: {key: run()}, every))
    return units


def report_d(table: Table, idle: dict[str, list[float]]) -> list[dict[str, Any]]:
    """Print table (d): medians and ranges per row, per-round ratios against TensorBoard."""
    print("\n(d) many tags, many runs: seconds from launch (median, range), cold starts")
    rows = []
    for name in scale_workloads.WORKLOADS:
        for who in ("tensorboard", "before", "sumlens"):
            found = [r["seconds"] for r in table.results.get(f"{name}/{who}", [])]
            if not found:
                continue
            row = {"workload": name, "contender": who, **(summary(found) or {})}
            line = f"  {name:5} {who:12} {fmt_s(row['median'])} s ({fmt_s(row['min'])}-"
            line += f"{fmt_s(row['max'])})"
            tb = table.results.get(f"{name}/tensorboard", [])
            if who == "sumlens" and tb:
                ratios = [
                    slow["seconds"] / fast["seconds"]
                    for slow, fast in same_round_pairs(tb, table.results[f"{name}/sumlens"])
                ]
                row["ratio"] = summary(ratios)
                row["verdict"] = verdict(ratios, SCALE_TARGET)
                line += f"  TensorBoard / sumlens {fmt_x(statistics.median(ratios))}"
                line += f" ({fmt_x(min(ratios))}-{fmt_x(max(ratios))}): {row['verdict']}"
            if who == "sumlens" and name == "tiny":
                row["verdict"] = verdict([TINY_TARGET_S / s for s in found], 1.0)
                line += f"  under {TINY_TARGET_S:.0f} s: {row['verdict']}"
            print(line)
            rows.append(row)
    for who, shares in idle.items():
        median = statistics.median(shares)
        print(f"  idle over 20,000 empty directories, {who}: {median:.1%} of a core (median)")
        rows.append({"workload": "idle", "contender": who, **(summary(shares) or {})})
    return rows


def run_scale_d(args: argparse.Namespace) -> dict[str, Any]:
    """Table (d): the scale rounds, then the idle cost (sumlens, and ``--before``)."""
    for workload in scale_workloads.WORKLOADS.values():
        scale_workloads.ensure(workload)
    table = Table()
    run_rounds(scale_units(args), args.scale_d_rounds, table)
    idle: dict[str, list[float]] = {}
    tree = idle_workloads.empty_tree()
    sources = {"sumlens": None, **({"before": str(args.before)} if args.before else {})}
    for _ in range(args.idle_rounds):
        for who, source in sources.items():
            result = idle_workloads.idle_cpu_share(tree, pythonpath=source)
            idle.setdefault(who, []).append(result.share)
    return {
        "results": table.results,
        "failures": table.failures,
        "idle": idle,
        "rows": report_d(table, idle),
    }


# ---- (e), (f), (g) comparing runs (issue 30) ----------------------------------------------

GROUP_P95_TARGET_MS = 100.0
"""The groups request's p95 over 100 runs in 10 groups of 10,000 steps (issue 30)."""


def page_workload(quick: bool) -> scale_workloads.Workload:
    """The 12,345-tag run of (e): 1,000 steps, or table (d)'s 50-step one with ``--quick``."""
    return scale_workloads.WORKLOADS["tags"] if quick else _page_workloads.PAGE


def run_pages(args: argparse.Namespace) -> dict[str, Any]:
    """Table (e): both servers loaded over the same run, then per round (``--page-rounds``,
    order rotated) each one's scalars page opened in a fresh context of one Chromium."""
    workload = page_workload(args.quick)
    table = Table()
    with contextlib.ExitStack() as stack:
        sumlens_url, sumlens_ready = stack.enter_context(_page_workloads.serving_sumlens(workload))
        tb_url, tb_ready = stack.enter_context(
            scale_workloads.serving_tensorboard(workload, scale_workloads.TIMEOUT_S * 4)
        )
        playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        stack.callback(browser.close)
        units = [
            Unit(
                "page/sumlens",
                lambda: {"page/sumlens": _page_workloads.sumlens_page(browser, sumlens_url)},
                set(range(args.page_rounds)),
            ),
            Unit(
                "page/tensorboard",
                lambda: {"page/tensorboard": _page_workloads.tensorboard_page(browser, tb_url)},
                set(range(args.page_rounds)),
            ),
        ]
        run_rounds(units, args.page_rounds, table)
    return {
        "workload": asdict(workload),
        "ready_s": {"sumlens": sumlens_ready, "tensorboard": tb_ready},
        "results": table.results,
        "failures": table.failures,
    }


def report_e(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Print table (e): medians per server, per-round ratio TensorBoard / sumlens (> 1 is
    sumlens sooner)."""
    shape = result["workload"]
    print(
        f"\n(e) scalars page of 1 run x {shape['tags']:,} tags x {shape['steps']:,} steps in "
        "Chromium, servers loaded: seconds until the tag groups are listed and the first "
        "screen of charts drawn (median, range)"
    )
    rows = []
    results = result["results"]
    for who in ("tensorboard", "sumlens"):
        found = results.get(f"page/{who}", [])
        if not found:
            print(f"  {who:12} FAILED: {result['failures'].get(f'page/{who}')}")
            continue
        seconds = [r["seconds"] for r in found]
        row = {"contender": who, "ready_s": result["ready_s"][who], **(summary(seconds) or {})}
        first = found[0]
        line = f"  {who:12} {fmt_s(row['median'])} s ({fmt_s(row['min'])}-{fmt_s(row['max'])})"
        line += f"; {first['groups']} groups, {first['drawn']} charts on screen, "
        line += f"{first['fetched']} data requests; server loaded in {row['ready_s']:.1f} s"
        tb = results.get("page/tensorboard", [])
        if who == "sumlens" and tb:
            ratios = [s["seconds"] / f["seconds"] for s, f in same_round_pairs(tb, found)]
            row["ratio"] = summary(ratios)
            tie = verdict(ratios, None)
            row["verdict"] = verdict(ratios, 1.0) + (f"; {tie}" if tie else "")
            line += f"\n  TensorBoard / sumlens {fmt_x(statistics.median(ratios))} "
            line += f"({fmt_x(min(ratios))}-{fmt_x(max(ratios))}), sumlens sooner: "
            line += row["verdict"]
        print(line)
        rows.append(row)
    return rows


def run_groups(args: argparse.Namespace) -> dict[str, Any]:
    """Table (f): ``sumlens serve`` over 100 runs x 10,000 steps until loaded, then
    ``--group-requests`` groups requests (10 groups, mean and std band, smoothed, 1,000
    points) one after another; the first one apart (nothing computed before it)."""
    workload = _page_workloads.GROUPS
    with _page_workloads.serving_sumlens(workload) as (url, ready_s):
        first, _ = _page_workloads.group_latencies(url, 1)
        seconds, shape = _page_workloads.group_latencies(url, args.group_requests)
    return {
        "workload": asdict(workload),
        "ready_s": ready_s,
        "first_s": first[0],
        "seconds": seconds,
        "shape": shape,
    }


def report_f(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Print table (f): the groups request's p50 and p95 against its target."""
    shape, seconds = result["workload"], result["seconds"]
    p50, p95 = percentile_ms(seconds, 50), percentile_ms(seconds, 95)
    met = "met" if p95 < GROUP_P95_TARGET_MS else "NOT MET"
    got = result["shape"]
    print(
        f"\n(f) groups request, {shape['runs']} runs x {shape['steps']:,} steps in "
        f"{got['groups']} groups of {got['members']} (mean, std band, smoothing, "
        f"{got['points']} points each): p50 / p95 {p50:.1f} / {p95:.1f} ms "
        f"(n={len(seconds)}; first {result['first_s'] * 1000:.1f} ms); "
        f"p95 < {GROUP_P95_TARGET_MS:.0f} ms: {met}"
    )
    return [{"p50_ms": p50, "p95_ms": p95, "first_ms": result["first_s"] * 1000, "met": met}]


def run_snapshot(args: argparse.Namespace) -> dict[str, Any]:
    """Table (g): ``bench_snapshot``'s measure, 50 runs (5 with ``--quick``)."""
    runs, steps = (5, 1_000) if args.quick else (50, 5_000)
    result = bench_snapshot.measure(runs, 8, steps, args.snapshot_rounds)
    if result is None:
        raise RuntimeError("sumlens snapshot failed")
    return result


def report_g(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Print table (g): the file's size, the command's time, the opens."""
    print(f"\n(g) {bench_snapshot.describe(result)}")
    keys = ("file_bytes", "command_s", "open_first_screen_s", "open_all_charts_s")
    return [{key: result[key] for key in keys}]


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
    prime_numba()
    if args.before is not None:
        prime_numba(args.before)
    for anchor in files:  # page cache
        for path in anchor.base_dir.iterdir():
            path.read_bytes()
    code_before = board_fingerprint(), module_fingerprint(FASTSCAN)
    meta["load_average_before"] = os.getloadavg()
    print(f"load average (1, 5, 15 min) before: {meta['load_average_before']}", flush=True)
    procs = Processes()
    started = time.perf_counter()
    try:
        if files:
            table = Table()
            units = build_units(procs, files, args, table)
            run_rounds(units, args.rounds, table, brief=_brief)
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
    meta["total_s"] = time.perf_counter() - started
    meta["load_average_after"] = os.getloadavg()
    took, load = meta["total_s"], meta["load_average_after"]
    print(f"\ntimed part took {took:.0f} s; load average (1, 5, 15 min) after: {load}")
    if (board_fingerprint(), module_fingerprint(FASTSCAN)) != code_before:
        meta["code_changed_during_run"] = True
        print("WARNING: src/sumlens/board or _fastscan.py changed during the run: run again.")
    save(out, args.out)
    print(f"raw timings written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
