"""``/api/v1/text``: one kept text of a series, rendered as safe HTML, a part at a time.

A text (:class:`~sumlens.io.Text`, TensorBoard's text plugin) of one string is one
markdown document; a 1-D or 2-D one is a table of markdown cells, as TensorBoard shows
it (1-D: a column); of a deeper one only the first 2-D slice is shown, as TensorBoard
does. Markdown is rendered by :func:`~sumlens.board.query.markdown.render_markdown` (no raw
HTML, no unsafe links, no loaded images).

A long text comes in parts, so that a 10 MB one neither holds the server for a minute
nor freezes the page: the answer holds ``limit`` characters of the document from
``offset`` (cut between markdown blocks, :mod:`~sumlens.board.query.text_parts`), or the
rows of a table from row ``offset`` up to ``limit`` characters and ``MAX_ROWS`` rows;
``next`` is where the next part starts (null after the last), ``length`` how many
characters (rows) there are, ``size_bytes`` and ``remaining_bytes`` the UTF-8 size of the
whole and of what follows the part; a page asks for every part at the same ``step``. A
table shows at most ``MAX_COLUMNS`` columns and a cell at most its share of a part; the
answer's ``note`` says what is left out.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from sumlens.board.data.surface import ReadSurface
from sumlens.board.errors import QueryError
from sumlens.board.query.kept import at_step, kept_value
from sumlens.board.query.lookup import pick_series
from sumlens.board.query.markdown import render_markdown
from sumlens.board.query.text_parts import normalized, text_part
from sumlens.board.responses import json_response
from sumlens.io import Text

RunParam = Annotated[str, Query(description="run id, e.g. ./ or ./a/b")]
TagParam = Annotated[str, Query(description="the text's tag")]
RankParam = Annotated[int | None, Query(description="the rank (files without one: omit)")]
StepParam = Annotated[
    int | None, Query(description="any recorded step, kept or not (default: the newest kept)")
]
OffsetParam = Annotated[
    int,
    Query(ge=0, description="where the part starts: a character of the text, or a row of a "
          "table (the previous answer's `next`)"),
]  # fmt: skip
LimitParam = Annotated[
    int, Query(ge=1_000, le=200_000, description="characters of the text in the part")
]
PART = 100_000  # characters in a part unless asked otherwise
MAX_ROWS = 500  # rows in a part
MAX_COLUMNS = 50


def _grid(text: Text) -> tuple[int, int, tuple[str, ...], list[str]]:
    """Rows, columns and row-major cells of the table ``text`` is shown as, with notes on
    what of it is not shown."""
    shape, cells, notes = text.shape, text.cells, []
    if math.prod(shape) != len(cells):
        notes.append(f"The shape {list(shape)} does not hold the {len(cells)} cells written: "
                     "they are shown as a list.")  # fmt: skip
        shape = (len(cells),)
    if len(shape) > 2:
        notes.append(f"A {len(shape)}-D text: only its first 2-D slice "
                     f"[{', '.join(['0'] * (len(shape) - 2))}, :, :] is shown.")  # fmt: skip
        shape = shape[-2:]
    rows, columns = (shape[0], 1) if len(shape) == 1 else shape
    if columns > MAX_COLUMNS:
        notes.append(f"The first {MAX_COLUMNS} of {columns} columns are shown.")
    return rows, columns, cells, notes


def _utf8_size(text: str) -> int:
    """The bytes ``text`` takes in UTF-8 (a lone surrogate counted as written: 3)."""
    return len(text.encode("utf-8", "surrogatepass"))


def _document_json(text: str, offset: int, limit: int) -> dict[str, Any]:
    """The part of the markdown document ``text`` from character ``offset``."""
    source = normalized(text)
    if offset > len(source):
        raise QueryError(f"offset={offset} is past the end of the text ({len(source)} characters)")
    markdown, end = text_part(source, offset, limit)
    return {
        "html": render_markdown(markdown),
        "rows": None,
        "note": "",
        "offset": offset,
        "next": end if end < len(source) else None,
        "length": len(source),
        "size_bytes": _utf8_size(source),
        "remaining_bytes": _utf8_size(source[end:]),
    }


def _table_json(text: Text, offset: int, limit: int) -> dict[str, Any]:
    """The part of the table ``text`` is shown as from row ``offset``: rows while they
    hold at most ``limit`` characters (one at least) and ``MAX_ROWS``."""
    rows, columns, cells, notes = _grid(text)
    if offset > rows or (offset == rows and rows):
        raise QueryError(f"offset={offset} is past the last row of the table ({rows} rows)")
    shown = min(columns, MAX_COLUMNS)

    def row_cells(row: int) -> tuple[str, ...]:
        return cells[row * columns : row * columns + shown]

    part: list[tuple[str, ...]] = []
    size, end = 0, offset
    while end < rows and len(part) < MAX_ROWS:
        row_size = sum(map(len, row_cells(end)))
        if part and size + row_size > limit:
            break
        part.append(row_cells(end))
        size += row_size
        end += 1
    most = max(1, limit // shown)  # a cell's share of a part
    cut = [(row, column) for row, values in enumerate(part, offset)
           for column, cell in enumerate(values) if len(cell) > most]  # fmt: skip
    if cut:
        at = f"row {cut[0][0] + 1}, column {cut[0][1] + 1}"
        notes.append(f"The cell at {at} is longer than {most:,} characters: only its first "
                     "part is shown." if len(cut) == 1 else
                     f"{len(cut)} cells are longer than {most:,} characters (the first at "
                     f"{at}): only their first parts are shown.")  # fmt: skip
    table = [[render_markdown(text_part(normalized(c), 0, most)[0]) for c in values]
             for values in part]  # fmt: skip
    sizes = [sum(map(_utf8_size, row_cells(row))) for row in range(rows)]
    return {
        "html": None,
        "rows": table,
        "note": " ".join(notes),
        "offset": offset,
        "next": end if end < rows else None,
        "length": rows,
        "size_bytes": sum(sizes),
        "remaining_bytes": sum(sizes[end:]),
    }


def text_json(text: Text, offset: int = 0, limit: int = PART) -> dict[str, Any]:
    """The part of ``text`` from ``offset`` as the page shows it: ``html`` for one string
    (or a table of one cell), else ``rows`` of cells' HTML; ``note`` says what is not
    shown, ``next`` where the next part starts (None after the last)."""
    if len(text.cells) == 1 == math.prod(text.shape):
        return _document_json(text.cells[0], offset, limit)
    return _table_json(text, offset, limit)


def make_text_router(surface: ReadSurface) -> APIRouter:
    """The text view's routes over ``surface``."""
    router = APIRouter(prefix="/api/v1")

    @router.get("/text", summary="A part of one kept text of a tag, rendered as safe HTML")
    def text(
        run: RunParam,
        tag: TagParam,
        step: StepParam = None,
        rank: RankParam = None,
        offset: OffsetParam = 0,
        limit: LimitParam = PART,
    ) -> Response:
        chosen, index = at_step(pick_series(surface, run, "text", tag, rank), step)
        value = kept_value(surface, chosen, index, Text)
        return json_response(
            {
                "run": run,
                "rank": chosen.rank,
                "tag": tag,
                "step": int(chosen.items["step"][index]),
                "wall": float(chosen.items["wall"][index]),
                "shape": list(value.shape),
                **text_json(value, offset, limit),
            }
        )

    return router
