"""Lineage as MindInsight's ``POST /v1/mindinsight/lineagemgr/lineages`` returns it.

A train job's lineage files are merged by MindInsight's rules in
:mod:`sumlens.board.query.lineage_merge`, which the lineage table of ``/api/v1`` uses too:
in MindInsight's order, the last train lineage, evaluation lineage and dataset graph of
each file and its custom lineage; a file holding none of the three is skipped whole; a
train lineage or dataset graph starts the lineage afresh. A job whose files hold custom
lineage only has none, as in MindInsight. Here the merged values take MindInsight's JSON
shapes (:class:`JobLineage`), its compatibility contract.

:func:`query` then filters, sorts and pages the jobs as MindInsight's lineage querier does
(newest job first by default) and lists the types of the metric and custom columns.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sumlens.board.proto_text import dataset_graph_json, message_dict
from sumlens.board.query.lineage_merge import MergedLineage, merge_lineage
from sumlens.io import RecordFile


def _dataset_columns(column: str, section: str) -> dict[str, tuple[str, str | None]]:
    """A dataset's two columns, ``<column>_dataset_path`` and ``<column>_dataset_count``,
    read from ``<section>_path`` and ``<section>_size`` of the lineage's ``section``."""
    return {
        f"{column}_dataset_path": (section, f"{section}_path"),
        f"{column}_dataset_count": (section, f"{section}_size"),
    }


FIELDS: dict[str, tuple[str, str | None]] = {
    "summary_dir": ("summary_dir", None),
    "loss_function": ("hyper_parameters", "loss_function"),
    **_dataset_columns("train", "train_dataset"),
    **_dataset_columns("test", "valid_dataset"),
    "network": ("algorithm", "network"),
    "optimizer": ("hyper_parameters", "optimizer"),
    "learning_rate": ("hyper_parameters", "learning_rate"),
    "epoch": ("hyper_parameters", "epoch"),
    "batch_size": ("hyper_parameters", "batch_size"),
    "device_num": ("hyper_parameters", "device_num"),
    "loss": ("algorithm", "loss"),
    "model_size": ("model", "size"),
    "dataset_mark": ("dataset_mark", None),
}
"""Column -> (section of the lineage, key in it): the columns MindInsight filters and shows."""
SECTIONS = (
    "model",
    "algorithm",
    "hyper_parameters",
    "train_dataset",
    "metric",
    "valid_dataset",
    "dataset_graph",
    "user_defined",
)
OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "lt": operator.lt,
    "gt": operator.gt,
    "le": operator.le,
    "ge": operator.ge,
    "in": lambda actual, wanted: actual in wanted,
    "not_in": lambda actual, wanted: actual not in wanted,
}
PAGING = ("limit", "offset", "sorted_name", "sorted_type", "lineage_type")
MAX_LIMIT, MAX_OFFSET = 100, 100_000


class ConditionError(ValueError):
    """A search condition MindInsight would refuse; the message says why."""


@dataclass
class JobLineage:
    """The lineage of one train job, newest state (see the module docstring).

    ``update_time`` orders the jobs (newest first), as the train-job listing does.
    """

    train_id: str
    update_time: datetime
    info: dict[str, Any] = field(default_factory=dict)
    dataset_mark: str | None = None

    def value(self, key: str) -> Any:
        """A column's value: one of :data:`FIELDS`, ``metric/<name>`` or ``user_defined/<name>``."""
        if key.startswith(("metric/", "user_defined/")):
            section, name = key.split("/", 1)
            return self.info[section].get(name)
        if key == "dataset_mark":
            return self.dataset_mark
        if key == "summary_dir":
            return self.train_id
        if key not in FIELDS:
            return None
        section, entry = FIELDS[key]
        return (self.info.get(section) or {}).get(entry)

    def model_lineage(self) -> dict[str, Any]:
        """The ``model_lineage`` object of a row."""
        row = {key: self.value(key) for key in FIELDS if key != "summary_dir"}
        row["metric"] = self.info["metric"]
        row["user_defined"] = self.info["user_defined"]
        return row


def read_lineage(
    train_id: str, files: list[RecordFile], update_time: datetime
) -> tuple[JobLineage | None, bool]:
    """The lineage of a train job (or None) from the records of its lineage files, and
    whether every file could be read (a file that cannot be read now adds nothing, as
    MindInsight skips it)."""
    merged = merge_lineage({records.path.name: records for records in files})
    if not merged.started:
        return None, merged.whole
    return JobLineage(train_id, update_time, _info(merged)), merged.whole


def _info(merged: MergedLineage) -> dict[str, Any]:
    """Each section of a merged lineage as MindInsight's ``MessageToDict`` gives it."""
    info: dict[str, Any] = {section: {} for section in SECTIONS}
    info["user_defined"] = _json_values(merged.custom)
    if merged.train is not None:
        info.update(message_dict(merged.train))
        size = info["model"].get("size")
        if size:  # MessageToDict gives an int64 as text; MindInsight makes it an int again
            info["model"]["size"] = int(size)
    if merged.valid_dataset is not None:
        info["valid_dataset"] = message_dict(merged.valid_dataset)
    info["metric"] = merged.metrics
    if merged.dataset_graph is not None:
        info["dataset_graph"] = dataset_graph_json(merged.dataset_graph)
    return info


def _json_values(values: dict[str, Any]) -> dict[str, Any]:
    """Custom lineage values as ``MessageToDict`` gives them: a NaN or infinite double as
    ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``."""
    shown: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            value = _json_values(value)
        elif isinstance(value, float) and not math.isfinite(value):
            value = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        shown[key] = value
    return shown


# ---------------------------------------------------------------------- querying


def check_condition(condition: Any) -> None:
    """Raise :class:`ConditionError` for a condition MindInsight's lineage API refuses."""
    if not isinstance(condition, dict):
        raise ConditionError("the search condition must be a JSON object")
    for key in ("limit", "offset"):
        if key in condition:
            value = condition[key]
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConditionError(f"{key} must be an int")
    if "limit" in condition and not 0 < condition["limit"] <= MAX_LIMIT:
        raise ConditionError(f"limit must be in (0, {MAX_LIMIT}]")
    if "offset" in condition and not 0 <= condition["offset"] <= MAX_OFFSET:
        raise ConditionError(f"offset must be in [0, {MAX_OFFSET}]")
    if "sorted_name" in condition:
        name = condition["sorted_name"]
        if not isinstance(name, str) or not (_column(name) or name == "tag"):
            raise ConditionError(
                f"sorted_name must be one of {sorted(FIELDS)}, or metric/<name>, "
                "user_defined/<name> or tag"
            )
    if "lineage_type" in condition and not isinstance(condition["lineage_type"], dict):
        raise ConditionError('lineage_type must be an object, e.g. {"in": ["model"]}')
    if "sorted_type" in condition:
        if "sorted_name" not in condition:
            raise ConditionError("sorted_type needs sorted_name")
        if condition["sorted_type"] not in ("ascending", "descending", None):
            raise ConditionError("sorted_type must be ascending or descending")
    for key, wanted in condition.items():
        if key in PAGING:
            continue
        if not _column(key):
            raise ConditionError(f"the field {key!r} cannot be searched")
        if not isinstance(wanted, dict) or not set(wanted) <= set(OPERATORS):
            raise ConditionError(
                f"{key} must be an object of operations ({', '.join(OPERATORS)}), got {wanted!r}"
            )


def _column(name: str) -> bool:
    return name in FIELDS or any(
        name.startswith(prefix) and len(name) > len(prefix)
        for prefix in ("metric/", "user_defined/")
    )


def query(lineages: list[JobLineage], condition: dict[str, Any]) -> dict[str, Any]:
    """Filter, sort and page ``lineages`` (in the listing's order) as MindInsight does."""
    _mark_datasets(lineages)
    ordered = sorted(lineages, key=lambda item: item.update_time, reverse=True)
    chosen = [item for item in ordered if _matches(item, condition)]
    if "sorted_name" in condition:
        name = condition["sorted_name"]
        reverse = condition.get("sorted_type") == "descending"
        if name != "tag":  # the tag users add (PUT) is not stored: all None, order kept
            chosen = sorted(chosen, key=_by_column(name), reverse=reverse)
    page = chosen
    if "limit" in condition or "offset" in condition:
        limit, offset = condition.get("limit", 10), condition.get("offset", 0)
        page = chosen[offset * limit : (offset + 1) * limit]
    kinds = _lineage_types(condition.get("lineage_type"))
    rows = []
    for item in page:
        row: dict[str, Any] = {}
        if "model" in kinds:
            row.update(summary_dir=item.train_id, model_lineage=item.model_lineage())
        if "dataset" in kinds:
            row.update(summary_dir=item.train_id, dataset_graph=item.info["dataset_graph"])
        row["added_info"] = {}
        rows.append(row)
    return {"customized": _customized(page), "object": rows, "count": len(chosen)}


def _matches(item: JobLineage, condition: dict[str, Any]) -> bool:
    for key, wanted in condition.items():
        if key in PAGING:
            continue
        actual = item.value(key)
        for name, expected in wanted.items():
            if actual is None and name in ("lt", "gt", "le", "ge"):
                return False
            try:
                if not OPERATORS[name](actual, expected):
                    return False
            except TypeError:
                return False
    return True


def _by_column(name: str) -> Callable[[JobLineage], Any]:
    """A sort key that orders jobs by their values of column ``name`` (:func:`_compare`)."""

    def compare(first: JobLineage, second: JobLineage) -> int:
        return _compare(first.value(name), second.value(name))

    return functools.cmp_to_key(compare)


def _compare(first: Any, second: Any) -> int:
    if first is None or second is None:
        return (first is not None) - (second is not None)
    try:
        return (first > second) - (first < second)
    except TypeError:  # values of different types: by the types' names
        a, b = type(first).__name__, type(second).__name__
        return (a > b) - (a < b)


def _lineage_types(wanted: Any) -> list[str]:
    if not wanted:
        return ["dataset", "model"]
    if wanted.get("in") is not None:
        return list(wanted["in"])
    return [wanted.get("eq")]


def _mark_datasets(lineages: list[JobLineage]) -> None:
    """Number the distinct dataset graphs from "2" ("1" stands for none), as MindInsight
    does: the next number follows the largest so far compared as text (after "9" comes "10"
    again, and later graphs share it)."""
    marks: dict[str, Any] = {"1": None}
    for item in lineages:
        graph = item.info["dataset_graph"]
        mark = next((number for number, seen in marks.items() if seen == graph), None)
        if mark is None:
            mark = str(int(max(marks)) + 1)
            marks[mark] = graph
        item.dataset_mark = mark


def _customized(page: list[JobLineage]) -> dict[str, Any]:
    """The metric and custom columns of the page, each with the type of its values."""
    columns: dict[str, dict[str, Any]] = {}
    for item in page:
        for section in ("metric", "user_defined"):
            values = item.info[section]
            if not isinstance(values, dict):
                continue
            for name, value in values.items():
                label = f"{section}/{name}"
                column = columns.setdefault(
                    label, {"label": label, "required": section == "metric", "type": set()}
                )
                column["type"].add(type(value).__name__)
    for column in columns.values():
        kinds = column["type"]
        if len(kinds) == 1:
            column["type"] = next(iter(kinds))
        elif kinds <= {"int", "float"}:
            column["type"] = "float"
        else:
            column["type"] = "mixed"
    return columns
