"""What every benchmark here measures with: interleaved rounds, medians and ranges, per-round
ratios, their verdicts, number formats and the facts of the machine that measured.

Contenders run interleaved, once per round, in an order rotated by one place each round, so
that a slow phase of a shared machine falls on all of them alike; a ratio is taken within
each round (anchor time / sumlens time in the same round) and summarised by its median and
range (``benchmarks/README.md``, "How we measure").
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from pathlib import Path
from typing import Any

import httpx

NOISE_TIE = 1.3
"""Ratios under this are ties on these noisy machines (anchors.md)."""

Result = dict[str, Any]
"""One timed run: at least its ``seconds``; :func:`run_rounds` adds its ``round``."""


# ---- rounds ---------------------------------------------------------------------------


def spread_rounds(count: int, rounds: int, offset: int = 0) -> set[int]:
    """``count`` round indices spread evenly over ``range(rounds)`` (for slow contenders)."""
    count = min(count, rounds)
    return {(offset + i * rounds // count) % rounds for i in range(count)} if count else set()


@dataclass
class Unit:
    """What runs as one step of a round: it returns one result per row it timed (a
    contender, or a pair such as a cold then a warm start)."""

    name: str
    run: Callable[[], dict[str, Result]]
    rounds: set[int]


@dataclass
class Table:
    """The timings of a run: per row key, one result per round it ran in."""

    results: dict[str, list[Result]] = field(default_factory=dict)
    failures: dict[str, list[str]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)


def seconds_brief(result: Result) -> str:
    """A result's seconds for the progress line."""
    return f"{result['seconds']:.3f}"


def run_rounds(
    units: Sequence[Unit],
    rounds: int,
    table: Table,
    *,
    brief: Callable[[Result], str] = seconds_brief,
    retry_failed: bool = True,
) -> None:
    """Every unit once per round it belongs to, in an order rotated by one place per round.

    A unit that raises is reported (``table.failures``) and the others go on; without
    ``retry_failed`` it is also marked unavailable and not run again.
    """
    for r in range(rounds):
        active = [unit for unit in units if r in unit.rounds]
        order = active[r % len(active) :] + active[: r % len(active)] if active else []
        started = time.perf_counter()
        line = []
        for unit in order:
            if unit.name in table.unavailable:
                continue
            try:
                results = unit.run()
            except Exception as err:  # a failed contender is reported; the others go on
                message = f"round {r + 1}: {type(err).__name__}: {err}"
                table.failures.setdefault(unit.name, []).append(message)
                if not retry_failed:
                    table.unavailable[unit.name] = f"FAILED in {message}"
                print(f"  {unit.name} FAILED {message}", flush=True)
                continue
            for key, result in results.items():
                result["round"] = r
                table.results.setdefault(key, []).append(result)
                line.append(f"{key} {brief(result)}")
        took = time.perf_counter() - started
        print(f"round {r + 1}/{rounds} ({took:.0f} s): " + ", ".join(line), flush=True)


# ---- statistics and ratios ------------------------------------------------------------


def summary(values: Sequence[float]) -> dict[str, float] | None:
    """Median, min, max and count of ``values`` (None for none)."""
    if not values:
        return None
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """First quartile, median and third quartile (all three the value itself for one)."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def quartile_summary(values: Sequence[float]) -> dict[str, float]:
    """Median, quartiles and range of ``values``."""
    q1, median, q3 = quartiles(values)
    return {"median": median, "q1": q1, "q3": q3, "min": min(values), "max": max(values)}


def same_round_pairs(slow: Iterable[Result], fast: Iterable[Result]) -> list[tuple[Result, Result]]:
    """``(slow, fast)`` results of every round in which both ran, in ``fast``'s order."""
    by_round = {result["round"]: result for result in slow}
    return [(by_round[r["round"]], r) for r in fast if r["round"] in by_round]


def verdict(values: Sequence[float], target: float | None, capped: bool = False) -> str:
    """MET in every round / met by the median / NOT MET; ties under ``NOISE_TIE`` when no
    target. ``capped``: the slower side hit a time cap, so a miss is undetermined."""
    median = statistics.median(values)
    if target is None:
        return "tie (< 1.3x)" if 1 / NOISE_TIE < median < NOISE_TIE else ""
    if min(values) >= target:
        return "MET (every round)"
    if median >= target:
        return "met (median; not every round)"
    if capped:
        return "undetermined (MindInsight hit the cap: a lower bound)"
    return "NOT MET"


# ---- formats --------------------------------------------------------------------------


def fmt_s(seconds: float) -> str:
    """Seconds with three decimals below 10 s, one above."""
    return f"{seconds:.3f}" if seconds < 10 else f"{seconds:.1f}"


def fmt_x(ratio: float) -> str:
    """A ratio with two decimals below 10x, one above."""
    return f"{ratio:.2f}x" if ratio < 10 else f"{ratio:.1f}x"


# ---- the machine ----------------------------------------------------------------------


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


# ---- servers --------------------------------------------------------------------------


def serve_args(base_dir: Path, port: int, workspace: Path) -> list[str]:
    """``python -m sumlens serve ...`` over ``base_dir``: the command a user runs, in a fresh
    interpreter (whatever ``sumlens`` the ``PYTHONPATH`` selects, so another checkout's can
    be timed)."""
    where = ["--summary-base-dir", str(base_dir), "--workspace", str(workspace)]
    return [sys.executable, "-m", "sumlens", "serve", *where, "--port", str(port)]


def tensorboard_args(logdir: Path | str, port: int) -> list[str]:
    """``tensorboard --logdir LOGDIR`` on 127.0.0.1:``port``, from this interpreter's
    environment (a path or a URL such as ``s3://bucket/logs``)."""
    exe = str(Path(sys.executable).with_name("tensorboard"))
    return [exe, "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port)]


STOP_GRACE_S = 30.0
"""Seconds a server gets to exit after SIGTERM (sumlens saves its state then)."""


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, up to :data:`STOP_GRACE_S` to exit, then whatever is left of the server's
    process group (a child such as TensorBoard's data server) is killed."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(STOP_GRACE_S)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@contextlib.contextmanager
def server_until(
    name: str,
    args: list[str],
    env: dict[str, str],
    port: int,
    done: Callable[[Any], bool],
    poll_s: float,
    timeout_s: float,
) -> Iterator[tuple[subprocess.Popen[bytes], float]]:
    """Launch the server ``args`` (listening on ``port``) and wait until ``done(client)``
    holds, asked every ``poll_s``; yield the process and the seconds from the launch until
    then. The server is stopped on leaving (:func:`stop_server`); one that exits early says
    why (the tail of its output), one not done in ``timeout_s`` is a ``TimeoutError``."""

    with tempfile.TemporaryFile() as log:
        started = time.perf_counter()
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        try:
            with httpx.Client(
                base_url=f"http://127.0.0.1:{port}", trust_env=False, timeout=120
            ) as client:
                while not done(client):
                    if proc.poll() is not None:
                        log.seek(0)
                        tail = log.read().decode(errors="replace")[-2000:]
                        raise RuntimeError(f"{name} exited ({proc.returncode}):\n{tail}")
                    if time.perf_counter() - started > timeout_s:
                        raise TimeoutError(f"{name}: not done after {timeout_s:.0f} s")
                    time.sleep(poll_s)
            yield proc, time.perf_counter() - started
        finally:
            stop_server(proc)
