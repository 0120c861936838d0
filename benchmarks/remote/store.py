"""The object store of ``bench_remote``: moto's S3 server behind the latency proxy.

:func:`object_store` starts ``moto_server`` and :mod:`benchmarks.harness.latency_proxy` as
processes of their own on 127.0.0.1 (so the benchmark's own work never holds up a request)
and stops both on leaving. :func:`upload` fills a bucket from a local tree, straight to moto
(setup: no latency, not timed). :class:`Store` says how each contender reaches the store through the
proxy, and reads the proxy's request log: :func:`kind` sorts a request into a listing, a
GET, a HEAD or another, :meth:`Store.burst` finds the requests of one reload.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from benchmarks.harness.clock import shared_now
from benchmarks.harness.http import connect
from benchmarks.harness.paths import REPO_ROOT
from benchmarks.harness.servers import Process, free_port, launch, stop_server, wait_answering

KEY = SECRET = "testing"
"""moto accepts any credentials."""
REGION = "eu-west-1"
START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Request:
    """One request of the proxy's log (times are the proxy's, :func:`shared_now`)."""

    start: float
    end: float | None
    method: str
    target: str
    new_connection: bool
    sent: int
    received: int


def kind(request: Request) -> str:
    """``listing`` (a GET of the bucket itself), ``get``, ``head`` or ``other``."""
    path = urlsplit(request.target).path.strip("/")
    if request.method == "GET":
        return "get" if "/" in path else "listing"
    return "head" if request.method == "HEAD" else "other"


def tally(requests: list[Request]) -> dict[str, int]:
    """Requests per kind, new connections, and bytes each way."""
    counts = {"requests": len(requests), "listing": 0, "get": 0, "head": 0, "other": 0}
    for request in requests:
        counts[kind(request)] += 1
    counts["connections"] = sum(r.new_connection for r in requests)
    counts["bytes_sent"] = sum(r.sent for r in requests)
    counts["bytes_received"] = sum(r.received for r in requests)
    return counts


@dataclass(frozen=True)
class Store:
    """moto at ``direct`` (for setup) and the proxy in front of it at ``proxied``."""

    direct: str
    proxied: str
    control: str

    def s3_options(self, endpoint: str | None = None) -> dict[str, Any]:
        """s3fs options reaching the store (through the proxy unless ``endpoint``)."""
        return {
            "key": KEY,
            "secret": SECRET,
            "endpoint_url": endpoint or self.proxied,
            "client_kwargs": {"region_name": REGION},
        }

    def env(self) -> dict[str, str]:
        """The environment of a contender: credentials and region as AWS's clients read
        them, ``S3_ENDPOINT`` (TensorBoard's) at the proxy, no HTTP proxy on the way."""
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        return {
            **env,
            "AWS_ACCESS_KEY_ID": KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "S3_ENDPOINT": self.proxied,
            "NO_PROXY": "127.0.0.1,localhost",
        }

    def log(self, since: int = 0) -> list[Request]:
        """The proxy's requests from the ``since``-th on."""
        with connect(self.control, timeout=60) as http:
            rows = http.get("/log", params={"since": since}).json()["records"]
        return [Request(*row) for row in rows]

    def burst(self, since: int, quiet_s: float, timeout_s: float) -> list[Request]:
        """The next burst of requests from the ``since``-th on: from the first after
        ``since`` until none has been under way for ``quiet_s`` (one reload of a server
        that reloads at intervals longer than ``quiet_s``); a burst not over within
        ``timeout_s`` is a TimeoutError."""
        deadline = shared_now() + timeout_s
        while True:
            requests = self.log(since)
            now = shared_now()
            if requests:
                last = max(r.end or now for r in requests)
                if all(r.end is not None for r in requests) and now - last >= quiet_s:
                    return requests
            if now > deadline:
                raise TimeoutError(f"no reload of the store ended within {timeout_s:.0f} s")
            time.sleep(min(0.25, quiet_s / 4))

    def settle(self, quiet_s: float, timeout_s: float) -> int:
        """Wait until no request has been under way for ``quiet_s``; the log's length."""
        deadline = shared_now() + timeout_s
        while True:
            requests = self.log()
            now = shared_now()
            ends = [r.end or now for r in requests]
            if all(r.end is not None for r in requests) and now - max(ends, default=0) >= quiet_s:
                return len(requests)
            if now > deadline:
                raise TimeoutError(f"the store was still asked after {timeout_s:.0f} s")
            time.sleep(min(0.25, quiet_s / 4))


@contextlib.contextmanager
def object_store(latency_ms: float) -> Iterator[Store]:
    """moto's S3 server and the latency proxy in front of it, both on 127.0.0.1."""
    moto_port, proxy_port, control_port = free_port(), free_port(), free_port()
    moto_bin = str(Path(sys.executable).with_name("moto_server"))
    procs: list[Process] = []
    try:
        procs.append(launch([moto_bin, "-H", "127.0.0.1", "-p", str(moto_port)]))
        proxy = [sys.executable, "-m", "benchmarks.harness.latency_proxy"]
        proxy += ["--port", str(proxy_port), "--upstream", str(moto_port)]
        proxy += ["--control", str(control_port), "--latency-ms", str(latency_ms)]
        procs.append(launch(proxy, cwd=REPO_ROOT))
        store = Store(
            f"http://127.0.0.1:{moto_port}",
            f"http://127.0.0.1:{proxy_port}",
            f"http://127.0.0.1:{control_port}",
        )
        wait_answering(f"{store.direct}/moto-api/", procs[0], START_TIMEOUT_S)
        wait_answering(f"{store.control}/log?since=0", procs[1], START_TIMEOUT_S)
        yield store
    finally:
        for proc in reversed(procs):
            stop_server(proc)


def upload(store: Store, root: Path, url: str) -> tuple[int, int]:
    """Every event file under ``root`` to ``url`` (``s3://bucket/prefix``, the bucket made
    first), straight to moto; the objects and bytes uploaded."""
    import s3fs

    fs = s3fs.S3FileSystem(**store.s3_options(store.direct), skip_instance_cache=True)
    bucket = url.removeprefix("s3://").split("/", 1)[0]
    if not fs.exists(bucket):
        fs.mkdir(bucket)
    local = sorted(p for p in root.rglob("*") if p.is_file() and p.name != "manifest.json")
    remote = [f"{url.removeprefix('s3://')}/{p.relative_to(root).as_posix()}" for p in local]
    fs.put([str(p) for p in local], remote)
    return len(local), sum(p.stat().st_size for p in local)
