"""sumlens replicas as a team runs them: ``sumlens serve`` processes configured by the
environment file ``deploy/sumlens.env``, each value the test changes being a port or a path.

:func:`replica_environment` reads the documented file (``KEY=VALUE`` lines, ``#``
comments) and sets what differs in a test (the bucket's endpoint, the database, the
address, the token file ...); :class:`Replica` starts one such process, waits for its
readiness probe, and stops it by SIGTERM (drained) or SIGKILL (a crash).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from helpers.board import free_port
from helpers.nginx import DEPLOY

ENV_FILE = DEPLOY / "sumlens.env"
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def read_env_file(path: Path = ENV_FILE) -> dict[str, str]:
    """The ``KEY=VALUE`` lines of an environment file (systemd's and docker's format:
    blank lines and ``#`` comments skipped, no quoting)."""
    values = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        key, sep, value = text.partition("=")
        if not sep:
            raise ValueError(f"{path}:{number}: {text!r} is not KEY=VALUE")
        values[key.strip()] = value.strip()
    return values


def replica_environment(changes: Mapping[str, str]) -> dict[str, str]:
    """The documented replica environment with ``changes`` applied; a change to a name the
    file does not document raises (the test runs what the docs show)."""
    documented = read_env_file()
    unknown = sorted(
        set(changes) - set(documented) - {"SUMLENS_REPLICA_NAME", "SUMLENS_RELOAD_INTERVAL"}
    )
    if unknown:
        raise KeyError(f"{ENV_FILE.name} does not document {unknown}")
    return {**documented, **changes}


class Replica:
    """One ``sumlens serve`` process on 127.0.0.1 with a given environment; its output
    goes to ``log``."""

    def __init__(self, name: str, environment: Mapping[str, str], log: Path) -> None:
        self.name = name
        self.port = free_port()
        self.environment = {
            **environment,
            "SUMLENS_PORT": str(self.port),
            "SUMLENS_REPLICA_NAME": name,
        }
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """``127.0.0.1:port``, as nginx's upstream names it."""
        return f"127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """The address of ``path`` (under the path prefix) on this replica itself."""
        prefix = self.environment.get("SUMLENS_URL_PATH_PREFIX", "")
        return f"http://{self.address}{prefix}{path}"

    def start(self, timeout: float = 120.0) -> None:
        """Start the process and wait until ``/api/v1/ready`` answers 200 (bounded)."""
        env = {key: value for key, value in os.environ.items() if not key.startswith("SUMLENS_")}
        env.update(self.environment)
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "sumlens", "serve"],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while not self.ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"replica {self.name} exited: {self.output()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"replica {self.name} not ready in {timeout} s: {self.output()}")
            time.sleep(0.05)

    def ready(self) -> bool:
        """Whether the replica's readiness probe answers 200 ``{"ready": true}``."""
        try:
            with _NO_PROXY.open(self.url("/api/v1/ready"), timeout=2) as response:
                return bool(json.loads(response.read()).get("ready"))
        except (OSError, ValueError):
            return False

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM, then wait for the exit (bounded); its exit status."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: a crash, nothing drained or saved."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def close(self) -> None:
        """Make sure the process is gone (the end of a test, passed or failed)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def output(self) -> str:
        """What the process said so far."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""
