"""A real Jupyter server with jupyter-server-proxy, as a hub starts one for a user; and
a plain page server, the page of another origin that frames the dashboard.

The Jupyter server listens on 127.0.0.1 under a base path (JupyterHub's ``/user/<name>/``)
with token authentication off, in a temporary folder; its proxy forwards
``{base}proxy/...`` to local ports. The wait for it is on its answer, with a bound.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from helpers.board import free_port, wait_until
from sumlens.board.server import daemon

START_WAIT = 60.0
"""Seconds the server may take to answer (it imports its extensions first)."""
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""Requests to local servers never go through an ``http_proxy`` from the environment."""


@contextlib.contextmanager
def jupyter_server(folder: Path, base_path: str) -> Iterator[str]:
    """A Jupyter server under ``base_path`` (``/user/ana/``) in ``folder``; yields its
    address (``http://127.0.0.1:PORT``, without the base path); stopped afterwards."""
    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "jupyter_server",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.open_browser=False",
        f"--ServerApp.base_url={base_path}",
        f"--ServerApp.root_dir={folder}",
        "--IdentityProvider.token=",
    ]
    if os.geteuid() == 0:  # CI runs as root, which Jupyter refuses unless told
        command.append("--allow-root")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(folder / "runtime")}
    with open(folder / "jupyter.log", "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    address = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: process.poll() is not None or _answers(f"{address}{base_path}api/status"),
            timeout=START_WAIT,
        )
        if process.poll() is not None:
            raise RuntimeError(
                f"jupyter server exited with {process.returncode}: "
                f"{(folder / 'jupyter.log').read_text()[-2000:]}"
            )
        yield address
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _answers(url: str) -> bool:
    """Whether ``url`` answers 200."""
    try:
        with NO_PROXY.open(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def stop_all(workspace: Path) -> None:
    """Stop every background dashboard whose pid file is in ``workspace``."""
    for record in sorted(workspace.glob("sumlens-*.json")):
        port = int(record.stem.rpartition("-")[2])
        with contextlib.suppress(daemon.DaemonError):
            daemon.stop(workspace, port)
