"""Two replicas over one shared state (SQLite in one workspace, or PostgreSQL), one serving
``data`` and one serving ``data/proj`` below it, each with its own trash: each lists,
restores and purges only the entries of its own trash, even where the run of the other's
entry lies below its base directory (``data`` deleting ``./proj/r2``) or the entry's run
is one of its runs (``data/proj``'s ``./r1`` is ``data``'s ``./proj/r1``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers.board import route_client, wait_until, write_run
from starlette.testclient import TestClient

from sumlens.board.data.discover import TRASH_DIR
from sumlens.board.settings import BoardSettings


def _settings(base: Path, workspace: Path, state: str | None, **given: Any) -> BoardSettings:
    return BoardSettings.create(base, workspace=workspace, reload_interval=0.1, state=state,
                                **given)  # fmt: skip


def _served(client: TestClient, wanted: set[str]) -> None:
    """Wait until the run list holds exactly ``wanted``."""
    wait_until(lambda: {run["id"] for run in client.get("/api/v1/runs").json()["runs"]} == wanted,
               timeout=60)  # fmt: skip


def _listed(client: TestClient) -> list[str]:
    return [entry["id"] for entry in client.get("/api/v1/trash").json()["entries"]]


def _files(directory: Path) -> set[str]:
    return {str(path.relative_to(directory)) for path in directory.rglob("*") if path.is_file()}


def test_nested_base_directories_keep_their_own_trash(
    tmp_path: Path, state_url: str | None
) -> None:
    data, workspace = tmp_path / "data", tmp_path / "ws"
    proj = data / "proj"
    for run in ("top", "proj/r1", "proj/r2"):
        write_run(data / run, range(1, 4))
    with (
        route_client(settings=_settings(data, workspace, state_url)) as parent,
        route_client(settings=_settings(proj, workspace, state_url)) as child,
    ):
        _served(parent, {"./top", "./proj/r1", "./proj/r2"})
        _served(child, {"./r1", "./r2"})

        own = child.delete("/api/v1/run", params={"run": "./r1"}).json()
        top = parent.delete("/api/v1/run", params={"run": "./top"}).json()
        below = parent.delete("/api/v1/run", params={"run": "./proj/r2"}).json()

        assert own["trash_location"] == f"{proj}/{TRASH_DIR}/{own['id']}/r1"
        assert below["location"] == f"{proj}/r2"  # a run of the child's base directory ...
        assert below["trash_location"] == f"{data}/{TRASH_DIR}/{below['id']}/proj/r2"  # its files
        assert _listed(child) == [own["id"]]
        assert _listed(parent) == [below["id"], top["id"]]
        for client, other in ((parent, own), (child, below)):
            refused = client.post("/api/v1/trash/restore", params={"id": other["id"]})
            assert refused.status_code == 404 and "is not an entry of the trash" in refused.text
        kept = _files(proj / TRASH_DIR)
        assert kept and all(name.startswith(f"{own['id']}/r1/") for name in kept)
        entries = {name.split("/", 1)[0] for name in _files(data / TRASH_DIR)}
        assert entries == {top["id"], below["id"]}

    purging = _settings(data, workspace, state_url, trash_retention_days=0)
    with route_client(settings=purging) as parent:
        wait_until(lambda: _listed(parent) == [], timeout=60)
        assert _files(data / TRASH_DIR) == set()
    assert _files(proj / TRASH_DIR) == kept  # the child's entry's files are not purged

    with route_client(settings=_settings(proj, workspace, state_url)) as child:
        assert _listed(child) == [own["id"]]  # and its entry
        restored = child.post("/api/v1/trash/restore", params={"id": own["id"]})
        assert restored.status_code == 200, restored.text
        _served(child, {"./r1"})
        assert _files(proj / TRASH_DIR) == set()
