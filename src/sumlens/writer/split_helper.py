"""The thread that bins one part of a large array while the caller bins the other.

Two parts at once halve the wait only if the two threads run on two CPUs. After the
process has been idle (between the histograms of a training loop: always), Linux wakes the
helper on the caller's CPU, where the two share one CPU while the other idles: measured on
the 2-vCPU VMs here, a million values took 750-1,300 us for the first ~60 ms of calls,
against 410 us in a burst. So before each job the helper's CPUs are set to every CPU the
process may use except the one the caller runs on (a call to ``sched_getcpu``, 0.1 us,
and a system call, 1 us, only when the caller has moved): 410-460 us from the first call.
Where either call is missing (not Linux) or refused, the helper runs where the scheduler
puts it.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

logger = logging.getLogger(__name__)


def _current_cpu_reader() -> Callable[[], int] | None:
    """libc's ``sched_getcpu`` (the CPU the calling thread runs on), or None without it."""
    try:
        function = ctypes.CDLL(None).sched_getcpu
    except (AttributeError, OSError):
        return None
    function.restype = ctypes.c_int
    function.argtypes = []
    return function


class SplitHelper:
    """One worker thread, kept off the CPU of whoever hands it a job (:meth:`submit`)."""

    def __init__(self, cpus: set[int]) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sumlens-histogram")
        self._cpus = frozenset(cpus)
        self._current_cpu = _current_cpu_reader() if hasattr(os, "sched_setaffinity") else None
        self._native_id = self._executor.submit(threading.get_native_id).result()
        self._avoided = -1  # the CPU the helper is kept off now (-1: none)

    def submit(self, function: Callable[..., Any], *args: Any) -> Future:
        """Run ``function(*args)`` on the helper thread, away from the calling thread's CPU."""
        if self._current_cpu is not None:
            self._keep_off(self._current_cpu())
        return self._executor.submit(function, *args)

    def _keep_off(self, cpu: int) -> None:
        if cpu == self._avoided or cpu not in self._cpus:
            return
        try:
            os.sched_setaffinity(self._native_id, self._cpus - {cpu})
        except OSError as err:  # CPUs taken away (a cpuset), or not allowed: stop trying
            logger.debug("the histogram helper stays where the scheduler puts it: %s", err)
            self._current_cpu = None
            return
        self._avoided = cpu
