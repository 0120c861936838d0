"""What a snapshot holds: the chosen runs' scalar series, downsampled, and image samples.

Runs are named (``runs``) or matched (``run_regex``); a tag is in when ``tags`` names it or
``tag_regex`` matches it (neither: every tag), for scalars and images alike. Each scalar
series is downsampled as the scalars route does (:func:`~sumlens.board.query.scalar_series.
scalar_series`: min-max buckets on the full series, first and last point kept), so a spike
shows in the file as on the page. Images are the kept samples, evenly spread over each
series' steps, embedded as ``data:`` URIs.

With a smoothing weight, each series also holds its smoothed values, smoothed on every
point before the downsampling as the Scalars view smooths them (:mod:`~sumlens.board.query.
curves`), so the file shows the curve the page showed. With a :class:`Grouping`, the runs
are grouped as the view groups them (:mod:`~sumlens.board.api.groups`: by a regex over run
ids, by run tag or by a lineage field), and each group's centre line and band are in the
file as the view's groups answer gives them, in the colour chosen for the group if any.
With ``envelope``, each series also holds its min-max envelope (the lowest and highest raw
value of each bucket, on full resolution), drawn faint as the view draws it.

The file stays small enough to mail: :class:`Limits` bounds the points per series, the
images per series and all image bytes; a selection of more scalar series than it allows is
refused (:class:`~sumlens.board.errors.QueryError`), and images past the byte bound are left
out and counted, so the page's footer says what is not in it.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from sumlens.board.data.surface import ReadSurface, Samples
from sumlens.board.errors import NotFound, QueryError, ValueUnreadable
from sumlens.board.query.curves import METHODS, Method
from sumlens.board.query.group_fields import RunFields
from sumlens.board.query.group_query import GroupQuery, every_group, group_entry
from sumlens.board.query.scalar_series import scalar_series
from sumlens.board.query.selection import compile_pattern, select
from sumlens.board.query.xaxis import XAxis
from sumlens.board.responses import image_media_type
from sumlens.board.state.annotation_checks import EMPTY, Annotation
from sumlens.io import Image


@dataclass(frozen=True, slots=True)
class Limits:
    """How much of the selection goes in a snapshot (stated in its footer)."""

    points: int = 1000
    """Points per scalar series (min-max downsampling of the full series)."""
    images: int = 10
    """Images per image series (a run's rank and tag), evenly spread over its kept steps."""
    image_bytes: int = 16 * 1024 * 1024
    """All embedded images together, as stored (before base64)."""
    series: int = 2000
    """Scalar series; a larger selection is refused."""


MEMBERS = ("faint", "hidden")
"""How the members of a group are drawn."""


@dataclass(frozen=True, slots=True)
class Grouping:
    """How a snapshot groups its runs, as the Scalars view does: ``by`` ``regex`` (over run
    ids: ``group_regex``), ``tag`` (run tags) or ``field`` (a lineage field: ``field``), a
    centre line ``stat`` with a ``band`` around it, and the members drawn ``faint`` or
    ``hidden`` (see :class:`~sumlens.board.query.group_query.GroupQuery` for what is allowed)."""

    by: str = "regex"
    group_regex: str | None = None
    field: str | None = None
    stat: str = "mean"
    band: str = "std"
    members: str = "faint"

    def query(self, runs: list[str], tags: list[str], smoothing: float, method: str) -> GroupQuery:
        """The groups request of ``runs`` and ``tags``; a :class:`QueryError` naming the
        first setting not allowed."""
        if self.members not in MEMBERS:
            raise QueryError(f"members={self.members!r} is not one of {', '.join(MEMBERS)}")
        return GroupQuery.create(
            runs, tags, self.by, self.group_regex, self.field, self.stat, self.band, "step",
            None, None, smoothing, method,
        )  # fmt: skip

    def check(self) -> None:
        """Every setting checked, before anything is read."""
        self.query([], [], 0.0, "ema")


SERIES_FIELDS = ("run", "rank", "total", "shown", "step", "value")
"""What a snapshot keeps of each scalar series (and ``smoothed`` when smoothing)."""


def check_smoothing(weight: float, method: str) -> None:
    """Refuse a smoothing weight outside [0, 1) or a method other than :data:`METHODS`
    (a :class:`QueryError` naming the value), before anything is read."""
    if not 0.0 <= weight < 1.0:
        raise QueryError(f"smoothing={weight!r} is not a weight in [0, 1)")
    if method not in METHODS:
        raise QueryError(f"method={method!r} is not one of {', '.join(METHODS)}")


def _run_ids(surface: ReadSurface, runs: list[str], run_regex: str | None) -> list[str]:
    """The named runs (each must be served) and those whose id ``run_regex`` matches."""
    pattern = compile_pattern("run_regex", run_regex)
    for run in runs:
        if not surface.has_run(run):
            raise NotFound(f"run={run!r} is not a run of this base directory")
    names = list(dict.fromkeys(runs))
    if pattern is not None or not names:
        names += [
            entry["id"]
            for entry in surface.runs()
            if (pattern is None or pattern.search(entry["id"])) and entry["id"] not in names
        ]
    return names


def _spread(count: int, most: int) -> np.ndarray:
    """At most ``most`` indices of ``count`` items, evenly spread, first and last included."""
    if count <= most:
        return np.arange(count)
    return np.unique(np.round(np.linspace(0, count - 1, most)).astype(np.int64))


def _data_uri(encoded: bytes) -> str | None:
    """``encoded`` as a ``data:`` URI, or None when it is not an image a browser shows."""
    media = image_media_type(encoded)
    if media is None:
        return None
    return f"data:{media};base64,{base64.b64encode(encoded).decode('ascii')}"


class _ImageBudget:
    """The image bytes still allowed, and what was left out (and why)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.used = 0
        self.left_out = {"over_bytes": 0, "unreadable": 0, "not_an_image": 0, "past_limit": 0}

    def items(self, surface: ReadSurface, samples: Samples) -> list[dict[str, Any]]:
        """The embedded images of one series, steps ascending."""
        kept = samples.items
        chosen = _spread(kept.size, self.limits.images)
        self.left_out["past_limit"] += int(kept.size - chosen.size)
        out = []
        for index in chosen.tolist():
            try:
                event = surface.value(samples, index)
            except ValueUnreadable:
                event = None
            if event is None or not isinstance(event.value, Image):
                self.left_out["unreadable"] += 1
                continue
            encoded = event.value.encoded
            if self.used + len(encoded) > self.limits.image_bytes:
                self.left_out["over_bytes"] += 1
                continue
            uri = _data_uri(encoded)
            if uri is None:
                self.left_out["not_an_image"] += 1
                continue
            self.used += len(encoded)
            out.append({"step": int(kept["step"][index]), "src": uri})
        return out


def collect(
    surface: ReadSurface,
    annotations: dict[str, Annotation],
    runs: list[str] | None = None,
    run_regex: str | None = None,
    tags: list[str] | None = None,
    tag_regex: str | None = None,
    limits: Limits | None = None,
    smoothing: float = 0.0,
    method: Method = "ema",
    grouping: Grouping | None = None,
    group_colours: Mapping[str, str] | None = None,
    envelope: bool = False,
) -> dict[str, Any]:
    """The snapshot's data (its page reads it as JSON): runs with their ranks and
    annotations, scalar series per tag (smoothed by ``smoothing`` and ``method`` as the
    Scalars view smooths them, when the weight is not 0; with ``envelope``, enveloped), the
    groups of ``grouping`` (in ``group_colours`` where one was chosen), image series per
    tag, the limits and what was left out. A selection with no series, or with more scalar
    series than ``limits`` allows, is a :class:`QueryError` naming the selection."""
    check_smoothing(smoothing, method)
    if grouping is not None:
        grouping.check()
    limits = limits or Limits()
    names = _run_ids(surface, list(runs or []), run_regex)
    tag_pattern = compile_pattern("tag_regex", tag_regex)
    wanted = set(tags or [])
    every = not wanted and tag_pattern is None
    refs = select(surface, names, list(wanted), tag_regex=tag_regex)
    if len(refs) > limits.series:
        raise QueryError(
            f"the selection holds {len(refs):,} scalar series: a snapshot holds at most "
            f"{limits.series:,}; choose fewer runs or tags"
        )
    scalars: dict[str, list[dict[str, Any]]] = {}
    # a group's members are drawn by their smoothed values (equal to theirs at weight 0)
    fields = (*SERIES_FIELDS, "smoothed") if smoothing or grouping else SERIES_FIELDS
    step = XAxis("step")
    for ref in refs:
        entry = scalar_series(surface, ref, step, limits.points, smoothing, method, envelope)
        if entry is not None:
            kept = {k: entry[k] for k in fields}
            if envelope:
                kept["envelope"] = {k: entry["envelope"][k] for k in ("step", "min", "max")}
            scalars.setdefault(ref.tag, []).append(kept)
    budget = _ImageBudget(limits)
    images: dict[str, list[dict[str, Any]]] = {}
    entries = {entry["id"]: entry for entry in surface.runs()}
    for run in names:
        for tag in entries.get(run, {}).get("tags", {}).get("image", []):
            if not (every or tag in wanted or (tag_pattern and tag_pattern.search(tag))):
                continue
            for samples in surface.samples(run, "image", tag):
                items = budget.items(surface, samples)
                if items:
                    images.setdefault(tag, []).append(
                        {"run": run, "rank": samples.rank, "items": items}
                    )
    if not scalars and not images:
        said = [f"is named {', '.join(map(repr, sorted(wanted)))}"] if wanted else []
        said += [f"matches {tag_regex!r}"] if tag_regex else []
        raise QueryError(
            f"no run id matches {run_regex!r}"
            if not names
            else f"no scalar or image tag of the {len(names):,} run(s) chosen "
            f"{' or '.join(said) or 'holds a value'}: nothing to put in a snapshot"
        )
    groups = None
    if grouping is not None:
        groups = _groups(surface, grouping, names, sorted(scalars), annotations,
                         group_colours or {}, limits.points, smoothing, method)  # fmt: skip
    held = {s["run"] for by_tag in (scalars, images) for group in by_tag.values() for s in group}
    return {
        "runs": [
            {
                "id": run,
                "ranks": entries.get(run, {}).get("ranks", []),
                "annotation": annotations.get(run, EMPTY).as_json(),
            }
            for run in names
            if run in held
        ],
        "scalars": [{"tag": tag, "series": scalars[tag]} for tag in sorted(scalars)],
        "images": [{"tag": tag, "series": images[tag]} for tag in sorted(images)],
        "limits": asdict(limits),
        "smoothing": {"weight": smoothing, "method": method},
        "envelope": envelope,
        "groups": groups,
        "left_out": {"images": budget.left_out},
        "image_bytes": budget.used,
    }


def _groups(
    surface: ReadSurface,
    grouping: Grouping,
    runs: list[str],
    tags: list[str],
    annotations: Mapping[str, Annotation],
    colours: Mapping[str, str],
    points: int,
    smoothing: float,
    method: str,
) -> dict[str, Any]:
    """The groups of ``runs`` over ``tags`` as the Scalars view's groups answer holds them
    (each at most ``points`` points), with how they were made."""
    query = grouping.query(runs, tags, smoothing, method)
    groups = query.groups(annotations, RunFields(surface))
    step = XAxis("step")
    return {
        "by": query.by,
        "group_regex": grouping.group_regex if query.by == "regex" else None,
        "field": query.field,
        "stat": query.statistic.stat,
        "band": query.statistic.band,
        "members": grouping.members,
        "single": groups.single,
        "all_groups": every_group(groups, colours),
        "groups": [
            group_entry(tag, name, refs, stats, step, points, colours.get(name))
            for tag, name, refs, stats in query.aggregates(surface, groups)
        ],
    }
