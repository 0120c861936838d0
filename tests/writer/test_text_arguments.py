"""Text that UTF-8 cannot hold (a lone surrogate such as ``"\\ud800"``) in any string a
``SummaryWriter`` method writes (issue 40, item 19): refused where called, with a
``ValueError`` naming the argument (not a bare ``UnicodeEncodeError`` from the encoder,
nor a value dropped on the writer thread), in both file formats."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from sumlens import SummaryWriter

BAD = "loss\ud800"
CALLS: dict[str, tuple[Callable[[SummaryWriter], None], str]] = {
    "add_text tag": (lambda w: w.add_text(BAD, "fine", 0), "add_text', the argument 'tag'"),
    "add_text text": (
        lambda w: w.add_text("notes", BAD, 0),
        "add_text', the argument 'text_string'",
    ),
    "add_scalar new_style": (
        lambda w: w.add_scalar(BAD, 1.0, 0, new_style=True),
        "argument 'tag'|name='loss",
    ),
    "add_scalars main_tag": (
        lambda w: w.add_scalars(BAD, {"a": 1.0}, 0),
        "the argument 'main_tag'",
    ),
    "add_scalars key": (
        lambda w: w.add_scalars("losses", {BAD: 1.0}, 0),
        "the argument 'tag_scalar_dict key'",
    ),
    "add_histogram": (
        lambda w: w.add_histogram(BAD, np.ones(3), 0),
        "argument 'tag'|name='loss",
    ),
    "add_histogram_raw": (
        lambda w: w.add_histogram_raw(BAD, 0, 1, 1, 1, 1, [1.0], [1.0], 0),
        "add_histogram_raw', the argument 'tag'",
    ),
    "add_video": (
        lambda w: w.add_video(BAD, np.ones((1, 2, 3, 4, 4)), 0),
        "add_video', the argument 'tag'",
    ),
    "add_audio": (lambda w: w.add_audio(BAD, np.zeros(100), 0), "add_audio', the argument 'tag'"),
    "add_pr_curve": (
        lambda w: w.add_pr_curve(BAD, np.array([0, 1]), np.array([0.2, 0.8]), 0),
        "add_pr_curve', the argument 'tag'",
    ),
    "add_custom_scalars": (
        lambda w: w.add_custom_scalars({"group": {"chart": ["Multiline", [BAD]]}}),
        r"the argument 'layout\['group'\]\['chart'\] tags\[0\]'",
    ),
    "add_mesh": (
        lambda w: w.add_mesh(BAD, np.ones((1, 3, 3))),
        "add_mesh', the argument 'tag'",
    ),
    "add_embedding tag": (
        lambda w: w.add_embedding(np.ones((2, 2)), tag=BAD),
        "add_embedding', the argument 'tag'",
    ),
    "add_embedding label": (
        lambda w: w.add_embedding(np.ones((2, 2)), metadata=["a", BAD]),
        r"the argument 'metadata\[1\]'",
    ),
    "add_hparams key": (
        lambda w: w.add_hparams({BAD: 0.1}, {"acc": 1.0}),
        "the argument 'hparam_dict key'",
    ),
    "add_hparams value": (
        lambda w: w.add_hparams({"optimizer": BAD}, {"acc": 1.0}),
        r"the argument 'hparam_dict\['optimizer'\]'",
    ),
    "add_hparams metric": (
        lambda w: w.add_hparams({"lr": 0.1}, {BAD: 1.0}),
        "the argument 'metric_dict key'",
    ),
    "add_hparams run_name": (
        lambda w: w.add_hparams({"lr": 0.1}, {"acc": 1.0}, run_name=BAD),
        "the argument 'run_name'",
    ),
    "add_scalar": (lambda w: w.add_scalar(BAD, 1.0, 0), "name='loss"),
    "add_image": (lambda w: w.add_image(BAD, np.ones((3, 4, 4)), 0), "name='loss"),
}


@pytest.mark.parametrize("file_format", ["tensorboard", "mindspore"])
@pytest.mark.parametrize("call", CALLS)
def test_a_lone_surrogate_is_refused_naming_the_argument(
    tmp_path: Path, call: str, file_format: str, caplog: pytest.LogCaptureFixture
) -> None:
    make, message = CALLS[call]
    writer = SummaryWriter(tmp_path, file_format=file_format)
    refused = pytest.raises(ValueError, match=message)
    with caplog.at_level(logging.ERROR, logger="sumlens"), writer, refused as raised:
        make(writer)
    assert type(raised.value) is ValueError  # not UnicodeEncodeError from deep inside
    assert "\\ud800" in str(raised.value)  # the character, shown
    assert not caplog.records  # nothing failed later, on the writer thread
