"""Both faces of the dashboard pick the same lineage values from the same files.

The lineage table of ``/api/v1`` (:func:`~sumlens.board.query.lineage_values.read_run_lineage`)
and MindInsight's lineage API (:func:`~sumlens.board.mindinsight.lineage.read_lineage`)
once merged a run's lineage files each in its own way; both now read them through
:mod:`sumlens.board.query.lineage_merge`. Over the runs of ``helpers/lineage_cases.py``,
one per rule on which they differed (what MindInsight shows of them is checked in
``tests/compat/test_mindinsight_lineage_merge.py``), and over damaged files: the same train,
evaluation, dataset and custom values, and damage skipped and counted, never a crash.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from helpers.lineage_cases import (
    CASES,
    Case,
    Event,
    Picked,
    custom,
    evaluation,
    file_name,
    train,
    write_case,
)

from sumlens._proto import lineage_pb2
from sumlens.board.mindinsight.lineage import read_lineage
from sumlens.board.query.lineage_values import pipeline_text, read_run_lineage
from sumlens.io import ReadStats, RecordFile, encode_record


def _dotted(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts flattened to dotted keys, as the lineage table names them."""
    flat: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            flat.update(_dotted(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _prefixed(values: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {key[len(prefix) :]: value for key, value in values.items() if key.startswith(prefix)}


def table_picks(files: dict[str, RecordFile | None]) -> tuple[Picked | None, list[str]]:
    """What the lineage table shows of a run's files, and its problems."""
    lineage = read_run_lineage(files)
    if lineage is None:
        return None, []
    values = lineage.values
    picked = Picked(
        learning_rate=values.get("learning_rate"),
        valid_path=values.get("valid_dataset_path"),
        valid_size=values.get("valid_dataset_size"),
        metrics=_prefixed(values, "metric/"),
        custom=_prefixed(values, "custom/"),
        pipeline=values.get("pipeline"),
    )
    return picked, lineage.problems


def mindinsight_picks(files: list[RecordFile]) -> tuple[Picked | None, bool]:
    """What MindInsight's face shows of a run's files, and whether all could be read."""
    lineage, whole = read_lineage("./run", files, datetime(2024, 1, 1))
    if lineage is None:
        return None, whole
    row = lineage.model_lineage()
    graph = lineage.info["dataset_graph"]
    picked = Picked(
        learning_rate=row["learning_rate"],
        valid_path=row["test_dataset_path"],
        valid_size=row["test_dataset_count"],
        metrics=_dotted(row["metric"]),
        custom=_dotted(row["user_defined"]),
        pipeline=pipeline_text(graph) if graph else None,
    )
    return picked, whole


def flat(picked: Picked) -> Picked:
    """``picked`` with its custom values under dotted names."""
    return dataclasses.replace(picked, custom=_dotted(picked.custom))


def write_records(directory: Path, files: list[list[Event | bytes]]) -> list[Path]:
    """Lineage files of these events (or raw payloads), in MindInsight's order."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, records in enumerate(files):
        payloads = [r if isinstance(r, bytes) else r.SerializeToString() for r in records]
        path = directory / file_name(index)
        path.write_bytes(b"".join(encode_record(payload) for payload in payloads))
        paths.append(path)
    return paths


@pytest.mark.parametrize("name", list(CASES))
def test_both_faces_pick_the_same_values(tmp_path: Path, name: str) -> None:
    case: Case = CASES[name]
    paths = write_case(tmp_path, case)
    table, problems = table_picks({n: RecordFile(p) for n, p in paths.items()})
    shown, whole = mindinsight_picks([RecordFile(p) for p in paths.values()])
    assert table == flat(case.picked) and problems == []
    assert whole
    if case.mindinsight_lists:
        assert shown == flat(case.picked)
    else:  # custom lineage only: MindInsight lists none, the lineage table lists the run
        assert shown is None


class _FailsAfterOneRecord(RecordFile):
    """A file whose disk fails after its first record was read."""

    def read_payloads(
        self, stats: ReadStats | None = None, limit: int | None = None
    ) -> Iterator[bytes]:
        for payload in super().read_payloads(stats, limit):
            yield payload
            raise OSError("the disk went away")


def test_a_file_that_cannot_be_read_adds_nothing_to_either_face(tmp_path: Path) -> None:
    """The lineage table kept what it had read of the file before the error (here a new
    train lineage that started afresh); MindInsight's face, as MindInsight, none of it."""
    first, failing = write_records(
        tmp_path,
        [[train(0.1), evaluation({"accuracy": 0.5})], [train(0.2), custom({"seed": 1})]],
    )
    table, problems = table_picks(
        {first.name: RecordFile(first), failing.name: _FailsAfterOneRecord(failing)}
    )
    shown, whole = mindinsight_picks([RecordFile(first), _FailsAfterOneRecord(failing)])
    expected = Picked(learning_rate=0.1, metrics={"accuracy": 0.5})
    assert table == shown == expected
    assert problems == [f"{failing.name}: OSError: the disk went away"]
    assert not whole  # read again next time


def _entry_without_a_map() -> Event:
    """A custom record whose entry holds a record, not a map (MindInsight's face failed
    on it with an AttributeError)."""
    info = lineage_pb2.UserDefinedInfo()
    info.user_info.add().user_info.add().map_str["inner"] = "x"
    return Event(wall_time=1.0, user_defined_info=info)


def test_crafted_records_are_skipped_and_counted_by_both(tmp_path: Path) -> None:
    records: list[Event | bytes] = [
        train(0.1),
        _entry_without_a_map(),
        b"not a lineage event",
        custom({"seed": 1}),
    ]
    (path,) = write_records(tmp_path, [records])
    table, problems = table_picks({path.name: RecordFile(path)})
    shown, whole = mindinsight_picks([RecordFile(path)])
    assert table == shown == Picked(learning_rate=0.1, custom={"seed": 1})
    assert problems == [f"{path.name}: 2 record(s) could not be read"] and whole


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[1, 2]", "not a JSON object"),
        ('{"a":' * 5000 + "1" + "}" * 5000, "not JSON that can be read"),
    ],
)
def test_metrics_that_cannot_be_shown_replace_the_earlier_ones_in_both(
    tmp_path: Path, text: str, says: str
) -> None:
    """The lineage table kept the earlier evaluation's metrics; MindInsight's face (as
    MindInsight, which replaces them) showed none."""
    crafted = Event(wall_time=1.0, evaluation_lineage=lineage_pb2.EvaluationLineage(metric=text))
    first, second = write_records(
        tmp_path, [[train(0.1), evaluation({"accuracy": 0.5})], [crafted]]
    )
    table, problems = table_picks({p.name: RecordFile(p) for p in (first, second)})
    shown, _ = mindinsight_picks([RecordFile(first), RecordFile(second)])
    assert table == shown == Picked(learning_rate=0.1)
    assert problems == [f"{second.name}: the evaluation metrics are {says}"]
