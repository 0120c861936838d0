"""The machine that measured: versions, commit, load, and what a process costs it."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterable
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from pathlib import Path
from typing import Any


def dist(name: str) -> str | None:
    """The installed version of distribution ``name`` (None when it is not installed)."""
    try:
        return dist_version(name)
    except PackageNotFoundError:
        return None


def machine_facts(packages: Iterable[str]) -> dict[str, Any]:
    """Date, Python, platform, CPUs and the versions of ``packages``, for a results JSON."""
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "versions": {name: dist(name) for name in packages},
    }


def commit_facts() -> dict[str, Any]:
    """The commit measured and the uncommitted files under ``src``."""
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "src"], capture_output=True, text=True, check=False
    ).stdout
    return {"commit": commit, "src_uncommitted": dirty.splitlines()}


def fingerprint(paths: Iterable[Path]) -> str:
    """sha256 over files' names and bytes: tells whether code changed during a run."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(path).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def module_fingerprint(module: str) -> str | None:
    """:func:`fingerprint` of a module's source file (None when it is not found)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        return None
    return fingerprint([Path(spec.origin)])


def foreign_cpu(seconds: float = 0.5) -> float:
    """Cores busy over ``seconds`` while the benchmark runs nothing: other processes' load.

    Other sessions' work on the same 2 cores shows up here (it made an earlier run
    useless), so it is reported.
    """

    def busy_idle() -> tuple[int, int]:
        with open("/proc/stat") as handle:
            fields = [int(x) for x in handle.readline().split()[1:]]
        idle = fields[3] + fields[4]
        return sum(fields) - idle, idle

    try:
        b0, i0 = busy_idle()
        time.sleep(seconds)
        b1, i1 = busy_idle()
    except OSError:
        return float("nan")
    total = (b1 - b0) + (i1 - i0)
    return (os.cpu_count() or 1) * (b1 - b0) / total if total else 0.0


def wait_for_idle(idle_cores: float, max_wait_s: float) -> tuple[float, float]:
    """Wait (up to about ``max_wait_s``) until other processes keep at most ``idle_cores``
    cores busy; the load last seen and the seconds waited."""
    load, waited = foreign_cpu(), 0.0
    while load > idle_cores and waited < max_wait_s:
        time.sleep(2.0)
        waited += 2.5
        load = foreign_cpu()
    return load, waited


def read_status_kb(pid: int, field_name: str) -> int | None:
    """A ``/proc/PID/status`` memory field (``VmHWM``, ``VmRSS``) in kB; None once gone."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process ``pid`` so far (all its threads)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    # after the command name: state is field 3, utime 14 and stime 15 (1-based)
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / os.sysconf("SC_CLK_TCK")
