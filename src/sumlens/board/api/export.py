"""Writing a selection of scalar series to CSV, JSON or Parquet.

Used by the download route and by ``sumlens export``, so a file saved from the page and one
written on the command line hold the same rows: ``run, rank, tag, step, wall_time,
value`` at full resolution, series after series in the order :func:`~sumlens.board.api.query.select`
gives. Rows are produced a series (and a bounded block) at a time, so exporting many runs
needs memory for one block, not for the whole selection.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import orjson

from sumlens.board.api.query import Range, cut, select
from sumlens.board.csv_cells import safe_cell
from sumlens.board.data.surface import ReadSurface, SeriesRef

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
    surface: ReadSurface, refs: Sequence[SeriesRef], span: Range
) -> Iterator[tuple[SeriesRef, np.ndarray]]:
    """Each selected series with its points inside ``span``."""
    for ref in refs:
        points = surface.points(ref)
        yield ref, points[cut(points, ref, span)]


def csv_chunks(surface: ReadSurface, refs: Sequence[SeriesRef], span: Range) -> Iterator[bytes]:
    """The selection as CSV with a header line, in blocks of bytes.

    Run names and tags pass through :func:`~sumlens.board.csv_cells.safe_cell`, so a
    spreadsheet opening the file never evaluates one as a formula; numbers stay numbers.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    yield buffer.getvalue().encode()
    for ref, points in series_points(surface, refs, span):
        rank = "" if ref.rank is None else ref.rank
        run, tag = safe_cell(ref.run), safe_cell(ref.tag)
        for lo in range(0, points.size, BLOCK):
            block = points[lo : lo + BLOCK]
            buffer.seek(0)
            buffer.truncate()
            writer.writerows(
                (run, rank, tag, step, repr(wall), repr(value))
                for step, wall, value in zip(
                    block["step"].tolist(),
                    block["wall"].tolist(),
                    block["value"].tolist(),
                    strict=True,
                )
            )
            yield buffer.getvalue().encode()


def json_chunks(surface: ReadSurface, refs: Sequence[SeriesRef], span: Range) -> Iterator[bytes]:
    """The selection as one JSON document ``{"series": [{run, rank, tag, step, ...}]}``.

    Columns per series; non-finite values are written as ``null`` (JSON has no NaN).
    """
    yield b'{"columns":["run","rank","tag","step","wall_time","value"],"series":['
    for n, (ref, points) in enumerate(series_points(surface, refs, span)):
        body = {
            "run": ref.run,
            "rank": ref.rank,
            "tag": ref.tag,
            "step": np.ascontiguousarray(points["step"]),
            "wall_time": np.ascontiguousarray(points["wall"]),
            "value": np.ascontiguousarray(points["value"]),
        }
        yield (b"," if n else b"") + orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY)
    yield b"]}\n"


def write_parquet(surface: ReadSurface, refs: Sequence[SeriesRef], span: Range, path: Path) -> int:
    """Write the selection as one Parquet table (a row group per series); return rows."""
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
        ]
    )
    rows = 0
    with pq.ParquetWriter(path, schema) as writer:
        for ref, points in series_points(surface, refs, span):
            n = points.size
            table = pa.table(
                {
                    "run": pa.repeat(pa.scalar(ref.run, pa.string()), n),
                    "rank": pa.repeat(pa.scalar(ref.rank, pa.int64()), n),
                    "tag": pa.repeat(pa.scalar(ref.tag, pa.string()), n),
                    "step": np.ascontiguousarray(points["step"]),
                    "wall_time": np.ascontiguousarray(points["wall"]),
                    "value": np.ascontiguousarray(points["value"]),
                },
                schema=schema,
            )
            writer.write_table(table)
            rows += n
    return rows


def write(
    surface: ReadSurface, refs: Sequence[SeriesRef], span: Range, fmt: Format, path: Path
) -> None:
    """Write the selection to ``path`` in ``fmt``."""
    if fmt not in FORMATS:
        raise ValueError(f"format={fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "parquet":
        write_parquet(surface, refs, span, path)
        return
    chunks = csv_chunks if fmt == "csv" else json_chunks
    with open(path, "wb") as handle:
        for chunk in chunks(surface, refs, span):
            handle.write(chunk)


def export_runs(
    surface: ReadSurface,
    out: Path,
    fmt: Format,
    run_regex: str | None = None,
    tag_regex: str | None = None,
) -> tuple[int, int]:
    """Write the series of ``surface``'s runs matching ``run_regex`` and ``tag_regex`` (every
    one when None) to ``out``; returns ``(runs, series)`` written."""
    if fmt not in FORMATS:
        raise ValueError(f"format={fmt!r} is not one of {', '.join(FORMATS)}")
    refs = select(surface, run_regex=run_regex or ".*", tag_regex=tag_regex or ".*")
    write(surface, refs, Range(), fmt, out)
    return len({ref.run for ref in refs}), len(refs)
