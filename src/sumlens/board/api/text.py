"""``/api/v1/text``: one kept text of a series, rendered as safe HTML.

A text (:class:`~sumlens.io.Text`, TensorBoard's text plugin) of one string is one
markdown document; a 1-D or 2-D one is a table of markdown cells, as TensorBoard shows
it (1-D: a column); of a deeper one only the first 2-D slice is shown, as TensorBoard
does. Markdown is rendered by :func:`~sumlens.board.api.markdown.render_markdown` (no raw
HTML, no unsafe links, no loaded images). Tables are bounded so that a huge text tensor
cannot make a huge page; the answer's ``note`` says what was left out.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from sumlens.board.api.kept import at_step, kept_value
from sumlens.board.api.lookup import pick_series
from sumlens.board.api.markdown import render_markdown
from sumlens.board.data.surface import ReadSurface
from sumlens.board.responses import json_response
from sumlens.io import Text

RunParam = Annotated[str, Query(description="run id, e.g. ./ or ./a/b")]
TagParam = Annotated[str, Query(description="the text's tag")]
RankParam = Annotated[int | None, Query(description="the rank (files without one: omit)")]
StepParam = Annotated[
    int | None, Query(description="any recorded step, kept or not (default: the newest kept)")
]
MAX_ROWS = 500
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
    if rows > MAX_ROWS or columns > MAX_COLUMNS:
        notes.append(f"The first {min(rows, MAX_ROWS)} of {rows} rows and "
                     f"{min(columns, MAX_COLUMNS)} of {columns} columns are shown.")  # fmt: skip
    return rows, columns, cells, notes


def text_json(text: Text) -> dict[str, Any]:
    """``text`` as the page shows it: ``html`` for one string (or a table of one cell),
    else ``rows`` of cells' HTML; ``note`` says what is not shown."""
    if len(text.cells) == 1 == math.prod(text.shape):
        return {"html": render_markdown(text.cells[0]), "rows": None, "note": ""}
    rows, columns, cells, notes = _grid(text)
    table = [
        [
            render_markdown(cells[row * columns + column])
            for column in range(min(columns, MAX_COLUMNS))
        ]
        for row in range(min(rows, MAX_ROWS))
    ]
    return {"html": None, "rows": table, "note": " ".join(notes)}


def make_text_router(surface: ReadSurface) -> APIRouter:
    """The text view's routes over ``surface``."""
    router = APIRouter(prefix="/api/v1")

    @router.get("/text", summary="One kept text of a tag, its markdown rendered as safe HTML")
    def text(
        run: RunParam, tag: TagParam, step: StepParam = None, rank: RankParam = None
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
                **text_json(value),
            }
        )

    return router
