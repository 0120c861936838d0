"""A run's tags and notes follow the run, not its name under the base directory
(``board/state/annotations.py``).

They were keyed by (base directory, run id), so serving the same runs from a parent or a
child directory with the same workspace showed none. Real runs, the real loader and app,
one workspace: tags set with the parent served show with the child served and the other
way round, and with the run's own directory served; a sibling directory sees none; a
workspace file of the first layout (keyed by base directory and run id) is moved to
locations, two names of one run joined. The tests of locations run on each database of
the shared state; those of first-layout files on SQLite, the only one such files were.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from helpers.board import route_client, wait_until, write_run
from starlette.testclient import TestClient

from sumlens.board.settings import BoardSettings
from sumlens.board.state import FILE_NAME
from sumlens.board.state.locations import run_location

MINE = {"tags": ["baseline"], "note": "set from the parent", "colour": "#123456"}
THEIRS = {"tags": ["child"], "note": "set from the child", "colour": None}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``logs/exp/{r1,r2}`` and ``logs/other/r1``, a few scalars each."""
    logs = tmp_path_factory.mktemp("logs")
    for run in ("exp/r1", "exp/r2", "other/r1"):
        write_run(logs / run, range(1, 4))
    return logs


@contextmanager
def _served(base: Path, workspace: Path, state: str | None = None) -> Iterator[TestClient]:
    """The real app over ``base`` with ``workspace`` and ``state``, once its runs are listed."""
    settings = BoardSettings.create(base, workspace=workspace, watch=False, state=state)
    with route_client(settings=settings) as client:
        wait_until(lambda: not client.get("/api/v1/runs").json()["loading"])
        yield client


def _annotations(client: TestClient) -> dict[str, Any]:
    runs = client.get("/api/v1/runs").json()["runs"]
    return {run["id"]: run["annotation"] for run in runs if run["annotation"]["tags"]}


def _put(client: TestClient, run: str, body: dict[str, Any]) -> None:
    answer = client.put("/api/v1/annotation", params={"run": run}, json=body)
    assert answer.status_code == 200, answer.text


def test_tags_set_from_the_parent_show_from_the_child_and_back(
    logs: Path, tmp_path: Path, state_url: str | None
) -> None:
    workspace = tmp_path / "ws"
    with _served(logs, workspace, state_url) as parent:
        _put(parent, "./exp/r1", MINE)
    with _served(logs / "exp", workspace, state_url) as child:
        assert _annotations(child) == {"./r1": MINE}
        _put(child, "./r2", THEIRS)
        exported = child.get("/api/v1/annotations").json()
        assert set(exported["annotations"]) == {"./r1", "./r2"}
    with _served(logs, workspace, state_url) as parent:
        assert _annotations(parent) == {"./exp/r1": MINE, "./exp/r2": THEIRS}
    with _served(logs / "exp" / "r1", workspace, state_url) as itself:
        assert _annotations(itself) == {"./": MINE}
    with _served(logs / "other", workspace, state_url) as sibling:
        assert _annotations(sibling) == {}
        assert sibling.get("/api/v1/annotations").json()["annotations"] == {}


def _first_layout(
    workspace: Path, rows: list[tuple[str, str, dict[str, Any]]], group_base: str
) -> None:
    """A workspace file as sumlens wrote it before locations: rows keyed by (base
    directory, run id), and a group colour of ``group_base``."""
    workspace.mkdir(parents=True)
    with sqlite3.connect(workspace / FILE_NAME) as db:
        db.execute(
            "CREATE TABLE annotations (base_dir TEXT NOT NULL, run TEXT NOT NULL, tags TEXT "
            "NOT NULL, note TEXT NOT NULL, colour TEXT, PRIMARY KEY (base_dir, run))"
        )
        db.execute(
            "CREATE TABLE group_colours (base_dir TEXT NOT NULL, name TEXT NOT NULL, "
            "colour TEXT NOT NULL, PRIMARY KEY (base_dir, name))"
        )
        for base, run, body in rows:
            db.execute(
                "INSERT INTO annotations VALUES (?, ?, ?, ?, ?)",
                (base, run, json.dumps(body["tags"]), body["note"], body["colour"]),
            )
        db.execute("INSERT INTO group_colours VALUES (?, 'g', '#abcdef')", (group_base,))


def test_a_store_keyed_by_name_is_moved_to_locations(logs: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    exp = str(logs / "exp")
    _first_layout(
        workspace,
        [
            (exp, "./r1", MINE),  # made serving logs/exp
            (str(logs), "./exp/r1", THEIRS),  # the same run, made serving logs
            (str(logs), "./other/r1", THEIRS),
        ],
        group_base=exp,
    )
    joined = {  # by base directory, then run id: the row made serving logs first
        "tags": ["child", "baseline"],
        "note": "set from the child\n\nset from the parent",
        "colour": "#123456",
    }
    with _served(logs, workspace) as parent:
        assert _annotations(parent) == {"./exp/r1": joined, "./other/r1": THEIRS}
    with _served(logs / "exp", workspace) as child:
        assert _annotations(child) == {"./r1": joined}
        groups = child.get("/api/v1/annotations").json()["group_colours"]
        assert groups == {"g": "#abcdef"}  # group colours stay as they were
    with sqlite3.connect(workspace / FILE_NAME) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        assert "annotations" not in tables  # moved, once
        locations = [row[0] for row in db.execute("SELECT location FROM run_annotations")]
    assert sorted(locations) == [f"{exp}/r1", f"{logs}/other/r1"]


@pytest.mark.parametrize(
    ("base", "run", "location"),
    [
        ("/logs", "./", "/logs"),
        ("/logs/", "./a/b", "/logs/a/b"),
        ("/", "./a", "/a"),
        ("s3://bucket/prefix/", "./run", "s3://bucket/prefix/run"),
        ("s3://bucket", "./prefix/run", "s3://bucket/prefix/run"),
    ],
)
def test_a_runs_location_is_its_directory_or_url(base: str, run: str, location: str) -> None:
    assert run_location(base, run) == location


def test_a_joined_annotation_stays_within_a_runs_bounds(
    logs: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two rows of one run, each within a run's bounds, join past them: the joined one is
    cut to the bounds (so the page can still save it) and what was left out is said."""
    workspace = tmp_path / "ws"
    exp = str(logs / "exp")
    first = {"tags": [f"a{i}" for i in range(40)], "note": "x" * 6_000, "colour": None}
    second = {"tags": [f"b{i}" for i in range(40)], "note": "y" * 6_000, "colour": None}
    _first_layout(workspace, [(exp, "./r1", first), (str(logs), "./exp/r1", second)], exp)
    with caplog.at_level("WARNING", logger="sumlens.board"), _served(logs, workspace) as parent:
        joined = _annotations(parent)["./exp/r1"]
        assert joined["tags"] == second["tags"] + first["tags"][:10]
        assert len(joined["note"]) == 10_000
        again = parent.put("/api/v1/annotation", params={"run": "./exp/r1"}, json=joined)
        assert again.status_code == 200, again.text
    said = caplog.text
    assert "left out: tags ['a10'" in said and "'a39']" in said
    assert f"{12_002 - 10_000} characters at the end of the note" in said


@pytest.mark.parametrize("run", ["r1", "./r1/", "././r1", "./a/../r1", "./a//r1", "", "."])
def test_an_import_names_runs_as_the_run_list_does(
    logs: Path, tmp_path: Path, run: str, state_url: str | None
) -> None:
    """Another spelling of a run's id would fall on the run's location and replace what
    is stored there instead of joining it: it is refused, naming it."""
    with _served(logs / "exp", tmp_path / "ws", state_url) as child:
        _put(child, "./r1", MINE)
        body = {"base_dir": str(logs / "exp"), "annotations": {run: THEIRS}}
        answer = child.post("/api/v1/annotations", json=body)
        assert answer.status_code == 422, answer.text
        assert f"annotations[{run!r}]" in answer.json()["detail"]
        assert _annotations(child) == {"./r1": MINE}
