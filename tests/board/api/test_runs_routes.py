"""The run, tag and scalar routes (``board/api/runs.py``, with ``query.py``, ``curves.py``
and ``export.py``) over an in-memory read surface, asked through starlette's TestClient:
health, the run list and its ETag, tags, scalars (full resolution, downsampling, smoothing,
ranges, ranks, many runs), downloads, bad parameters, the URL prefix and the guards."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers.board import route_client, tb_ema
from helpers.memory_surface import MemorySurface
from starlette.testclient import TestClient

from sumlens.board.query.curves import smooth
from sumlens.board.settings import BoardSettings
from sumlens.io import Image

STEPS = np.arange(1, 10_001)
WALLS = 1_700_000_000.0 + STEPS * 0.25
MARKUP = "./<img src=x onerror=alert(1)>"
FORMULA_TAG = '=HYPERLINK("http://evil.example","click")'


def _value(step: int) -> float:
    if step == 777:
        return float("nan")
    return float(np.sin(step / 50.0) + (step % 97) / 97.0 + (10.0 if step == 4321 else 0.0))


LOSS = np.array([_value(step) for step in STEPS.tolist()])
ACC = LOSS / 2


def _surface() -> MemorySurface:
    surface = MemorySurface("/runs/base", reload_interval=0.5, engine="numba")
    surface.add_scalars("./ms", "loss", STEPS, LOSS, WALLS, rank=0)
    surface.add_scalars("./ms", "acc", STEPS, ACC, WALLS, rank=0)
    surface.add_scalars("./tb", "loss", range(1, 101), np.linspace(1.0, 0.1, 100))
    surface.add_scalars("./collector", "loss/auto", [1, 2], [0.5, 0.25], rank=0)
    surface.add_scalars("./collector", "loss/auto", [1, 2], [0.6, 0.35], rank=1)
    surface.add_value("./collector", "image", "img", 2, Image(b"\x89PNG", 1, 1), rank=0)
    surface.add_scalars(MARKUP, "<b>tag</b>", [1, 2, 3], [1.0, 2.0, 3.0])
    surface.add_scalars("./@formula", FORMULA_TAG, [1, 2, 3], [-0.5] * 3)
    surface.add_run("./broken", status="error", error="OSError: boom", corrupt_records=3,
                    skipped_bytes=40, restarts=2, several_trainings=True,
                    stale_points_dropped=5, unreadable_directory="permission denied")  # fmt: skip
    surface.add_file("./broken", "events.out.events.summary.1.x_MS", b"", unreadable=True)
    surface.add_file("./broken", "events.out.events.summary.2.x_MS", b"", read_error="EACCES")
    return surface


@pytest.fixture(scope="module")
def surface() -> MemorySurface:
    return _surface()


@pytest.fixture(scope="module")
def client(surface: MemorySurface) -> Iterator[TestClient]:
    settings = BoardSettings(base_dir=Path("/runs/base"), port=6006)
    with route_client(surface, settings) as found:
        yield found


def _get(client: TestClient, path: str, **params: object) -> dict:
    response = client.get(path, params=params)  # type: ignore[arg-type]
    assert response.status_code == 200, response.text
    return response.json()


def _scalars(client: TestClient, **params: object) -> list[dict]:
    return _get(client, "/api/v1/scalars", **params)["series"]


def test_health_says_what_is_served(client: TestClient) -> None:
    body = _get(client, "/api/v1/health")
    assert body["status"] == "ok" and body["base_dir"] == "/runs/base"
    assert body["port"] == 6006 and body["loading"] is False and isinstance(body["pid"], int)
    assert body["watching"] is False and body["polling_reason"] == "runs held in memory"


def test_runs_lists_everything(client: TestClient, surface: MemorySurface) -> None:
    body = _get(client, "/api/v1/runs")
    assert (body["base_dir"], body["loading"], body["reload_interval"]) == (
        "/runs/base",
        False,
        0.5,
    )
    assert (body["truncated"], body["engine"], body["version"]) == (False, "numba", surface.version)
    runs = {run["id"]: run for run in body["runs"]}
    assert list(runs) == sorted(runs)
    assert set(runs) == {"./ms", "./tb", "./collector", MARKUP, "./@formula", "./broken"}
    assert runs["./ms"]["tags"] == {"scalar": ["acc", "loss"]} and runs["./ms"]["points"] == 20_000
    assert runs["./ms"]["ranks"] == [0] and runs["./tb"]["ranks"] == []
    assert runs["./ms"]["created"] == WALLS[0] and runs["./ms"]["updated"] == WALLS[-1]
    assert runs["./collector"]["tags"] == {"image": ["img"], "scalar": ["loss/auto"]}
    assert runs["./collector"]["ranks"] == [0, 1]
    assert all(run["status"] == "ready" for name, run in runs.items() if name != "./broken")
    broken = runs["./broken"]
    assert (broken["status"], broken["error"], broken["files"]) == ("error", "OSError: boom", 2)
    assert broken["damage"] == {
        "corrupt_records": 3,
        "skipped_bytes": 40,
        "unreadable_files": 2,
        "damaged_values": 0,
        "unreadable_directory": "permission denied",
        "unreadable_projector_config": None,
    }
    assert (broken["restarts"], broken["several_trainings"], broken["stale_points_dropped"]) == (
        2,
        True,
        5,
    )


def test_tags_of_chosen_runs_or_all(client: TestClient) -> None:
    tags = _get(client, "/api/v1/tags", run=["./ms", "./tb"])["tags"]
    assert tags == {"scalar": ["acc", "loss"]}
    every = _get(client, "/api/v1/tags")["tags"]
    assert every["image"] == ["img"]
    assert every["scalar"] == sorted(["acc", "loss", "loss/auto", "<b>tag</b>", FORMULA_TAG])
    assert _get(client, "/api/v1/tags", run="./nope")["tags"] == {}


def test_full_resolution_is_every_point(client: TestClient) -> None:
    (series,) = _scalars(client, run="./ms", tag="loss", points=20_000)
    assert (series["run"], series["rank"], series["tag"]) == ("./ms", 0, "loss")
    assert series["total"] == series["shown"] == 10_000
    assert series["range"] == {"step": [1, 10_000], "wall": [WALLS[0], WALLS[-1]]}
    assert series["step"] == STEPS.tolist() and series["wall"] == WALLS.tolist()
    assert series["value"] == [None if not np.isfinite(v) else v for v in LOSS.tolist()]


def test_downsampling_keeps_extremes_and_ends(client: TestClient) -> None:
    (series,) = _scalars(client, run="./ms", tag="loss", points=200)
    assert series["shown"] <= 200 and series["total"] == 10_000
    assert series["step"][0] == 1 and series["step"][-1] == 10_000
    assert 4321 in series["step"]  # the spike
    assert 777 in series["step"]  # the NaN gap is kept
    biggest = series["value"].index(max(v for v in series["value"] if v))
    assert series["step"][biggest] == int(STEPS[np.nanargmax(LOSS)])
    assert _scalars(client, run="./ms", tag="loss", points=200)[0] == series  # deterministic


@pytest.mark.parametrize("points", [2, 3, 4, 5, 6])
def test_a_few_points_of_a_long_series(client: TestClient, points: int) -> None:
    (series,) = _scalars(client, run="./ms", tag="loss", points=points)
    assert 2 <= series["shown"] <= points and series["total"] == 10_000
    assert series["step"][0] == 1 and series["step"][-1] == 10_000
    if points >= 3:
        assert 4321 in series["step"] or 777 in series["step"]  # the spike, or the NaN gap


def test_smoothing_is_computed_on_full_resolution(client: TestClient) -> None:
    reference = tb_ema(LOSS, 0.9)
    np.testing.assert_allclose(smooth(LOSS, 0.9), reference, rtol=1e-12, equal_nan=True)
    for points, start, end in ((100, None, None), (2000, None, None), (300, 2000, 2500)):
        params: dict[str, object] = {"run": "./ms", "tag": "loss", "points": points}
        if start is not None:
            params.update(start=start, end=end)
        (series,) = _scalars(client, smoothing=0.9, **params)
        assert (series["step"][0], series["step"][-1]) == (start or 1, end or 10_000)
        index = np.asarray(series["step"]) - 1
        got = np.array([np.nan if v is None else v for v in series["smoothed"]])
        np.testing.assert_allclose(got, reference[index], rtol=1e-9, equal_nan=True)
    body = _get(client, "/api/v1/scalars", run="./ms", tag="acc", smoothing=0.75,
                method="average", points=20_000)  # fmt: skip
    assert (body["smoothing"], body["method"], body["points"]) == (0.75, "average", 20_000)
    (series,) = body["series"]
    assert series["smoothed"][3] == pytest.approx(np.mean(series["value"][0:4]))


@pytest.mark.parametrize(
    ("axis", "start", "end"), [("step", 100, 200), ("relative", 0.0, 1.0), ("wall", None, None)]
)
def test_ranges_along_each_axis(client: TestClient, axis: str, start, end) -> None:
    if axis == "wall":
        start, end = float(WALLS[10]), float(WALLS[20])
    body = _get(client, "/api/v1/scalars", run="./ms", tag="loss", points=20_000, axis=axis,
                start=start, end=end)  # fmt: skip
    assert (body["axis"], body["start"], body["end"]) == (axis, start, end)
    (series,) = body["series"]
    x = {"step": STEPS, "wall": WALLS, "relative": WALLS - WALLS[0]}[axis]
    inside = (x >= start) & (x <= end)
    assert series["step"] == STEPS[inside].tolist() and series["total"] == 10_000


def test_a_range_open_at_one_end(client: TestClient) -> None:
    (series,) = _scalars(client, run="./ms", tag="loss", points=20_000, start=9_990)
    assert series["step"] == list(range(9_990, 10_001))
    (series,) = _scalars(client, run="./ms", tag="loss", points=20_000, end=3, axis="relative")
    assert series["step"] == list(range(1, 14))  # walls 0.25 s apart: 0 to 3 s


def test_many_runs_tags_and_ranks_in_one_request(client: TestClient) -> None:
    got = _scalars(client, run=["./ms", "./tb", "./collector", "./nope"], tag_regex="^lo")
    assert [(s["run"], s["rank"], s["tag"]) for s in got] == [
        ("./ms", 0, "loss"),
        ("./tb", None, "loss"),
        ("./collector", 0, "loss/auto"),
        ("./collector", 1, "loss/auto"),
    ]
    assert [s["value"] for s in got[2:]] == [[0.5, 0.25], [0.6, 0.35]]
    named = _scalars(client, run=["./ms", "./ms"], tag=["acc", "nope"], tag_regex="^$")
    assert [(s["run"], s["tag"]) for s in named] == [("./ms", "acc")]
    every = _scalars(client, run=MARKUP)
    assert [s["tag"] for s in every] == ["<b>tag</b>"]
    assert _scalars(client) == []  # no run named: nothing selected


@pytest.mark.parametrize(
    ("params", "status", "named"),
    [
        ({"points": 1}, 422, "points"),
        ({"points": 1_000_000_000}, 422, "points"),
        ({"points": "many"}, 422, "points"),
        ({"smoothing": 1.5}, 422, "smoothing"),
        ({"smoothing": -0.1}, 422, "smoothing"),
        ({"axis": "epoch"}, 422, "axis='epoch'"),
        ({"method": "median"}, 422, "method='median'"),
        ({"start": 5, "end": 1}, 422, "start=5.0"),
        ({"start": "nan"}, 422, "start=nan"),
        ({"tag_regex": "(unclosed"}, 400, "tag_regex='(unclosed'"),
        ({"tag_regex": r"(a)\1"}, 400, "backreferences"),
    ],
)
def test_bad_parameters_are_named(
    client: TestClient, params: dict, status: int, named: str
) -> None:
    response = client.get("/api/v1/scalars", params={"run": "./ms", **params})
    assert response.status_code == status
    detail = response.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail and named in detail


@pytest.mark.parametrize(
    ("params", "status", "named"),
    [
        ({"format": "xml"}, 422, "format='xml'"),
        ({"axis": "epoch"}, 422, "axis='epoch'"),
        ({"tag_regex": "(unclosed"}, 400, "tag_regex"),
    ],
)
def test_bad_download_parameters_are_named(
    client: TestClient, params: dict, status: int, named: str
) -> None:
    response = client.get("/api/v1/scalars/download", params={"run": "./ms", **params})
    assert response.status_code == status and named in response.json()["detail"]


def test_csv_download_holds_every_point(client: TestClient) -> None:
    response = client.get("/api/v1/scalars/download?run=./tb&run=./ms&tag=loss")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    assert response.headers["content-disposition"] == 'attachment; filename="scalars.csv"'
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert list(rows[0]) == ["run", "rank", "tag", "step", "wall_time", "value"]
    assert [r["run"] for r in rows] == ["./tb"] * 100 + ["./ms"] * 10_000  # in the order asked
    ms = [r for r in rows if r["run"] == "./ms"]
    assert [int(r["step"]) for r in ms] == STEPS.tolist()
    assert [float(r["wall_time"]) for r in ms] == WALLS.tolist()
    assert [float(r["value"]) for r in ms][:5] == LOSS[:5].tolist()
    assert ms[776]["value"] == "nan"
    assert {r["rank"] for r in ms} == {"0"}
    assert {r["rank"] for r in rows if r["run"] == "./tb"} == {""}


def test_json_download_and_ranges(client: TestClient) -> None:
    response = client.get("/api/v1/scalars/download?run=./ms&tag=acc&format=json")
    assert response.headers["content-disposition"] == 'attachment; filename="scalars.json"'
    body = json.loads(response.text)
    assert body["columns"] == ["run", "rank", "tag", "step", "wall_time", "value"]
    (series,) = body["series"]
    assert (series["run"], series["rank"], series["tag"]) == ("./ms", 0, "acc")
    assert series["step"] == STEPS.tolist() and series["wall_time"] == WALLS.tolist()
    assert series["value"][776] is None  # NaN: JSON has none
    cut = client.get("/api/v1/scalars/download?run=./ms&tag=acc&format=json&start=5&end=7")
    assert json.loads(cut.text)["series"][0]["step"] == [5, 6, 7]
    empty = client.get("/api/v1/scalars/download?run=./nope&format=json")
    assert json.loads(empty.text)["series"] == []


def test_csv_text_cells_are_never_formulas(client: TestClient) -> None:
    """Tags (and any text cell) starting with = + - @ get a leading ' (OWASP); values do not."""
    response = client.get("/api/v1/scalars/download", params={"run": "./@formula"})
    rows = list(csv.DictReader(response.text.splitlines()))
    assert len(rows) == 3 and all(row["run"] == "./@formula" for row in rows)  # ids start ./
    assert all(row["tag"] == "'" + FORMULA_TAG for row in rows)
    assert all(row["value"] == "-0.5" for row in rows)  # numbers stay numbers


@pytest.mark.parametrize("attempt", ["../secret.txt", "/etc/passwd", "%2e%2e%2fsecret.txt"])
def test_names_are_only_looked_up(client: TestClient, attempt: str) -> None:
    for path in ("/api/v1/scalars", "/api/v1/scalars/download"):
        response = client.get(path, params={"run": attempt, "tag": attempt, "format": "json"})
        assert response.status_code == 200 and json.loads(response.text)["series"] == []
    assert _get(client, "/api/v1/tags", run=attempt)["tags"] == {}


def test_an_unchanged_run_list_is_not_sent_again() -> None:
    surface = _surface()
    with route_client(surface) as client:
        first = client.get("/api/v1/runs")
        etag = first.headers["etag"]
        assert etag.startswith(f'"{surface.version}-') and first.json()["runs"]
        assert first.headers["cache-control"] == "no-cache"
        again = client.get("/api/v1/runs", headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == etag
        stale = client.get("/api/v1/runs", headers={"If-None-Match": '"0-1"'})
        assert stale.status_code == 200 and stale.json()["runs"]
        surface.add_scalars("./tb", "loss", [101], [0.05])  # a poll found something new
        changed = client.get("/api/v1/runs", headers={"If-None-Match": etag})
        assert changed.status_code == 200 and changed.headers["etag"] != etag
        tb = next(run for run in changed.json()["runs"] if run["id"] == "./tb")
        assert tb["points"] == 101
        surface.set_status(loading=True, truncated=True)
        status = client.get("/api/v1/runs").json()
        assert (status["loading"], status["truncated"]) == (True, True)


def test_openapi_document_and_no_cdn_docs(client: TestClient) -> None:
    document = _get(client, "/api/v1/openapi.json")
    assert {"/api/v1/runs", "/api/v1/scalars", "/api/v1/scalars/download", "/api/v1/health",
            "/api/v1/tags"} <= set(document["paths"])  # fmt: skip
    for path in ("/docs", "/redoc"):
        assert client.get(path).status_code == 404


def test_url_path_prefix() -> None:
    settings = BoardSettings(base_dir=Path("/memory"), url_path_prefix="/p/q")
    with route_client(_surface(), settings) as client:
        assert _get(client, "/p/q/api/v1/health")["status"] == "ok"
        assert client.get("/api/v1/health").status_code == 404
        root = client.get("/", follow_redirects=False)
        assert root.status_code in (302, 307) and root.headers["location"] == "/p/q/"
        bare = client.get("/p/q", follow_redirects=False)
        assert bare.status_code in (302, 307) and bare.headers["location"] == "/p/q/"
        assert "/p/q/api/v1/scalars" in _get(client, "/p/q/api/v1/openapi.json")["paths"]


def test_foreign_host_headers_are_refused(surface: MemorySurface) -> None:
    settings = BoardSettings(base_dir=Path("/memory"), allowed_hosts=("box.lan",))
    with route_client(surface, settings) as client:
        for host in ("evil.example", "evil.example:6006", "127.0.0.1.evil.example", ""):
            response = client.get("/api/v1/health", headers={"Host": host})
            assert response.status_code == 400, host
            assert "--allowed-hosts" in response.json()["detail"]
        for host in ("127.0.0.1:6006", "localhost:6006", "localhost", "box.lan", "[::1]:1"):
            assert client.get("/api/v1/health", headers={"Host": host}).status_code == 200, host


def test_no_cors(client: TestClient) -> None:
    response = client.get("/api/v1/runs", headers={"Origin": "http://evil.example"})
    assert response.headers.get("access-control-allow-origin") is None
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "SAMEORIGIN"  # framed by its own origin only
    assert response.headers["content-security-policy"] == "frame-ancestors 'self'"
