"""The routes of the non-scalar plugins (``board/api/plugins.py``, with ``lookup.py``) over an
in-memory read surface: kept steps per rank, images as stored, every kept histogram,
tensors and their slices, messages as JSON, values that are gone or damaged, and bad
requests answered with one line naming what is wrong."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers.board import route_client
from helpers.memory_runs import add_directory
from helpers.memory_surface import GONE, Damaged, MemorySurface
from PIL import Image as PILImage
from starlette.testclient import TestClient

from sumlens.io import Histogram, Image, iter_events

GOLDEN = "./golden/all_plugins"
TENSOR = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _png(step: int) -> bytes:
    buffer = io.BytesIO()
    PILImage.fromarray(np.full((6, 5, 3), step * 20, dtype=np.uint8)).save(buffer, "PNG")
    return buffer.getvalue()


def _histogram(step: int) -> Histogram:
    counts = np.array([1.0, 2.0 * step, 3.0])
    return Histogram(np.array([0.0, 1.0, 2.0]), np.ones(3), counts, 0.0, 3.0, 4.5 * step,
                     int(counts.sum()), nan_count=step)  # fmt: skip


@pytest.fixture(scope="module")
def surface(golden_dir: Path) -> MemorySurface:
    surface = MemorySurface()
    for step in (1, 2, 3, 4):
        for rank in (0, 1):
            surface.add_value("./ours", "image", "img", step, Image(_png(step + rank), 6, 5),
                              wall=100.0 + step, rank=rank)  # fmt: skip
        surface.add_value("./ours", "tensor", "t", step, TENSOR * step, rank=0)
    for step in (1, 2, 3):
        surface.add_value("./ours", "histogram", "w", step, _histogram(step), rank=0)
    empty = Histogram(np.zeros(0), np.zeros(0), np.zeros(0), np.nan, np.nan, np.nan, 0)
    surface.add_value("./ours", "histogram", "empty", 1, empty)
    for tag, encoded in (("jpeg", b"\xff\xd8\xff\xe0"), ("gif", b"GIF89a"), ("raw", b"BM..")):
        surface.add_value("./ours", "image", tag, 1, Image(encoded, 1, 1))
    surface.add_value("./ours", "image", "not_an_image", 1, TENSOR)
    surface.add_value("./ours", "tensor", "words", 1, np.array(["a", "b<c"]))
    surface.add_value("./ours", "graph", "not_a_message", 1, "text")
    surface.add_value("./ours", "image", "gone", 1, GONE)
    surface.add_value("./ours", "image", "damaged", 1, Damaged("a CRC that does not match"))
    for step, value in ((1, _histogram(1)), (2, Damaged("a negative count")), (3, GONE),
                        (4, _histogram(4))):  # fmt: skip
        surface.add_value("./crafted", "histogram", "w", step, value)
    add_directory(surface, GOLDEN, golden_dir / "all_plugins")
    return surface


@pytest.fixture(scope="module")
def client(surface: MemorySurface) -> Iterator[TestClient]:
    with route_client(surface) as found:
        yield found


def _json(client: TestClient, route: str, **params: object) -> dict:
    response = client.get(f"/api/v1/{route}", params=params)  # type: ignore[arg-type]
    assert response.status_code == 200, response.text
    return response.json()


def test_kept_steps_per_rank(client: TestClient) -> None:
    series = _json(client, "samples", run="./ours", plugin="image", tag="img")["series"]
    assert [(s["run"], s["rank"], s["plugin"], s["tag"]) for s in series] == [
        ("./ours", 0, "image", "img"),
        ("./ours", 1, "image", "img"),
    ]
    assert series[0]["step"] == [1, 2, 3, 4] and series[0]["wall"] == [101.0, 102.0, 103.0, 104.0]
    for run, tag in (("./nope", "img"), ("./ours", "nope")):
        assert _json(client, "samples", run=run, plugin="image", tag=tag) == {"series": []}


@pytest.mark.parametrize("run", ["./ours", GOLDEN])
def test_image_bytes_are_the_stored_ones(
    client: TestClient, surface: MemorySurface, golden_dir: Path, run: str
) -> None:
    (series, *_) = _json(client, "samples", run=run, plugin="image", tag="img")["series"]
    if run == GOLDEN:
        stored = {e.step: e.value.encoded for e in iter_events(golden_dir / "all_plugins")
                  if e.plugin == "image"}  # fmt: skip
        assert series["step"] == sorted(stored)
    else:
        stored = {step: _png(step) for step in (1, 2, 3, 4)}
    for step in series["step"]:
        response = client.get("/api/v1/image", params={"run": run, "tag": "img", "step": step})
        assert response.status_code == 200 and response.content == stored[step]
        assert response.headers["content-type"] == "image/png"
        assert response.headers["cache-control"] == "no-cache"  # a resumed run may rewrite it


def test_image_of_a_rank_and_the_newest_step(client: TestClient) -> None:
    newest = client.get("/api/v1/image", params={"run": "./ours", "tag": "img"})
    assert newest.content == _png(4)  # the first rank's newest
    other = client.get("/api/v1/image", params={"run": "./ours", "tag": "img", "rank": 1})
    assert other.content == _png(5)
    response = client.get("/api/v1/image", params={"run": "./ours", "tag": "img", "rank": 7})
    assert response.status_code == 404
    assert (
        response.json()["detail"]
        == "run='./ours' has no image tag='img' with rank=7; ranks: [0, 1]"
    )


@pytest.mark.parametrize(
    ("tag", "media"),
    [("jpeg", "image/jpeg"), ("gif", "image/gif"), ("raw", "application/octet-stream")],
)
def test_image_media_types_follow_the_bytes(client: TestClient, tag: str, media: str) -> None:
    response = client.get("/api/v1/image", params={"run": "./ours", "tag": tag})
    assert response.status_code == 200 and response.headers["content-type"] == media


def test_histograms_of_every_kept_step(client: TestClient, golden_dir: Path) -> None:
    (series,) = _json(client, "histograms", run=GOLDEN, tag="w")["series"]
    assert (series["run"], series["rank"], series["tag"], series["unreadable"]) == (
        GOLDEN,
        0,
        "w",
        0,
    )
    stored = [e for e in iter_events(golden_dir / "all_plugins") if e.plugin == "histogram"]
    assert [h["step"] for h in series["histograms"]] == [e.step for e in stored]
    for got, event in zip(series["histograms"], stored, strict=True):
        assert got["count"] == event.value.count == sum(got["counts"])
        assert got["counts"] == event.value.counts.tolist()
        assert got["left"] == event.value.left.tolist() and got["wall"] == event.wall_time


def test_histogram_fields_and_non_finite_statistics(client: TestClient) -> None:
    (series,) = _json(client, "histograms", run="./ours", tag="w")["series"]
    second = series["histograms"][1]
    assert (second["step"], second["min"], second["max"], second["sum"]) == (2, 0.0, 3.0, 9.0)
    assert (second["count"], second["nan_count"], second["counts"]) == (8, 2, [1.0, 4.0, 3.0])
    assert (second["pos_inf_count"], second["neg_inf_count"], second["width"]) == (0, 0, [1.0] * 3)
    (empty,) = _json(client, "histograms", run="./ours", tag="empty")["series"]
    (only,) = empty["histograms"]
    assert (only["min"], only["max"], only["sum"], only["counts"]) == (None, None, None, [])
    assert _json(client, "histograms", run="./nope", tag="w") == {"series": []}


def test_a_damaged_histogram_is_counted_not_dropped(surface: MemorySurface) -> None:
    """A value that cannot be read back is left out of the histograms, counted in the
    answer and in the run's damage; one its file no longer holds is counted too; the
    others are shown."""
    with route_client(surface) as client:
        listed = _json(client, "samples", run="./crafted", plugin="histogram", tag="w")
        assert listed["series"][0]["step"] == [1, 2, 3, 4]
        (series,) = _json(client, "histograms", run="./crafted", tag="w")["series"]
        runs = {run["id"]: run for run in _json(client, "runs")["runs"]}
    assert [h["step"] for h in series["histograms"]] == [1, 4]
    assert series["unreadable"] == 2
    assert runs["./crafted"]["damage"]["damaged_values"] == 1


def test_tensor_slices(client: TestClient) -> None:
    body = _json(client, "tensor", run="./ours", tag="t", step=3, slice="[1,:,1:3]", bins=3)
    expected = TENSOR[1, :, 1:3] * 3
    assert (body["run"], body["rank"], body["tag"], body["step"]) == ("./ours", 0, "t", 3)
    assert body["shape"] == [2, 3, 4] and body["slice_shape"] == [3, 2]
    assert body["dtype"] == "float32" and body["slice"] == "[1,:,1:3]"
    assert body["values"] == expected.tolist()
    assert body["slice_statistics"]["max"] == float(expected.max())
    assert body["statistics"]["max"] == float(TENSOR.max() * 3)
    assert sum(body["histogram"]["counts"]) == expected.size
    assert len(body["histogram"]["edges"]) == 4
    whole = _json(client, "tensor", run="./ours", tag="t")  # the newest, no slice, no bins
    assert whole["step"] == 4 and whole["values"] == (TENSOR * 4).tolist()
    assert "histogram" not in whole


def test_a_tensor_of_text(client: TestClient) -> None:
    body = _json(client, "tensor", run="./ours", tag="words", bins=4)
    assert body["values"] == ["a", "b<c"] and "histogram" not in body


@pytest.mark.parametrize(
    ("query", "status", "says"),
    [
        ("tensor?run=./ours&tag=t&slice=[0,0,0,0]", 422, "4 entries"),
        ("tensor?run=./ours&tag=t&slice=[x,:]", 422, "'x'"),
        ("tensor?run=./ours&tag=t&slice=[0,9]", 422, "out of range"),
        ("tensor?run=./ours&tag=t&bins=1001", 422, "bins"),
        ("tensor?run=./ours&tag=nope", 404, "'nope'"),
        ("tensor?run=./ours&tag=t&step=2.5", 422, "step"),
        ("image?run=./ours&tag=img&step=999", 404, "step=999"),
        ("image?run=./ours&tag=img&step=999", 404, "kept steps: [1, 2, 3, 4]"),
        ("image?run=../secret&tag=img", 404, "'../secret'"),
        ("image?run=./ours", 422, "tag"),
        ("image?run=./ours&tag=not_an_image", 404, "holds no image"),
        ("image?run=./ours&tag=gone", 404, "no longer in its file"),
        ("image?run=./ours&tag=damaged", 422, "a CRC that does not match"),
        ("samples?run=./ours&plugin=mesh&tag=x", 422, "plugin='mesh'"),
        ("message?run=./ours&plugin=graph&tag=not_a_message", 404, "holds no message"),
        ("message?run=./ours&plugin=graph&tag=nope", 404, "no graph tag='nope'"),
    ],
)
def test_bad_requests_are_named(client: TestClient, query: str, status: int, says: str) -> None:
    response = client.get(f"/api/v1/{query}")
    detail = response.json()["detail"]
    assert response.status_code == status and says in detail and "\n" not in detail


def test_messages_as_json(client: TestClient) -> None:
    tags = {r["id"]: r["tags"] for r in _json(client, "runs")["runs"]}[GOLDEN]
    (graph_tag,) = tags["graph"]
    graph = _json(client, "message", run=GOLDEN, plugin="graph", tag=graph_tag)
    assert (graph["run"], graph["rank"], graph["plugin"], graph["tag"]) == (
        GOLDEN,
        0,
        "graph",
        graph_tag,
    )
    assert graph["message"]["node"] and isinstance(graph["step"], int)
    lineage = _json(client, "message", run=GOLDEN, plugin="train_lineage", tag="train_lineage")
    assert lineage["message"]["algorithm"]["network"] == "TinyNet"
    response = client.get(
        "/api/v1/message", params={"run": GOLDEN, "plugin": "image", "tag": "img"}
    )
    assert response.status_code == 422 and "plugin='image'" in response.json()["detail"]
