"""Request bodies larger than the server reads: refused by their length before any of it
is read, and a streamed one no further than the limit.

Over the real server (``sumlens serve`` in its own process, so that its memory can be read
from ``/proc``) and raw sockets, which can announce a body they never send and keep
sending one the server no longer reads. Before, a 1 GB PUT took the server from 265 MB to
2.15 GB before its 400: every byte was read, then joined, then measured.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.board import free_port, get_json, wait_until, write_run

from sumlens.board.request_reading import MAX_BODY_BYTES

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")

BOUND = 60.0
"""Seconds any answer below may take on a loaded machine (a bound on a wait, not a budget)."""
CHUNK = 1 << 20


@dataclass(frozen=True)
class Served:
    """The server: its process id and port."""

    pid: int
    port: int


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("bodies")
    write_run(root / "base" / "a", range(1, 5))
    port = free_port()
    options = (f"--port={port}", f"--workspace={root / 'ws'}")
    server = subprocess.Popen(
        [sys.executable, "-m", "sumlens", "serve", f"--logdir={root / 'base'}", *options],
        stdout=subprocess.DEVNULL,
        env={**os.environ, "HOME": str(root)},
    )
    try:
        health = wait_until(lambda: get_json(f"http://127.0.0.1:{port}/api/v1/health"), BOUND)
        assert health["pid"] == server.pid
        wait_until(lambda: get_json(f"http://127.0.0.1:{port}/api/v1/runs")["loading"] is False)
        yield Served(server.pid, port)
    finally:
        server.terminate()
        server.wait(BOUND)


def _head(port: int, headers: dict[str, str]) -> bytes:
    lines = [
        "PUT /api/v1/annotation?run=./a HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _answer(connection: socket.socket) -> tuple[int, dict]:
    """The status and JSON body of the response read from ``connection``."""
    data = b""
    while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < _length(data):
        more = connection.recv(65536)
        if not more:
            break
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _length(data: bytes) -> int:
    for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def _peak_memory(pid: int) -> int:
    """The highest resident memory of process ``pid`` so far, in bytes (``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM in /proc/{pid}/status")


@pytest.mark.parametrize("expect", [False, True], ids=["plain", "expect-100-continue"])
def test_a_body_too_large_by_its_length_is_refused_unread(served: Served, expect: bool) -> None:
    """Only the head is sent: the server answers 413 at once, without waiting for a body
    (with ``Expect: 100-continue``, as curl sends for large bodies, without inviting it)."""
    headers = {"Content-Length": "1000000000", **({"Expect": "100-continue"} if expect else {})}
    with socket.create_connection(("127.0.0.1", served.port), timeout=BOUND) as connection:
        connection.sendall(_head(served.port, headers))
        status, body = _answer(connection)
    assert status == 413
    assert body["detail"] == (
        f"the request body holds 1,000,000,000 bytes (its Content-Length): the dashboard reads "
        f"at most {MAX_BODY_BYTES:,} ({MAX_BODY_BYTES / 2**20:g} MiB)"
    )


def test_a_streamed_body_is_read_no_further_than_the_limit(served: Served) -> None:
    """A chunked body four times the limit: the server stops reading at the limit (the
    sender cannot push it all), answers 413, and its memory grows by less than half the
    body's size (what it read and buffered: before, twice the body's size)."""
    size = 4 * MAX_BODY_BYTES
    before = _peak_memory(served.pid)
    chunk = b"%x\r\n" % CHUNK + b" " * CHUNK + b"\r\n"
    sent = 0
    with socket.create_connection(("127.0.0.1", served.port), timeout=BOUND) as connection:
        connection.sendall(_head(served.port, {"Transfer-Encoding": "chunked"}))
        try:
            while sent < size:
                connection.sendall(chunk)
                sent += CHUNK
            connection.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass  # the server stopped reading (and closed the connection)
        try:
            answer = _answer(connection)
        except ConnectionResetError:  # the answer was lost with the unread rest
            answer = None
    grown = _peak_memory(served.pid) - before
    assert sent < size, "every byte was taken"
    assert grown < size / 2, f"the server grew by {grown:,} bytes for a {size:,}-byte body"
    if answer is not None:
        status, body = answer
        assert status == 413 and f"larger than {MAX_BODY_BYTES:,} bytes" in body["detail"]
    assert get_json(f"http://127.0.0.1:{served.port}/api/v1/health") is not None


def test_a_body_within_the_limit_is_read(served: Served) -> None:
    """Chunked or not, a body under the limit reaches the route (here: an annotation)."""
    body = json.dumps({"tags": ["kept"], "note": "", "colour": None}).encode()
    for framing in ({"Content-Length": str(len(body))}, {"Transfer-Encoding": "chunked"}):
        data = body if "Content-Length" in framing else b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
        with socket.create_connection(("127.0.0.1", served.port), timeout=BOUND) as connection:
            connection.sendall(_head(served.port, {**framing, "Connection": "close"}) + data)
            status, answer = _answer(connection)
        assert status == 200 and answer["tags"] == ["kept"], framing
