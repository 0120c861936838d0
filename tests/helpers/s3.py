"""A real S3 API for the tests: moto's server on 127.0.0.1, and what talking to it takes.

:func:`moto_server` runs ``ThreadedMotoServer`` on a free port for the length of a
``with`` block, emptied first; :class:`S3Server` is that server stopped and started again
on its port (an outage: moto keeps the buckets in this process meanwhile);
:func:`s3_options` are the s3fs options reaching it (dummy credentials: moto accepts any);
:func:`make_bucket` creates a bucket through s3fs.
"""

from __future__ import annotations

import json
import socket
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

REGION = "eu-west-1"


class S3Server:
    """moto's S3 server on 127.0.0.1 that can stop and start again on the same port."""

    def __init__(self) -> None:
        self.port = 0
        self._server: Any = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> None:
        """Serve (on a free port the first time, then on the same one)."""
        from moto.server import ThreadedMotoServer

        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        self.port = self._server.get_host_and_port()[1]

    def stop(self) -> None:
        """Stop serving: requests are refused until :meth:`start` (the buckets are kept)."""
        if self._server is not None:
            self._server.stop()
            self._server = None


@contextmanager
def moto_server() -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 at a free port, stopped after; yields its endpoint URL."""
    with stoppable_server() as server:
        yield server.endpoint


@contextmanager
def stoppable_server() -> Iterator[S3Server]:
    """:func:`moto_server` as an :class:`S3Server` the test may stop and start."""
    server = S3Server()
    server.start()
    try:
        _reset(server.endpoint)  # moto keeps its buckets per process, across servers
        yield server
    finally:
        server.stop()


def _reset(endpoint: str) -> None:
    """Empty the server: no bucket is left from another test module's server."""
    request = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10):
        pass


def s3_options(endpoint: str, **extra: Any) -> dict[str, Any]:
    """s3fs options for the server at ``endpoint`` (dummy key and secret, fixed region).

    Retries are few so that a failure the test provokes is said at once.
    """
    return {
        "key": "testing",
        "secret": "testing",
        "endpoint_url": endpoint,
        "client_kwargs": {"region_name": REGION},
        "config_kwargs": {"retries": {"max_attempts": 1}, "connect_timeout": 5},
        "skip_instance_cache": True,
        **extra,
    }


def aws_environment(endpoint: str) -> dict[str, str]:
    """Environment variables that point any AWS client (botocore, s3fs with no options: what
    a framework's own fsspec writes use) at the server at ``endpoint``."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }


@contextmanager
def bucket_server(bucket: str) -> Iterator[str]:
    """:func:`moto_server` holding one empty ``bucket``; yields its endpoint URL."""
    with moto_server() as endpoint:
        make_bucket(endpoint, bucket)
        yield endpoint


def make_bucket(endpoint: str, bucket: str) -> None:
    """Create ``bucket`` on the server at ``endpoint``."""
    import s3fs

    s3fs.S3FileSystem(**s3_options(endpoint)).mkdir(bucket)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def credentials_checked(endpoint: str) -> Iterator[None]:
    """Within the block the server checks credentials (moto skips that by default), so the
    dummy ones of :func:`s3_options` are refused."""
    previous = _set_free_requests(endpoint, "0")
    try:
        yield
    finally:
        _set_free_requests(endpoint, previous)


def _set_free_requests(endpoint: str, count: str) -> str:
    """Set how many requests moto serves before it checks credentials; the previous count."""
    request = urllib.request.Request(
        f"{endpoint}/moto-api/reset-auth",
        data=count.encode(),
        method="POST",
        headers={"Content-Type": "text/plain"},  # not a form: moto reads the raw body
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(json.load(response)["PREVIOUS_INITIAL_NO_AUTH_ACTION_COUNT"])


class WireLog:
    """Every HTTP request an s3fs file system sends from now on, as the client sends it:
    ``(method, url, Range header)``; an independent count of what a storage asked for."""

    def __init__(self, fs: Any) -> None:
        self.requests: list[tuple[str, str, str | None]] = []
        fs.connect()
        fs.s3.meta.events.register("before-send.s3", self._note)

    def _note(self, request: Any, **_: Any) -> None:
        rng = request.headers.get("Range")
        self.requests.append((request.method, request.url, rng.decode() if rng else None))

    def listings(self) -> list[str]:
        """The URLs of the listing requests (ListObjectsV2 pages)."""
        return [url for method, url, _ in self.requests if method == "GET" and "list-type=2" in url]

    def clear(self) -> None:
        """Forget the requests so far."""
        self.requests.clear()
