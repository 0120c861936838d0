"""Any recorded step of a non-scalar series, not only the kept sample
(``board/data/samples.py``'s step index, ``board/query/kept.py``'s ``at_step``).

A real loader reads a run of 500 image steps with a sample cap of 10: ``/samples`` lists
every recorded step beside the kept ones, every step's image is served byte-equal to what
was written (by one ranged read, also from object storage: moto's S3 server), the index
survives a restart of the loader, a step never recorded is a 404 naming it, crafted
offsets read nothing, and the index stays bounded on a long series. Histograms, PR curves
and audio clips that torch's ``SummaryWriter`` wrote, kept 4 of 40, are listed with every
recorded step and served at any of them (``/histograms/at``, ``/pr_curve/at``,
``/audio/clips/at`` and ``/audio``) as written.
"""

from __future__ import annotations

import io
import wave
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
TB_STEPS = range(3, 123, 3)  # 40 steps of each torch plugin, 4 kept
TB_CAPS = {"histogram": 4, "pr_curve": 4, "audio": 4}
RATE = 8000
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


def _buckets(step: int) -> tuple[np.ndarray, np.ndarray]:
    """The bucket limits and counts of the histogram written at ``step``."""
    limits = np.linspace(-1.0, 1.0, 6) + step / 100
    return limits, np.arange(6, dtype=np.float64) * step + 1


def _curve(step: int) -> np.ndarray:
    """The (6, 5) PR curve written at ``step``: tp, fp, tn, fn, precision, recall."""
    tp = np.linspace(20, 0, 5) + step
    fp = np.linspace(10, 0, 5)
    fn = 30 - tp + step
    return np.stack([tp, fp, 10 - fp, fn, tp / np.maximum(tp + fp, 1), tp / (tp + fn)])


def _clip(step: int) -> np.ndarray:
    """The mono clip written at ``step``: ``step`` ms of a sine, louder as the steps go."""
    frames = RATE * step // 1000
    return (step / 200) * np.sin(np.arange(frames) * step / 50)


@pytest.fixture(scope="module")
def tb_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    import torch
    from torch.utils.tensorboard import SummaryWriter

    base = tmp_path_factory.mktemp("anystep-tb")
    with SummaryWriter(str(base / "tb")) as writer:
        for step in TB_STEPS:
            limits, counts = _buckets(step)
            writer.add_histogram_raw("w", -1.5, limits[-1], counts.sum(), step * 2.0, step * 3.0,
                                     limits.tolist(), counts.tolist(), step)  # fmt: skip
            tp, fp, tn, fn, precision, recall = _curve(step)
            writer.add_pr_curve_raw("cat", tp, fp, tn, fn, precision, recall, step, 5)
            writer.add_audio("voice", torch.from_numpy(_clip(step)), step, sample_rate=RATE)
    loader = Loader(base, tmp_path_factory.mktemp("ws-tb"), caps=TB_CAPS)
    loader.poll()
    with route_client(loader) as found:
        yield found


def _listed(client: TestClient, path: str, key: str) -> tuple[list[int], list[int]]:
    """The kept steps and every recorded step ``path`` lists of the torch run's ``key``."""
    tag = {"histograms": "w", "pr_curve": "cat", "audio/clips": "voice"}[path]
    response = client.get(f"/api/v1/{path}", params={"run": "./tb", "tag": tag})
    assert response.status_code == 200, response.text
    (series,) = response.json()["series"]
    assert series["stride"] == 1
    return [entry["step"] for entry in series[key]], series["recorded"]


def _outside(client: TestClient, path: str, key: str) -> list[int]:
    kept, recorded = _listed(client, path, key)
    assert len(kept) <= TB_CAPS["histogram"] + 1 and recorded == list(TB_STEPS)
    outside = [step for step in recorded if step not in kept]
    assert len(outside) >= 35
    return outside


def test_a_histogram_outside_the_sample_is_served_as_written(tb_client: TestClient) -> None:
    for step in _outside(tb_client, "histograms", "histograms"):
        response = tb_client.get(
            "/api/v1/histograms/at", params={"run": "./tb", "tag": "w", "step": step}
        )
        assert response.status_code == 200, response.text
        found = response.json()
        limits, counts = _buckets(step)
        assert (found["run"], found["rank"], found["tag"], found["step"]) == (
            "./tb",
            None,
            "w",
            step,
        )
        assert (found["min"], found["sum"], found["count"]) == (-1.5, step * 2.0, counts.sum())
        assert found["counts"] == counts.tolist()
        np.testing.assert_allclose(np.add(found["left"], found["width"]), limits)
        assert found["left"][0] == -1.5


def test_a_pr_curve_outside_the_sample_is_served_as_written(tb_client: TestClient) -> None:
    for step in _outside(tb_client, "pr_curve", "curves"):
        response = tb_client.get(
            "/api/v1/pr_curve/at", params={"run": "./tb", "tag": "cat", "step": step}
        )
        assert response.status_code == 200, response.text
        found = response.json()
        assert (found["step"], found["thresholds"]) == (step, [0.0, 0.25, 0.5, 0.75, 1.0])
        for row, name in enumerate(("tp", "fp", "tn", "fn", "precision", "recall")):
            np.testing.assert_allclose(found[name], _curve(step)[row], rtol=1e-6)


def test_an_audio_clip_outside_the_sample_is_served_as_written(tb_client: TestClient) -> None:
    for step in _outside(tb_client, "audio/clips", "clips"):
        params = {"run": "./tb", "tag": "voice", "step": step}
        facts = tb_client.get("/api/v1/audio/clips/at", params=params)
        assert facts.status_code == 200, facts.text
        clip = _clip(step)
        assert {key: facts.json()[key] for key in ("step", "sample_rate", "channels", "frames")} \
            == {"step": step, "sample_rate": RATE, "channels": 1, "frames": clip.size}  # fmt: skip
        played = tb_client.get("/api/v1/audio", params=params)
        assert played.headers["content-type"] == "audio/wav"
        with wave.open(io.BytesIO(played.content)) as heard:
            samples = np.frombuffer(heard.readframes(heard.getnframes()), dtype="<i2")
        np.testing.assert_allclose(samples, clip * np.iinfo(np.int16).max, atol=1)


@pytest.mark.parametrize(
    ("path", "tag"), [("histograms/at", "w"), ("pr_curve/at", "cat"), ("audio/clips/at", "voice")]
)
def test_a_step_never_recorded_of_a_torch_plugin_is_a_404(
    tb_client: TestClient, path: str, tag: str
) -> None:
    for step in (4, 121, 500):
        response = tb_client.get(
            f"/api/v1/{path}", params={"run": "./tb", "tag": tag, "step": step}
        )
        assert response.status_code == 404
        detail = response.json()["detail"]
        assert f"step={step}" in detail and "never recorded" in detail, detail
        assert "40 recorded steps from 3 to 120" in detail
