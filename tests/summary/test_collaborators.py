"""``SummaryRecord``'s surface for its collaborators: the scalar fast lane, discarding a
step, the summary-operator sink, and the value protocol of graph, lineage and landscape
values (``plugin`` and ``to_proto()``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.summary import read_events

from sumlens import SummaryRecord
from sumlens._proto import lineage_pb2


def test_add_scalar_is_the_fast_lane_of_add_value(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as record:
        record.add_scalar("loss/auto", 0.5)
        record.record(1)
        record.add_value("scalar", "loss/auto", 0.25)
        record.record(2)
    assert [(e.step, e.value) for e in read_events(tmp_path)] == [(1, 0.5), (2, 0.25)]


def test_discard_pending_drops_the_whole_step(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as record:
        record.add_scalar("kept", 1.0)
        record.record(1)
        record.add_scalar("dropped", 2.0)
        record.add_value("tensor", "dropped", np.ones(2))
        record.add_operator_value("histogram", "dropped", np.arange(3.0))
        record.discard_pending()
        record.record(2)
        record.add_scalar("kept", 3.0)
        record.record(3)
    assert [(e.tag, e.step) for e in read_events(tmp_path)] == [("kept", 1), ("kept", 3)]


def test_operator_values_are_written_in_train_mode_only(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as record:
        record.add_operator_value("scalar", "op", 1.0)
        record.record(1)
        record.set_mode("eval")
        record.add_operator_value("scalar", "op", 2.0)
        record.record(2)
        record.set_mode("train")
        record.add_operator_value("scalar", "op", 3.0)
        record.record(3)
    assert [(e.step, e.value) for e in read_events(tmp_path)] == [(1, 1.0), (3, 3.0)]
    with pytest.raises(TypeError, match="non-empty str"):
        SummaryRecord(tmp_path / "other").add_operator_value("scalar", "", 1.0)


class Note:
    """A value of a package the writer does not know, following the value protocol."""

    plugin = "custom_lineage_data"

    def __init__(self, message: object) -> None:
        self.message = message

    def to_proto(self) -> object:
        return self.message


def test_any_value_with_plugin_and_to_proto_is_taken(tmp_path: Path) -> None:
    message = lineage_pb2.UserDefinedInfo()
    message.user_info.add().map_str["note"] = "from a protocol value"
    with SummaryRecord(tmp_path) as record:
        record.add_value("custom_lineage_data", "note", Note(message))
        record.record(1)
    [event] = [e for e in read_events(tmp_path) if e.plugin != "scalar"]
    assert event.value.user_info[0].map_str["note"] == "from a protocol value"


def test_the_value_protocol_is_checked(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as record:
        with pytest.raises(TypeError, match=r"Note.to_proto\(\) must return a UserDefinedInfo"):
            record.add_value("custom_lineage_data", "note", Note(lineage_pb2.TrainLineage()))
        with pytest.raises(TypeError, match="plugin 'train_lineage' expects"):
            record.add_value("train_lineage", "note", Note(lineage_pb2.UserDefinedInfo()))
