"""The three scale workloads of issue 26: many tags, many runs, many tiny runs.

Each is a base directory of TensorBoard event files written by sumlens' own
``SummaryRecord(file_format="tensorboard")``, generated once and cached under
``~/.cache/sumlens/bench/scale/`` (rebuilt when its manifest no longer matches):

* ``tags``: 1 run x 12,345 scalar tags x 50 steps; done when every tag is listed and one
  series is served whole;
* ``runs``: 1,000 runs x 10 tags x 200 steps; done when every run is listed with its tags
  (sumlens: ready, with every point);
* ``tiny``: 10,000 runs x 1 tag x 10 steps; done when every run is fully loaded (sumlens
  only: its target is an absolute time, under 5 s).

:func:`time_sumlens` and :func:`time_tensorboard` start a server as a fresh process and
time it from the launch until the workload's condition holds over HTTP (a cold start:
a new workspace for sumlens). ``bench_board``'s table (d) runs them in interleaved rounds.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from benchmarks.datasets import listing
from benchmarks.harness.clock import now
from benchmarks.harness.http import get_json
from benchmarks.harness.servers import free_port, serve_args, server_until, tensorboard_args
from sumlens import SummaryRecord

CACHE = Path("~/.cache/sumlens/bench/scale").expanduser()
GENERATOR_VERSION = 1
"""Bump when the generated directories change, so cached ones are rebuilt."""
TIMEOUT_S = 300.0
"""Seconds a server gets to reach a workload's condition before the timing fails."""


@dataclass(frozen=True)
class Workload:
    """One base directory: ``runs`` runs of ``tags`` scalar tags x ``steps`` steps."""

    key: str
    runs: int
    tags: int
    steps: int
    poll_s: float
    """Pause between polls of the listing: a large listing asked for too often would slow
    the very load it waits for (the same pause for every server)."""

    def run_name(self, i: int) -> str:
        """The directory of the ``i``-th run, below the base directory."""
        return f"r{i:05d}"

    def tag_name(self, i: int) -> str:
        """The ``i``-th tag of every run."""
        return f"group{i % 100:02d}/tag{i:05d}"

    @property
    def base_dir(self) -> Path:
        """Where the workload's directory is cached."""
        return CACHE / f"{self.key}-{self.runs}x{self.tags}x{self.steps}"


WORKLOADS = {
    "tags": Workload("tags", runs=1, tags=12_345, steps=50, poll_s=0.05),
    "runs": Workload("runs", runs=1_000, tags=10, steps=200, poll_s=0.1),
    "tiny": Workload("tiny", runs=10_000, tags=1, steps=10, poll_s=0.5),
}


# --------------------------------------------------------------------------------------
# Writing the directories
# --------------------------------------------------------------------------------------


def _write_run(directory: Path, workload: Workload, seed: int) -> None:
    """One run of ``workload``: every tag at every step, one ``record`` per step."""
    tags = [workload.tag_name(i) for i in range(workload.tags)]
    with SummaryRecord(directory, file_format="tensorboard") as record:
        for step in range(workload.steps):
            for i, tag in enumerate(tags):
                record.add_value("scalar", tag, float((seed + i + step) % 97) / 97.0)
            record.record(step)


def ensure(workload: Workload) -> Path:
    """The base directory of ``workload``, written first unless its manifest matches.

    Built in a staging directory renamed into place, so an interrupted build never
    passes for a complete one.
    """
    root = workload.base_dir
    wanted = {"generator": GENERATOR_VERSION, **asdict(workload)}
    wanted.pop("poll_s")
    with contextlib.suppress(OSError, ValueError, KeyError):
        saved = json.loads((root / "manifest.json").read_text())
        if saved["wanted"] == wanted and saved["listing"] == list(listing(root)):
            return root
    print(f"writing {root} ...", flush=True)
    started = now()
    staging = root.with_name(f".{root.name}.staging")
    for stale in (root, staging):
        if stale.exists():
            shutil.rmtree(stale)
    for i in range(workload.runs):
        _write_run(staging / workload.run_name(i), workload, seed=i)
    manifest = {"wanted": wanted, "listing": list(listing(staging))}
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    staging.rename(root)
    print(f"  done in {now() - started:.0f} s", flush=True)
    return root


# --------------------------------------------------------------------------------------
# Timing servers
# --------------------------------------------------------------------------------------


def sumlens_done(client: httpx.Client, workload: Workload) -> bool:
    """Every run listed ready with every tag and point; for one run, a tag served whole."""
    body = get_json(client, "/api/v1/runs")
    runs = body["runs"] if body else []
    if len(runs) != workload.runs:
        return False
    points = workload.tags * workload.steps
    for run in runs:
        if run["status"] != "ready" or run["points"] != points:
            return False
        if len(run["tags"].get("scalar", ())) != workload.tags:
            return False
    if workload.runs > 1:
        return True
    params = {"run": f"./{workload.run_name(0)}", "tag": workload.tag_name(0), "format": "json"}
    got = get_json(client, "/api/v1/scalars/download", params)
    series = got["series"] if got else []
    return len(series) == 1 and len(series[0]["step"]) == workload.steps


def tensorboard_done(client: httpx.Client, workload: Workload) -> bool:
    """Every run listed with every tag; for one run, a tag served whole."""
    listed = get_json(client, "/data/plugin/scalars/tags") or {}
    if len(listed) != workload.runs or any(len(t) != workload.tags for t in listed.values()):
        return False
    if workload.runs > 1:
        return True
    params = {"run": workload.run_name(0), "tag": workload.tag_name(0)}
    rows = get_json(client, "/data/plugin/scalars/scalars", params)
    return bool(rows) and len(rows) == workload.steps


def time_sumlens(workload: Workload, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``sumlens`` from a cold start (a new workspace) until ``sumlens_done``; ``env``
    (``PYTHONPATH`` ...) selects which sumlens."""
    base_dir = ensure(workload)
    workspace = Path(tempfile.mkdtemp(prefix="bench-scale-ws-"))
    port = free_port()
    try:
        args = serve_args(base_dir, port, workspace)
        env = {**os.environ, **(env or {})}
        with server_until(
            "sumlens",
            args,
            env,
            port,
            lambda client: sumlens_done(client, workload),
            workload.poll_s,
            TIMEOUT_S,
        ) as (_, seconds):
            return {"seconds": seconds}
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


@contextlib.contextmanager
def serving_tensorboard(
    workload: Workload, timeout_s: float = TIMEOUT_S
) -> Iterator[tuple[str, float]]:
    """``tensorboard --logdir`` over ``workload`` (its Rust data server, as 2.21 loads by
    default) until ``tensorboard_done``; yields its address and the seconds that took."""
    base_dir = ensure(workload)
    port = free_port()
    args = tensorboard_args(base_dir, port)
    with server_until(
        "tensorboard",
        args,
        dict(os.environ),
        port,
        lambda client: tensorboard_done(client, workload),
        workload.poll_s,
        timeout_s,
    ) as (_, seconds):
        yield f"http://127.0.0.1:{port}", seconds


def time_tensorboard(workload: Workload) -> dict[str, Any]:
    """``tensorboard`` from its start until ``tensorboard_done``."""
    with serving_tensorboard(workload) as (_, seconds):
        return {"seconds": seconds}
