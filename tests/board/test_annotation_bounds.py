"""Annotations have bounds (``board/state/annotations.py``, ``board/api/annotations.py``).

Three 100,000-run imports made a 115 MB store, +300 MB of server memory and a 100 MB
``GET /annotations``. Over the real app and a real workspace file: an import holds at most
``MAX_IMPORT_RUNS`` runs and may not take the file past ``MAX_ANNOTATIONS`` runs or
``MAX_ANNOTATION_CHARS`` characters (413 naming the limit, nothing stored), a user's own
edit of a served run is still taken at the bound, and the export comes a page at a time
(``limit``, ``after`` and ``next``), each page importable as it is. On each database of
the shared state (SQLite in the workspace, PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.board import route_client
from helpers.memory_surface import MemorySurface
from starlette.testclient import TestClient

from sumlens.board.settings import BoardSettings
from sumlens.board.state import FILE_NAME, annotation_checks, annotations

BASE = "/runs/base"
SERVED = ("./a", "./b")
MAX_IMPORT_RUNS, MAX_ANNOTATIONS, MAX_PAGE = 10_000, 20_000, 1_000
"""The bounds the README states (``annotation_checks.MAX_IMPORT_RUNS`` ...)."""
STATE_BACKENDS = ["sqlite", "postgresql"]


def test_the_bounds_are_the_stated_ones() -> None:
    checked = (annotation_checks.MAX_IMPORT_RUNS, annotation_checks.MAX_PAGE)
    assert checked == (MAX_IMPORT_RUNS, MAX_PAGE)
    names = ("MAX_ANNOTATIONS", "MAX_ANNOTATION_CHARS")
    stored = tuple(getattr(annotations, name, None) for name in names)
    assert stored == (MAX_ANNOTATIONS, 20_000_000)


def _surface() -> MemorySurface:
    surface = MemorySurface(BASE)
    for run in SERVED:
        surface.add_scalars(run, "loss", [1, 2], [1.0, 0.5])
    return surface


def _client(workspace: Path, state: str | None) -> TestClient:
    settings = BoardSettings(base_dir=Path(BASE), workspace=workspace, state=state)
    return route_client(_surface(), settings)


def _import(prefix: str, count: int, note: str = "") -> dict[str, Any]:
    """An import of ``count`` runs not served (``./<prefix>00000`` ...), tagged ``t``."""
    given = {f"./{prefix}{i:05d}": {"tags": ["t"], "note": note, "colour": None}
             for i in range(count)}  # fmt: skip
    return {"base_dir": "/theirs", "annotations": given}


def _stored(client: TestClient) -> int:
    """Annotated runs the client's state holds (every import here is of its base directory)."""
    return client.app.state.shared.annotations.count()


@pytest.fixture(scope="module", params=STATE_BACKENDS)
def full(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[TestClient]:
    """A state filled to ``MAX_ANNOTATIONS`` by imports of ``MAX_IMPORT_RUNS`` runs, on each
    database."""
    workspace = tmp_path_factory.mktemp("full")
    state = None if request.param == "sqlite" else request.getfixturevalue("postgres_cluster")
    with _client(workspace, state and state.database()) as client:
        for part in range(MAX_ANNOTATIONS // MAX_IMPORT_RUNS):
            answer = client.post("/api/v1/annotations", json=_import(f"p{part}_", MAX_IMPORT_RUNS))
            assert answer.status_code == 200, answer.text
            assert answer.json()["added"] == MAX_IMPORT_RUNS
        yield client


def test_an_import_of_too_many_runs_is_a_413_naming_the_limit(
    tmp_path: Path, state_url: str | None
) -> None:
    with _client(tmp_path, state_url) as client:
        answer = client.post("/api/v1/annotations", json=_import("r", MAX_IMPORT_RUNS + 1))
        assert answer.status_code == 413
        detail = answer.json()["detail"]
        assert f"{MAX_IMPORT_RUNS + 1:,} runs" in detail and f"{MAX_IMPORT_RUNS:,}" in detail
        assert client.get("/api/v1/annotations").json()["total"] == 0
    assert not (tmp_path / FILE_NAME).exists()  # nothing stored


def test_an_import_past_the_workspaces_bound_stores_nothing(full: TestClient) -> None:
    client = full
    body = _import("more", 1)
    body["annotations"]["./p0_00000"] = {"tags": ["u"], "note": "", "colour": None}
    answer = client.post("/api/v1/annotations", json=body)
    assert answer.status_code == 413
    detail = answer.json()["detail"]
    assert f"at most {MAX_ANNOTATIONS:,} (MAX_ANNOTATIONS)" in detail
    assert "nothing was imported" in detail
    assert _stored(client) == MAX_ANNOTATIONS
    page = client.get("/api/v1/annotations", params={"limit": 1}).json()
    assert page["annotations"]["./p0_00000"]["tags"] == ["t"]  # not updated either

    # runs already stored still take what an import adds to them
    again = {"annotations": {"./p0_00001": {"tags": ["u"], "note": "seen", "colour": None}}}
    assert client.post("/api/v1/annotations", json=again).json()["updated"] == 1
    # and the user's own edit of a served run is taken at the bound
    edit = {"tags": ["mine"], "note": "", "colour": None}
    assert client.put("/api/v1/annotation", params={"run": "./a"}, json=edit).status_code == 200
    assert _stored(client) == MAX_ANNOTATIONS + 1


def test_an_import_past_the_characters_bound_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_url: str | None
) -> None:
    # ~5 notes of 10,000 (not raising: the bound's absence fails below, on the answer)
    monkeypatch.setattr(annotations, "MAX_ANNOTATION_CHARS", 50_000, raising=False)
    with _client(tmp_path, state_url) as client:
        first = client.post("/api/v1/annotations", json=_import("n", 4, note="x" * 10_000))
        assert first.status_code == 200, first.text
        answer = client.post("/api/v1/annotations", json=_import("m", 2, note="y" * 10_000))
        assert answer.status_code == 413
        assert "at most 50,000 (MAX_ANNOTATION_CHARS)" in answer.json()["detail"]
        assert client.get("/api/v1/annotations").json()["total"] == 4


def test_the_export_comes_a_page_at_a_time(full: TestClient) -> None:
    client = full
    whole: dict[str, Any] = {}
    after, pages = None, 0
    while True:
        params = {"after": after} if after is not None else {}
        answer = client.get("/api/v1/annotations", params=params)
        assert answer.status_code == 200
        page = answer.json()
        assert len(page["annotations"]) <= MAX_PAGE
        assert not set(page["annotations"]) & set(whole)
        whole.update(page["annotations"])
        pages += 1
        after = page["next"]
        if after is None:
            break
        assert after == max(page["annotations"])
    total = page["total"]
    assert len(whole) == total and total >= MAX_ANNOTATIONS
    assert pages == -(-total // MAX_PAGE)
    assert list(whole) == sorted(whole)

    small = client.get("/api/v1/annotations", params={"limit": 3, "after": "./p1_00005"}).json()
    assert list(small["annotations"]) == ["./p1_00006", "./p1_00007", "./p1_00008"]
    assert small["next"] == "./p1_00008"
    last = client.get("/api/v1/annotations", params={"after": "./~"}).json()
    assert (last["annotations"], last["next"]) == ({}, None)
    for limit in (0, MAX_PAGE + 1):
        refused = client.get("/api/v1/annotations", params={"limit": limit})
        assert refused.status_code == 422 and "limit" in refused.text


def test_a_page_imports_as_it_is(full: TestClient, tmp_path: Path) -> None:
    client = full
    page = client.get("/api/v1/annotations", params={"limit": 5}).json()
    assert page["next"] is not None
    with _client(tmp_path, None) as theirs:  # a teammate's own workspace
        answer = theirs.post("/api/v1/annotations", json=page)
        assert answer.status_code == 200, answer.text
        assert answer.json()["added"] == 5
        assert theirs.get("/api/v1/annotations").json()["annotations"] == page["annotations"]


def test_group_colours_are_bounded_and_sent_with_the_first_page(
    tmp_path: Path, state_url: str | None
) -> None:
    """Group colours count too: imports past ``MAX_GROUP_COLOURS`` of a base directory are
    refused (413 naming it, nothing stored), as is one more colour picked by hand; a page
    after the first carries none of them (an export's pages do not repeat them all)."""
    bound = annotation_checks.MAX_GROUP_COLOURS
    half = {f"g{i}": "#123456" for i in range(bound // 2)}
    other = {f"h{i}": "#654321" for i in range(bound // 2 + 1)}
    with _client(tmp_path, state_url) as client:
        body = {"base_dir": BASE, "annotations": {}, "group_colours": half}
        assert client.post("/api/v1/annotations", json=body).status_code == 200
        body["group_colours"] = other
        answer = client.post("/api/v1/annotations", json=body)
        assert answer.status_code == 413 and "MAX_GROUP_COLOURS" in answer.json()["detail"]
        body["group_colours"] = {**half, **dict(list(other.items())[:-1])}  # up to the bound
        assert client.post("/api/v1/annotations", json=body).status_code == 200
        picked = client.put("/api/v1/group-colour", params={"group": "new"},
                            json={"colour": "#abcdef"})  # fmt: skip
        assert picked.status_code == 413 and "MAX_GROUP_COLOURS" in picked.json()["detail"]
        kept = client.put("/api/v1/group-colour", params={"group": "g0"}, json={"colour": None})
        assert kept.status_code == 200  # clearing one is always taken
        client.post("/api/v1/annotations", json=_import("r", 3))
        first = client.get("/api/v1/annotations", params={"limit": 2}).json()
        assert len(first["group_colours"]) == bound - 1 and first["next"]
        second = client.get("/api/v1/annotations", params={"limit": 2, "after": first["next"]})
        assert second.json()["group_colours"] == {}
