"""The digits CNN and data of the tests: the benchmarks' own (``benchmarks/digits.py``), so
both measure and check the same network, order and split; and :func:`reproducible`, which
only the tests need.

Tests import it as ``helpers.digits`` (pytest puts ``tests/`` and the repository root on
``sys.path``: ``pythonpath`` in pyproject.toml).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

from benchmarks.digits import DigitsCNN, batches, digits, split

__all__ = ["DigitsCNN", "batches", "digits", "reproducible", "split"]


@contextlib.contextmanager
def reproducible() -> Iterator[None]:
    """One torch thread and deterministic algorithms (restored afterwards), so training
    repeats as closely as torch allows; its last bits may still differ between CPUs and
    even between processes, so committed numbers are compared with an allowance."""
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(deterministic)
        torch.set_num_threads(threads)
