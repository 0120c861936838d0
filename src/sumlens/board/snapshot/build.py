"""A snapshot of a read surface, as HTML text: the one builder of the CLI and the route."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from sumlens.board.api.curves import Method
from sumlens.board.data.annotations import Annotation
from sumlens.board.data.surface import ReadSurface
from sumlens.board.snapshot.content import Grouping, Limits, collect
from sumlens.board.snapshot.page import render


def build(
    surface: ReadSurface,
    annotations: Mapping[str, Annotation],
    plotly_js: Path,
    *,
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
) -> str:
    """The snapshot page of the chosen runs and tags of ``surface`` (see
    :func:`~sumlens.board.snapshot.content.collect` for the choice and its errors)."""
    data = collect(
        surface,
        dict(annotations),
        runs=runs,
        run_regex=run_regex,
        tags=tags,
        tag_regex=tag_regex,
        limits=limits,
        smoothing=smoothing,
        method=method,
        grouping=grouping,
        group_colours=group_colours,
        envelope=envelope,
    )
    return render(data, surface.status()["base_dir"], plotly_js)
