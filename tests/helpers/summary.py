"""Helpers shared by the SummaryRecord tests: reading runs back, child processes, polling."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest

from sumlens._proto import summary_pb2
from sumlens.io import Event, Histogram, RecordFile, iter_events
from sumlens.io.naming import file_kind

T = TypeVar("T")

CHILD_TIMEOUT = 120.0
"""Seconds any child process may take before the test fails (a deadlock guard)."""


def read_events(path: str | os.PathLike[str], *, allow_torn_tail: bool = False) -> list[Event]:
    """Every event of a file or run directory; fails on any damage met while reading."""
    stream = iter_events(path)
    events = list(stream)
    stats = stream.stats
    assert stats.corrupt_records == 0, stats
    assert stats.skipped_bytes == 0, stats
    if not allow_torn_tail:
        assert stats.torn_tail_bytes == 0, stats
    return events


def files_of(directory: Path, kind: str) -> list[Path]:
    """The ``summary``, ``lineage`` or ``tensorboard`` files of a run directory, sorted by name."""
    return sorted(p for p in directory.iterdir() if p.is_file() and file_kind(p.name) == kind)


def payloads(path: Path) -> list[bytes]:
    """The payloads of every complete record of one file."""
    return list(RecordFile(path).read_payloads())


def first_event(path: Path) -> summary_pb2.Event:
    """The first record of a MindSpore summary file, parsed."""
    event = summary_pb2.Event()
    event.ParseFromString(payloads(path)[0])
    return event


def mode_of(path: Path) -> int:
    """Permission bits of ``path``."""
    return path.stat().st_mode & 0o777


def child_code(body: str) -> str:
    """Dedent ``body`` for ``python -c``."""
    return textwrap.dedent(body)


def run_child(
    body: str,
    *args: str,
    cwd: Path,
    timeout: float = CHILD_TIMEOUT,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``body`` in a fresh interpreter and wait for it (bounded by ``timeout``).

    ``env`` adds to (not replaces) this process's environment.
    """
    return subprocess.run(
        [sys.executable, "-c", child_code(body), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
    )


class Child:
    """A fresh interpreter running ``body``; its stdout lines are read on a thread."""

    def __init__(self, body: str, *args: str, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", child_code(body), *args],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def read_line(self, timeout: float = CHILD_TIMEOUT) -> str:
        """The next line the child prints; fails (killing the child) if none comes in time."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            self.process.kill()
            raise AssertionError(
                f"child printed nothing for {timeout} s; stderr:\n{self.stderr()}"
            ) from None
        if line is None:
            raise AssertionError(
                f"child exited early ({self.process.wait(30)}); stderr:\n{self.stderr()}"
            )
        return line

    def rest(self, timeout: float = CHILD_TIMEOUT) -> list[str]:
        """Every line the child prints from now until its stdout closes."""
        lines = []
        while (line := self._lines.get(timeout=timeout)) is not None:
            lines.append(line)
        return lines

    def wait(self, timeout: float = CHILD_TIMEOUT) -> int:
        """Wait for the child to end (killing it after ``timeout``); its return code."""
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError(f"child still running after {timeout} s") from None

    def stderr(self) -> str:
        """What the child wrote to stderr (once it has ended)."""
        assert self.process.stderr is not None
        if self.process.poll() is None:
            return "(still running)"
        return self.process.stderr.read()

    def kill(self) -> None:
        """End the child if it still runs (for cleanup)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


def wait_for(probe: Callable[[], T | None], timeout: float, interval: float = 0.01) -> T | None:
    """Call ``probe`` until it returns something truthy or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if result or time.monotonic() >= deadline:
            return result
        time.sleep(interval)


def assert_same_buckets(actual: Histogram, expected: Histogram) -> None:
    """Equal buckets, counts of non-finite values and extremes (the sum is the caller's)."""
    np.testing.assert_array_equal(actual.counts, expected.counts)
    np.testing.assert_array_equal(actual.left, expected.left)
    np.testing.assert_array_equal(actual.width, expected.width)
    for field in ("count", "nan_count", "pos_inf_count", "neg_inf_count", "min", "max"):
        assert getattr(actual, field) == getattr(expected, field), field


def edge_values(values: np.ndarray, reference: Histogram) -> int:
    """How many finite ``values`` lie within 1e-6 (relative to the range) of an inner edge."""
    finite = np.sort(values[np.isfinite(values)].astype(np.float64))
    if reference.left.size < 2 or finite.size == 0:
        return 0
    span = max(reference.max - reference.min, 1.0)
    inner = reference.left[1:]
    lo = np.searchsorted(finite, inner - 1e-6 * span, side="left")
    hi = np.searchsorted(finite, inner + 1e-6 * span, side="right")
    return int((hi - lo).sum())


def device_histogram_vs_reference(tensor: Any, *, exact: bool) -> None:
    """Compare ``device_statistics`` of a torch tensor with :func:`reference_histogram`.

    Statistics must be equal (the sum to 1e-12 relative). Counts must be equal when
    ``exact``; otherwise they must have the same total and an L1 distance of at most
    twice :func:`edge_values` (a value on an edge may land one bucket over).
    """
    import torch

    from sumlens.summary.convert import torch_numpy_dtype
    from sumlens.summary.device_histogram import device_statistics, histogram_from_statistics
    from sumlens.summary.histogram import MAX_BUCKETS, bucket_count, reference_histogram

    reduced = tensor.dtype in (torch.float16, torch.bfloat16)
    array = (tensor.detach().float() if reduced else tensor.detach()).cpu().numpy()
    finite = int(np.isfinite(array.astype(np.float64)).sum())
    bins = bucket_count(finite) or MAX_BUCKETS
    packed = device_statistics(tensor, bins).cpu().numpy()
    actual = histogram_from_statistics(packed, torch_numpy_dtype(tensor), tensor.numel())
    reference = reference_histogram(array)
    for field in ("count", "nan_count", "pos_inf_count", "neg_inf_count", "min", "max"):
        assert getattr(actual, field) == getattr(reference, field), field
    assert actual.sum == pytest.approx(reference.sum, rel=1e-12, abs=1e-12)
    np.testing.assert_array_equal(actual.left, reference.left)
    np.testing.assert_array_equal(actual.width, reference.width)
    if exact:
        np.testing.assert_array_equal(actual.counts, reference.counts)
    else:
        assert actual.counts.sum() == reference.counts.sum()
        allowed = 2 * edge_values(array.reshape(-1), reference)
        assert np.abs(actual.counts - reference.counts).sum() <= allowed


def user_info(message: Any) -> dict[str, Any]:
    """The key -> value pairs of a custom lineage message, whatever map each one sits in."""
    out: dict[str, Any] = {}
    for entry in message.user_info:
        for field in ("map_int32", "map_double", "map_str"):
            out.update(dict(getattr(entry, field)))
    return out


def custom_lineage(events: list[Event]) -> dict[str, Any]:
    """Every custom lineage pair among ``events`` (later ones win)."""
    out: dict[str, Any] = {}
    for event in events:
        if event.plugin == "custom_lineage_data":
            out.update(user_info(event.value))
    return out
