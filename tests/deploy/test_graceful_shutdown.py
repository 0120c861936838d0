"""SIGTERM drains a replica (``server/serve.py``): a request in flight when it arrives
completes, new connections are refused at once, and the process exits 0 (what a load
balancer or Kubernetes relies on during a rolling upgrade).

The request in flight is a PUT sent with ``Expect: 100-continue``: the server answers
``100 Continue`` only once the route asks for the body, so when the test has read it, the
request is provably inside the application; its body is sent after the signal."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from helpers.board import free_port, wait_until, write_run

BOUND = 60.0
"""Seconds any step below may take on a loaded machine (a bound on a wait, not a budget)."""


def _refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except ConnectionRefusedError:
        return True


def test_sigterm_finishes_the_request_in_flight_and_refuses_new_ones(tmp_path: Path) -> None:
    write_run(tmp_path / "base" / "a", range(1, 4))
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("SUMLENS_")}
    server = subprocess.Popen(
        [sys.executable, "-m", "sumlens", "serve", f"--logdir={tmp_path / 'base'}",
         f"--port={port}", f"--workspace={tmp_path / 'ws'}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        wait_until(lambda: not _refused(port), timeout=BOUND)
        body = json.dumps({"tags": ["drained"], "note": "", "colour": None}).encode()
        with socket.create_connection(("127.0.0.1", port), timeout=BOUND) as conn:
            conn.sendall(
                b"PUT /api/v1/annotation?run=./a HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nExpect: 100-continue\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
            )
            assert conn.recv(64).startswith(b"HTTP/1.1 100")  # the route waits for the body
            server.send_signal(signal.SIGTERM)
            wait_until(lambda: _refused(port), timeout=BOUND, interval=0.01)
            conn.sendall(body)
            answer = b""
            while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
                chunk = conn.recv(4096)
                if not chunk:
                    break
                answer += chunk
        status, _, rest = answer.partition(b"\r\n")
        assert status == b"HTTP/1.1 200 OK", answer
        assert json.loads(rest.partition(b"\r\n\r\n")[2])["tags"] == ["drained"]
        assert server.wait(BOUND) == 0, server.stderr.read() if server.stderr else ""
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
