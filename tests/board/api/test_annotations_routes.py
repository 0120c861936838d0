"""The run annotation routes (``board/api/annotations.py``) over an in-memory read surface:
a PUT shows in the run list and moves its version and ETag, bad input is a 4xx naming the
field, the JSON export imports back (into another workspace too), and the scalar download
and ``sumlens export`` carry the runs' annotations. Group colours: stored, answered with
their group, kept across stores over the same state, exported and imported. Each test runs
on each database of the shared state (SQLite in the workspace, PostgreSQL)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers.board import route_client, wait_until, write_run
from helpers.memory_surface import MemorySurface
from starlette.testclient import TestClient

from sumlens.board.settings import BoardSettings
from sumlens.board.state import FILE_NAME, open_state
from sumlens.board.state.annotation_checks import MAX_GROUP_CHARS, MAX_NOTE_CHARS, MAX_TAG_CHARS
from sumlens.cli import main

BASE = "/runs/base"
GOOD = {"tags": ["baseline", "lr=0.1"], "note": "diverges after 3k steps", "colour": "#1F77B4"}


def _surface() -> MemorySurface:
    surface = MemorySurface(BASE)
    for run in ("./a", "./b", "./c"):
        surface.add_scalars(run, "loss", [1, 2, 3], [1.0, 0.5, 0.25])
    return surface


@pytest.fixture
def client(tmp_path: Path, state_url: str | None) -> Iterator[TestClient]:
    settings = BoardSettings(base_dir=Path(BASE), workspace=tmp_path / "ws", state=state_url)
    with route_client(_surface(), settings) as found:
        yield found


def _put(client: TestClient, run: str, body: object) -> object:
    return client.put("/api/v1/annotation", params={"run": run}, json=body)


def _runs(client: TestClient) -> dict[str, dict]:
    return {run["id"]: run for run in client.get("/api/v1/runs").json()["runs"]}


def test_a_put_shows_in_the_run_list_and_moves_its_etag(
    client: TestClient, tmp_path: Path, state_url: str | None
) -> None:
    first = client.get("/api/v1/runs")
    assert {run["annotation"]["note"] for run in first.json()["runs"]} == {""}
    assert first.json()["runs"][0]["annotation"] == {"tags": [], "note": "", "colour": None}
    assert not (tmp_path / "ws").exists()  # nothing annotated, nothing written

    response = _put(client, "./b", GOOD)
    assert response.status_code == 200, response.text
    stored = {**GOOD, "colour": "#1f77b4"}
    assert response.json() == stored
    assert (tmp_path / "ws" / FILE_NAME).is_file() == (state_url is None)

    again = client.get("/api/v1/runs", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 200 and again.headers["etag"] != first.headers["etag"]
    assert again.json()["version"] != first.json()["version"]
    assert _runs(client)["./b"]["annotation"] == stored
    assert _runs(client)["./a"]["annotation"]["tags"] == []
    assert _runs(client)["./b"]["tags"] == {"scalar": ["loss"]}  # the value tags stay apart

    cleared = _put(client, "./b", {"tags": [], "note": "", "colour": None})
    assert cleared.json() == {"tags": [], "note": "", "colour": None}
    assert _runs(client)["./b"]["annotation"]["tags"] == []


@pytest.mark.parametrize(
    ("run", "body", "status", "named"),
    [
        ("./a", {**GOOD, "tags": [""]}, 422, "tags[0]=''"),
        ("./a", {**GOOD, "tags": ["t" * (MAX_TAG_CHARS + 1)]}, 422, "tags[0]="),
        ("./a", {**GOOD, "note": "n" * (MAX_NOTE_CHARS + 1)}, 422, "note has"),
        ("./a", {**GOOD, "colour": "blue"}, 422, "colour='blue'"),
        ("./a", {**GOOD, "colour": "#12345g"}, 422, "colour='#12345g'"),
        ("./a", {"tags": [], "note": ""}, 422, "missing colour"),
        ("./nope", GOOD, 404, "run='./nope'"),
        ("", GOOD, 422, "run=''"),
    ],
)
def test_bad_input_is_refused_naming_the_field(
    client: TestClient, run: str, body: dict, status: int, named: str
) -> None:
    response = _put(client, run, body)
    assert response.status_code == status, response.text
    assert named in response.json()["detail"]
    assert _runs(client)["./a"]["annotation"]["tags"] == []


def test_a_body_must_be_json(client: TestClient) -> None:
    as_text = client.put(
        "/api/v1/annotation", params={"run": "./a"}, content=json.dumps(GOOD),
        headers={"Content-Type": "text/plain"},
    )  # fmt: skip
    assert as_text.status_code == 415 and "Content-Type='text/plain'" in as_text.json()["detail"]
    broken = client.put(
        "/api/v1/annotation", params={"run": "./a"}, content=b"{",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    assert broken.status_code == 400 and "not JSON" in broken.json()["detail"]
    missing = client.put("/api/v1/annotation", json=GOOD)
    assert missing.status_code == 422 and "run" in missing.json()["detail"]


def test_the_export_imports_back_into_another_workspace(
    client: TestClient, tmp_path: Path, new_state_url: Callable[[], str | None]
) -> None:
    _put(client, "./a", GOOD)
    _put(client, "./c", {"tags": ["ablation"], "note": "", "colour": None})
    exported = client.get("/api/v1/annotations")
    assert exported.status_code == 200
    assert "annotations.json" in exported.headers["content-disposition"]
    shared = exported.json()
    assert shared == {
        "base_dir": BASE,
        "annotations": {
            "./a": {**GOOD, "colour": "#1f77b4"},
            "./c": {"tags": ["ablation"], "note": "", "colour": None},
        },
        "group_colours": {},
        "total": 2,
        "next": None,
    }

    settings = BoardSettings(
        base_dir=Path(BASE), workspace=tmp_path / "teammate", state=new_state_url()
    )
    with route_client(_surface(), settings) as theirs:
        _put(theirs, "./c", {"tags": ["seed=2"], "note": "their note", "colour": None})
        shared["annotations"]["./gone"] = {"tags": ["old"], "note": "", "colour": None}
        imported = theirs.post("/api/v1/annotations", json=shared)
        assert imported.status_code == 200, imported.text
        assert imported.json() == {
            "added": 2, "updated": 1, "unchanged": 0, "group_colours": 0, "runs": 3,
            "not_served": 1, "from_base_dir": BASE,
        }  # fmt: skip
        runs = _runs(theirs)
        assert runs["./a"]["annotation"] == {**GOOD, "colour": "#1f77b4"}
        assert runs["./c"]["annotation"]["tags"] == ["seed=2", "ablation"]
        assert runs["./c"]["annotation"]["note"] == "their note"
        again = theirs.post("/api/v1/annotations", json=theirs.get("/api/v1/annotations").json())
        assert again.json()["unchanged"] == 3  # its own export changes nothing
        assert "./gone" in theirs.get("/api/v1/annotations").json()["annotations"]


def test_a_bad_import_stores_nothing(client: TestClient) -> None:
    body = {"annotations": {"./a": GOOD, "./b": {**GOOD, "colour": "#zzzzzz"}}}
    response = client.post("/api/v1/annotations", json=body)
    assert response.status_code == 422
    assert "annotations['./b'].colour='#zzzzzz'" in response.json()["detail"]
    assert client.get("/api/v1/annotations").json()["annotations"] == {}


def test_the_json_download_carries_the_annotations(client: TestClient) -> None:
    _put(client, "./a", GOOD)
    params = {"run": ["./a", "./b"], "format": "json"}
    document = client.get("/api/v1/scalars/download", params=params).json()
    assert [series["run"] for series in document["series"]] == ["./a", "./b"]
    assert document["annotations"] == {"./a": {**GOOD, "colour": "#1f77b4"}}
    text = client.get("/api/v1/scalars/download", params={"run": "./a", "format": "csv"}).text
    assert text.splitlines()[0] == "run,rank,tag,step,wall_time,value"


def test_sumlens_export_writes_the_annotations(tmp_path: Path) -> None:
    """``sumlens export`` reads the workspace's state (SQLite: it takes no ``--state``)."""
    base, workspace = tmp_path / "logs", tmp_path / "ws"
    write_run(base / "a", range(1, 4))
    write_run(base / "b", range(1, 4))
    settings = BoardSettings.create(base, workspace=workspace)
    with route_client(settings=settings) as client:
        wait_until(lambda: "./a" in _runs(client))
        assert _put(client, "./a", GOOD).status_code == 200
    for fmt in ("json", "parquet"):
        out = tmp_path / f"out.{fmt}"
        assert main(["export", "--logdir", str(base), "--workspace", str(workspace),
                     "-o", str(out)]) == 0  # fmt: skip
        if fmt == "json":
            notes = json.loads(out.read_text())["annotations"]
        else:
            notes = json.loads(pq.read_schema(out).metadata[b"sumlens.annotations"])
        assert notes == {"./a": {**GOOD, "colour": "#1f77b4"}}


def _put_group(client: TestClient, group: str, body: object) -> object:
    return client.put("/api/v1/group-colour", params={"group": group}, json=body)


def _group_colours(client: TestClient) -> dict[str, str | None]:
    """Each group's colour in the groups answer (runs ./a and ./b alone, ./c single)."""
    params = {"run": ["./a", "./b", "./c"], "tag": "loss", "group_regex": "([ab])"}
    body = client.get("/api/v1/scalars/groups", params=params).json()
    assert body["single"] == ["./c"]
    return {group["name"]: group["colour"] for group in body["groups"]}


def test_a_group_colour_is_stored_served_and_kept(
    client: TestClient, tmp_path: Path, state_url: str | None
) -> None:
    assert _group_colours(client) == {"a": None, "b": None}
    version = client.get("/api/v1/runs").json()["version"]
    assert not (tmp_path / "ws").exists()

    response = _put_group(client, "a", {"colour": "#AA3377"})
    assert response.status_code == 200, response.text
    assert response.json() == {"group": "a", "colour": "#aa3377"}
    assert _group_colours(client) == {"a": "#aa3377", "b": None}
    runs = client.get("/api/v1/runs").json()
    assert runs["version"] != version  # polling pages see it
    assert "group_colours" not in runs  # served with the groups, not on every poll

    # a new store over the same state reads it back; it is the base directory's only
    with open_state(tmp_path / "ws", BASE, state_url) as fresh:
        assert fresh.annotations.group_colours() == {"a": "#aa3377"}
        assert fresh.annotations.group_colour("b") is None
    with open_state(tmp_path / "ws", "/another/base", state_url) as other:
        assert other.annotations.group_colours() == {}

    cleared = _put_group(client, "a", {"colour": None})
    assert cleared.json() == {"group": "a", "colour": None}
    assert _group_colours(client) == {"a": None, "b": None}
    with open_state(tmp_path / "ws", BASE, state_url) as fresh:
        assert fresh.annotations.group_colours() == {}


def test_group_colours_export_and_import(
    client: TestClient, tmp_path: Path, new_state_url: Callable[[], str | None]
) -> None:
    _put_group(client, "a", {"colour": "#aa3377"})
    _put_group(client, "lr=0.1", {"colour": "#228833"})
    shared = client.get("/api/v1/annotations").json()
    assert shared["group_colours"] == {"a": "#aa3377", "lr=0.1": "#228833"}

    settings = BoardSettings(
        base_dir=Path(BASE), workspace=tmp_path / "teammate", state=new_state_url()
    )
    with route_client(_surface(), settings) as theirs:
        _put_group(theirs, "b", {"colour": "#4477aa"})
        imported = theirs.post("/api/v1/annotations", json=shared)
        assert imported.status_code == 200, imported.text
        assert imported.json()["group_colours"] == 2
        assert _group_colours(theirs) == {"a": "#aa3377", "b": "#4477aa"}
        again = theirs.post("/api/v1/annotations", json=shared)
        assert again.json()["group_colours"] == 0  # nothing new
        # a file made before group colours still imports
        old = theirs.post("/api/v1/annotations", json={"base_dir": BASE, "annotations": {}})
        assert old.status_code == 200 and old.json()["group_colours"] == 0
        assert theirs.get("/api/v1/annotations").json()["group_colours"] == {
            "a": "#aa3377", "b": "#4477aa", "lr=0.1": "#228833",
        }  # fmt: skip


@pytest.mark.parametrize(
    ("group", "body", "named"),
    [
        ("a", {"colour": "red"}, "colour='red'"),
        ("a", {"colour": "#12345"}, "colour='#12345'"),
        ("a", {"colour": 7}, "colour=7"),
        ("a", {}, "body={}"),
        ("a", {"colour": None, "note": ""}, "body="),
        ("", {"colour": "#aa3377"}, "group=''"),
        ("g" * (MAX_GROUP_CHARS + 1), {"colour": "#aa3377"}, "group='ggg"),
    ],
)
def test_a_bad_group_colour_is_refused_naming_the_field(
    client: TestClient, group: str, body: object, named: str
) -> None:
    response = _put_group(client, group, body)
    assert response.status_code == 422, response.text
    assert named in response.json()["detail"]
    assert client.get("/api/v1/annotations").json()["group_colours"] == {}


@pytest.mark.parametrize(
    ("colours", "named"),
    [
        ({"a": "blue"}, "group_colours['a']='blue'"),
        ({"a": None}, "group_colours['a']=None"),
        ({"": "#aa3377"}, "group_colours['']"),
        (["a"], "group_colours=['a']"),
    ],
)
def test_a_bad_group_colour_import_stores_nothing(
    client: TestClient, colours: object, named: str
) -> None:
    body = {"annotations": {"./a": GOOD}, "group_colours": colours}
    response = client.post("/api/v1/annotations", json=body)
    assert response.status_code == 422
    assert named in response.json()["detail"]
    assert client.get("/api/v1/annotations").json() == {
        "base_dir": BASE, "annotations": {}, "group_colours": {}, "total": 0, "next": None,
    }  # fmt: skip
