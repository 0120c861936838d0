"""The ``/api/v1`` routes over the real server on 127.0.0.1, and the guards around them."""

from __future__ import annotations

import csv
import http.client
import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pytest
from helpers.board import free_port, running_server, tb_ema, wait_until, write_run

from sumlens.board.api.curves import smooth
from sumlens.board.settings import BoardSettings
from sumlens.io import read_scalars

SECRET = "top-secret-content-outside-the-base-dir"


def _value(tag: str, step: int) -> float:
    if step == 777:
        return float("nan")
    return float(np.sin(step / 50.0) + (step % 97) / 97.0 + (10.0 if step == 4321 else 0.0))


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, golden_dir: Path
) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("api")
    (root / "secret.txt").write_text(SECRET)
    base = root / "base"
    write_run(base / "ms", range(1, 10_001), tags=("loss", "acc"), value=_value)
    write_run(base / "tb", range(1, 101), fmt="tensorboard")
    write_run(base / "<img src=x onerror=alert(1)>", range(1, 4), tags=("<b>tag</b>",))
    shutil.copytree(golden_dir, base / "golden")
    settings = BoardSettings.create(
        base, port=free_port(), workspace=root / "ws", reload_interval=0.2, allowed_hosts="box.lan"
    )
    with running_server(settings) as url:
        wait_until(lambda: not _get(url, "/api/v1/runs")["loading"])
        yield url, base


def _request(url: str, path: str, host: str | None = None, headers: dict | None = None):
    """A raw GET (the path is sent exactly as given, no client-side normalisation)."""
    netloc = url.split("//", 1)[1].split("/", 1)[0]
    connection = http.client.HTTPConnection(netloc, timeout=30)
    prefix = url.split(netloc, 1)[1]
    connection.putrequest("GET", prefix + path, skip_host=True)
    connection.putheader("Host", netloc if host is None else host)
    for name, value in (headers or {}).items():
        connection.putheader(name, value)
    connection.endheaders()
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response, body


def _get(url: str, path: str, **params) -> dict:
    query = ("?" + urlencode(params, doseq=True)) if params else ""
    response, body = _request(url, path + query)
    assert response.status == 200, body
    return json.loads(body)


def test_runs_lists_everything(served) -> None:
    url, _ = served
    runs = {run["id"]: run for run in _get(url, "/api/v1/runs")["runs"]}
    assert set(runs) == {
        "./ms",
        "./tb",
        "./<img src=x onerror=alert(1)>",
        "./golden/all_plugins",
        "./golden/collector",
        "./golden/landscape",
    }
    assert runs["./ms"]["tags"]["scalar"] == ["acc", "loss"] and runs["./ms"]["points"] == 20_000
    assert runs["./golden/all_plugins"]["tags"]["image"] == ["img"]
    assert all(run["status"] == "ready" for run in runs.values())
    tags = _get(url, "/api/v1/tags", run=["./ms", "./tb"])["tags"]
    assert tags == {"scalar": ["acc", "loss"]}


def test_full_resolution_equals_the_file(served) -> None:
    url, base = served
    got = _get(url, "/api/v1/scalars", run="./ms", tag="loss", points=20_000)["series"]
    (series,) = got
    steps, walls, values = read_scalars(base / "ms")["loss"]
    assert series["total"] == series["shown"] == 10_000
    assert series["step"] == steps.tolist() and series["wall"] == walls.tolist()
    expected = [None if not np.isfinite(v) else v for v in values.tolist()]
    assert series["value"] == expected


def test_downsampling_keeps_extremes_and_ends(served) -> None:
    url, base = served
    (series,) = _get(url, "/api/v1/scalars", run="./ms", tag="loss", points=200)["series"]
    steps, _, values = read_scalars(base / "ms")["loss"]
    assert series["shown"] <= 200 and series["total"] == 10_000
    assert series["step"][0] == 1 and series["step"][-1] == 10_000
    assert 4321 in series["step"]  # the spike
    assert 777 in series["step"]  # the NaN gap is kept
    finite = np.where(np.isfinite(values), values, np.nan)
    assert series["step"][series["value"].index(max(v for v in series["value"] if v))] == int(
        steps[np.nanargmax(finite)]
    )
    again = _get(url, "/api/v1/scalars", run="./ms", tag="loss", points=200)["series"][0]
    assert again == series  # deterministic


def test_smoothing_is_computed_on_full_resolution(served) -> None:
    url, base = served
    _, _, values = read_scalars(base / "ms")["loss"]
    reference = tb_ema(values, 0.9)
    np.testing.assert_allclose(smooth(values, 0.9), reference, rtol=1e-12, equal_nan=True)
    for points, start, end in ((100, None, None), (2000, None, None), (300, 2000, 2500)):
        params = {"run": "./ms", "tag": "loss", "points": points, "smoothing": 0.9}
        if start is not None:
            params.update(start=start, end=end)
        (series,) = _get(url, "/api/v1/scalars", **params)["series"]
        index = np.asarray(series["step"]) - 1
        got = np.array([np.nan if v is None else v for v in series["smoothed"]])
        np.testing.assert_allclose(got, reference[index], rtol=1e-9, equal_nan=True)
    (series,) = _get(
        url,
        "/api/v1/scalars",
        run="./ms",
        tag="acc",
        smoothing=0.75,
        method="average",
        points=20_000,
    )["series"]
    assert series["smoothed"][3] == pytest.approx(np.mean(series["value"][0:4]))


@pytest.mark.parametrize(
    ("axis", "start", "end"), [("step", 100, 200), ("relative", 0.0, 0.001), ("wall", None, None)]
)
def test_ranges_along_each_axis(served, axis: str, start, end) -> None:
    url, base = served
    steps, walls, _ = read_scalars(base / "ms")["loss"]
    if axis == "wall":
        start, end = float(walls[10]), float(walls[20])
    params = {"run": "./ms", "tag": "loss", "points": 20_000, "axis": axis}
    params.update(start=start, end=end)
    (series,) = _get(url, "/api/v1/scalars", **params)["series"]
    x = {"step": steps, "wall": walls, "relative": walls - walls[0]}[axis]
    inside = (x >= start) & (x <= end)
    assert series["step"] == steps[inside].tolist() and series["total"] == 10_000


def test_many_runs_and_tags_in_one_request(served) -> None:
    url, _ = served
    got = _get(
        url,
        "/api/v1/scalars",
        run=["./ms", "./tb", "./golden/collector", "./nope"],
        tag_regex="^lo",
    )["series"]
    assert [(s["run"], s["rank"], s["tag"]) for s in got] == [
        ("./ms", 0, "loss"),
        ("./tb", None, "loss"),
        ("./golden/collector", 0, "loss/auto"),
    ]


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"points": 1}, "points"),
        ({"points": "many"}, "points"),
        ({"smoothing": 1.5}, "smoothing"),
        ({"axis": "epoch"}, "axis='epoch'"),
        ({"method": "median"}, "method='median'"),
        ({"start": 5, "end": 1}, "start=5.0"),
    ],
)
def test_bad_parameters_are_named(served, params: dict, named: str) -> None:
    url, _ = served
    response, body = _request(url, "/api/v1/scalars?" + urlencode({"run": "./ms", **params}))
    assert response.status == 422
    detail = json.loads(body)["detail"]
    assert isinstance(detail, str) and "\n" not in detail and named in detail


@pytest.mark.parametrize("points", [2, 3, 4, 5, 6])
def test_a_few_points_of_a_long_series(served, points: int) -> None:
    url, _ = served
    (series,) = _get(url, "/api/v1/scalars", run="./ms", tag="loss", points=points)["series"]
    assert 2 <= series["shown"] <= points and series["total"] == 10_000
    assert series["step"][0] == 1 and series["step"][-1] == 10_000
    if points >= 3:
        assert 4321 in series["step"] or 777 in series["step"]  # the spike, or the NaN gap


def test_download_holds_the_same_points(served) -> None:
    url, base = served
    response, body = _request(url, "/api/v1/scalars/download?run=./tb&run=./ms&tag=loss")
    assert response.status == 200 and "attachment" in response.getheader("content-disposition")
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    ms = [r for r in rows if r["run"] == "./ms"]
    steps, walls, values = read_scalars(base / "ms")["loss"]
    assert [int(r["step"]) for r in ms] == steps.tolist()
    assert [float(r["value"]) for r in ms][:5] == values[:5].tolist()
    assert [float(r["wall_time"]) for r in ms] == walls.tolist()
    assert {r["rank"] for r in rows if r["run"] == "./tb"} == {""}
    response, body = _request(url, "/api/v1/scalars/download?run=./ms&tag=acc&format=json")
    (series,) = json.loads(body)["series"]
    assert series["step"] == steps.tolist()


TRAVERSALS = [
    "../secret.txt",
    "..%2fsecret.txt",
    "%2e%2e%2fsecret.txt",
    "%2e%2e/%2e%2e/secret.txt",
    "....//....//secret.txt",
    "..%252fsecret.txt",
    "/etc/passwd",
    "%2fetc%2fpasswd",
]


@pytest.mark.parametrize("attempt", TRAVERSALS)
def test_no_path_leaves_the_base_dir(served, attempt: str) -> None:
    url, _ = served
    paths = [
        f"/static/{attempt}",
        f"/static/vendor/{attempt}",
        f"/{attempt}",
        f"/api/v1/scalars?run={attempt}",
        f"/api/v1/scalars?run=./{attempt}&tag={attempt}&tag_regex={attempt}",
        f"/api/v1/scalars/download?run=./ms/{attempt}",
        f"/api/v1/tags?run={attempt}",
    ]
    for path in paths:
        response, body = _request(url, path)
        assert SECRET.encode() not in body and b"root:" not in body, path
        if path.startswith("/api/v1/scalars?"):
            assert response.status == 200 and json.loads(body)["series"] == []


def test_foreign_host_headers_are_refused(served) -> None:
    url, _ = served
    port = url.rsplit(":", 1)[1]
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", ""):
        response, _ = _request(url, "/api/v1/health", host=host)
        assert response.status == 400, host
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", "box.lan", "[::1]:1"):
        response, _ = _request(url, "/api/v1/health", host=host)
        assert response.status == 200, host


def test_no_cors(served) -> None:
    url, _ = served
    response, _ = _request(url, "/api/v1/runs", headers={"Origin": "http://evil.example"})
    assert response.getheader("access-control-allow-origin") is None
    assert response.getheader("x-content-type-options") == "nosniff"


def test_openapi_document_and_no_cdn_docs(served) -> None:
    url, _ = served
    document = _get(url, "/api/v1/openapi.json")
    assert {"/api/v1/runs", "/api/v1/scalars", "/api/v1/scalars/download"} <= set(document["paths"])
    for path in ("/docs", "/redoc"):
        response, _ = _request(url, path)
        assert response.status == 404


def test_url_path_prefix(tmp_path: Path) -> None:
    write_run(tmp_path / "base" / "run", range(1, 4))
    settings = BoardSettings.create(
        tmp_path / "base", port=free_port(), workspace=tmp_path / "ws", url_path_prefix="/p/q/"
    )
    with running_server(settings) as url:
        assert url.endswith("/p/q")
        assert _get(url, "/api/v1/health")["status"] == "ok"
        root = url[: -len("/p/q")]
        response, _ = _request(root, "/api/v1/health")
        assert response.status == 404
        response, _ = _request(root, "/")
        assert response.status in (302, 307) and response.getheader("location") == "/p/q/"
        document = _get(url, "/api/v1/openapi.json")
        assert "/p/q/api/v1/scalars" in document["paths"]


def test_an_unchanged_run_list_is_not_sent_again(served) -> None:
    url, _ = served
    first, body = _request(url, "/api/v1/runs")
    etag = first.getheader("etag")
    assert etag and json.loads(body)["runs"]
    again, body = _request(url, "/api/v1/runs", headers={"If-None-Match": etag})
    assert again.status == 304 and body == b""
    stale, body = _request(url, "/api/v1/runs", headers={"If-None-Match": '"0-1"'})
    assert stale.status == 200 and json.loads(body)["runs"]
