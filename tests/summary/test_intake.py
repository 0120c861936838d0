"""The intake: the plain-scalar test of the scalar lane, and every check of a value with
its words (the same for each way in: add_value, record_value, the lane, the operators)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from sumlens._proto import tensorboard_pb2
from sumlens.summary.intake import (
    MAX_STEP_BYTES,
    PLUGINS,
    Intake,
    checked_plugin,
    checked_step,
    checked_wall,
    plain_scalar,
)
from sumlens.summary.items import TENSORBOARD_EVENT, Item, StepBatch

OWNER = "SummaryRecord.record_value"


@pytest.mark.parametrize(
    "value", [0.5, 2, np.float32(0.5), np.float64(0.5), np.int64(2), torch.tensor([0.5])]
)
def test_plain_scalars_are_read_at_once(value: object) -> None:
    number = plain_scalar("scalar", "loss", value)
    assert type(number) is float and number == float(np.asarray(value).reshape(()))


@pytest.mark.parametrize(
    ("plugin", "name", "value"),
    [
        ("Scalar", "loss", 0.5),  # another spelling: the intake's to check
        ("tensor", "loss", 0.5),
        ("scalar", "", 0.5),
        ("scalar", "ünï", 0.5),  # not ASCII: checked as UTF-8 by the intake
        ("scalar", b"loss", 0.5),
        ("scalar", "loss", True),
        ("scalar", "loss", np.array([0.5])),
        ("scalar", "loss", torch.tensor([0.5, 1.0])),
        ("scalar", "loss", torch.tensor([1 + 2j])),
    ],
)
def test_anything_else_goes_to_the_intakes_checks(plugin: str, name: object, value: object) -> None:
    assert plain_scalar(plugin, name, value) is None


def test_plugins_steps_and_wall_times_are_checked_with_their_owner() -> None:
    assert checked_plugin("HISTOGRAM", OWNER) == "histogram"
    allowed = ", ".join(map(repr, PLUGINS))
    with pytest.raises(ValueError, match=re.escape(f"must be one of {allowed}, but got 'nope'")):
        checked_plugin("nope", OWNER)
    assert checked_step(np.int64(7), OWNER) == 7
    with pytest.raises(TypeError, match=re.escape(f"For '{OWNER}', the argument 'step'")):
        checked_step(True, OWNER)
    with pytest.raises(ValueError, match=re.escape(f"For '{OWNER}', the argument 'step'")):
        checked_step(2**63, OWNER)
    assert checked_wall(5, OWNER) == 5.0
    with pytest.raises(ValueError, match=re.escape(f"For '{OWNER}', the argument 'wall_time'")):
        checked_wall(-1.0, OWNER)


@pytest.mark.parametrize(
    ("plugin", "name", "value", "error", "message"),
    [
        (
            "scalar",
            "",
            1.0,
            ValueError,
            "For 'SummaryRecord.add_value', the argument 'name' must be a non-empty str, "
            "but got ''",
        ),
        ("scalar", "s", np.zeros(2), ValueError, "scalar 's' must hold exactly one value"),
        ("image", "i", np.zeros((2, 2), np.complex64), TypeError, "image 'i' has dtype complex64"),
        ("tensor", "t", np.float32(1.0), ValueError, "tensor 't' must have at least one dimension"),
        ("histogram", "h", np.float32(1.0), ValueError, "histogram 'h' must have at least one"),
        ("graph", "g", 1.0, TypeError, "plugin 'graph' expects a GraphProto"),
    ],
)
def test_values_are_refused_in_the_words_of_add_value(
    plugin: str, name: str, value: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        Intake("mindspore", {}).item(plugin, name, value)


@pytest.mark.parametrize("file_format", ["mindspore", "tensorboard"])
def test_a_steps_values_share_its_limit_in_mindspores_format_only(file_format: str) -> None:
    intake = Intake(file_format, {})
    big = Item("tensor", "big", None, nbytes=MAX_STEP_BYTES - 1000)
    step = {("tensor", "big"): big}
    value = np.zeros(1000, np.float32)
    if file_format == "tensorboard":  # each value an event of its own
        assert intake.item("tensor", "t", value, step=step).nbytes == 4064
        return
    message = (
        "tensor 't' would take about 4064 bytes, which puts its step over the "
        f"{MAX_STEP_BYTES}-byte limit of a protobuf message; record fewer or smaller values "
        "per step"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        intake.item("tensor", "t", value, step=step)
    assert intake.item("tensor", "big", value, step=step).nbytes == 4064  # replaces it
    assert intake.item("tensor", "t", value).nbytes == 4064  # an event of its own


def test_exported_tensors_are_marked_and_copied() -> None:
    value = np.arange(3.0)
    item = Intake("mindspore", {"tensor_format": "npy"}).item("tensor", "t", value)
    value[0] = 9.0
    assert item.export and item.value.tolist() == [0.0, 1.0, 2.0]
    assert not Intake("mindspore", {}).item("tensor", "t", value).export


def test_operator_values_and_events_are_checked() -> None:
    intake = Intake("mindspore", {})
    with pytest.raises(TypeError, match="summary operator name must be a non-empty str, got ''"):
        intake.operator_item("scalar", "", 1.0)
    assert intake.operator_item("scalar", "op", 2).value == 2.0
    message = (
        "SummaryRecord.record_tensorboard_event: event must be a TensorBoard Event message or "
        "a function returning one, got 'text'"
    )
    with pytest.raises(TypeError, match=re.escape(message)):
        intake.event_item("text", None, 0)
    event = tensorboard_pb2.Event(file_version="x")
    item = intake.event_item(event, None, 0)
    assert (item.plugin, item.nbytes) == (TENSORBOARD_EVENT, event.ByteSize() + 32)
    assert intake.event_item(lambda: event, None, 100).nbytes == 4096 + 32
    with pytest.raises(ValueError, match="nbytes"):
        intake.event_item(event, -1, 0)


@pytest.mark.parametrize("file_format", ["mindspore", "tensorboard"])
def test_an_event_over_protobufs_limit_is_refused(file_format: str) -> None:
    half = [Item("tensor", f"t{i}", None, nbytes=MAX_STEP_BYTES // 2 + 1) for i in range(2)]
    batch = StepBatch(3, 0.0, half)
    if file_format == "tensorboard":  # an event per value: each fits
        Intake(file_format, {}).check_step_bytes(batch)
        return
    message = (
        f"step 3: about {batch.nbytes} bytes of values in one event, over the {MAX_STEP_BYTES}"
        "-byte limit of a protobuf message; record fewer or smaller values per step"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        Intake(file_format, {}).check_step_bytes(batch)
