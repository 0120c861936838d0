"""Non-scalar values in the dashboard: which the loader keeps and reads back, and images
served end to end by the real server (what the routes do with the values they read is
tested on an in-memory read surface: ``tests/board/api/test_plugin_routes.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers.board import free_port, get_json, running_server, wait_until

from sumlens import SummaryRecord
from sumlens._proto import tensorboard_pb2
from sumlens.board.data.loader import Loader
from sumlens.board.data.samples import SampleBucket
from sumlens.board.errors import ValueUnreadable
from sumlens.board.settings import BoardSettings, parse_caps
from sumlens.io import Histogram, RecordWriter, iter_events


def _write(directory: Path, steps: range, fmt: str = "mindspore") -> None:
    rng = np.random.default_rng(0)
    with SummaryRecord(directory, file_format=fmt) as record:
        for step in steps:
            record.add_value("scalar", "loss", 1.0 / step)
            record.add_value("image", "img", rng.random((1, 3, 6, 5), dtype=np.float32))
            record.add_value("histogram", "w", rng.standard_normal(50) * step)
            record.add_value("tensor", "t", np.arange(24, dtype=np.float32).reshape(2, 3, 4) * step)
            record.record(step)


def test_buckets_keep_first_newest_and_an_even_spread() -> None:
    for cap in (2, 3, 10, 64):
        bucket = SampleBucket(cap)
        for step in range(1, 3001):
            bucket.offer(step, float(step), 0, step, 1)
            steps = bucket.items["step"]
            assert steps.size <= cap and steps[0] == 1 and steps[-1] == step
            assert np.all(np.diff(steps) > 0)
        regular = np.diff(steps[:-1])
        assert regular.size == 0 or np.all(regular == regular[0])  # evenly spaced
    assert bucket.offer(1500, 0.0, 0, 0, 1) > 0  # a restart drops the later ones
    assert bucket.items["step"][-1] == 1500 and np.all(bucket.items["step"][:-1] < 1500)


def test_caps_parse_like_tensorboards_flag() -> None:
    assert parse_caps("images=20, histograms=100,tensor=5") == {
        "image": 20,
        "histogram": 100,
        "tensor": 5,
    }
    for bad in ("images", "meshes=3", "images=1", "images=many"):
        with pytest.raises(ValueError, match="--samples-per-plugin"):
            parse_caps(bad)


@pytest.mark.parametrize("fmt", ["mindspore", "tensorboard"])
def test_the_loader_keeps_references_and_reads_values_back(tmp_path: Path, fmt: str) -> None:
    _write(tmp_path / "base" / "run", range(1, 41), fmt)
    loader = Loader(tmp_path / "base", tmp_path / "ws", caps={"image": 5, "tensor": 4})
    loader.poll()
    tags = {run["id"]: run["tags"] for run in loader.runs()}["./run"]
    assert tags["image"] == ["img"] and tags["histogram"] == ["w"] and tags["tensor"] == ["t"]
    (images,) = loader.samples("./run", "image", "img")
    assert images.items.size <= 5 and images.items["step"][[0, -1]].tolist() == [1, 40]
    (histograms,) = loader.samples("./run", "histogram", "w")
    assert histograms.items["step"].tolist() == list(range(1, 41))  # under the default cap
    stored = {
        (e.plugin, e.step): e.value
        for e in iter_events(tmp_path / "base" / "run")
        if e.plugin in ("image", "tensor")
    }
    for index, step in enumerate(images.items["step"].tolist()):
        assert loader.value(images, index).value == stored["image", step]
    (tensors,) = loader.samples("./run", "tensor", "t")
    np.testing.assert_array_equal(
        loader.value(tensors, tensors.items.size - 1).value, stored["tensor", 40]
    )
    loader.stop()
    again = Loader(tmp_path / "base", tmp_path / "ws", caps={"image": 5, "tensor": 4})
    again.restore()
    (restored,) = again.samples("./run", "image", "img")
    np.testing.assert_array_equal(restored.items, images.items)
    again.stop()


def test_a_replaced_file_gives_no_stale_value(tmp_path: Path) -> None:
    _write(tmp_path / "base" / "run", range(1, 4))
    loader = Loader(tmp_path / "base", tmp_path / "ws")
    loader.poll()
    (images,) = loader.samples("./run", "image", "img")
    (path,) = [p for p in (tmp_path / "base" / "run").iterdir() if p.name.endswith("_MS")]
    path.write_bytes(b"\x00" * path.stat().st_size)
    assert loader.value(images, 0) is None
    loader.stop()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path):
    root = tmp_path_factory.mktemp("plugins")
    _write(root / "base" / "ours_ms", range(1, 13))
    _write(root / "base" / "ours_tb", range(1, 13), "tensorboard")
    shutil.copytree(golden_dir, root / "base" / "golden")
    settings = BoardSettings.create(root / "base", port=free_port(), workspace=root / "ws")
    with running_server(settings) as url:
        wait_until(
            lambda: (get_json(url + "/api/v1/runs") or {"loading": True})["loading"] is False
        )
        yield url, root / "base"


def _raw(url: str) -> tuple[int, bytes, str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read(), response.headers["content-type"]
    except urllib.error.HTTPError as err:
        return err.code, err.read(), err.headers["content-type"]


@pytest.mark.parametrize("run", ["./ours_ms", "./ours_tb", "./golden/all_plugins"])
def test_image_bytes_are_the_stored_ones(served, run: str) -> None:
    url, base = served
    listing = get_json(f"{url}/api/v1/samples?run={run}&plugin=image&tag=img")
    (series,) = listing["series"]
    stored = {e.step: e.value.encoded for e in iter_events(base / run) if e.plugin == "image"}
    for step in series["step"]:
        status, body, media = _raw(f"{url}/api/v1/image?run={run}&tag=img&step={step}")
        assert status == 200 and media == "image/png" and body == stored[step]


def test_a_damaged_histogram_is_counted_not_dropped(tmp_path: Path) -> None:
    """Values are indexed unconverted: a histogram with a negative bucket count is listed
    (only its values show the damage), then said to be unreadable when it is read back,
    and counted in the run's damage; the others are read."""
    run = tmp_path / "base" / "crafted"
    run.mkdir(parents=True)
    with RecordWriter(run / "events.out.tfevents.1700000000.crafted") as writer:
        writer.write(tensorboard_pb2.Event(wall_time=1.0, file_version="brain.Event:2")
                     .SerializeToString())  # fmt: skip
        for step in (1, 2, 3):
            event = tensorboard_pb2.Event(wall_time=1.0 + step, step=step)
            histo = event.summary.value.add(tag="w").histo
            histo.min, histo.max, histo.num, histo.sum = 0.0, 2.0, 3.0, 3.0
            histo.bucket_limit.extend([1.0, 2.0])
            histo.bucket.extend([1.0, 2.0] if step != 2 else [4.0, -1.0])  # step 2: damaged
            writer.write(event.SerializeToString())
    loader = Loader(tmp_path / "base", tmp_path / "ws")
    loader.poll()
    (series,) = loader.samples("./crafted", "histogram", "w")
    assert series.items["step"].tolist() == [1, 2, 3]
    read, unreadable = [], 0
    for index in range(series.items.size):
        try:
            event = loader.value(series, index)
        except ValueUnreadable as err:
            assert "'w' at step 2" in str(err) and "damaged" in str(err)
            unreadable += 1
            continue
        assert event is not None and isinstance(event.value, Histogram)
        read.append(event.step)
    (run_listed,) = loader.runs()
    loader.stop()
    assert read == [1, 3] and unreadable == 1
    assert run_listed["damage"]["damaged_values"] == 1
