"""Writing a selection of scalar series to CSV, JSON or Parquet.

Used by the download route and by ``sumlens export``, so a file saved from the page and one
written on the command line hold the same rows: ``run, rank, tag, step, wall_time,
value`` at full resolution, series after series in the order
:func:`~sumlens.board.query.selection.select` gives. Rows are produced a series (and a
bounded block) at a time, so exporting many runs needs memory for one block, not for the
whole selection.

Along a tag axis (``tag:epoch``, :mod:`sumlens.board.query.xaxis`) each row also holds its
``x``, the x tag's value at its step: empty (``null`` in JSON) where the x tag has none,
and with a range only the rows whose x is in it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import orjson

from sumlens.board.csv_cells import safe_cell
from sumlens.board.data.surface import ReadSurface, SeriesRef
from sumlens.board.query.selection import select
from sumlens.board.query.xaxis import XAxis, place
from sumlens.board.state.annotation_checks import Annotation

Format = Literal["csv", "json", "parquet"]
FORMATS = ("csv", "json", "parquet")
SUFFIXES: dict[str, Format] = {
    ".csv": "csv",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}
"""File name suffixes that say the format (``sumlens export -o x.csv`` needs no --format)."""
COLUMNS = ("run", "rank", "tag", "step", "wall_time", "value")
BLOCK = 65_536
"""Rows formatted at a time."""


def format_of(path: Path) -> Format | None:
    """The format ``path``'s suffix names (case-insensitive), or None."""
    return SUFFIXES.get(path.suffix.lower())


def series_points(
    surface: ReadSurface, refs: Sequence[SeriesRef], axis: XAxis
) -> Iterator[tuple[SeriesRef, np.ndarray, np.ndarray | None]]:
    """Each selected series with its points in ``axis``'s range and, along a tag axis,
    their x (NaN where the x tag has none)."""
    for ref in refs:
        points = surface.points(ref)
        placed = place(surface, ref, points, axis, keep_missing=True)
        yield ref, points[placed.index], placed.x


def _x_cell(x: float) -> str:
    return repr(x) if np.isfinite(x) else ""


def csv_chunks(surface: ReadSurface, refs: Sequence[SeriesRef], axis: XAxis) -> Iterator[bytes]:
    """The selection as CSV with a header line, in blocks of bytes.

    Run names and tags pass through :func:`~sumlens.board.csv_cells.safe_cell`, so a
    spreadsheet opening the file never evaluates one as a formula; numbers stay numbers.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS if axis.tag is None else (*COLUMNS, "x"))
    yield buffer.getvalue().encode()
    for ref, points, x in series_points(surface, refs, axis):
        rank = "" if ref.rank is None else ref.rank
        run, tag = safe_cell(ref.run), safe_cell(ref.tag)
        for lo in range(0, points.size, BLOCK):
            block = points[lo : lo + BLOCK]
            buffer.seek(0)
            buffer.truncate()
            rows: Iterator[tuple[object, ...]] = (
                (run, rank, tag, step, repr(wall), repr(value))
                for step, wall, value in zip(
                    block["step"].tolist(),
                    block["wall"].tolist(),
                    block["value"].tolist(),
                    strict=True,
                )
            )
            if x is not None:
                xs = x[lo : lo + BLOCK].tolist()
                rows = ((*row, _x_cell(v)) for row, v in zip(rows, xs, strict=True))
            writer.writerows(rows)
            yield buffer.getvalue().encode()


def selected_annotations(
    refs: Sequence[SeriesRef], annotations: Mapping[str, Annotation] | None
) -> dict[str, dict[str, Any]]:
    """The annotations (tags, note, colour) of the runs of ``refs`` that have one, by run."""
    given = annotations or {}
    runs = dict.fromkeys(ref.run for ref in refs)
    return {run: given[run].as_json() for run in runs if run in given}


def json_chunks(
    surface: ReadSurface,
    refs: Sequence[SeriesRef],
    axis: XAxis,
    annotations: Mapping[str, Annotation] | None = None,
) -> Iterator[bytes]:
    """The selection as one JSON document ``{"series": [{run, rank, tag, step, ...}],
    "annotations": {run: {tags, note, colour}}}`` (the annotated runs of the selection).

    Columns per series; non-finite values are written as ``null`` (JSON has no NaN). Along
    a tag axis the document names it (``"axis": "tag:epoch"``) and each series has ``x``.
    """
    columns = COLUMNS if axis.tag is None else (*COLUMNS, "x")
    head = {"columns": columns} if axis.tag is None else {"axis": axis.name, "columns": columns}
    yield orjson.dumps(head)[:-1] + b',"series":['
    for n, (ref, points, x) in enumerate(series_points(surface, refs, axis)):
        body = {
            "run": ref.run,
            "rank": ref.rank,
            "tag": ref.tag,
            "step": np.ascontiguousarray(points["step"]),
            "wall_time": np.ascontiguousarray(points["wall"]),
            "value": np.ascontiguousarray(points["value"]),
            **({} if x is None else {"x": x}),
        }
        yield (b"," if n else b"") + orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY)
    yield b'],"annotations":' + orjson.dumps(selected_annotations(refs, annotations)) + b"}\n"


def write_parquet(
    surface: ReadSurface,
    refs: Sequence[SeriesRef],
    axis: XAxis,
    path: Path,
    annotations: Mapping[str, Annotation] | None = None,
) -> int:
    """Write the selection as one Parquet table (a row group per series; the runs'
    annotations in its metadata, ``sumlens.annotations``); return rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            ("run", pa.string()),
            ("rank", pa.int64()),
            ("tag", pa.string()),
            ("step", pa.int64()),
            ("wall_time", pa.float64()),
            ("value", pa.float64()),
            *([] if axis.tag is None else [("x", pa.float64())]),
        ],
        metadata={"sumlens.annotations": orjson.dumps(selected_annotations(refs, annotations))},
    )
    rows = 0
    with pq.ParquetWriter(path, schema) as writer:
        for ref, points, x in series_points(surface, refs, axis):
            n = points.size
            table = pa.table(
                {
                    "run": pa.repeat(pa.scalar(ref.run, pa.string()), n),
                    "rank": pa.repeat(pa.scalar(ref.rank, pa.int64()), n),
                    "tag": pa.repeat(pa.scalar(ref.tag, pa.string()), n),
                    "step": np.ascontiguousarray(points["step"]),
                    "wall_time": np.ascontiguousarray(points["wall"]),
                    "value": np.ascontiguousarray(points["value"]),
                    # NaN (no x at that step) as null, as in CSV and JSON
                    **({} if x is None else {"x": pa.array(x, from_pandas=True)}),
                },
                schema=schema,
            )
            writer.write_table(table)
            rows += n
    return rows


def write(
    surface: ReadSurface,
    refs: Sequence[SeriesRef],
    axis: XAxis,
    fmt: Format,
    path: Path,
    annotations: Mapping[str, Annotation] | None = None,
) -> None:
    """Write the selection to ``path`` in ``fmt``, with the runs' ``annotations`` where the
    format has room (JSON, Parquet; a CSV row would repeat a run's note on every point)."""
    if fmt not in FORMATS:
        raise ValueError(f"format={fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "parquet":
        write_parquet(surface, refs, axis, path, annotations)
        return
    chunks = (
        csv_chunks(surface, refs, axis)
        if fmt == "csv"
        else json_chunks(surface, refs, axis, annotations)
    )
    with open(path, "wb") as handle:
        for chunk in chunks:
            handle.write(chunk)


def export_runs(
    surface: ReadSurface,
    out: Path,
    fmt: Format,
    run_regex: str | None = None,
    tag_regex: str | None = None,
    annotations: Mapping[str, Annotation] | None = None,
) -> tuple[int, int]:
    """Write the series of ``surface``'s runs matching ``run_regex`` and ``tag_regex`` (every
    one when None) to ``out``, with their ``annotations``; returns ``(runs, series)``
    written."""
    if fmt not in FORMATS:
        raise ValueError(f"format={fmt!r} is not one of {', '.join(FORMATS)}")
    refs = select(surface, run_regex=run_regex or ".*", tag_regex=tag_regex or ".*")
    write(surface, refs, XAxis("step"), fmt, out, annotations)
    return len({ref.run for ref in refs}), len(refs)
