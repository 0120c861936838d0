"""Every run's lineage as one columnar table, kept per surface version: the Lineage view's
``GET /lineage`` (:mod:`sumlens.board.api.lineage`) and the groups' ``by=field``
(:mod:`sumlens.board.query.group_fields`) read it.

A run's lineage files are read through the read surface once and kept until they change
(name, size or modification time as the surface last saw them); a run torch's
``add_hparams`` made in a directory named by the time is merged into its parent's row
(:func:`~sumlens.board.query.hparams_values.time_parent`).
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import orjson

from sumlens.board.data.surface import ReadSurface
from sumlens.board.plugins import served_by
from sumlens.board.query import hparams_values
from sumlens.board.query.hparams_values import Session, time_parent, with_hparams
from sumlens.board.query.lineage_fold import fold
from sumlens.board.query.lineage_values import (
    FIXED,
    KINDS,
    PREFIX_KINDS,
    RunLineage,
    Value,
    read_run_lineage,
)

LINEAGE_PLUGINS = served_by("sumlens.board.api.lineage")
"""The plugins whose runs are rows: those the Lineage view's routes are declared for."""
_FIXED_ORDER = {column.id: index for index, column in enumerate(FIXED)}
_FIXED_BY_ID = {column.id: column for column in FIXED}
_RECORDED_BY = {"hparam": "TensorBoard hparams", "custom": "custom lineage"}
"""What recorded a field, by its id's prefix (the others: MindSpore's train lineage)."""

Signature = tuple[tuple[str, int, int], ...]


class LineageIndex:
    """Each run's decoded lineage (kept until its lineage files change) and the encoded
    table of the surface's current version."""

    def __init__(self, surface: ReadSurface) -> None:
        self.surface = surface
        self._lock = threading.Lock()
        self._runs: dict[str, tuple[Signature, RunLineage | None]] = {}
        self._sessions: dict[str, tuple[hparams_values.Signature, Session | None]] = {}
        self._version = -1
        self._key = ""
        self._body = b""

    def run(self, run_id: str) -> RunLineage | None:
        """The lineage of one run (None for a run without lineage or an unknown run)."""
        with self._lock:
            return self._lineage(run_id)

    def table(self) -> tuple[str, bytes]:
        """The table's key and its encoded JSON (see the module docstring)."""
        with self._lock:
            version = self.surface.version
            if version != self._version:
                self._key, self._body = self._build()
                self._version = version
            return self._key, self._body

    def _lineage(self, run_id: str) -> RunLineage | None:
        files = self.surface.files(run_id)
        signature = tuple(
            sorted((f.name, f.size, f.mtime_ns) for f in files if f.kind == "lineage")
        )
        cached = self._runs.get(run_id)
        if cached is not None and cached[0] == signature:
            return cached[1]
        found = None
        if signature:
            records = {name: self.surface.record_file(run_id, name) for name, _, _ in signature}
            found = read_run_lineage(records)
        self._runs[run_id] = (signature, found)
        return found

    def _session(self, run_id: str) -> Session | None:
        """The run's hparams messages, read again only when its kept ones changed."""
        signature = hparams_values.signature(self.surface, run_id)
        cached = self._sessions.get(run_id)
        if cached is not None and cached[0] == signature:
            return cached[1]
        found = hparams_values.read_session(self.surface, run_id) if signature else None
        self._sessions[run_id] = (signature, found)
        return found

    def _build(self) -> tuple[str, bytes]:
        every = self.surface.runs()
        by_id = {run["id"]: run for run in every}
        runs = [run for run in every if any(run["tags"].get(p) for p in LINEAGE_PLUGINS)]
        merged = _merged_sub_runs(runs, by_id)
        shown = ({run["id"] for run in runs} | set(merged)) - set(merged.values())
        for gone in set(self._runs) - shown:
            del self._runs[gone]
        for gone in set(self._sessions) - shown - set(merged.values()):
            del self._sessions[gone]
        rows: list[tuple[dict[str, Any], RunLineage]] = []
        digest = hashlib.sha1()
        for run in every:
            if run["id"] not in shown:
                continue
            source = by_id[merged.get(run["id"], run["id"])]
            lineage, tensorboard = self._row(run["id"], source)
            if lineage is not None:
                rows.append((run, lineage))
                files = self._runs.get(run["id"], ((), None))[0]
                digest.update(orjson.dumps([run["id"], source["id"], files, tensorboard]))
        key = digest.hexdigest()[:16]
        return key, orjson.dumps(_table(key, rows))

    def _row(
        self, run_id: str, source: dict[str, Any]
    ) -> tuple[RunLineage | None, dict[str, Value] | None]:
        """The lineage of a row of the table: run ``run_id``'s own (MindSpore's) with the
        hyper-parameters of ``source`` (the run itself or the sub-run it shows), and the
        fields the hyper-parameters gave (None without any)."""
        lineage = self._lineage(run_id)
        session = None
        if source["tags"].get(hparams_values.PLUGIN):
            session = self._session(source["id"])
        if session is None:
            return lineage, None
        metrics = hparams_values.metric_values(self.surface, source["id"], session)
        found = with_hparams(lineage, session, metrics)
        return found, found.values


def _merged_sub_runs(
    runs: list[dict[str, Any]], every: dict[str, dict[str, Any]]
) -> dict[str, str]:
    """Parent run id -> the sub-run ``add_hparams`` named by the time whose fields it shows:
    a sub-run holding hyper-parameters and no other lineage, under a run holding none, and
    the only such sub-run there."""
    found: dict[str, list[str]] = {}
    for run in runs:
        parent = time_parent(run["id"])
        tags = run["tags"]
        if parent is None or parent not in every or not tags.get(hparams_values.PLUGIN):
            continue
        if any(tags.get(p) for p in LINEAGE_PLUGINS if p != hparams_values.PLUGIN):
            continue
        if not every[parent]["tags"].get(hparams_values.PLUGIN):
            found.setdefault(parent, []).append(run["id"])
    return {parent: children[0] for parent, children in found.items() if len(children) == 1}


def _table(key: str, rows: list[tuple[dict[str, Any], RunLineage]]) -> dict[str, Any]:
    """The columnar table of ``rows`` (each a /runs entry and its lineage), each quantity
    recorded under several names one column (:mod:`sumlens.board.query.lineage_fold`)."""
    names: set[str] = set()
    for _, lineage in rows:
        names.update(lineage.values)
    ordered = sorted(names, key=_column_order)
    columns = []
    for column in fold(ordered, [lineage.values for _, lineage in rows]):
        entry = {**_describe(column.id), **_typed_column(column.values)}
        if column.held is not None:
            entry["kind"] = _folded_kind(column.sources)
            entry["sources"] = [_source(name) for name in column.sources]
            entry["held"] = column.held
        columns.append(entry)
    return {
        "key": key,
        "runs": [run["id"] for run, _ in rows],
        "updated": [run["updated"] for run, _ in rows],
        "graph": [lineage.graph is not None for _, lineage in rows],
        "problems": [
            [run["id"], "; ".join(lineage.problems)] for run, lineage in rows if lineage.problems
        ],
        "columns": columns,
    }


def _folded_kind(sources: tuple[str, ...]) -> str:
    """A folded column's kind: a hyper-parameter when any of its fields is one (custom
    lineage holds the hyper-parameters ``add_hparams`` was given too)."""
    kinds = [_describe(name)["kind"] for name in sources]
    return "hyper" if "hyper" in kinds else kinds[0]


def _source(name: str) -> dict[str, str]:
    """One field folded into a column: its id, its label and what recorded it."""
    prefix = name.partition("/")[0] if "/" in name else ""
    recorded = _RECORDED_BY.get(prefix, "train lineage")
    return {"id": name, "label": _describe(name)["label"], "from": recorded}


def _column_order(name: str) -> tuple[int, int, str]:
    if name in _FIXED_ORDER:
        return (KINDS.index(_FIXED_BY_ID[name].kind), _FIXED_ORDER[name], "")
    return (KINDS.index(_describe(name)["kind"]), len(FIXED), name)


def _describe(name: str) -> dict[str, str]:
    if name in _FIXED_BY_ID:
        column = _FIXED_BY_ID[name]
        return {"id": name, "label": column.label, "kind": column.kind}
    prefix, label = name.split("/", 1)
    return {"id": name, "label": label, "kind": PREFIX_KINDS[prefix]}


def _typed_column(values: list[Value]) -> dict[str, Any]:
    """``type`` (number when every value given is a number, else text) and the values
    (a text column's numbers as their text)."""
    numeric = all(value is None or isinstance(value, int | float) for value in values)
    if numeric:
        return {"type": "number", "values": values}
    text = [value if value is None or isinstance(value, str) else str(value) for value in values]
    return {"type": "text", "values": text}
