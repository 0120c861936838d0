"""Runs of lineage files on which the dashboard's two faces once picked different values.

Each case is a run: its lineage files in MindInsight's order, each a list of lineage
events, and what both faces must show of it (:class:`Picked`; ``None`` for MindInsight's
face where MindInsight lists no lineage). ``tests/board/test_lineage_merge.py`` reads the
files through both faces; ``tests/compat/test_mindinsight_lineage_merge.py`` compares our
MindInsight face with the real MindInsight over the same files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sumlens._proto import lineage_pb2
from sumlens.io import encode_record
from sumlens.lineage import DatasetGraph, EvaluationLineage, TrainLineage, UserDefinedInfo

Event = lineage_pb2.LineageEvent


@dataclass(frozen=True)
class Picked:
    """The values a face shows of a run's lineage (None: not there), as that face types
    them."""

    learning_rate: Any = None
    valid_path: Any = None
    valid_size: Any = None
    metrics: dict[str, Any] = field(default_factory=dict)
    custom: dict[str, Any] = field(default_factory=dict)
    pipeline: Any = None


@dataclass(frozen=True)
class Case:
    """A run's lineage files (each a list of events, in MindInsight's order) and what
    both faces show of it; ``mindinsight_lists`` False: MindInsight lists no lineage."""

    files: list[list[Event]]
    picked: Picked
    mindinsight_lists: bool = True


def file_name(index: int) -> str:
    """The name of a run's lineage file number ``index`` (later seconds: read later)."""
    return f"events.out.events.summary.{1_700_000_000 + index}.0.host_lineage"


def write_case(directory: Path, case: Case) -> dict[str, Path]:
    """The case's lineage files written into ``directory``, by name."""
    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for index, events in enumerate(case.files):
        path = directory / file_name(index)
        path.write_bytes(b"".join(encode_record(e.SerializeToString()) for e in events))
        written[path.name] = path
    return written


def train(learning_rate: float) -> Event:
    return Event(wall_time=1.0, train_lineage=TrainLineage(learning_rate=learning_rate).to_proto())


def evaluation(
    metrics: dict[str, float] | None = None, path: str | None = None, size: int | None = None
) -> Event:
    found = EvaluationLineage(metrics=metrics, valid_dataset_path=path, valid_dataset_size=size)
    return Event(wall_time=1.0, evaluation_lineage=found.to_proto())


def custom(values: dict[str, Any]) -> Event:
    return Event(wall_time=1.0, user_defined_info=UserDefinedInfo(values).to_proto())


def graph(op_type: str) -> Event:
    return Event(wall_time=1.0, dataset_graph=DatasetGraph(op_type, {}).to_proto())


def _nested(key: str, values: dict[str, int]) -> Event:
    """A custom record whose one entry is ``key``: a dict (``map_dict``) of ``values``."""
    info = lineage_pb2.UserDefinedInfo()
    inner = info.user_info.add().map_dict[key]
    for name, value in values.items():
        inner.user_info.add().map_int32[name] = value
    return Event(wall_time=1.0, user_defined_info=info)


def _two_maps_and_a_loose_one() -> Event:
    """A custom record with a map outside ``user_info`` and an entry holding two maps."""
    info = lineage_pb2.UserDefinedInfo()
    info.map_str["loose"] = "not read"
    entry = info.user_info.add()
    entry.map_int32["first"] = 1
    entry.map_str["second"] = "not read"
    return Event(wall_time=1.0, user_defined_info=info)


def _metric_text(text: str) -> Event:
    return Event(wall_time=1.0, evaluation_lineage=lineage_pb2.EvaluationLineage(metric=text))


CASES: dict[str, Case] = {
    # a file of custom lineage only, after a lineage began: skipped whole
    "custom_only_file_after": Case(
        [[custom({"seed": 1}), train(0.1)], [custom({"seed": 2, "extra": "x"})]],
        Picked(learning_rate=0.1, custom={"seed": 1}),
    ),
    # ... and before: the first file holding an evaluation starts the lineage afresh
    "custom_only_file_before": Case(
        [[custom({"seed": 1})], [evaluation({"accuracy": 0.5})]],
        Picked(metrics={"accuracy": 0.5}),
    ),
    # custom lineage only: MindInsight lists none; the lineage table lists the run
    "custom_only_run": Case(
        [[custom({"seed": 1})], [custom({"arch": "vit"})]],
        Picked(custom={"seed": 1, "arch": "vit"}),
        mindinsight_lists=False,
    ),
    # a later evaluation's metrics and validation set replace the earlier ones whole
    "evaluation_replaces": Case(
        [
            [train(0.1), evaluation({"accuracy": 0.5, "f1": 0.25}, path="/valid", size=10)],
            [evaluation({"accuracy": 0.75}, size=20)],
        ],
        Picked(learning_rate=0.1, valid_size=20, metrics={"accuracy": 0.75}),
    ),
    # an evaluation with an empty metric text empties the metrics
    "metrics_emptied": Case(
        [[train(0.1), evaluation({"accuracy": 0.5})], [_metric_text("")]],
        Picked(learning_rate=0.1),
    ),
    # one value per user_info entry (the first key of its first map); a later record's
    # key replaces the whole value, a nested dict too
    "custom_shapes": Case(
        [
            [_two_maps_and_a_loose_one(), _nested("optim", {"lr": 1}), train(0.1)],
            [evaluation({"accuracy": 0.5}), _nested("optim", {"momentum": 9})],
        ],
        Picked(
            learning_rate=0.1,
            metrics={"accuracy": 0.5},
            custom={"first": 1, "optim": {"momentum": 9}},
        ),
    ),
    # a train lineage starts afresh: the earlier evaluation and custom lineage go
    "train_resets": Case(
        [[train(0.1), evaluation({"accuracy": 0.5}), custom({"seed": 1})], [train(0.2)]],
        Picked(learning_rate=0.2),
    ),
    # so does a dataset graph: the earlier train lineage goes
    "graph_resets": Case(
        [[train(0.1), evaluation({"accuracy": 0.5})], [graph("MnistDataset")]],
        Picked(pipeline="MnistDataset"),
    ),
}
