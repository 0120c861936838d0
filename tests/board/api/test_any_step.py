"""Any recorded step of a non-scalar series, not only the kept sample
(``board/data/samples.py``'s step index, ``board/api/kept.py``'s ``at_step``).

A real loader reads a run of 500 image steps with a sample cap of 10: ``/samples`` lists
every recorded step beside the kept ones, every step's image is served byte-equal to what
was written (by one ranged read, also from object storage: moto's S3 server), the index
survives a restart of the loader, a step never recorded is a 404 naming it, crafted
offsets read nothing, and the index stays bounded on a long series.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import fsspec
import numpy as np
import pytest
from helpers.board import route_client
from helpers.plugin_data import stored_images
from helpers.s3 import bucket_server, s3_options
from starlette.testclient import TestClient

from sumlens import SummaryRecord
from sumlens.board.data.loader import Loader
from sumlens.board.data.samples import SAMPLE, StepIndex
from sumlens.board.data.surface import Samples

STEPS = range(2, 1002, 2)  # 500 steps; odd ones are never recorded
TAG = "input/img"
CAP = 10


def _batch(step: int) -> np.ndarray:
    """The NCHW image written at ``step`` (one 3x4x5 image, distinct per step)."""
    return np.random.default_rng(step).random((1, 3, 4, 5)).astype(np.float32)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("anystep") / "base"
    with SummaryRecord(base / "run", file_format="mindspore") as record:
        for step in STEPS:
            record.add_value("image", TAG, _batch(step))
            record.record(step)
    return base / "run"


@pytest.fixture(scope="module")
def written(run_dir: Path) -> dict[int, bytes]:
    found = stored_images(run_dir, TAG, None)
    assert sorted(found) == list(STEPS)
    return found


@pytest.fixture(scope="module")
def loader(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Loader:
    made = Loader(run_dir.parent, tmp_path_factory.mktemp("ws"), caps={"image": CAP})
    made.poll()
    return made


@pytest.fixture(scope="module")
def client(loader: Loader) -> Iterator[TestClient]:
    with route_client(loader) as found:  # the app stops the loader when it stops
        yield found


def _series(client: TestClient) -> dict:
    response = client.get("/api/v1/samples", params={"run": "./run", "plugin": "image", "tag": TAG})
    assert response.status_code == 200, response.text
    (series,) = response.json()["series"]
    return series


def test_samples_list_every_recorded_step_beside_the_kept_ones(client: TestClient) -> None:
    series = _series(client)
    assert len(series["step"]) <= CAP + 1  # the sample, its newest besides
    assert series["recorded"] == list(STEPS)
    assert series["stride"] == 1
    assert set(series["step"]) <= set(series["recorded"])


def test_every_step_is_served_as_written(client: TestClient, written: dict[int, bytes]) -> None:
    kept = set(_series(client)["step"])
    assert len(set(STEPS) - kept) >= 480  # nearly all of them are outside the sample
    for step in STEPS:
        response = client.get("/api/v1/image", params={"run": "./run", "tag": TAG, "step": step})
        assert response.status_code == 200, (step, response.text)
        assert response.headers["content-type"] == "image/png"
        assert response.content == written[step], step


def test_a_step_never_recorded_is_a_404_naming_it(client: TestClient) -> None:
    for step in (3, 999, 5000, -2):
        response = client.get("/api/v1/image", params={"run": "./run", "tag": TAG, "step": step})
        assert response.status_code == 404
        detail = response.json()["detail"]
        assert f"step={step}" in detail and "never recorded" in detail, detail
        assert "500 recorded steps from 2 to 1000" in detail


def test_crafted_offsets_read_nothing(loader: Loader, client: TestClient, run_dir: Path) -> None:
    (kept,) = loader.samples("./run", "image", TAG)
    row = kept.recorded[5]
    size = sum(path.stat().st_size for path in run_dir.iterdir())
    crafted = [
        (row["offset"] + 1, row["length"]),  # inside a record: no CRC matches
        (row["offset"] - 12, row["length"]),  # the record's header
        (size + 10, 16),  # past the end of the file
        (size - 2, 1_000),  # across the end
        (-4, row["length"]),  # before the start
        (row["offset"], -1),
        (0, 1 << 40),
    ]
    for offset, length in crafted:
        item = np.array([(0, 10, 0.0, row["file"], offset, length)], dtype=SAMPLE)
        assert loader.value(Samples("./run", None, "image", TAG, item), 0) is None, offset
        item["file"] = 7  # a file the run does not have
        assert loader.value(Samples("./run", None, "image", TAG, item), 0) is None


def test_the_index_survives_a_restart(run_dir: Path, tmp_path: Path, written: dict) -> None:
    first = Loader(run_dir.parent, tmp_path, caps={"image": CAP})
    first.poll()
    first.stop()
    again = Loader(run_dir.parent, tmp_path, caps={"image": CAP})
    again.restore()
    with route_client(again) as client:
        series = _series(client)
        assert series["recorded"] == list(STEPS)
        outside = next(step for step in STEPS if step not in series["step"])
        response = client.get("/api/v1/image", params={"run": "./run", "tag": TAG, "step": outside})
        assert response.content == written[outside]


def test_object_storage_reads_one_record(run_dir: Path, tmp_path: Path, written: dict) -> None:
    """Over S3 a step outside the sample costs one ranged GET of about its record."""
    with bucket_server("anystep") as endpoint:
        options = s3_options(endpoint)
        fsspec.filesystem("s3", **options).put(f"{run_dir}/", "anystep/base/run/", recursive=True)
        remote = Loader("s3://anystep/base", tmp_path, caps={"image": CAP}, storage_options=options)
        remote.poll()
        with route_client(remote) as client:
            series = _series(client)
            assert series["recorded"] == list(STEPS)
            for step in [s for s in STEPS if s not in series["step"]][::97]:
                before = remote.requests()["total"]
                response = client.get(
                    "/api/v1/image", params={"run": "./run", "tag": TAG, "step": step}
                )
                after = remote.requests()["total"]
                assert response.content == written[step]
                assert after["gets"] - before["gets"] == 1
                assert after["bytes"] - before["bytes"] < len(written[step]) + 1024


def test_the_index_is_bounded_and_evenly_thinned() -> None:
    index = StepIndex(cap=8)
    for step in range(100):
        index.add(step, float(step), 0, step * 10, 5)
    assert index.stride == 16
    assert index.rows["step"].tolist() == [0, 16, 32, 48, 64, 80, 96]
    assert index.find(48)["offset"].tolist() == [480]
    assert index.find(50) is None
    index.add(40, 1.0, 0, 7, 5)  # a resumed run: what it replaces goes
    assert index.rows["step"].tolist() == [0, 16, 32, 40]
    assert not index.rows.flags.writeable
