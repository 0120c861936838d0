"""Non-scalar values in the dashboard: which the loader keeps, and the routes that serve them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers.board import free_port, get_json, running_server, wait_until

from sumlens import SummaryRecord
from sumlens._proto import tensorboard_pb2
from sumlens.board.data.loader import Loader
from sumlens.board.data.samples import SampleBucket
from sumlens.board.settings import BoardSettings, parse_caps
from sumlens.io import RecordWriter, iter_events


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
    for bad in ("images", "audio=3", "images=1", "images=many"):
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


def test_histograms_of_every_kept_step(served) -> None:
    url, base = served
    (series,) = get_json(f"{url}/api/v1/histograms?run=./golden/all_plugins&tag=w")["series"]
    stored = [e for e in iter_events(base / "golden" / "all_plugins") if e.plugin == "histogram"]
    assert [h["step"] for h in series["histograms"]] == [e.step for e in stored]
    for got, event in zip(series["histograms"], stored, strict=True):
        assert got["count"] == event.value.count == sum(got["counts"])
        assert got["counts"] == event.value.counts.tolist()


def test_tensor_slices(served) -> None:
    url, _ = served
    body = get_json(f"{url}/api/v1/tensor?run=./ours_ms&tag=t&step=3&slice=[1,:,1:3]&bins=3")
    expected = np.arange(24, dtype=np.float32).reshape(2, 3, 4)[1, :, 1:3] * 3
    assert body["shape"] == [2, 3, 4] and body["slice_shape"] == [3, 2]
    assert body["values"] == expected.tolist()
    assert body["slice_statistics"]["max"] == float(expected.max())
    assert sum(body["histogram"]["counts"]) == expected.size


@pytest.mark.parametrize(
    ("query", "status", "says"),
    [
        ("tensor?run=./ours_ms&tag=t&slice=[0,0,0,0]", 422, "4 entries"),
        ("tensor?run=./ours_ms&tag=t&slice=[x,:]", 422, "'x'"),
        ("tensor?run=./ours_ms&tag=t&slice=[0,9]", 422, "out of range"),
        ("tensor?run=./ours_ms&tag=nope", 404, "'nope'"),
        ("image?run=./ours_ms&tag=img&step=999", 404, "step=999"),
        ("image?run=../secret&tag=img", 404, "'../secret'"),
        ("samples?run=./ours_ms&plugin=audio&tag=x", 422, "plugin='audio'"),
    ],
)
def test_bad_requests_are_named(served, query: str, status: int, says: str) -> None:
    url, _ = served
    got, body, _ = _raw(f"{url}/api/v1/{query}")
    assert got == status and says in json.loads(body)["detail"]


def test_messages_as_json(served) -> None:
    url, _ = served
    run = "./golden/all_plugins"
    tags = {r["id"]: r["tags"] for r in get_json(f"{url}/api/v1/runs")["runs"]}[run]
    (graph_tag,) = tags["graph"]
    graph = get_json(f"{url}/api/v1/message?run={run}&plugin=graph&tag={graph_tag}")
    assert graph["plugin"] == "graph" and graph["message"]["node"]
    lineage = get_json(f"{url}/api/v1/message?run={run}&plugin=train_lineage&tag=train_lineage")
    assert lineage["message"]["algorithm"]["network"] == "TinyNet"
    status, body, _ = _raw(f"{url}/api/v1/message?run={run}&plugin=image&tag=img")
    assert status == 422 and "plugin='image'" in json.loads(body)["detail"]


def test_a_damaged_histogram_is_counted_not_dropped(tmp_path: Path) -> None:
    """Values are indexed unconverted: a histogram with a negative bucket count is listed
    (only its values show the damage), then said to be unreadable when the view reads it
    back, and counted in the run's damage; the others are shown."""
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
    settings = BoardSettings.create(tmp_path / "base", port=free_port(), workspace=tmp_path / "ws")
    with running_server(settings) as url:
        wait_until(
            lambda: (get_json(url + "/api/v1/runs") or {"loading": True})["loading"] is False
        )
        listed = get_json(f"{url}/api/v1/samples?run=./crafted&plugin=histogram&tag=w")
        assert listed["series"][0]["step"] == [1, 2, 3]
        (series,) = get_json(f"{url}/api/v1/histograms?run=./crafted&tag=w")["series"]
        (run_listed,) = get_json(url + "/api/v1/runs")["runs"]
    assert [h["step"] for h in series["histograms"]] == [1, 3]
    assert series["unreadable"] == 1
    assert run_listed["damage"]["damaged_values"] == 1
