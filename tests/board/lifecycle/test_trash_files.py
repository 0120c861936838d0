"""The trash's file work (:mod:`sumlens.board.data.trash`), on the local disk and on a real
S3 API (moto's server on 127.0.0.1): what a deletion moves and what it leaves, restoring,
purging, the base directory refused, a failure half-way leaving the run whole, and the
trash never discovered as runs."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest
from helpers.s3 import bucket_server, s3_options
from helpers.unprivileged import run_unprivileged, shared_dir

from sumlens import SummaryRecord
from sumlens.board.data.discover import TRASH_DIR, Walker
from sumlens.board.data.trash import (
    RunConflict,
    RunNotTrashable,
    RunTrash,
    entry_time,
    new_entry_id,
    run_path,
)
from sumlens.board.data.watch import outside_trash
from sumlens.board.errors import NotFound, QueryError
from sumlens.io.remote import FsspecStorage, open_storage
from sumlens.io.storage import LOCAL_STORAGE

BUCKET = "lifecycle"


def write_tree(base: Path) -> None:
    """Run ``./a`` (event files, a projector config, a plugin's folder of its own files),
    its child run ``./a/b``, a folder of runs ``./a/group`` and a sibling run ``./c``."""
    for run in ("a", "a/b", "a/group/one", "c"):
        with SummaryRecord(base / run) as record:
            for step in (1, 2, 3):
                record.add_value("scalar", "loss", 1.0 / step)
                record.record(step)
    (base / "a" / "projector_config.pbtxt").write_text('embeddings { tensor_name: "e" }\n')
    (base / "a" / "plugin" / "deep").mkdir(parents=True)
    (base / "a" / "plugin" / "deep" / "asset.bin").write_bytes(b"asset")
    (base / "a" / "group" / "notes.txt").write_text("beside the runs of the group\n")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with bucket_server(BUCKET) as url:
        yield url


@pytest.fixture(params=["local", "s3"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[RunTrash, Path]:
    """A trash over a fresh tree of runs: on the local disk or in the bucket; with the local
    copy of the tree (what was written)."""
    local = tmp_path / "team"
    write_tree(local)
    if request.param == "local":
        return RunTrash(LOCAL_STORAGE, str(local), str(local)), local
    endpoint = request.getfixturevalue("endpoint")
    url = f"s3://{BUCKET}/{request.node.name.replace('[', '-').rstrip(']')}"
    storage, root = open_storage(url, s3_options(endpoint))
    assert isinstance(storage, FsspecStorage)
    storage.fs.put(f"{local}/", f"{root}/", recursive=True)
    return RunTrash(storage, root, url), local


def files(trash: RunTrash, below: str = "") -> set[str]:
    """The files below the base directory (or ``below`` it), relative to that."""
    fs = trash.storage.fs if isinstance(trash.storage, FsspecStorage) else fsspec.filesystem("file")
    root = f"{trash.root}/{below}".rstrip("/")
    return {path[len(root) + 1 :] for path in fs.find(root)}


def runs(trash: RunTrash) -> set[str]:
    return set(Walker(Path(trash.root), trash.storage).walk().runs)


def test_delete_moves_the_runs_own_files_and_restore_brings_them_back(
    place: tuple[RunTrash, Path],
) -> None:
    trash, _ = place
    before = files(trash)
    own = {name for name in before if name.startswith("a/") and name.count("/") == 1} | {
        "a/plugin/deep/asset.bin"
    }
    assert runs(trash) == {"./a", "./a/b", "./a/group/one", "./c"}

    entry_id, trash_location = trash.delete("./a", time.time())

    assert trash_location == f"{trash.location}/{TRASH_DIR}/{entry_id}/a"
    assert files(trash, f"{TRASH_DIR}/{entry_id}") == own
    left = {name for name in files(trash) if not name.startswith(TRASH_DIR)}
    assert left == before - own  # the child runs, the folder of runs and its notes stay
    assert runs(trash) == {"./a/b", "./a/group/one", "./c"}  # and nothing in the trash
    assert list(trash.folders()) == [entry_id]

    trash.restore(entry_id, "./a")

    assert files(trash) == before
    assert runs(trash) == {"./a", "./a/b", "./a/group/one", "./c"}
    assert trash.folders() == {}


def test_the_base_directory_is_refused(place: tuple[RunTrash, Path]) -> None:
    trash, _ = place
    before = files(trash)
    with pytest.raises(RunNotTrashable, match=r"run='\./' is the base directory itself") as err:
        trash.delete("./", time.time())
    assert err.value.status == 422
    assert files(trash) == before


def test_restore_is_refused_while_the_run_exists_again(
    place: tuple[RunTrash, Path], tmp_path: Path
) -> None:
    trash, local = place
    entry_id, _ = trash.delete("./c", time.time())
    again = files(trash, f"{TRASH_DIR}/{entry_id}/c")
    first = sorted(again)[0]
    if isinstance(trash.storage, FsspecStorage):
        trash.storage.put(f"{trash.root}/c/{first}", b"a new run of the same name")
    else:
        (local / "c").mkdir()  # the deletion removed the folder it emptied
        (local / "c" / first).write_bytes(b"a new run of the same name")

    with pytest.raises(RunConflict, match=r"run='\./c' cannot be restored") as err:
        trash.restore(entry_id, "./c")

    assert err.value.status == 409
    assert files(trash, f"{TRASH_DIR}/{entry_id}/c") == again  # kept in the trash, whole
    assert files(trash, "c") == {first}


def test_purge_deletes_the_files_and_may_run_twice(place: tuple[RunTrash, Path]) -> None:
    trash, _ = place
    entry_id, _ = trash.delete("./a/b", time.time())
    assert files(trash, f"{TRASH_DIR}/{entry_id}")

    trash.purge(entry_id)
    trash.purge(entry_id)  # another replica purging the same entry

    assert not any(name.startswith(TRASH_DIR) for name in files(trash))
    assert trash.folders() == {}
    with pytest.raises(NotFound, match="are gone from the trash"):
        trash.restore(entry_id, "./a/b")


def test_the_trash_is_never_discovered(place: tuple[RunTrash, Path]) -> None:
    trash, _ = place
    trash.delete("./a", time.time())
    trash.delete("./c", time.time())
    assert runs(trash) == {"./a/b", "./a/group/one"}
    parent = Path(trash.root).parent  # served from above, its trash is left out too
    found = Walker(parent, trash.storage).walk().runs
    assert found and not any(TRASH_DIR in run for run in found)
    assert not outside_trash(None, f"{trash.root}/{TRASH_DIR}/x/a/events.out.tfevents.1")
    assert outside_trash(None, f"{trash.root}/a/events.out.tfevents.1")


def test_a_failure_half_way_on_the_local_disk_leaves_the_run_whole() -> None:
    """As an unprivileged user (root passes every permission), a run whose plugin folder
    cannot be written: its event files move first, then the plugin's file cannot; the event
    files are put back and the error says what failed."""
    with shared_dir("sumlens-trash-") as owned:
        base = owned / "team"
        write_tree(base)
        before = sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())
        code = (
            "import json, sys, time\n"
            "from sumlens.board.data.trash import RunTrash, TrashFailed\n"
            "from sumlens.io.storage import LOCAL_STORAGE\n"
            "trash = RunTrash(LOCAL_STORAGE, sys.argv[1], sys.argv[1])\n"
            "import os; os.chmod(sys.argv[1] + '/a/plugin/deep', 0o555)\n"
            "try:\n"
            "    trash.delete('./a', time.time())\n"
            "except TrashFailed as err:\n"
            "    print(json.dumps({'status': err.status, 'message': str(err)}))\n"
        )
        result = run_unprivileged(code, [str(base)], owned)
        assert result.returncode == 0, result.stderr
        said = json.loads(result.stdout)
        after = sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())

    assert after == before  # every file where it was, none in the trash
    assert said["status"] == 500
    assert "asset.bin" in said["message"] and "nothing was moved" in said["message"]


def test_a_failure_half_way_on_object_storage_leaves_the_run_whole(
    endpoint: str, tmp_path: Path
) -> None:
    """A copy that fails after others landed (a fault injected into the store's client):
    the copies made are deleted, the originals were never touched."""
    local = tmp_path / "team"
    write_tree(local)
    storage, root = open_storage(f"s3://{BUCKET}/half-way", s3_options(endpoint))
    assert isinstance(storage, FsspecStorage)
    storage.fs.put(f"{local}/", f"{root}/", recursive=True)
    trash = RunTrash(storage, root, f"s3://{BUCKET}/half-way")
    before = files(trash)
    copy = storage.fs.cp_file

    def failing_copy(source: str, target: str, **kwargs: object) -> None:
        if source.endswith("asset.bin"):
            raise PermissionError(13, "Access Denied", source)
        copy(source, target, **kwargs)

    storage.fs.cp_file = failing_copy  # the last of the run's files to be copied
    with pytest.raises(Exception, match="the originals are whole, nothing was moved") as err:
        trash.delete("./a", time.time())

    assert getattr(err.value, "status", None) == 500
    assert files(trash) == before
    assert runs(trash) == {"./a", "./a/b", "./a/group/one", "./c"}


def test_entry_ids_and_run_ids() -> None:
    at = 1_700_000_000.0
    entry_id = new_entry_id(at)
    assert entry_id.startswith("20231114T221320Z-") and len(entry_id) == 25
    assert entry_time(entry_id) == at
    assert entry_time("not-an-entry") is None
    assert new_entry_id(at) != entry_id
    assert run_path("./") == "" and run_path("./a/b") == "a/b"
    for bad in ("a/b", "./a/../b", "./a//b", "../a"):
        with pytest.raises(QueryError, match=r"run=.* is not a run id"):
            run_path(bad)
    trash = RunTrash(LOCAL_STORAGE, "/nowhere", "/nowhere")
    with pytest.raises(QueryError, match=r"id='\.\./x' is not a trash entry id"):
        trash.purge("../x")
    assert trash.run_location("./a/b") == "/nowhere/a/b"
    assert trash.run_location("./") == "/nowhere"
    assert os.fspath(trash.trash_location(entry_id, "./a")) == f"/nowhere/{TRASH_DIR}/{entry_id}/a"
