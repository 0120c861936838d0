"""How the benchmarks print numbers, and the table of measures against their targets."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any


def fmt_s(seconds: float) -> str:
    """Seconds with three decimals below 10 s, one above."""
    return f"{seconds:.3f}" if seconds < 10 else f"{seconds:.1f}"


def fmt_x(ratio: float) -> str:
    """A ratio with two decimals below 10x, one above."""
    return f"{ratio:.2f}x" if ratio < 10 else f"{ratio:.1f}x"


def fmt_duration(seconds: float) -> str:
    """A duration with its unit, from seconds down to microseconds (``3.2 ms``)."""
    if seconds >= 10:
        return f"{seconds:.1f} s"
    if seconds >= 0.1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.1f} us"


def fmt_range(stats: dict[str, float], fmt: Callable[[float], str] = fmt_duration) -> str:
    """``median (min-max)`` of a :func:`benchmarks.harness.stats.spread`."""
    return f"{fmt(stats['median'])} ({fmt(stats['min'])}-{fmt(stats['max'])})"


def fmt_span(values: Sequence[float]) -> str:
    """``min - max`` of seconds (``-`` for none)."""
    return f"{fmt_s(min(values))} - {fmt_s(max(values))}" if values else "-"


def fmt_spread_s(values: Sequence[float]) -> str:
    """``median s (min - max, n=N)`` of seconds."""
    low, mid, high = (fmt_s(v) for v in (min(values), statistics.median(values), max(values)))
    return f"{mid} s ({low} - {high}, n={len(values)})"


def fmt_short(value: float, digits: int = 3) -> str:
    """``value`` with at most ``digits`` decimals, trailing zeros dropped; ``never`` for an
    infinite one (a target never reached)."""
    return "never" if math.isinf(value) else f"{value:.{digits}f}".rstrip("0").rstrip(".")


class MeasureTable:
    """A markdown table of measures against their targets, printed a row at a time and kept
    for the results JSON (``rows``)."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def row(self, what: str, target: str, measured: str, met: bool | None, value: Any) -> None:
        """Print one measure (``met`` None: no target) and keep it."""
        outcome = "" if met is None else ("met" if met else "NOT MET")
        print(f"| {what} | {target} | {measured} | {outcome} |")
        self.rows.append({"what": what, "target": target, "value": value, "met": met})
