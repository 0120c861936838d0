"""Interleaved rounds: every contender once per round, in an order that changes each round.

Contenders run interleaved, so that a slow phase of a shared machine falls on all of them
alike; a ratio is then taken within each round (``benchmarks.harness.stats``) and
summarised by its median and range (``benchmarks/README.md``, "How we measure").
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from benchmarks.harness.clock import now

T = TypeVar("T")

Result = dict[str, Any]
"""One timed run: at least its ``seconds``; :func:`run_rounds` adds its ``round``."""


def spread_rounds(count: int, rounds: int, offset: int = 0) -> set[int]:
    """``count`` round indices spread evenly over ``range(rounds)`` (for slow contenders)."""
    count = min(count, rounds)
    return {(offset + i * rounds // count) % rounds for i in range(count)} if count else set()


def rotated(items: Sequence[T], round_index: int) -> list[T]:
    """``items`` rotated by one place per round: each goes first in turn."""
    if not items:
        return []
    shift = round_index % len(items)
    return [*items[shift:], *items[:shift]]


def shuffled(items: Sequence[T], round_index: int) -> list[T]:
    """``items`` in an order drawn afresh for each round, seeded by the round (repeatable)."""
    return random.Random(round_index).sample(list(items), len(items))


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
        order = rotated([unit for unit in units if r in unit.rounds], r)
        started = now()
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
        took = now() - started
        print(f"round {r + 1}/{rounds} ({took:.0f} s): " + ", ".join(line), flush=True)
