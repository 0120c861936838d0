"""The idle workload of issue 26: what a server costs while nothing changes.

A base directory of 20,000 empty sub-directories (no run at all), generated once and
cached under ``~/.cache/sumlens/bench/idle/``. :func:`idle_cpu_share` starts the real
server on it as a fresh process, waits until its first pass is over (the run list no
longer says ``loading``) and one more reload interval, then reads the process's CPU time
(``utime + stime`` of ``/proc/<pid>/stat``, its threads included) before and after a
window of about 30 s: the share of one core the polling costs while the tree stays the
same. ``bench_board``'s table (d) runs it in rounds (a worktree of another commit is
measured by giving its ``src`` as ``pythonpath``).
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from benchmarks.harness.clock import now
from benchmarks.harness.machine import cpu_seconds
from benchmarks.harness.servers import free_port, serve_args, server_until

CACHE = Path("~/.cache/sumlens/bench/idle").expanduser()
EMPTY_DIRS = 20_000
"""Sub-directories of the idle base directory (each empty)."""
WINDOW_S = 30.0
"""Seconds over which the idle CPU time is counted."""
START_TIMEOUT_S = 300.0
"""Seconds a server gets to finish its first pass."""


@dataclass(frozen=True)
class IdleResult:
    """One server's idle cost: CPU seconds used over ``window_s`` wall seconds."""

    cpu_s: float
    window_s: float
    first_pass_s: float
    """Seconds from the start until the run list stopped saying ``loading``."""

    @property
    def share(self) -> float:
        """CPU seconds per wall second (0.22: 22% of one core)."""
        return self.cpu_s / self.window_s


def empty_tree(count: int = EMPTY_DIRS) -> Path:
    """The cached base directory of ``count`` empty sub-directories (made once).

    Built in a staging directory renamed into place, so an interrupted build never passes
    for a complete one; a complete one is known by its name.
    """
    root = CACHE / f"empty-{count}"
    if root.is_dir():
        return root
    staging = root.with_name(f".{root.name}.staging")
    staging.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (staging / f"d{i:05d}").mkdir(exist_ok=True)
    staging.rename(root)
    return root


def _loading(client: httpx.Client) -> bool:
    """Whether the server is still in its first pass (or not answering yet)."""
    try:
        response = client.get("/api/v1/runs")
    except httpx.TransportError:
        return True
    return response.status_code != 200 or bool(response.json()["loading"])


def idle_cpu_share(
    base_dir: Path,
    *,
    window_s: float = WINDOW_S,
    reload_interval_s: float = 3.0,
    pythonpath: str | None = None,
) -> IdleResult:
    """Start the server over ``base_dir``, let its first pass end, and count the CPU time
    it uses over ``window_s`` while nothing changes. ``pythonpath`` (a ``src`` folder)
    selects another checkout's ``sumlens``. The server is stopped afterwards."""
    env = {**os.environ}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    port = free_port()
    with (
        tempfile.TemporaryDirectory(prefix="sumlens-idle-") as workspace,
        server_until(
            "the server",
            serve_args(base_dir, port, Path(workspace)),
            env,
            port,
            lambda client: not _loading(client),
            0.2,
            START_TIMEOUT_S,
        ) as (proc, first_pass_s),
    ):
        time.sleep(reload_interval_s)  # past the first pass's tail (its state saved)
        cpu_before, wall_before = cpu_seconds(proc.pid), now()
        time.sleep(window_s)
        cpu_after, wall_after = cpu_seconds(proc.pid), now()
    return IdleResult(cpu_after - cpu_before, wall_after - wall_before, first_pass_s)
