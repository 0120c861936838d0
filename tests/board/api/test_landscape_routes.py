"""The landscape view's routes (``board/api/landscape.py``): ``/api/v1/landscapes`` (a run's
list) and ``/landscape``, over an in-memory read surface.

The golden MindSpore landscapes answer as the file holds them, landscapes made by
``sumlens.landscape.LossLandscape`` (no torch needed) on a grid that is not square,
crafted messages (a ``z`` that does not fit ``x`` and ``y``, a path without points, a
convergence point of two values) and values that are gone or damaged are answered with
one-line errors, and so are bad parameters.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers.board import route_client
from helpers.memory_runs import add_directory
from helpers.memory_surface import GONE, Damaged, MemorySurface
from starlette.testclient import TestClient

from sumlens._proto import summary_pb2
from sumlens.io import iter_events
from sumlens.landscape import LossLandscape

X = np.linspace(-1.0, 1.0, 6)
Y = np.linspace(-0.5, 0.5, 5)
Z = 1.0 + X[None, :] ** 2 + 2.0 * Y[:, None] ** 2  # rows follow y, columns x
INTERVAL = [10, 20, 30, 40]
PATH = (
    np.array([0.9, 0.5, 0.2, 0.0]),
    np.array([0.4, 0.3, 0.1, 0.0]),
    np.array([2.0, 1.4, 1.1, 1.0]),
)
RUNS = ["./landscape", "./ours", "./crafted", "./scalars_only"]


def _ours() -> list[tuple[str, LossLandscape]]:
    train = LossLandscape(X, Y, Z, intervals=INTERVAL, path=PATH, convergence_point=(0.0, 0.0, 1.0),
                          decomposition="PCA", unit="step")  # fmt: skip
    result = LossLandscape(X, Y, Z * 2, convergence_point=(0.1, 0.2, 2.0), decomposition="Random",
                           unit="epoch", step_per_epoch=5)  # fmt: skip
    return [("landscape_[10, 40]", train), ("landscape_[40]", result)]


def _crafted() -> list[tuple[str, summary_pb2.LossLandscape]]:
    good = _ours()[0][1].to_proto()
    wrong_z = summary_pb2.LossLandscape()
    wrong_z.CopyFrom(good)
    wrong_z.landscape.z.dims[:] = [6, 5]  # x has 6 values, y 5: z must be 5 x 6
    no_points = summary_pb2.LossLandscape()
    no_points.CopyFrom(good)
    no_points.loss_path.ClearField("points")
    two_values = summary_pb2.LossLandscape()
    two_values.CopyFrom(good)
    two_values.convergence_point.x.dims[:] = [2]
    two_values.convergence_point.x.float_data.append(1.0)
    bad_shape = summary_pb2.LossLandscape()
    bad_shape.CopyFrom(good)
    bad_shape.landscape.z.dims[:] = [1 << 40, 1 << 40]  # far more values than it holds
    no_grid = summary_pb2.LossLandscape()
    no_grid.metadata.unit = "epoch"
    return [("wrong_z", wrong_z), ("no_points", no_points), ("two_values", two_values),
            ("bad_shape", bad_shape), ("no_grid", no_grid)]  # fmt: skip


@pytest.fixture(scope="module")
def client(golden_dir: Path) -> Iterator[TestClient]:
    surface = MemorySurface()
    add_directory(surface, "./landscape", golden_dir / "landscape")
    for tag, landscape in _ours():
        surface.add_value("./ours", "landscape", tag, 0, landscape.to_proto(), rank=0)
    for tag, message in _crafted():
        surface.add_value("./crafted", "landscape", tag, 0, message, rank=0)
    surface.add_value("./broken", "landscape", "gone", 0, GONE)
    surface.add_value("./broken", "landscape", "damaged", 0, Damaged("a CRC that does not match"))
    surface.add_value("./broken", "landscape", "not_one", 0, "text")
    surface.add_scalars("./scalars_only", "loss", [1], [1.0])
    with route_client(surface) as found:
        yield found


def _get(client: TestClient, route: str, **params: object) -> tuple[int, dict]:
    query = {k: v for k, v in params.items() if v is not None}
    response = client.get(f"/api/v1/{route}", params=query)  # type: ignore[arg-type]
    return response.status_code, response.json()


def _golden_landscapes(golden_dir: Path) -> dict[str, summary_pb2.LossLandscape]:
    found = {}
    for path in sorted((golden_dir / "landscape").iterdir()):
        for event in iter_events(path):
            if event.plugin == "landscape":
                found[event.tag] = event.value
    return found


def _floats(tensor: summary_pb2.TensorProto) -> np.ndarray:
    return np.asarray(tensor.float_data, dtype=np.float64)


def test_the_golden_landscapes_read_as_the_file_holds_them(
    client: TestClient, golden_dir: Path
) -> None:
    messages = _golden_landscapes(golden_dir)
    assert len(messages) == 2  # a train landscape (epochs 1-3) and the result one
    status, listing = _get(client, "landscapes", run="./landscape")
    assert status == 200
    entries = listing["landscapes"]
    assert [e["kind"] for e in entries] == ["train", "result"]
    assert [e["tag"] for e in entries] == ["landscape_[1, 3]", "landscape_[3]"]
    assert entries[0]["intervals"] == [1, 2, 3] and entries[0]["interval"] == "1-2-3"
    assert all(e["error"] is None and e["rank"] == 0 and e["step"] == 0 for e in entries)
    for entry in entries:
        message = messages[entry["tag"]]
        status, body = _get(client, "landscape", run="./landscape", tag=entry["tag"], rank=0)
        assert status == 200, body
        z = _floats(message.landscape.z).reshape(tuple(message.landscape.z.dims))
        assert body["shape"] == list(z.shape) == entry["shape"] == [4, 4]
        np.testing.assert_array_equal(np.array(body["z"]), z)
        np.testing.assert_array_equal(body["x"], _floats(message.landscape.x))
        np.testing.assert_array_equal(body["y"], _floats(message.landscape.y))
        point = message.convergence_point
        assert body["convergence_point"] == [
            float(_floats(t)[0]) for t in (point.x, point.y, point.z)
        ]
        assert body["metadata"] == {
            "decomposition": message.metadata.decomposition,
            "unit": "epoch",
            "step_per_epoch": 2,
        }
        if entry["kind"] == "train":
            path = body["path"]
            assert path["intervals"] == list(message.loss_path.intervals) == [1, 2, 3]
            assert path["steps"] == [2, 4, 6]  # the last step of each epoch (2 per epoch)
            for axis in "xyz":
                assert len(path[axis]) == 3
                np.testing.assert_array_equal(
                    path[axis], _floats(getattr(message.loss_path.points, axis))
                )
        else:
            assert body["path"] is None and body["interval"] is None


def test_landscapes_our_writer_made(client: TestClient) -> None:
    status, listing = _get(client, "landscapes", run="./ours")
    assert status == 200
    train, result = listing["landscapes"]
    assert (train["kind"], train["interval"], train["unit"]) == ("train", "10-20-30-40", "step")
    assert (result["kind"], result["step_per_epoch"], result["rank"]) == ("result", 5, 0)
    assert train["shape"] == result["shape"] == [5, 6]
    status, body = _get(client, "landscape", run="./ours", tag="landscape_[10, 40]")
    assert status == 200
    np.testing.assert_allclose(body["z"], Z)  # rows follow y: not transposed
    np.testing.assert_allclose(body["x"], X)
    assert body["path"]["steps"] == INTERVAL  # unit step: the entries are steps
    np.testing.assert_allclose(body["path"]["z"], PATH[2])
    assert body["convergence_point"] == [0.0, 0.0, 1.0]
    status, body = _get(client, "landscape", run="./ours", tag="landscape_[40]", step=0)
    assert status == 200 and body["kind"] == "result" and body["path"] is None
    np.testing.assert_allclose(body["z"], Z * 2)


def test_crafted_landscapes_are_one_line_errors(client: TestClient) -> None:
    status, listing = _get(client, "landscapes", run="./crafted")
    assert status == 200
    errors = {e["tag"]: e["error"] for e in listing["landscapes"]}
    expected = {
        "wrong_z": "z must be [5, 6]",
        "no_points": "the loss path has 4 intervals but x: 0, y: 0, z: 0 points",
        "two_values": "the convergence point has [2, 1, 1]",
        "bad_shape": "cannot be read",
        "no_grid": "it is empty",
    }
    assert set(errors) == set(expected)
    for tag, part in expected.items():
        assert part in errors[tag] and "\n" not in errors[tag]
        status, body = _get(client, "landscape", run="./crafted", tag=tag)
        assert status == 422, body
        assert body["detail"].startswith(f"run='./crafted' landscape {tag!r} at step 0 cannot be")
        assert part in body["detail"] and "\n" not in body["detail"]
    assert _get(client, "runs")[0] == 200  # the server goes on


@pytest.mark.parametrize(
    ("route", "params", "status", "says"),
    [
        ("landscapes", {"run": "./nowhere"}, 404, "run='./nowhere' is not a run"),
        ("landscapes", {}, 422, "run"),
        ("landscape", {"run": "./nowhere", "tag": "x"}, 404, "run='./nowhere' is not a run"),
        ("landscape", {"run": "./ours", "tag": "nope"}, 404, "no landscape tag='nope'"),
        ("landscape", {"run": "./ours", "tag": "landscape_[40]", "rank": 3}, 404, "rank=3"),
        ("landscape", {"run": "./ours", "tag": "landscape_[40]", "step": 7}, 404, "step=7"),
        ("landscape", {"run": "./ours", "tag": "landscape_[40]", "step": "two"}, 422, "step"),
        ("landscape", {"run": "./ours"}, 422, "tag"),
    ],
)
def test_bad_parameters_are_one_line_errors(
    client: TestClient, route: str, params: dict, status: int, says: str
) -> None:
    got, body = _get(client, route, **params)
    assert got == status
    assert says in body["detail"] and "\n" not in body["detail"]


def test_a_run_without_landscapes_lists_none(client: TestClient) -> None:
    assert _get(client, "landscapes", run="./scalars_only") == (
        200,
        {"run": "./scalars_only", "landscapes": []},
    )


def test_values_that_cannot_be_read_are_listed_with_their_error(client: TestClient) -> None:
    status, listing = _get(client, "landscapes", run="./broken")
    assert status == 200
    errors = {e["tag"]: e["error"] for e in listing["landscapes"]}
    assert "no longer in its file" in errors["gone"]
    assert "a CRC that does not match" in errors["damaged"]
    assert "holds no loss landscape" in errors["not_one"]
    assert all(e["kind"] is None and e["shape"] is None for e in listing["landscapes"])
    for tag, status, part in (("gone", 404, "no longer in its file"),
                              ("damaged", 422, "a CRC that does not match"),
                              ("not_one", 404, "holds no loss landscape")):  # fmt: skip
        got, body = _get(client, "landscape", run="./broken", tag=tag)
        assert got == status and part in body["detail"] and "\n" not in body["detail"]
