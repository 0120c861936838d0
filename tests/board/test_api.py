"""The ``/api/v1`` routes end to end: the real server on 127.0.0.1 over files on disk.

What the routes do with what they read is tested on an in-memory read surface
(``tests/board/api/``); here, that runs written in both formats and MindSpore's are
listed, served at full resolution and downloaded as the files hold them, and that no
request reaches a file outside the base directory.
"""

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
from helpers.board import free_port, running_server, wait_until, write_run

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
        base, port=free_port(), workspace=root / "ws", reload_interval=0.2
    )
    with running_server(settings) as url:
        wait_until(lambda: not _get(url, "/api/v1/runs")["loading"])
        yield url, base


def _request(url: str, path: str):
    """A raw GET (the path is sent exactly as given, no client-side normalisation)."""
    netloc = url.split("//", 1)[1].split("/", 1)[0]
    connection = http.client.HTTPConnection(netloc, timeout=30)
    prefix = url.split(netloc, 1)[1]
    connection.putrequest("GET", prefix + path, skip_host=True)
    connection.putheader("Host", netloc)
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
