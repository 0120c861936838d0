"""Selecting scalar series and cutting them to a range: one owner for the API and export.

The scalars route, its download and ``sumlens export`` all take "these runs, these tags
(or a tag pattern), this range along this axis"; :func:`select` checks such a request
once and :func:`cut` gives the points of each series in range, so the three never
disagree about what a selection holds.

Patterns come from users, so :func:`compile_pattern`, the one place that compiles them,
uses RE2: matching takes time linear in the text, where Python's ``re`` can backtrack for
minutes holding the GIL (``(.*)*(.*)*...$x``) and stall every request. RE2 has no
backreferences or lookaround; such a pattern is refused by name. Linear is not cheap:
RE2's cost grows with the pattern's size, and with its capture groups times their nesting
(a 10 KB ``((((...))))`` took 0.2 s a tag and 400 MB), so what a pattern may cost is
bounded before anything is matched: :data:`MAX_PATTERN_LENGTH` characters,
:data:`MAX_PATTERN_NESTING` levels of parentheses, :data:`PATTERN_MEMORY` bytes for RE2
(its ``max_mem``), :data:`MAX_PATTERN_PROGRAM` instructions once compiled and, for
``group_regex``, :data:`MAX_PATTERN_GROUPS` capture groups. A pattern that only selects is
compiled without capture groups (RE2 then matches with its DFA); only ``group_regex``
keeps them. Within these bounds, matching a name of a hundred characters costs at most
tens of microseconds (under ``group_regex``, under a millisecond).
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


MAX_PATTERN_LENGTH = 512
"""Characters a user pattern may have (tag and run names are far shorter)."""
MAX_PATTERN_NESTING = 16
"""Levels of parentheses a user pattern may nest."""
MAX_PATTERN_PROGRAM = 2000
"""RE2 instructions a compiled user pattern may have: matching costs up to this many steps
a character when RE2 cannot use its DFA (counted repetitions such as ``(.?){1000}`` make
thousands from a few characters)."""
MAX_PATTERN_GROUPS = 16
"""Capture groups a pattern that keeps them (``group_regex``) may have: each one adds to
the cost of every step."""
PATTERN_MEMORY = 1 << 20
"""Bytes RE2 may use for one pattern's program and matching cache (its ``max_mem``)."""


def _options(captures: bool) -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # the refusal is raised, with RE2's reason, not printed
    options.max_mem = PATTERN_MEMORY
    options.never_capture = not captures
    return options


_SELECTING, _CAPTURING = _options(captures=False), _options(captures=True)


def compile_pattern(name: str, pattern: str | None, *, captures: bool = False) -> Pattern | None:
    """A user's regular expression, matched in linear time (RE2); None when empty.

    ``captures``: keep the capture groups (``group_regex`` names groups by them); without,
    parentheses only group, which matches the same texts at a fraction of the cost. A
    :class:`PatternError` (a 400) names ``name``, the pattern and the bound when it is past
    one of the module's bounds, or RE2's reason when RE2 refuses it (a syntax error, a
    backreference, lookaround). Compiled patterns are cached by RE2's module, so a
    pattern used again is not compiled again.
    """
    if pattern is None or pattern == "":
        return None
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternError(
            f"{name}={pattern[:40]!r}... is {len(pattern):,} characters long: a pattern may "
            f"have at most {MAX_PATTERN_LENGTH}"
        )
    depth = nesting(pattern)
    if depth > MAX_PATTERN_NESTING:
        raise PatternError(
            f"{name}={pattern!r} nests parentheses {depth} deep: a pattern may nest at most "
            f"{MAX_PATTERN_NESTING}"
        )
    try:
        compiled = re2.compile(pattern, _CAPTURING if captures else _SELECTING)
    except re2.error as err:
        reason = err.args[0] if err.args else "refused"
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        if "pattern too large" in reason:
            raise PatternError(
                f"{name}={pattern!r} needs more than RE2's budget of "
                f"{PATTERN_MEMORY >> 20} MiB for one pattern ({reason}): use smaller or fewer "
                "counted repetitions (x{n,m})"
            ) from None
        raise PatternError(
            f"{name}={pattern!r} is not a regular expression RE2 takes ({reason}); "
            "use RE2 syntax: no backreferences or lookaround"
        ) from None
    if compiled.programsize > MAX_PATTERN_PROGRAM:
        raise PatternError(
            f"{name}={pattern!r} compiles to {compiled.programsize:,} RE2 instructions: a "
            f"pattern may have at most {MAX_PATTERN_PROGRAM:,}; use smaller or fewer counted "
            "repetitions (x{n,m})"
        )
    if compiled.groups > MAX_PATTERN_GROUPS:
        raise PatternError(
            f"{name}={pattern!r} has {compiled.groups} capture groups: a pattern may have at "
            f"most {MAX_PATTERN_GROUPS}; make the others non-capturing, (?:...)"
        )
    return compiled


def nesting(pattern: str) -> int:
    """How deep ``pattern``'s parentheses nest, as RE2 reads it: escaped ones, those in a
    character class (``[(]``, ``[[:alpha:]]``) and those between ``\\Q`` and ``\\E`` are
    literal and do not count."""
    deepest = depth = 0
    i, end = 0, len(pattern)
    while i < end:
        char = pattern[i]
        if char == "\\":
            if pattern.startswith("\\Q", i):
                quoted_end = pattern.find("\\E", i + 2)
                i = end if quoted_end < 0 else quoted_end + 2
            else:
                i += 2
            continue
        if char == "[":
            i = _class_end(pattern, i)
            continue
        if char == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth = max(0, depth - 1)
        i += 1
    return deepest


def _class_end(pattern: str, start: int) -> int:
    """The index after the character class opening at ``start`` (the end of the pattern
    when it is not closed: RE2 refuses it then)."""
    i = start + 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):  # a ']' first is literal
        i += 1
    end = len(pattern)
    while i < end:
        if pattern[i] == "\\":
            i += 2
        elif pattern.startswith("[:", i) and (close := pattern.find(":]", i + 2)) >= 0:
            i = close + 2
        elif pattern[i] == "]":
            return i + 1
        else:
            i += 1
    return end


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
