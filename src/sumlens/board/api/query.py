"""Selecting scalar series and cutting them to a range: one owner for the API and export.

The scalars route, its download and ``sumlens export`` all take "these runs, these tags
(or a tag pattern), this range along this axis"; :func:`select` checks such a request
once and :func:`cut` gives the points of each series in range, so the three never
disagree about what a selection holds.

Patterns come from users (any web page can send a GET), so :func:`compile_pattern`, the one
place that compiles them, uses RE2: matching takes time linear in the text, where Python's
``re`` can backtrack for minutes holding the GIL (``(.*)*(.*)*...$x``) and stall every
request. RE2 has no backreferences or lookaround; such a pattern is refused by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import re2

from sumlens.board.data.surface import ReadSurface, SeriesRef
from sumlens.board.errors import PatternError, QueryError

Axis = Literal["step", "relative", "wall"]
AXES = ("step", "relative", "wall")


class Pattern(Protocol):
    """A compiled user pattern: only searching is used."""

    def search(self, text: str) -> object | None:
        """A match of the pattern anywhere in ``text``, or None."""


_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # the refusal is raised, with RE2's reason, not printed


def compile_pattern(name: str, pattern: str | None) -> Pattern | None:
    """A user's regular expression, matched in linear time (RE2); None when empty.

    A :class:`PatternError` names ``name``, the pattern and RE2's reason when RE2 refuses it
    (a syntax error, a backreference, lookaround, or a pattern too large to compile).
    """
    if pattern is None or pattern == "":
        return None
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as err:
        reason = err.args[0] if err.args else "refused"
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        raise PatternError(
            f"{name}={pattern!r} is not a regular expression RE2 takes ({reason}); "
            "use RE2 syntax: no backreferences or lookaround"
        ) from None


def select(
    surface: ReadSurface,
    runs: Iterable[str] = (),
    tags: Iterable[str] = (),
    run_regex: str | None = None,
    tag_regex: str | None = None,
) -> list[SeriesRef]:
    """The series of the named runs (or runs matching ``run_regex``) and tags.

    Tags are the names in ``tags`` plus those matching ``tag_regex``; with neither, every
    tag. Unknown runs and tags select nothing (a run may appear while the page is open).
    """
    run_pattern = compile_pattern("run_regex", run_regex)
    tag_pattern = compile_pattern("tag_regex", tag_regex)
    names = list(dict.fromkeys(runs))
    if run_pattern is not None:
        names += [
            run["id"]
            for run in surface.runs()
            if run_pattern.search(run["id"]) and run["id"] not in names
        ]
    wanted = set(tags)
    every_tag = not wanted and tag_pattern is None
    chosen = []
    for name in names:
        for ref in surface.series(name):
            if every_tag or ref.tag in wanted or (tag_pattern and tag_pattern.search(ref.tag)):
                chosen.append(ref)
    return chosen


@dataclass(frozen=True, slots=True)
class Range:
    """An inclusive range along an axis; a missing end is open."""

    axis: Axis = "step"
    start: float | None = None
    end: float | None = None

    @classmethod
    def create(cls, axis: str, start: float | None, end: float | None) -> Range:
        """A checked range (axis known, ends finite and in order)."""
        if axis not in AXES:
            raise QueryError(f"axis={axis!r} is not one of {', '.join(AXES)}")
        for name, value in (("start", start), ("end", end)):
            if value is not None and not np.isfinite(value):
                raise QueryError(f"{name}={value!r} is not allowed: give a finite number")
        if start is not None and end is not None and start > end:
            raise QueryError(f"start={start!r} is after end={end!r}: give start <= end")
        return cls(axis, start, end)  # type: ignore[arg-type]

    def x(self, points: np.ndarray, first_wall: float) -> np.ndarray:
        """The points' coordinates along this axis."""
        if self.axis == "step":
            return points["step"]
        if self.axis == "wall":
            return points["wall"]
        return points["wall"] - first_wall


def cut(points: np.ndarray, ref: SeriesRef, span: Range) -> np.ndarray:
    """Indices of the points inside ``span`` (all of them when it is open at both ends)."""
    if span.start is None and span.end is None:
        return np.arange(points.size)
    if span.axis == "step":  # steps strictly increase: two binary searches
        lo = 0 if span.start is None else int(np.searchsorted(points["step"], span.start, "left"))
        hi = (
            points.size
            if span.end is None
            else int(np.searchsorted(points["step"], span.end, "right"))
        )
        return np.arange(lo, max(lo, hi))
    x = span.x(points, ref.first_wall)
    inside = np.ones(points.size, dtype=bool)
    if span.start is not None:
        inside &= x >= span.start
    if span.end is not None:
        inside &= x <= span.end
    return np.flatnonzero(inside)
