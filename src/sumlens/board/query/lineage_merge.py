"""A run's lineage files merged once, as MindInsight 2.3.1 merges them, for both faces.

The lineage table of ``/api/v1`` (:mod:`sumlens.board.query.lineage_values`) and
MindInsight's lineage API (:mod:`sumlens.board.mindinsight.lineage`) both read a run's
``_lineage`` files through :func:`merge_lineage`, so the same files give both faces the
same values; each face only shapes them. The rules are MindInsight's:

* the files are read in MindInsight's order (:func:`~sumlens.io.naming.mindinsight_order`);
  of each file, the *last* train lineage, evaluation lineage and dataset graph count, and
  every custom lineage record in the order written;
* a file holding none of those three adds nothing, not even its custom lineage; the first
  file holding one starts the lineage;
* a train lineage or a dataset graph starts the lineage afresh (custom lineage and
  metrics too); then the file's custom records set their keys (a later record's key
  replaces the whole value), its train lineage and dataset graph are taken, and its
  evaluation lineage's metrics and validation dataset, where it holds them, each replace
  the earlier ones whole;
* a custom lineage record holds one value per ``user_info`` entry: the first key of the
  entry's first map, a ``map_dict`` value being such a record in turn (a dict).

A run whose files hold custom lineage only has no lineage for MindInsight (``started`` is
False); ``custom`` then holds the custom lineage of all its files, which the lineage table
lists. Files may be crafted or damaged: a file that cannot be read, or holds no record,
adds nothing (MindInsight reads a file whole or not at all); one that cannot be read (or
is gone) makes the result not ``whole``: read it again later. Records that fail their CRC
or do not decode, and custom records of another form, are skipped and counted.
``problems`` says what was left out, file by file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sumlens._proto import lineage_pb2
from sumlens.io import NotAnEventFileError, ReadStats, RecordFile
from sumlens.io.naming import mindinsight_order

CUSTOM_MAPS = ("map_dict", "map_int32", "map_str", "map_double")
"""The maps of a ``UserDefinedInfo`` entry, one of which holds the entry's value."""


@dataclass
class MergedLineage:
    """A run's lineage files merged (see the module docstring).

    ``metrics`` is the evaluation's metric JSON object; ``custom`` maps each custom
    lineage key to an int, a float, a str or a dict of them.
    """

    train: lineage_pb2.TrainLineage | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    valid_dataset: lineage_pb2.EvaluationLineage.ValidDataset | None = None
    dataset_graph: lineage_pb2.DatasetGraph | None = None
    custom: dict[str, Any] = field(default_factory=dict)
    started: bool = False
    whole: bool = True
    problems: list[str] = field(default_factory=list)


@dataclass
class _FileLineage:
    """What one file holds: the last of each lineage kind and every custom record."""

    train: lineage_pb2.TrainLineage | None = None
    evaluation: lineage_pb2.EvaluationLineage | None = None
    dataset_graph: lineage_pb2.DatasetGraph | None = None
    custom: list[dict[str, Any]] = field(default_factory=list)


def merge_lineage(files: Mapping[str, RecordFile | None]) -> MergedLineage:
    """The merged lineage of a run's lineage files: each name with its records (None for a
    file the run no longer has)."""
    merged = MergedLineage()
    custom_only: dict[str, Any] = {}
    for name in mindinsight_order(list(files)):
        found = _scan(name, files[name], merged)
        if found is None:
            continue
        for values in found.custom:
            custom_only.update(values)
        if found.train is None and found.evaluation is None and found.dataset_graph is None:
            continue
        if not merged.started or found.train is not None or found.dataset_graph is not None:
            _start_afresh(merged)
        for values in found.custom:
            merged.custom.update(values)
        if found.train is not None:
            merged.train = found.train
        if found.evaluation is not None:
            _add_evaluation(merged, name, found.evaluation)
        if found.dataset_graph is not None:
            merged.dataset_graph = found.dataset_graph
    if not merged.started:
        merged.custom = custom_only
    return merged


def _start_afresh(merged: MergedLineage) -> None:
    merged.train, merged.valid_dataset, merged.dataset_graph = None, None, None
    merged.metrics, merged.custom = {}, {}
    merged.started = True


def _scan(name: str, records: RecordFile | None, merged: MergedLineage) -> _FileLineage | None:
    """What file ``name`` (its ``records``) holds; None, its problem noted, when it cannot
    be read."""
    if records is None:
        merged.problems.append(f"{name}: the run no longer has this file")
        merged.whole = False
        return None
    found = _FileLineage()
    stats = ReadStats()
    skipped = 0
    try:
        for payload in records.read_payloads(stats):
            try:
                event = lineage_pb2.LineageEvent.FromString(payload)
            except Exception:  # protobuf's DecodeError: not a lineage event
                skipped += 1
                continue
            kind = event.WhichOneof("what")
            if kind == "user_defined_info":
                values = _custom_values(event.user_defined_info)
                if values is None:
                    skipped += 1
                else:
                    found.custom.append(values)
            elif kind == "train_lineage":
                found.train = event.train_lineage
            elif kind == "evaluation_lineage":
                found.evaluation = event.evaluation_lineage
            elif kind == "dataset_graph":
                found.dataset_graph = event.dataset_graph
    except NotAnEventFileError as err:
        merged.problems.append(f"{name}: {type(err).__name__}: {err}")
        return None
    except OSError as err:
        merged.problems.append(f"{name}: {type(err).__name__}: {err}")
        merged.whole = False
        return None
    bad = skipped + stats.corrupt_records
    if bad:
        merged.problems.append(f"{name}: {bad} record(s) could not be read")
    return found


def _custom_values(info: lineage_pb2.UserDefinedInfo) -> dict[str, Any] | None:
    """``{key: value}`` of a custom lineage record (see the module docstring), or None when
    an entry holds no map first (MindInsight fails on such a record)."""
    values: dict[str, Any] = {}
    for entry in info.user_info:
        fields = entry.ListFields()
        if not fields:
            continue
        descriptor, first = fields[0]
        if descriptor.name not in CUSTOM_MAPS:
            return None
        key, value = next(iter(first.items()))
        if descriptor.name == "map_dict":
            value = _custom_values(value)
            if value is None:
                return None
        values[key] = value
    return values


def _add_evaluation(
    merged: MergedLineage, name: str, evaluation: lineage_pb2.EvaluationLineage
) -> None:
    if evaluation.HasField("valid_dataset"):
        merged.valid_dataset = evaluation.valid_dataset
    if evaluation.HasField("metric"):
        merged.metrics = _metrics(name, evaluation.metric, merged.problems)


def _metrics(name: str, text: str, problems: list[str]) -> dict[str, Any]:
    """The metric JSON object of an evaluation lineage ({} when there is none)."""
    if not text:
        return {}
    try:
        found = json.loads(text)
    except (ValueError, RecursionError):  # a crafted text may nest past Python's stack
        problems.append(f"{name}: the evaluation metrics are not JSON that can be read")
        return {}
    if not isinstance(found, dict):
        problems.append(f"{name}: the evaluation metrics are not a JSON object")
        return {}
    return found
