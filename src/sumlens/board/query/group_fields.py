"""Runs' hyper-parameter and lineage fields, to group runs by (``by=field`` of
:mod:`sumlens.board.api.groups`).

The fields are the Lineage view's rows (:class:`~sumlens.board.query.lineage_table.LineageIndex`):
MindSpore's lineage, custom lineage and TensorBoard's hyper-parameters (``hparam/lr``),
the run ``add_hparams`` names by the time shown as its parent's, one column per quantity
(:mod:`sumlens.board.query.lineage_fold`): a field folded into another column names that
column (``learning_rate`` names ``hparam/lr`` where the two were folded). The table is read
only when a grouping by field asks for it, and decoded once per version of its content.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import orjson

from sumlens.board.data.surface import ReadSurface
from sumlens.board.errors import QueryError
from sumlens.board.query.lineage_table import LineageIndex
from sumlens.board.query.lineage_values import Value

SHOWN_IN_ERRORS = 20
"""Field ids an error lists (a run may have up to a thousand)."""


@dataclass(frozen=True, slots=True)
class Column:
    """One field of the lineage table: its id, label, kind and each row's value."""

    id: str
    label: str
    kind: str
    values: dict[str, Value]


class RunFields:
    """The lineage table of a surface, decoded, by field id."""

    def __init__(self, surface: ReadSurface) -> None:
        self._index = LineageIndex(surface)
        self._lock = threading.Lock()
        self._key = ""
        self._columns: dict[str, Column] = {}
        self._folded: dict[str, Column] = {}

    def columns(self) -> dict[str, Column]:
        """Every field of every run, in the table's order."""
        return self._decoded()[0]

    def _decoded(self) -> tuple[dict[str, Column], dict[str, Column]]:
        """The columns by id, and by the id of each field folded into one of them."""
        key, body = self._index.table()
        with self._lock:
            if key != self._key:
                table = orjson.loads(body)
                self._columns = {
                    column["id"]: Column(
                        column["id"],
                        column["label"],
                        column["kind"],
                        dict(zip(table["runs"], column["values"], strict=True)),
                    )
                    for column in table["columns"]
                }
                self._folded = {
                    source["id"]: self._columns[column["id"]]
                    for column in table["columns"]
                    for source in column.get("sources", [])
                }
                self._key = key
            return self._columns, self._folded

    def column(self, field: str) -> Column:
        """The column ``field`` (or the one it was folded into); a :class:`QueryError`
        naming it when no run has it."""
        found, folded = self._decoded()
        if field in folded:
            return folded[field]
        if field not in found:
            known = list(found)
            listed = ", ".join(known[:SHOWN_IN_ERRORS])
            more = (
                f" and {len(known) - SHOWN_IN_ERRORS} more" if len(known) > SHOWN_IN_ERRORS else ""
            )
            raise QueryError(
                f"field={field!r} is no hyper-parameter or lineage field of any run; "
                f"the fields are: {listed or '(none)'}{more}"
            )
        return found[field]

    def of_runs(self, runs: list[str]) -> list[Column]:
        """The fields at least one of ``runs`` has a value of."""
        wanted = set(runs)
        return [
            column
            for column in self.columns().values()
            if any(column.values.get(run) is not None for run in wanted)
        ]


def group_name(column: Column, value: Value) -> str:
    """The name of the group of runs holding ``value`` in ``column``: ``lr=0.1``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    return f"{column.label}={value}"
