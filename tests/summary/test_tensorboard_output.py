"""``file_format="tensorboard"``: files TensorBoard itself reads with the right values; lineage
still goes to the MindSpore lineage file."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from helpers.summary import files_of, read_events
from PIL import Image as PILImage

from sumlens import SummaryRecord
from sumlens.lineage import TrainLineage
from sumlens.summary.histogram import reference_histogram

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

RNG = np.random.default_rng(7)
HIST_VALUES = [RNG.normal(size=500).astype(np.float32) for _ in range(3)]
IMAGES = [RNG.integers(0, 255, size=(2, 3, 4, 5), dtype=np.uint8) for _ in range(3)]
TENSORS = [np.arange(6, dtype=np.float32).reshape(2, 3) * s for s in range(3)]


@pytest.fixture
def tb_run(tmp_path: Path) -> Path:
    with SummaryRecord(tmp_path, file_format="tensorboard") as rec:
        for step in range(3):
            rec.add_value("scalar", "loss", 1.0 / (step + 1))
            rec.add_value("histogram", "weights", HIST_VALUES[step])
            rec.add_value("image", "inputs", IMAGES[step])
            rec.add_value("tensor", "t", TENSORS[step])
            if step == 0:
                rec.add_value("train_lineage", "", TrainLineage(optimizer="Adam", epoch=3))
            rec.record(step)
    return tmp_path


def accumulator(run: Path):
    acc = event_accumulator.EventAccumulator(
        str(run),
        size_guidance={
            event_accumulator.SCALARS: 0,
            event_accumulator.HISTOGRAMS: 0,
            event_accumulator.IMAGES: 0,
            event_accumulator.TENSORS: 0,
        },
    )
    acc.Reload()
    return acc


def expected_canvas(batch: np.ndarray) -> np.ndarray:
    n, _, height, width = batch.shape
    canvas = np.zeros((height, n * width, 3), dtype=np.uint8)
    for index in range(n):
        canvas[:, index * width : (index + 1) * width] = batch[index].transpose(1, 2, 0)
    return canvas


def test_files_are_named_for_tensorboard(tb_run: Path) -> None:
    [summary] = files_of(tb_run, "tensorboard")
    assert summary.name.startswith("events.out.tfevents.")
    [lineage] = files_of(tb_run, "lineage")
    assert lineage.name.endswith("_lineage")
    assert files_of(tb_run, "summary") == []


def test_tensorboard_reads_scalars(tb_run: Path) -> None:
    scalars = accumulator(tb_run).Scalars("loss")
    assert [(s.step, s.value) for s in scalars] == [
        (step, pytest.approx(1.0 / (step + 1), rel=1e-7)) for step in range(3)
    ]


def test_tensorboard_reads_histograms(tb_run: Path) -> None:
    histograms = accumulator(tb_run).Histograms("weights")
    assert [h.step for h in histograms] == [0, 1, 2]
    for event, values in zip(histograms, HIST_VALUES, strict=True):
        reference = reference_histogram(values)
        hist = event.histogram_value
        assert hist.num == values.size
        assert hist.min == pytest.approx(reference.min)
        assert hist.max == pytest.approx(reference.max)
        assert hist.sum == pytest.approx(reference.sum)
        np.testing.assert_array_equal(hist.bucket, reference.counts)
        np.testing.assert_allclose(hist.bucket_limit, reference.left + reference.width)


def test_tensorboard_reads_images(tb_run: Path) -> None:
    images = accumulator(tb_run).Images("inputs")
    assert [i.step for i in images] == [0, 1, 2]
    for event, batch in zip(images, IMAGES, strict=True):
        decoded = np.asarray(PILImage.open(io.BytesIO(event.encoded_image_string)).convert("RGB"))
        assert (event.height, event.width) == decoded.shape[:2]
        np.testing.assert_array_equal(decoded, expected_canvas(batch))


def test_tensorboard_reads_tensors(tb_run: Path) -> None:
    from tensorboard.util import tensor_util

    tensors = accumulator(tb_run).Tensors("t")
    assert [t.step for t in tensors] == [0, 1, 2]
    for event, expected in zip(tensors, TENSORS, strict=True):
        np.testing.assert_array_equal(tensor_util.make_ndarray(event.tensor_proto), expected)


def test_sumlens_reads_the_same_values(tb_run: Path) -> None:
    events = read_events(tb_run)
    by_key = {(e.step, e.plugin, e.tag): e.value for e in events}
    for step in range(3):
        assert by_key[(step, "scalar", "loss")] == pytest.approx(1.0 / (step + 1), rel=1e-7)
        hist = by_key[(step, "histogram", "weights")]
        np.testing.assert_array_equal(hist.counts, reference_histogram(HIST_VALUES[step]).counts)
        np.testing.assert_array_equal(by_key[(step, "tensor", "t")], TENSORS[step])
        image = by_key[(step, "image", "inputs")]
        decoded = np.asarray(PILImage.open(io.BytesIO(image.encoded)).convert("RGB"))
        np.testing.assert_array_equal(decoded, expected_canvas(IMAGES[step]))
    [lineage] = [e for e in events if e.plugin == "train_lineage"]
    assert lineage.value.hyper_parameters.optimizer == "Adam"
    assert lineage.value.hyper_parameters.epoch == 3
