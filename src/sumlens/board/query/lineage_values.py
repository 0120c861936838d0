"""One run's lineage as flat, typed fields: what the lineage view compares runs by.

A run's ``_lineage`` files (their records, as the read surface hands them over:
:meth:`~sumlens.board.data.surface.ReadSurface.record_file`; no file is opened here) are
merged as MindInsight merges them, by the merge MindInsight's face uses too
(:mod:`sumlens.board.query.lineage_merge`), so both faces pick the same values. Unlike
MindInsight, a run holding custom lineage only (``sumlens.lineage.from_config``) is listed
too.

Every field keeps its type: numbers stay numbers (float32 fields as the shortest decimal
that reads back the same, 0.01 rather than 0.009999999776), metric and custom fields
nested in dicts get dotted names (``optim.lr``). Files may be crafted: a record that is
not a lineage event is counted, not fatal, and a run keeps at most :data:`MAX_FIELDS`
metric, custom and hyper-parameter fields. TensorBoard's hyper-parameters join these
fields in :mod:`sumlens.board.query.hparams_values`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sumlens._proto import lineage_pb2
from sumlens.board.proto_text import dataset_graph_json, shortest_float32
from sumlens.board.query.lineage_merge import merge_lineage
from sumlens.io import RecordFile

Value = int | float | str | None
MAX_FIELDS = 1000
"""Metric, custom and hyper-parameter fields kept per run (a crafted file may hold millions)."""
TOO_MANY = (
    f"more than {MAX_FIELDS} metric, custom and hyper-parameter fields: the rest are left out"
)
MAX_DEPTH = 8
"""Nesting levels of a metric or custom dict that are flattened; deeper ones become text."""


@dataclass(frozen=True, slots=True)
class Field:
    """A fixed lineage column: its id, label, kind and where the train lineage holds it."""

    id: str
    label: str
    kind: str
    section: str
    name: str


FIXED: tuple[Field, ...] = (
    Field("learning_rate", "learning rate", "hyper", "hyper_parameters", "learning_rate"),
    Field("optimizer", "optimizer", "hyper", "hyper_parameters", "optimizer"),
    Field("loss_function", "loss function", "hyper", "hyper_parameters", "loss_function"),
    Field("epoch", "epochs", "hyper", "hyper_parameters", "epoch"),
    Field("batch_size", "batch size", "hyper", "hyper_parameters", "batch_size"),
    Field("device_num", "devices", "hyper", "hyper_parameters", "device_num"),
    Field("parallel_mode", "parallel mode", "hyper", "hyper_parameters", "parallel_mode"),
    Field("loss", "train loss", "metric", "algorithm", "loss"),
    Field("session_status", "session status", "metric", "", ""),
    Field("train_dataset_path", "train data", "dataset", "train_dataset", "train_dataset_path"),
    Field("train_dataset_size", "train size", "dataset", "train_dataset", "train_dataset_size"),
    Field("valid_dataset_path", "eval data", "dataset", "valid_dataset", "valid_dataset_path"),
    Field("valid_dataset_size", "eval size", "dataset", "valid_dataset", "valid_dataset_size"),
    Field("pipeline", "pipeline", "dataset", "", ""),
    Field("network", "network", "model", "algorithm", "network"),
    Field("model_path", "checkpoint", "model", "model", "path"),
    Field("model_size", "model size", "model", "model", "size"),
)
"""The columns every lineage may have, in the order the table shows them."""
KINDS = ("hyper", "metric", "dataset", "model", "custom")
"""Column kinds: hyper-parameter, metric, dataset, model, custom lineage field."""
PREFIX_KINDS = {"hparam": "hyper", "metric": "metric", "custom": "custom"}
"""The kind of a column named ``<prefix>/<name>`` (the others are :data:`FIXED`)."""


@dataclass
class RunLineage:
    """The merged lineage of one run: ``values`` maps column ids to typed values.

    Metric columns are ``metric/<name>``, custom ones ``custom/<name>``, TensorBoard's
    hyper-parameters ``hparam/<name>`` (:mod:`sumlens.board.query.hparams_values`);
    ``graph`` is the dataset graph as :func:`~sumlens.board.proto_text.dataset_graph_json`
    gives it; ``problems`` says what could not be read.
    """

    values: dict[str, Value] = field(default_factory=dict)
    graph: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    extra_fields: int = 0


def read_run_lineage(files: Mapping[str, RecordFile | None]) -> RunLineage | None:
    """The lineage of a run's lineage files (each name with its records; None for a file the
    run no longer has), merged by :func:`~sumlens.board.query.lineage_merge.merge_lineage`,
    or None if they hold none."""
    merged = merge_lineage(files)
    if not merged.started and not merged.custom:
        return None
    lineage = RunLineage(problems=merged.problems)
    _flatten(lineage, "custom/", merged.custom, 0)
    if merged.train is not None:
        _add_train(lineage.values, merged.train)
    if merged.valid_dataset is not None:
        for name in ("valid_dataset_path", "valid_dataset_size"):
            if merged.valid_dataset.HasField(name):
                lineage.values[name] = getattr(merged.valid_dataset, name)
    _flatten(lineage, "metric/", merged.metrics, 0)
    if merged.dataset_graph is not None:
        lineage.graph = dataset_graph_json(merged.dataset_graph)
        lineage.values["pipeline"] = pipeline_text(lineage.graph)
    return lineage


def _float32(value: float) -> float | None:
    return shortest_float32(value) if math.isfinite(value) else None


def _add_train(values: dict[str, Value], train: lineage_pb2.TrainLineage) -> None:
    for column in FIXED:
        if column.section in ("", "valid_dataset"):
            continue
        section = getattr(train, column.section)
        if not train.HasField(column.section) or not section.HasField(column.name):
            continue
        value = getattr(section, column.name)
        if column.id == "model_path":
            value = _checkpoint(value)
        elif isinstance(value, float):
            value = _float32(value)
        values[column.id] = value
    if values.get("model_size") == 0 and not values.get("model_path"):
        values.pop("model_size")  # MindSpore writes 0 when it saved no checkpoint


def _checkpoint(text: str) -> str | None:
    """The checkpoint path of MindSpore's ``{"ckpt": path}`` text (the text if not that)."""
    try:
        found = json.loads(text)
    except (ValueError, RecursionError):
        return text or None
    if isinstance(found, dict):
        path = found.get("ckpt")
        return str(path) if path else None
    return text or None


def _flatten(lineage: RunLineage, prefix: str, values: dict[str, Any], depth: int) -> None:
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and depth < MAX_DEPTH:
            _flatten(lineage, f"{name}.", value, depth + 1)
            continue
        add_field(lineage, name, typed(value))


def add_field(lineage: RunLineage, name: str, value: Value) -> None:
    """Set field ``name`` (a metric, custom or hyper-parameter column) of ``lineage``; a new
    one only while the run has fewer than :data:`MAX_FIELDS` of them."""
    if name not in lineage.values:
        if lineage.extra_fields >= MAX_FIELDS:
            if TOO_MANY not in lineage.problems:
                lineage.problems.append(TOO_MANY)
            return
        lineage.extra_fields += 1
    lineage.values[name] = value


def typed(value: Any) -> Value:
    """A value as the table holds it: ints and floats as they are (non-finite: None),
    bools and lists as their JSON text, None as None."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (ValueError, RecursionError):  # nested past what the stack holds
        return "(nested too deeply to show)"


def pipeline_text(graph: dict[str, Any]) -> str:
    """A dataset graph's operations in data-flow order, e.g. ``GeneratorDataset → Batch``
    (several inputs: ``(A + B) → Zip``)."""
    name = str(graph.get("op_type") or "?")
    children = [child for child in graph.get("children", []) if isinstance(child, dict)]
    if not children:
        return name
    inputs = [pipeline_text(child) for child in children]
    upstream = inputs[0] if len(inputs) == 1 else f"({' + '.join(inputs)})"
    return f"{upstream} → {name}"
