"""Our SummaryRecord, fed the inputs of the golden all_plugins run, writes what MindSpore wrote."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from sumlens import SummaryRecord
from sumlens.io import iter_events
from sumlens.lineage import EvaluationLineage, TrainLineage, UserDefinedInfo


def write_all_plugins(log_dir: Path) -> None:
    """The recipe of tests/data/golden/README.md, all_plugins (without the network graph)."""
    rng = np.random.default_rng(1234)
    with SummaryRecord(log_dir) as record:
        record.add_value(
            "custom_lineage_data",
            "c",
            UserDefinedInfo({"author": "golden", "batch_size": 2, "lr": 0.01}),
        )
        record.add_value(
            "train_lineage",
            "t",
            TrainLineage(
                network="TinyNet",
                loss=0.3333333,
                train_dataset_size=6,
                model_path="",
                model_size=0,
                learning_rate=0.01,
                optimizer="Momentum",
                loss_function="SoftmaxCrossEntropyWithLogits",
                parallel_mode="stand_alone",
                epoch=1,
                device_num=1,
                batch_size=2,
            ),
        )
        record.add_value(
            "eval_lineage", "e", EvaluationLineage({"accuracy": 0.5}, valid_dataset_size=4)
        )
        record.record(0)
        for step in (1, 2, 3):
            record.add_value("scalar", "loss", np.float32(1 / step))
            record.add_value("image", "img", rng.random((2, 3, 8, 8)).astype(np.float32))
            record.add_value("histogram", "w", rng.standard_normal(100).astype(np.float32))
            record.add_value("tensor", "t", (np.arange(6, dtype=np.float32) * step).reshape(2, 3))
            record.record(step)


def by_key(run: Path) -> dict[tuple[str, str, int], object]:
    events = {}
    for event in iter_events(run):
        if event.plugin != "graph":
            events[(event.plugin, event.tag, event.step)] = event.value
    return events


@pytest.fixture(scope="module")
def runs(golden_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    ours = tmp_path_factory.mktemp("ours")
    write_all_plugins(ours)
    return by_key(ours), by_key(golden_dir / "all_plugins")


def test_same_tags_and_steps(runs) -> None:
    ours, golden = runs
    assert sorted(ours) == sorted(golden)


def test_scalars_and_tensors_exactly_equal(runs) -> None:
    ours, golden = runs
    for key, value in golden.items():
        if key[0] == "scalar":
            assert ours[key] == value, key
        elif key[0] == "tensor":
            assert ours[key].dtype == value.dtype and np.array_equal(ours[key], value), key


def test_images_have_equal_pixels(runs) -> None:
    ours, golden = runs
    for key, value in golden.items():
        if key[0] == "image":
            mine = ours[key]
            assert (mine.height, mine.width, mine.colorspace) == (value.height, value.width, 3)
            pixels = [np.asarray(Image.open(io.BytesIO(v.encoded))) for v in (mine, value)]
            assert np.array_equal(*pixels), key


def test_histograms_equal_bit_for_bit(runs) -> None:
    ours, golden = runs
    for key, value in golden.items():
        if key[0] == "histogram":
            mine = ours[key]
            assert np.array_equal(mine.counts, value.counts), key
            assert np.array_equal(mine.left, value.left), key
            assert np.array_equal(mine.width, value.width), key
            assert (mine.min, mine.max, mine.count, mine.nan_count) == (
                value.min,
                value.max,
                value.count,
                value.nan_count,
            )
            assert mine.sum == pytest.approx(value.sum, rel=1e-12)


def test_lineage_messages_equal(runs) -> None:
    ours, golden = runs
    for plugin in ("train_lineage", "eval_lineage", "custom_lineage_data"):
        assert ours[(plugin, plugin, 0)] == golden[(plugin, plugin, 0)], plugin
