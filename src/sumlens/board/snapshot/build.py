"""A snapshot of a read surface, as HTML text: the one builder of the CLI and the route."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sumlens.board.data.surface import ReadSurface
from sumlens.board.snapshot.content import collect
from sumlens.board.snapshot.page import render
from sumlens.board.state.annotation_checks import Annotation


def build(
    surface: ReadSurface,
    annotations: Mapping[str, Annotation],
    plotly_js: Path,
    **choice: Any,
) -> str:
    """The snapshot page of the runs and tags of ``surface`` that ``choice`` names, drawn
    as it says: :func:`~sumlens.board.snapshot.content.collect`'s keyword arguments (runs,
    tags, limits, smoothing, grouping ...), checked there, with its errors."""
    data = collect(surface, dict(annotations), **choice)
    return render(data, surface.status()["base_dir"], plotly_js)
