"""``/api/v1/pr_curve`` (``board/api/pr_curve.py``) over an in-memory read surface: every
kept curve per rank with its thresholds, values that are not curves or cannot be read
counted, unknown runs and tags answered 404 naming them."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.board import route_client
from helpers.memory_surface import GONE, Damaged, MemorySurface
from starlette.testclient import TestClient


def _curve(step: int, thresholds: int = 5) -> np.ndarray:
    tp = np.linspace(10, 0, thresholds) + step
    fp = np.linspace(10, 0, thresholds)
    tn, fn = 10 - fp, 10 - tp + step
    precision = tp / np.maximum(tp + fp, 1)
    recall = tp / (tp + fn)
    return np.stack([tp, fp, tn, fn, precision, recall])


@pytest.fixture(scope="module")
def client() -> TestClient:
    surface = MemorySurface()
    for step in (0, 1, 2):
        surface.add_value("./a", "pr_curve", "cat", step, _curve(step), wall=10.0 + step)
        surface.add_value("./ranked", "pr_curve", "cat", step, _curve(step), rank=0)
        surface.add_value("./ranked", "pr_curve", "cat", step, _curve(step + 1), rank=1)
    for step, value in ((0, _curve(0)), (1, Damaged("a torn record")), (2, GONE),
                        (3, np.zeros((5, 4))), (4, np.array(["x"] * 6).reshape(6, 1)),
                        (5, _curve(5, thresholds=1))):  # fmt: skip
        surface.add_value("./crafted", "pr_curve", "cat", step, value)
    surface.add_scalars("./scalars_only", "loss", [1], [0.5])
    with route_client(surface) as client:
        yield client


def test_every_kept_curve_comes_with_its_thresholds(client: TestClient) -> None:
    answer = client.get("/api/v1/pr_curve", params={"run": "./a", "tag": "cat"})
    assert answer.status_code == 200
    (series,) = answer.json()["series"]
    assert (series["run"], series["rank"], series["tag"], series["unreadable"]) == (
        "./a", None, "cat", 0)  # fmt: skip
    assert [curve["step"] for curve in series["curves"]] == [0, 1, 2]
    last = series["curves"][-1]
    assert last["wall"] == 12.0
    assert last["thresholds"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    expected = _curve(2)
    for row, name in enumerate(("tp", "fp", "tn", "fn", "precision", "recall")):
        np.testing.assert_allclose(last[name], expected[row])


def test_each_rank_is_a_series(client: TestClient) -> None:
    answer = client.get("/api/v1/pr_curve", params={"run": "./ranked", "tag": "cat"})
    series = answer.json()["series"]
    assert [s["rank"] for s in series] == [0, 1]
    assert series[1]["curves"][0]["tp"] == _curve(1)[0].tolist()


def test_what_is_not_a_curve_is_counted(client: TestClient) -> None:
    answer = client.get("/api/v1/pr_curve", params={"run": "./crafted", "tag": "cat"})
    (series,) = answer.json()["series"]
    assert [curve["step"] for curve in series["curves"]] == [0, 5]
    assert series["curves"][1]["thresholds"] == [0.0]
    assert series["unreadable"] == 4  # damaged, gone, (5, 4), strings
    runs = client.get("/api/v1/runs").json()["runs"]
    crafted = next(run for run in runs if run["id"] == "./crafted")
    assert crafted["damage"]["damaged_values"] == 1


@pytest.mark.parametrize(
    ("params", "status", "detail"),
    [
        ({"run": "./nope", "tag": "cat"}, 404, "run='./nope' is not a run being served"),
        ({"run": "./scalars_only", "tag": "cat"}, 404, "has no pr_curve tag='cat'"),
        ({"run": "./a", "tag": "dog"}, 404, "run='./a' has no pr_curve tag='dog'"),
        ({"run": "./a"}, 422, "tag"),
    ],
)
def test_bad_requests_name_what_is_wrong(
    client: TestClient, params: dict[str, str], status: int, detail: str
) -> None:
    answer = client.get("/api/v1/pr_curve", params=params)
    assert answer.status_code == status
    assert detail in str(answer.json()["detail"])
