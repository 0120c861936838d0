"""The scalars route along another tag (``axis=tag:<name>``) and with its envelope
(``envelope=1``), from runs SummaryRecord wrote, asked of the real server over HTTP.

The reference of every check is the same server's full-resolution answer on the step axis,
joined or bucketed here with numpy: a point's x is the x tag's value at the same step; the
envelope of each bucket (``np.array_split``'s) is numpy's min and max of its raw values.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.board import tb_ema
from helpers.board_data import api_get, served_base

from sumlens import SummaryRecord

STEPS = 2000
SPIKE_STEP = 1234  # a spike, and a NaN right after it: its min-max bucket keeps the NaN


def _loss(step: int) -> float:
    if step == SPIKE_STEP:
        return 100.0
    if step == SPIKE_STEP + 1:
        return float("nan")
    return float(np.sin(step / 30.0))


def _write(base: Path) -> None:
    # ./a: loss at every step, epoch (step / 100) only where step % 4 != 0
    with SummaryRecord(base / "a") as record:
        for step in range(1, STEPS + 1):
            record.add_value("scalar", "loss", _loss(step))
            if step % 4:
                record.add_value("scalar", "epoch", step / 100)
            record.record(step)
    # ./b: an x tag that goes up and down (a cycle of 50 steps)
    with SummaryRecord(base / "b") as record:
        for step in range(1, 301):
            record.add_value("scalar", "loss", step * 0.01)
            record.add_value("scalar", "cycle", float(step % 50))
            record.record(step)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("axis") / "base"
    _write(base)
    with served_base(base, tmp_path_factory.mktemp("ws"), ["./a", "./b"]) as served:
        yield served


def _scalars(url: str, **params: Any) -> dict[str, Any]:
    status, body = api_get(url, "scalars", **params)
    assert status == 200, body
    return json.loads(body)


def _one(url: str, **params: Any) -> dict[str, Any]:
    (series,) = _scalars(url, **params)["series"]
    return series


def _floats(values: list[float | None]) -> np.ndarray:
    return np.array(values, dtype=np.float64)  # JSON null (NaN) -> nan


def _full(url: str, run: str, tag: str) -> dict[int, float]:
    """Step -> value of a series at full resolution on the step axis (the reference)."""
    series = _one(url, run=run, tag=tag, points=20_000)
    return dict(zip(series["step"], _floats(series["value"]).tolist(), strict=True))


def test_points_are_placed_at_the_x_tag_value_of_their_step(url: str) -> None:
    loss, epoch = _full(url, "./a", "loss"), _full(url, "./a", "epoch")
    series = _one(url, run="./a", tag="loss", axis="tag:epoch", points=20_000, smoothing=0.9)
    joined = [step for step in loss if step in epoch]
    assert series["step"] == joined  # step order, the steps epoch lacks left out
    assert series["x"] == [epoch[step] for step in joined]
    assert series["missing"] == len(loss) - len(joined) == STEPS // 4
    assert series["monotonic"] is True
    np.testing.assert_array_equal(_floats(series["value"]), [loss[step] for step in joined])
    # smoothing runs on every point in step order, the ones left out included
    smoothed = tb_ema(np.array(list(loss.values())), 0.9)
    kept = np.isin(np.array(list(loss)), joined)
    np.testing.assert_allclose(_floats(series["smoothed"]), smoothed[kept], rtol=1e-12)


def test_a_downsampled_tag_axis_keeps_the_join_and_a_range_is_in_the_tags_units(
    url: str,
) -> None:
    epoch = _full(url, "./a", "epoch")
    series = _one(url, run="./a", tag="loss", axis="tag:epoch", points=100)
    assert 0 < series["shown"] <= 100 and series["missing"] == STEPS // 4
    assert series["x"] == [epoch[step] for step in series["step"]]
    ranged = _one(url, run="./a", tag="loss", axis="tag:epoch", start=5, end=6, points=20_000)
    assert ranged["step"] == [s for s in range(500, 601) if s in epoch]
    assert all(5 <= x <= 6 for x in ranged["x"])


def test_a_tag_that_is_not_monotonic_is_said_and_drawn_in_step_order(url: str) -> None:
    series = _one(url, run="./b", tag="loss", axis="tag:cycle", points=20_000)
    assert series["monotonic"] is False
    assert series["step"] == list(range(1, 301))
    assert series["x"] == [float(step % 50) for step in range(1, 301)]
    assert series["missing"] == 0


def test_a_run_without_the_x_tag_shows_nothing_and_counts_every_point(url: str) -> None:
    body = _scalars(url, run=["./a", "./b"], tag="loss", axis="tag:cycle", points=500)
    by_run = {series["run"]: series for series in body["series"]}
    assert body["axis"] == "tag:cycle"
    assert by_run["./a"]["shown"] == 0 and by_run["./a"]["missing"] == STEPS
    assert by_run["./b"]["shown"] == 300


def test_the_envelope_is_numpys_min_and_max_of_each_bucket_and_shows_the_spike(
    url: str,
) -> None:
    loss = _full(url, "./a", "loss")
    steps, values = np.array(list(loss)), np.array(list(loss.values()))
    points = 200
    series = _one(url, run="./a", tag="loss", points=points, smoothing=0.95, envelope=1)
    band = series["envelope"]
    buckets = (points - 2) // 2
    step_parts = np.array_split(steps, buckets)
    value_parts = np.array_split(values, buckets)
    assert band["step"] == [int(s) for part in step_parts for s in (part[0], part[-1])]
    np.testing.assert_array_equal(band["min"][::2], [np.nanmin(p) for p in value_parts])
    np.testing.assert_array_equal(band["max"][::2], [np.nanmax(p) for p in value_parts])
    assert band["min"][::2] == band["min"][1::2] and band["max"][::2] == band["max"][1::2]
    # the downsampled line lost the spike (its bucket shows the NaN), the envelope has it
    assert 100.0 not in series["value"] and max(_floats(series["smoothed"])) < 10
    assert max(band["max"]) == 100.0


def test_the_envelope_follows_a_tag_axis_and_its_range(url: str) -> None:
    epoch = _full(url, "./a", "epoch")
    series = _one(url, run="./a", tag="loss", axis="tag:epoch", start=10, points=50, envelope=1)
    band = series["envelope"]
    assert band["x"] == [epoch[step] for step in band["step"]]
    assert min(band["x"]) >= 10
    assert "envelope" not in _one(url, run="./a", tag="loss", points=50)


def test_downloads_along_a_tag_axis_carry_x(url: str) -> None:
    epoch = _full(url, "./a", "epoch")
    status, body = api_get(url, "scalars/download", run="./a", tag="loss", axis="tag:epoch")
    assert status == 200
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    assert list(rows[0]) == ["run", "rank", "tag", "step", "wall_time", "value", "x"]
    assert len(rows) == STEPS  # every point; x empty where epoch has none
    for row in rows:
        step = int(row["step"])
        assert row["x"] == (repr(epoch[step]) if step in epoch else "")
    status, body = api_get(
        url, "scalars/download", run="./a", tag="loss", axis="tag:epoch", format="json", end=1
    )
    document = json.loads(body)
    assert document["axis"] == "tag:epoch" and document["columns"][-1] == "x"
    (series,) = document["series"]
    assert series["x"] == [epoch[step] for step in series["step"]]
    assert series["step"] == [s for s in range(1, 101) if s in epoch]


@pytest.mark.parametrize(
    ("axis", "said"),
    [("tag:", "axis='tag:' names no tag"), ("epochs", "axis='epochs' is not one of step")],
)
def test_a_bad_axis_is_refused_by_name(url: str, axis: str, said: str) -> None:
    for path in ("scalars", "scalars/download"):
        status, body = api_get(url, path, run="./a", axis=axis)
        assert status == 422
        assert said in json.loads(body)["detail"]
        assert "tag:<a scalar tag>" in json.loads(body)["detail"]
    status, body = api_get(url, "scalars", run="./a", axis="tag:epoch", start=2, end=1)
    assert status == 422 and "start=2.0 is after end=1.0" in json.loads(body)["detail"]
