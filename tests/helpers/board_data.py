"""The runs the browser tests look at, and how to wait for the server to have loaded them.

``write_base`` fills a base directory with the golden MindSpore runs and runs written by
``SummaryRecord`` in both formats: two ranks in one run, a 100,000-point series, a run
of many tags (more charts than fit on a screen), two trainings in one directory, a file
with a corrupt record, and a run and a tag named like an HTML injection.
"""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from helpers.board import free_port, rank_env, running_server, wait_until, write_run
from sumlens.board.settings import BoardSettings

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))

XSS = "<img src=x onerror=alert(1)>"
LONG_STEPS = 100_000
DEEP_TAGS = tuple(f"layer{i:02d}/grad_norm" for i in range(24))
RUN_IDS = [
    "./all_plugins",
    "./collector",
    "./landscape",
    "./ours/ms",
    "./ours/tb",
    "./dist",
    "./long",
    "./deep",
    "./twice",
    "./damaged",
    f"./{XSS}",
]
"""Every run ``write_base`` makes, as the server names them."""


def value(tag: str, step: int) -> float:
    """The value written at ``step``: a decaying curve with deterministic noise."""
    return 2.0 / (1 + step / 40) + 0.1 * ((step * 7919 + len(tag)) % 13) / 13


def write_base(base: Path, golden_dir: Path) -> None:
    """The runs of ``RUN_IDS`` under ``base``."""
    for name in ("all_plugins", "collector", "landscape"):
        shutil.copytree(golden_dir / name, base / name)
    write_run(base / "ours" / "ms", range(1, 301), tags=("loss", "accuracy", "lr"), value=value)
    write_run(base / "ours" / "tb", range(1, 201), "tensorboard", ("loss",), value)
    for rank in (0, 1):
        with rank_env(rank):
            write_run(base / "dist", range(1, 151), value=lambda tag, s, r=rank: value(tag, s + r))
    write_run(base / "long", range(1, LONG_STEPS + 1), value=value)
    write_run(base / "deep", range(1, 51), tags=DEEP_TAGS, value=value)
    for _ in range(2):  # a second training written to the same directory
        write_run(base / "twice", range(1, 11), value=value)
    write_run(base / "damaged", range(1, 51), value=value)
    (summary,) = (base / "damaged").glob("*_MS")
    data = bytearray(summary.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one record's checksum no longer matches
    summary.write_bytes(bytes(data))
    write_run(base / XSS, range(1, 21), tags=(XSS, "loss"), value=value)


def get_json(url: str) -> Any:
    """GET ``url`` and decode its JSON body."""
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


def wait_loaded(url: str, run_ids: list[str] = ()) -> dict[str, Any]:
    """Until the server at ``url`` lists ``run_ids`` and no run is loading: its /runs."""

    def loaded() -> dict[str, Any] | None:
        runs = get_json(f"{url}/api/v1/runs")
        ids = {run["id"] for run in runs["runs"]}
        ready = all(run["status"] != "loading" for run in runs["runs"])
        return runs if ready and set(run_ids) <= ids else None

    return wait_until(loaded, timeout=120)


@contextmanager
def served_base(base: Path, workspace: Path, run_ids: list[str]) -> Iterator[str]:
    """The real server over ``base`` (reloading every 0.5 s), once ``run_ids`` are loaded;
    yields its URL."""
    settings = BoardSettings.create(
        base, port=free_port(), reload_interval=0.5, workspace=workspace
    )
    with running_server(settings) as served:
        wait_loaded(served, run_ids)
        yield served


def api_get(url: str, path: str, **params: Any) -> tuple[int, bytes]:
    """GET ``/api/v1/<path>`` of the server at ``url`` (a list value repeats its
    parameter): the status and the body, whatever the status."""
    query = urlencode(
        [(k, v) for k, vs in params.items() for v in (vs if isinstance(vs, list) else [vs])]
    )
    try:
        with _NO_PROXY.open(f"{url}/api/v1/{path}?{query}", timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()
