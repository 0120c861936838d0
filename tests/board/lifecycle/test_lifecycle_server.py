"""The run lifecycle through the real application over a real loader, on the local disk and
on a real S3 API (moto's server on 127.0.0.1): a run's state shows in the run list; a
deleted run's files move under the trash and the run leaves the list at the next reload;
restoring brings it back with its data (refused while a run of that name exists again);
entries older than the retention are purged when a server starts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import pytest
from helpers.board import route_client, wait_until, write_run
from helpers.s3 import bucket_server, s3_options
from starlette.testclient import TestClient

from sumlens.board.data.discover import TRASH_DIR
from sumlens.board.data.trash import new_entry_id
from sumlens.board.settings import BoardSettings

BUCKET = "served"
DAY_S = 86400.0


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with bucket_server(BUCKET) as url:
        yield url


class Place:
    """A base directory of runs ``./a`` and ``./b``, locally or in the bucket, and how to
    serve it and look at its files."""

    def __init__(
        self, base: str, fs: Any, root: str, options: dict[str, Any], staging: Path
    ) -> None:
        self.base, self.fs, self.root, self.options = base, fs, root, options
        self.staging = staging
        """Where runs are written before they are uploaded (object storage only)."""

    def settings(self, workspace: Path, **given: Any) -> BoardSettings:
        return BoardSettings.create(
            self.base, workspace=workspace, reload_interval=0.1,
            storage_options=self.options or None, **given,
        )  # fmt: skip

    def files(self, below: str) -> set[str]:
        """The files below ``below`` now (none where it is not there)."""
        root = f"{self.root}/{below}/"
        self.fs.invalidate_cache()
        return {path[len(root) :] for path in self.fs.find(root) if path.startswith(root)}

    def write_run(self, run: str, steps: range) -> None:
        """Write run ``run`` (``a``) of a scalar at ``steps`` into the base directory."""
        if not self.options:
            write_run(Path(self.root) / run, steps)
            return
        written = self.staging / str(len(list(self.staging.glob("*")))) / run
        write_run(written, steps)
        self.fs.put(f"{written}/", f"{self.root}/{run}/", recursive=True)


@pytest.fixture(params=["local", "s3"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Place:
    staging = tmp_path / "staging"
    staging.mkdir()
    if request.param == "local":
        local = str(tmp_path / "team")
        found = Place(local, fsspec.filesystem("file"), local, {}, staging)
    else:
        options = s3_options(request.getfixturevalue("endpoint"))
        name = request.node.name.replace("[", "-").rstrip("]")
        fs = fsspec.filesystem("s3", **options)
        found = Place(f"s3://{BUCKET}/{name}", fs, f"{BUCKET}/{name}", options, staging)
    found.write_run("a", range(1, 4))
    found.write_run("b", range(1, 6))
    return found


def _runs(client: TestClient) -> dict[str, dict[str, Any]]:
    return {run["id"]: run for run in client.get("/api/v1/runs").json()["runs"]}


def _served(client: TestClient, wanted: set[str]) -> dict[str, dict[str, Any]]:
    """The run list once it holds exactly ``wanted`` (waiting for the reloads)."""
    return wait_until(lambda: (runs := _runs(client)).keys() == wanted and runs, timeout=60)


def _points(client: TestClient, run: str) -> int:
    answer = client.get("/api/v1/scalars", params={"run": run, "tag": "loss"}).json()
    return sum(series["total"] for series in answer["series"])


def test_states_delete_and_restore(place: Place, tmp_path: Path) -> None:
    with route_client(settings=place.settings(tmp_path / "ws")) as client:
        _served(client, {"./a", "./b"})
        client.put("/api/v1/run-state", params={"run": "./b"}, json={"state": "archived"})
        assert _runs(client)["./b"]["state"] == "archived"
        own = place.files("a")

        deleted = client.delete("/api/v1/run", params={"run": "./a"})

        assert deleted.status_code == 200, deleted.text
        entry = deleted.json()
        assert entry["run_id"] == "./a" and entry["by"] is None
        assert entry["location"] == f"{place.base}/a"
        assert entry["trash_location"] == f"{place.base}/{TRASH_DIR}/{entry['id']}/a"
        assert entry["purge_at"] == pytest.approx(entry["at"] + 30 * DAY_S)
        assert place.files(f"{TRASH_DIR}/{entry['id']}/a") == own
        assert place.files("a") == set()
        runs = _served(client, {"./b"})  # the trash is never served
        assert runs["./b"]["state"] == "archived"
        assert client.get("/api/v1/trash").json()["entries"] == [entry]

        restored = client.post("/api/v1/trash/restore", params={"id": entry["id"]})

        assert restored.status_code == 200 and restored.json() == entry
        assert place.files("a") == own
        _served(client, {"./a", "./b"})
        wait_until(lambda: _points(client, "./a") == 3, timeout=60)
        assert client.get("/api/v1/trash").json()["entries"] == []
        assert place.files(TRASH_DIR) == set()


def test_restore_is_refused_while_a_run_of_that_name_exists(place: Place, tmp_path: Path) -> None:
    with route_client(settings=place.settings(tmp_path / "ws")) as client:
        _served(client, {"./a", "./b"})
        entry = client.delete("/api/v1/run", params={"run": "./a"}).json()
        _served(client, {"./b"})
        place.write_run("a", range(1, 3))
        _served(client, {"./a", "./b"})

        refused = client.post("/api/v1/trash/restore", params={"id": entry["id"]})

        assert refused.status_code == 409
        assert "run='./a' exists again" in refused.json()["detail"]
        assert [e["id"] for e in client.get("/api/v1/trash").json()["entries"]] == [entry["id"]]
        assert place.files(f"{TRASH_DIR}/{entry['id']}/a")


def test_entries_past_the_retention_are_purged_at_start(place: Place, tmp_path: Path) -> None:
    """A server starting with a retention its trash's entries are past purges them, their
    states and the folders nobody recorded (a deletion cut short) as old."""
    workspace = tmp_path / "ws"
    with route_client(settings=place.settings(workspace)) as client:
        _served(client, {"./a", "./b"})
        client.put("/api/v1/run-state", params={"run": "./a"}, json={"state": "hidden"})
        entry = client.delete("/api/v1/run", params={"run": "./a"}).json()
    orphan = f"{TRASH_DIR}/{new_entry_id(time.time() - 2 * DAY_S)}"
    place.fs.makedirs(f"{place.root}/{orphan}/c", exist_ok=True)
    place.fs.pipe(f"{place.root}/{orphan}/c/events.out.tfevents.1.host", b"cut short")
    assert place.files(f"{TRASH_DIR}/{entry['id']}/a") and place.files(orphan)
    with route_client(settings=place.settings(workspace, trash_retention_days=1)) as client:
        wait_until(lambda: place.files(orphan) == set(), timeout=60)  # 2 days old
        kept = client.get("/api/v1/trash").json()["entries"]  # not a day old
        assert [(e["id"], e["purge_at"]) for e in kept] == [(entry["id"], entry["at"] + DAY_S)]
    with route_client(settings=place.settings(workspace, trash_retention_days=0)) as client:
        wait_until(lambda: client.get("/api/v1/trash").json()["entries"] == [], timeout=60)
        assert place.files(TRASH_DIR) == set()
        _served(client, {"./b"})
        place.write_run("a", range(1, 3))  # a new run of the deleted one's name
        assert _served(client, {"./a", "./b"})["./a"]["state"] is None
