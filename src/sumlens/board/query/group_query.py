"""Groups of runs as the Scalars view asks for them: the checked request (:class:`GroupQuery`),
the runs it groups (by a regex over run ids, by run tag or by a lineage field), and each
group's JSON entry. The routes are :mod:`sumlens.board.api.groups`'; the snapshot builder
groups its runs with the same request (:mod:`sumlens.board.snapshot.content`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, cast

import numpy as np
from fastapi import Query

from sumlens.board.data.surface import ReadSurface, SeriesRef
from sumlens.board.errors import QueryError
from sumlens.board.query.curves import METHODS, Method, pick
from sumlens.board.query.group_fields import RunFields, group_name
from sumlens.board.query.group_stats import Aggregate, Statistic, aggregate
from sumlens.board.query.selection import Pattern, compile_pattern
from sumlens.board.query.xaxis import XAxis
from sumlens.board.state.annotation_checks import Annotation

GROUP_BY = ("regex", "tag", "field")

RunsParam = Annotated[list[str], Query(description="run ids, e.g. ./ or ./a/b (repeatable)")]
TagsParam = Annotated[list[str], Query(description="scalar tags (repeatable)")]
GroupRegexParam = Annotated[
    str | None, Query(description="by=regex: RE2 pattern; its capture groups name the group")
]
FieldParam = Annotated[str | None, Query(description="by=field: a lineage field, e.g. hparam/lr")]
StatParam = Annotated[str, Query(description="a group's centre line: mean or median")]
BandParam = Annotated[str, Query(description="std, minmax or p<lo>-<hi> (p25-75)")]
SmoothingParam = Annotated[float, Query(ge=0.0, lt=1.0, description="weight in [0, 1)")]
MethodParam = Annotated[str, Query(description="ema or average")]


@dataclass(frozen=True, slots=True)
class Groups:
    """The selected runs split into named groups (in order of first member) and singles."""

    members: dict[str, list[str]]
    single: list[str]


def group_runs(
    runs: list[str], by: str, pattern: Pattern | None, run_names: dict[str, tuple[str, ...]]
) -> Groups:
    """Split ``runs`` by ``pattern`` (``by="regex"``) or else by the group names
    ``run_names`` gives each (its run tags, or its field's value)."""
    members: dict[str, list[str]] = {}
    single = []
    for run in dict.fromkeys(runs):
        names = _regex_names(pattern, run) if by == "regex" else list(run_names.get(run, ()))
        for name in names:
            members.setdefault(name, []).append(run)
        if not names:
            single.append(run)
    return Groups(members, single)


def _regex_names(pattern: Pattern | None, run: str) -> list[str]:
    """The group ``run`` falls in by ``pattern`` (none when it does not match)."""
    found: Any = pattern.search(run) if pattern is not None else None
    if found is None:
        return []
    captured = found.groups()
    if not captured:
        return [found.group(0)]
    names = {index: name for name, index in getattr(found.re, "groupindex", {}).items()}
    parts = [
        f"{names[i]}={value or ''}" if i in names else (value or "")
        for i, value in enumerate(captured, start=1)
    ]
    return [" ".join(parts)]


@dataclass(frozen=True, slots=True)
class GroupQuery:
    """A checked groups request."""

    runs: list[str]
    tags: list[str]
    by: str
    pattern: Pattern | None
    field: str | None
    statistic: Statistic
    axis: XAxis
    smoothing: float
    method: Method

    @classmethod
    def create(
        cls,
        runs: list[str],
        tags: list[str],
        by: str,
        group_regex: str | None,
        field: str | None,
        stat: str,
        band: str,
        axis: str,
        start: float | None,
        end: float | None,
        smoothing: float,
        method: str,
    ) -> GroupQuery:
        """Every parameter checked; a :class:`QueryError` names the first not allowed."""
        if by not in GROUP_BY:
            raise QueryError(f"by={by!r} is not one of {', '.join(GROUP_BY)}")
        if method not in METHODS:
            raise QueryError(f"method={method!r} is not one of {', '.join(METHODS)}")
        pattern = compile_pattern("group_regex", group_regex, captures=True)
        if by == "regex" and pattern is None:
            raise QueryError("group_regex='' is empty: give a regular expression (by=regex)")
        if by == "field" and not field:
            raise QueryError(
                f"field={field or ''!r} is empty: give a hyper-parameter or lineage field id "
                "(by=field), e.g. hparam/lr or learning_rate"
            )
        statistic = Statistic.create(stat, band)
        return cls(
            list(runs),
            list(tags),
            by,
            pattern,
            field if by == "field" else None,
            statistic,
            XAxis.create(axis, start, end),
            smoothing,
            cast(Method, method),
        )

    def groups(self, annotations: Mapping[str, Annotation], fields: RunFields) -> Groups:
        """The selected runs grouped as asked (``annotations``: each run's, for its tags)."""
        names: dict[str, tuple[str, ...]] = {}
        if self.by == "tag":
            names = {run: a.tags for run, a in annotations.items()}
        elif self.field is not None:
            column = fields.column(self.field)
            names = {
                run: (group_name(column, value),)
                for run, value in column.values.items()
                if value is not None
            }
        return group_runs(self.runs, self.by, self.pattern, names)

    def aggregates(
        self, surface: ReadSurface, groups: Groups
    ) -> Iterator[tuple[str, str, list[SeriesRef], Aggregate]]:
        """Per tag, then group: its name, its member series and their statistics."""
        for tag in dict.fromkeys(self.tags):
            for name, runs in groups.members.items():
                refs = [ref for run in runs for ref in surface.series(run) if ref.tag == tag]
                stats = aggregate(
                    surface, refs, self.statistic, self.axis, self.smoothing, self.method
                )
                if stats is not None:
                    yield tag, name, refs, stats


def inside_range(stats: Aggregate, axis: XAxis) -> np.ndarray:
    """Indices of the steps with an x inside ``axis``'s range (all along step, unranged)."""
    x = stats.step if stats.x is None else stats.x
    keep = np.isfinite(x)
    if axis.start is not None:
        keep &= x >= axis.start
    if axis.end is not None:
        keep &= x <= axis.end
    return np.flatnonzero(keep)


def group_entry(
    tag: str,
    name: str,
    refs: list[SeriesRef],
    stats: Aggregate,
    axis: XAxis,
    points: int,
    colour: str | None,
) -> dict[str, Any]:
    """A group's JSON entry: its chosen ``colour`` (None: automatic), its members, and at
    most ``points`` of its steps in range, picked by the centre line's min-max downsample
    (the band follows the same steps)."""
    inside = inside_range(stats, axis)
    chosen = inside[pick(stats.step[inside], stats.center[inside], points)]
    entry: dict[str, Any] = {
        "name": name,
        "tag": tag,
        "colour": colour,
        "members": [{"run": ref.run, "rank": ref.rank} for ref in refs],
        "total": int(stats.step.size),
        "shown": int(chosen.size),
        "step": stats.step[chosen],
        "center": stats.center[chosen],
        "low": stats.low[chosen],
        "high": stats.high[chosen],
        "count": stats.count[chosen],
    }
    if stats.x is not None:
        entry.update(x=stats.x[chosen], missing=stats.missing)
    return entry


def every_group(groups: Groups, colours: Mapping[str, str]) -> list[dict[str, Any]]:
    """Every group of the runs, whatever tags a chart asks for: its name, chosen colour
    (None: automatic) and member runs. The pages colour groups over these (colours.js
    GroupColours), so every chart and a snapshot give a group the same colour."""
    return [
        {"name": name, "colour": colours.get(name), "runs": runs}
        for name, runs in groups.members.items()
    ]
