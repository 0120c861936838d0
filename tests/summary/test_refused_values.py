"""Values the writer could not write are refused at ``add_value``, naming what is wrong;
nothing accepted before or beside them is lost."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.summary import read_events

from sumlens import SummaryRecord, ops
from sumlens.io import read_scalars

FORMATS = ["mindspore", "tensorboard"]
BAD_TAG = "bad\ud800"  # a lone surrogate: Python text that UTF-8 cannot hold


@pytest.mark.parametrize("file_format", FORMATS)
def test_a_tag_utf8_cannot_hold_is_refused_and_every_other_step_arrives(
    tmp_path: Path, file_format: str, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.ERROR, logger="sumlens"),
        SummaryRecord(tmp_path, file_format=file_format, raise_exception=True) as rec,
    ):
        for step in range(1, 101):
            rec.add_value("scalar", "loss", float(step))
            if step == 3:
                with pytest.raises(ValueError, match=r"name='bad\\ud800'.*position 3"):
                    rec.add_value("scalar", BAD_TAG, 1.0)
            if step == 5:
                rec.add_value("image", "img", np.zeros((1, 3, 4, 4), np.uint8))
                with pytest.raises(ValueError, match="cannot be written"):
                    rec.add_value("histogram", BAD_TAG, np.arange(5.0))
            assert rec.record(step)
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    steps, _, values = read_scalars(tmp_path)["loss"]
    assert steps.tolist() == list(range(1, 101))
    assert values.tolist() == [float(s) for s in range(1, 101)]
    assert [e.step for e in read_events(tmp_path) if e.plugin == "image"] == [5]


def test_a_summary_operator_with_a_bad_tag_fails_at_record(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as rec:
        with pytest.raises(ValueError, match="cannot be written"):
            ops.scalar(BAD_TAG, torch.tensor(1.0))
        ops.scalar("fine", torch.tensor(2.0))
        rec.record(1)
    assert [(e.tag, e.value) for e in read_events(tmp_path)] == [("fine", 2.0)]


@pytest.mark.parametrize(
    ("plugin", "value", "message"),
    [
        ("histogram", np.array(["a", "b", "c"]), r"histogram 'v' has dtype <U1"),
        ("histogram", np.array([1, "b", None], dtype=object), r"histogram 'v' has dtype object"),
        ("histogram", np.array([1 + 2j, 3j]), r"histogram 'v' has dtype complex128"),
        ("histogram", torch.tensor([1 + 2j, 3j]), r"histogram 'v' has dtype complex64"),
        ("image", np.full((1, 3, 4, 4), "x"), r"image 'v' has dtype <U1"),
        ("image", np.ones((1, 3, 4, 4), np.complex64), r"image 'v' has dtype complex64"),
        ("scalar", 1 + 2j, r"scalar 'v' has dtype complex128"),
        ("scalar", np.complex64(1j), r"scalar 'v' has dtype complex64"),
        ("scalar", np.str_("1.5"), r"scalar 'v' has dtype <U3"),
        ("scalar", "1.5", r"v must be a tensor or array .* got builtins.str"),
        ("scalar", torch.tensor(1j), r"scalar 'v' has dtype complex64"),
        ("tensor", np.array([1j]), r"v has dtype complex128, which cannot be recorded"),
    ],
)
def test_values_without_real_numbers_are_refused_naming_them(
    tmp_path: Path, plugin: str, value: object, message: str
) -> None:
    with SummaryRecord(tmp_path) as rec:
        with pytest.raises(TypeError, match=message):
            rec.add_value(plugin, "v", value)
        rec.add_value("scalar", "kept", 1.0)
        rec.record(1)
    assert [(e.tag, e.value) for e in read_events(tmp_path)] == [("kept", 1.0)]


def test_a_closed_record_says_once_that_values_are_not_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rec = SummaryRecord(tmp_path)
    rec.close()
    with caplog.at_level(logging.ERROR, logger="sumlens"):
        rec.add_value("scalar", "loss", 1.0)
        rec.add_value("histogram", "h", np.arange(3.0))
        rec.add_value("scalar", "loss", 2.0)
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1, messages
    assert "is closed; add_value('scalar', 'loss')" in messages[0]


def test_a_network_never_called_is_said_at_close(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    net = torch.nn.Linear(2, 2)
    with (
        caplog.at_level(logging.WARNING, logger="sumlens"),
        SummaryRecord(tmp_path, network=net) as rec,
    ):
        rec.add_value("scalar", "loss", 1.0)
        rec.record(1)
    [message] = [r.getMessage() for r in caplog.records]
    assert "no graph of network Linear was written: it was never called" in message


def test_a_network_called_after_the_last_record_is_said_at_close(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    net = torch.nn.Linear(2, 2)
    with caplog.at_level(logging.WARNING, logger="sumlens"), SummaryRecord(tmp_path, network=net):
        net(torch.ones(1, 2))
    [message] = [r.getMessage() for r in caplog.records]
    assert "no record() call followed its first forward call" in message
