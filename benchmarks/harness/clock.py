"""The benchmarks' one clock, and the waits measured on it.

Standard library only: the anchors' workers (``benchmarks/_anchors``) time their runs with
it under MindSpore's venv, which has nothing of this repository installed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


now: Callable[[], float] = time.perf_counter
"""Seconds on the benchmarks' clock: only differences count. The clock itself, not a
function around it, so timing a call of a microsecond adds nothing to it."""

shared_now: Callable[[], float] = time.monotonic
"""Seconds on the machine's monotonic clock, the same in every process: the latency proxy
(:mod:`benchmarks.harness.latency_proxy`) stamps its log with it."""

cpu_now: Callable[[], float] = time.process_time
"""This process's CPU seconds so far (user and system, every thread)."""


def timed(call: Callable[[], T]) -> tuple[float, T]:
    """The seconds ``call()`` took, and what it returned."""
    started = now()
    result = call()
    return now() - started, result


def poll_until(ready: Callable[[], bool], poll_s: float, timeout_s: float, what: str) -> float:
    """Ask ``ready()`` every ``poll_s`` until it holds; the seconds that took. Not done within
    ``timeout_s`` is a ``TimeoutError`` naming ``what``."""
    started = now()
    while not ready():
        if now() - started > timeout_s:
            raise TimeoutError(f"{what}: not done after {timeout_s:.0f} s")
        time.sleep(poll_s)
    return now() - started
