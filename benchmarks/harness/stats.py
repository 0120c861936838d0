"""Medians, quartiles and ranges of timings; ratios taken within a round; their verdicts."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from benchmarks.harness.rounds import Result

NOISE_TIE = 1.3
"""Ratios under this are ties on these noisy machines (anchors.md)."""


def spread(values: Sequence[float]) -> dict[str, float]:
    """Median, min and max of ``values`` (at least one)."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def summary(values: Sequence[float]) -> dict[str, float] | None:
    """Median, min, max and count of ``values`` (None for none)."""
    if not values:
        return None
    return {**spread(values), "n": len(values)}


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


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of ``values`` (linear between the two nearest)."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def percentile_ms(seconds: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of ``seconds``, in milliseconds."""
    return float(np.percentile(np.asarray(seconds) * 1000, q))


def present(results: Iterable[dict[str, Any]], key: str) -> list[float]:
    """The values of ``key`` in the results that have one."""
    return [r[key] for r in results if r.get(key) is not None]


def median_of(results: Iterable[dict[str, Any]], key: str) -> float | None:
    """The median of ``key`` over the results that have it (None when none has)."""
    values = present(results, key)
    return statistics.median(values) if values else None


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
