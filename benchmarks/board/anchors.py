"""Table (a) of ``bench_board``: from launching a server until every point of a file is
served: sumlens (cold and warm workspace, an empty numba cache apart), TensorBoard, its
Rust data server alone and MindInsight (capped), in interleaved rounds."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from benchmarks.board.base_dirs import Anchor
from benchmarks.board.common import LAUNCH_TIMEOUT_S, POLL_S, VIEW_POINTS, wait_listed
from benchmarks.data_server import Unavailable, server_binary, time_data_server
from benchmarks.harness.clock import now, poll_until
from benchmarks.harness.http import connect, get_json, local
from benchmarks.harness.rounds import Table, Unit, spread_rounds
from benchmarks.harness.servers import (
    Processes,
    Waiter,
    serve_args,
    start_mindinsight,
    stop_mindinsight,
    tensorboard_args,
)

MI_POLL_S = 0.25
"""Pause between MindInsight polls (each asks for every tag's samples; it loads for seconds)."""
MI_SAMPLES = 1_000
"""Scalar samples MindInsight keeps per tag (its MAX_SCALAR_STEP_SIZE_PER_TAG)."""
MINDINSIGHT_BIN = Path(
    os.environ.get("MINDINSIGHT_BIN", "~/.cache/sumlens/mindinsight-venv/bin/mindinsight")
).expanduser()


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
    :func:`benchmarks.board.scale.scale_warm`), and a ready run with all its points is what
    a client needs.
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
    started = now()
    proc = procs.start("sumlens", serve_args(anchor.base_dir, port, workspace), env)
    try:
        waiter = procs.waiter(proc, "sumlens serve", started, LAUNCH_TIMEOUT_S)
        with connect(local(port)) as client:
            body, answered, listed = wait_listed(
                client, "/api/v1/runs", lambda got: sumlens_listed(got, anchor), waiter
            )

            def served(tag: str) -> bool:
                params = {"run": "./", "tag": tag, "format": "json"}
                got = get_json(client, "/api/v1/scalars/download", params)
                series = got["series"] if got else []
                return len(series) == 1 and complete(series[0]["step"], anchor)

            requests = fetch_every_point(anchor.tags, served, waiter)
            done = now()
            view = get_json(client, "/api/v1/scalars", {"run": "./", "points": VIEW_POINTS})
            view_s = now() - done
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
    started = now()
    proc = procs.start("tensorboard", args)
    try:
        waiter = procs.waiter(proc, "tensorboard", started, LAUNCH_TIMEOUT_S)
        with connect(local(port)) as client:
            _, answered, listed = wait_listed(
                client,
                "/data/plugin/scalars/tags",
                lambda got: set(got.get(".", {})) >= set(anchor.tags),
                waiter,
            )

            def served(tag: str) -> bool:
                rows = get_json(client, "/data/plugin/scalars/scalars", {"run": ".", "tag": tag})
                return bool(rows) and complete([row[1] for row in rows], anchor)

            requests = fetch_every_point(anchor.tags, served, waiter)
            done = now()
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


def mindinsight_served(client: httpx.Client, anchor: Anchor) -> bool:
    """Whether MindInsight lists every tag and serves its samples up to the last step."""
    wanted = [f"{tag}/scalar" for tag in anchor.tags]  # its names of scalar tags
    params = {"train_id": "./", "manual_update": "true"}  # also asks it to load the job
    plugins = get_json(client, "/datavisual/plugins", params) or {}
    if not set(plugins.get("plugins", {}).get("scalar", [])) >= set(wanted):
        return False
    for tag in wanted:
        got = get_json(client, "/datavisual/scalar/metadata", {"train_id": "./", "tag": tag}) or {}
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
    procs.add_daemon(port, lambda: stop_mindinsight(MINDINSIGHT_BIN, port))
    started = now()
    try:
        start_mindinsight(MINDINSIGHT_BIN, anchor.base_dir, port, workspace, cap)
        start_s = now() - started
        with connect(local(port, "/v1/mindinsight")) as client:
            try:
                poll_until(
                    lambda: mindinsight_served(client, anchor), MI_POLL_S, cap - start_s, "MI"
                )
                result = {"seconds": now() - started, "timed_out": False}
            except TimeoutError:
                result = {"seconds": None, "timed_out": True, "cap_s": cap}
    finally:
        problem = stop_mindinsight(MINDINSIGHT_BIN, port)
        procs.remove_daemon(port)
        shutil.rmtree(workspace, ignore_errors=True)
    result.update(start_s=start_s, stop_problem=problem)
    return {f"{anchor.key}/mindinsight": result}


IMPORT_CODE = "import sumlens.board.server.serve"


def time_imports() -> dict[str, dict[str, Any]]:
    """Info: a fresh interpreter importing the server's modules, and an empty one."""
    started = now()
    subprocess.run([sys.executable, "-c", IMPORT_CODE], check=True)
    middle = now()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    done = now()
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


def brief(result: dict[str, Any]) -> str:
    """A result's seconds for the progress line."""
    if result.get("timed_out"):
        return f"> {result['cap_s']:.0f}"
    return f"{result['seconds']:.2f}"
