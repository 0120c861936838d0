"""The run lifecycle routes (``board/api/lifecycle.py``) over an in-memory read surface: a
run's state shows in the run list and moves its ETag; bad input is a 4xx naming it; the
base directory, unknown runs and unknown trash entries are refused. Moving real files to
the trash and back is tested in ``tests/board/lifecycle/``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import route_client
from helpers.memory_surface import MemorySurface
from starlette.testclient import TestClient

from sumlens.board.settings import BoardSettings

BASE = "/runs/base"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    surface = MemorySurface(BASE)
    for run in ("./", "./a", "./b"):
        surface.add_scalars(run, "loss", [1, 2, 3], [1.0, 0.5, 0.25])
    settings = BoardSettings(base_dir=Path(BASE), workspace=tmp_path / "ws")
    with route_client(surface, settings) as found:
        yield found


def _states(client: TestClient) -> dict[str, str | None]:
    return {run["id"]: run["state"] for run in client.get("/api/v1/runs").json()["runs"]}


def test_a_run_state_shows_in_the_run_list_and_moves_its_etag(client: TestClient) -> None:
    first = client.get("/api/v1/runs")
    assert _states(client) == {"./": None, "./a": None, "./b": None}

    hidden = client.put("/api/v1/run-state?run=./a", json={"state": "hidden"})
    assert hidden.status_code == 200 and hidden.json() == {"run": "./a", "state": "hidden"}
    archived = client.put("/api/v1/run-state", params={"run": "./b"}, json={"state": "archived"})
    assert archived.json() == {"run": "./b", "state": "archived"}

    second = client.get("/api/v1/runs", headers={"If-None-Match": first.headers["etag"]})
    assert second.status_code == 200 and second.headers["etag"] != first.headers["etag"]
    assert _states(client) == {"./": None, "./a": "hidden", "./b": "archived"}

    shown = client.put("/api/v1/run-state", params={"run": "./a"}, json={"state": None})
    assert shown.json() == {"run": "./a", "state": None}
    assert _states(client) == {"./": None, "./a": None, "./b": "archived"}


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        ({"state": "deleted"}, 422, "state='deleted' is not allowed"),
        ({"state": "hidden", "more": 1}, 422, "is not allowed: a run state is"),
        (["hidden"], 422, "is not allowed: a run state is"),
    ],
)
def test_a_bad_run_state_is_refused(
    client: TestClient, body: object, status: int, said: str
) -> None:
    answer = client.put("/api/v1/run-state", params={"run": "./a"}, json=body)
    assert answer.status_code == status and said in answer.json()["detail"]
    assert _states(client)["./a"] is None


def test_a_run_state_body_must_be_json(client: TestClient) -> None:
    form = client.put("/api/v1/run-state?run=./a", content=b"state=hidden",
                      headers={"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert form.status_code == 415 and "application/json" in form.json()["detail"]
    broken = client.put("/api/v1/run-state?run=./a", content=b"{",
                        headers={"Content-Type": "application/json"})  # fmt: skip
    assert broken.status_code == 400 and "not JSON" in broken.json()["detail"]


def test_unknown_runs_are_404(client: TestClient) -> None:
    state = client.put("/api/v1/run-state", params={"run": "./zzz"}, json={"state": "hidden"})
    assert state.status_code == 404 and "run='./zzz'" in state.json()["detail"]
    gone = client.delete("/api/v1/run", params={"run": "./zzz"})
    assert gone.status_code == 404 and "run='./zzz' is not a run being served" in gone.text


def test_the_base_directory_cannot_be_deleted(client: TestClient) -> None:
    answer = client.delete("/api/v1/run", params={"run": "./"})
    assert answer.status_code == 422
    assert "run='./' is the base directory itself" in answer.json()["detail"]
    bad = client.delete("/api/v1/run", params={"run": "a/../b"})
    assert bad.status_code == 422 and "is not a run id" in bad.json()["detail"]


def test_the_trash_starts_empty_and_unknown_entries_are_refused(client: TestClient) -> None:
    listed = client.get("/api/v1/trash")
    assert listed.json() == {"entries": [], "retention_days": 30.0}
    unknown = client.post("/api/v1/trash/restore", params={"id": "20250102T030405Z-1a2b3c4d"})
    assert unknown.status_code == 404 and "is not an entry of the trash" in unknown.text
    bad = client.post("/api/v1/trash/restore", params={"id": "../etc"})
    assert bad.status_code == 422 and "id='../etc' is not allowed" in bad.json()["detail"]
