"""The saved views routes (``board/api/views.py``) over the real app, on each database: a
user's views are saved, listed, replaced and deleted; bad input is a 4xx naming it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import route_client
from helpers.memory_surface import MemorySurface
from starlette.testclient import TestClient

from sumlens.board.settings import BoardSettings
from sumlens.board.state.views import MAX_NAME_CHARS, MAX_VIEWS


@pytest.fixture
def client(tmp_path: Path, state_url: str | None) -> Iterator[TestClient]:
    settings = BoardSettings(base_dir=Path("/memory"), workspace=tmp_path, state=state_url)
    with route_client(MemorySurface(), settings) as found:
        yield found


def test_views_are_saved_listed_and_deleted(client: TestClient) -> None:
    assert client.get("/api/v1/views").json() == {"views": {}}
    saved = client.put("/api/v1/views", params={"name": "loss"}, json={"hash": "#/scalars"})
    assert saved.status_code == 200, saved.text
    assert saved.json() == {"views": {"loss": "#/scalars"}}
    client.put("/api/v1/views", params={"name": "imgs"}, json={"hash": "#/images?run=./a"})
    client.put("/api/v1/views", params={"name": "loss"}, json={"hash": "#/scalars?tag=loss"})
    assert client.get("/api/v1/views").json() == {
        "views": {"imgs": "#/images?run=./a", "loss": "#/scalars?tag=loss"}
    }
    gone = client.delete("/api/v1/views", params={"name": "imgs"})
    assert gone.status_code == 200 and gone.json() == {"views": {"loss": "#/scalars?tag=loss"}}
    again = client.delete("/api/v1/views", params={"name": "imgs"})
    assert again.status_code == 404 and "name='imgs'" in again.json()["detail"]


@pytest.mark.parametrize(
    ("name", "body", "status", "named"),
    [
        ("v", {"hash": "scalars"}, 422, "hash='scalars'"),
        ("v", {"hash": "#/", "more": 1}, 422, "more"),
        ("v", {}, 422, "hash"),
        ("", {"hash": "#/"}, 422, "name=''"),
        ("n" * (MAX_NAME_CHARS + 1), {"hash": "#/"}, 422, f"1 to {MAX_NAME_CHARS}"),
    ],
)
def test_a_bad_view_is_refused_naming_it(
    client: TestClient, name: str, body: dict, status: int, named: str
) -> None:
    answer = client.put("/api/v1/views", params={"name": name}, json=body)
    assert answer.status_code == status, answer.text
    assert named in answer.json()["detail"]
    assert client.get("/api/v1/views").json() == {"views": {}}


def test_a_view_body_must_be_json(client: TestClient) -> None:
    form = client.put("/api/v1/views?name=v", content=b"hash=%23%2F",
                      headers={"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert form.status_code == 415 and "application/json" in form.json()["detail"]
    broken = client.put("/api/v1/views?name=v", content=b"{",
                        headers={"Content-Type": "application/json"})  # fmt: skip
    assert broken.status_code == 400 and "not JSON" in broken.json()["detail"]
    assert client.get("/api/v1/views").json() == {"views": {}}


def test_views_past_the_bound_are_a_413(client: TestClient) -> None:
    shared = client.app.state.shared
    for i in range(MAX_VIEWS):
        shared.views.put(None, f"v{i}", "#/")
    answer = client.put("/api/v1/views", params={"name": "more"}, json={"hash": "#/"})
    assert answer.status_code == 413 and "MAX_VIEWS" in answer.json()["detail"]
