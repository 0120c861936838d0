"""Runs written for the dashboard's tests, and the real server on a free loopback port."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import uvicorn
from starlette.testclient import TestClient

from sumlens import SummaryRecord
from sumlens.board.data.surface import ReadSurface
from sumlens.board.server.app import create_app
from sumlens.board.settings import BoardSettings


def write_run(
    directory: Path,
    steps: range | list[int],
    fmt: str = "mindspore",
    tags: tuple[str, ...] = ("loss",),
    value=lambda tag, step: 1.0 / step,
) -> None:
    """One run of scalar ``tags`` at ``steps`` (values from ``value(tag, step)``)."""
    with SummaryRecord(directory, file_format=fmt) as record:
        for step in steps:
            for tag in tags:
                record.add_value("scalar", tag, value(tag, step))
            record.record(step)


def linked_runs(base: Path, seed: Path, count: int) -> list[str]:
    """``count`` runs ``run00000``... under ``base``, each a directory of hard links to the
    files of ``seed`` (so thousands of runs take a second and no disk); their ids."""
    files = [path for path in seed.iterdir() if path.is_file()]
    ids = []
    for i in range(count):
        run = base / f"run{i:05d}"
        run.mkdir(parents=True)
        for path in files:
            os.link(path, run / path.name)
        ids.append(f"./{run.name}")
    return ids


@contextlib.contextmanager
def rank_env(rank: int) -> Iterator[None]:
    """``$RANK`` set to ``rank`` for the block (the writer names its files after it)."""
    before = os.environ.get("RANK")
    os.environ["RANK"] = str(rank)
    try:
        yield
    finally:
        if before is None:
            del os.environ["RANK"]
        else:
            os.environ["RANK"] = before


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def running_server(settings: BoardSettings, timeout: float = 30.0) -> Iterator[str]:
    """The real app under uvicorn in a thread; yields its base URL; stops it afterwards."""
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings),
            host=settings.host,
            port=settings.port,
            log_level="warning",
            lifespan="on",
            proxy_headers=False,
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the dashboard server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{settings.port}{settings.url_path_prefix}"
    finally:
        server.should_exit = True
        thread.join(timeout)


_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def get_json(url: str) -> dict | None:
    """The JSON at ``url``, or None when nothing answers there (or not with 200).

    Never through an ``http_proxy`` from the environment: the server is on loopback.
    """
    try:
        with _NO_PROXY.open(url, timeout=2) as response:
            return json.loads(response.read())
    except OSError:
        return None


def wait_until(condition, timeout: float = 30.0, interval: float = 0.05):  # type: ignore[no-untyped-def]
    """Poll ``condition()`` until it returns something truthy (returned) or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


def tb_ema(values: np.ndarray, weight: float) -> np.ndarray:
    """TensorBoard's de-biased EMA, written out as a plain loop (the reference)."""
    out = np.empty(values.size)
    last, count = 0.0, 0
    for i, y in enumerate(values.tolist()):
        if not np.isfinite(y):
            out[i] = y
            continue
        last = last * weight + (1 - weight) * y
        count += 1
        out[i] = last / (1 - weight**count) if weight else last
    return out


def route_client(
    surface: ReadSurface | None = None,
    settings: BoardSettings | None = None,
    base_url: str = "http://127.0.0.1",
) -> TestClient:
    """The real app over ``surface`` (a loader of ``settings.base_dir`` when None), asked in
    process through starlette's TestClient: no uvicorn, no port. Use it in a ``with`` block
    (the app's lifespan starts and stops a loader)."""
    settings = settings or BoardSettings(base_dir=Path("/memory"))
    return TestClient(create_app(settings, surface), base_url=base_url)
