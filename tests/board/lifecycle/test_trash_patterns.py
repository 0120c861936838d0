"""Run names that are glob patterns to fsspec (``[ ] * ?``), on the local disk and on a real
S3 API (moto's server on 127.0.0.1): deleting, restoring and purging run ``./exp[1]`` touch
exactly its own files, never those of ``./exp1`` beside it (which the pattern ``exp[1]``
matches), and so for ``./lr*`` beside ``./lr0`` and ``./a?b`` beside ``./axb``. A base
directory whose own name is a pattern (``team[1]``, beside ``team1``) works the same."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.s3 import bucket_server, s3_options

from sumlens import SummaryRecord
from sumlens.board.data.discover import TRASH_DIR, Walker
from sumlens.board.data.trash import RunTrash, run_trash
from sumlens.io.remote import FsspecStorage, open_storage

BUCKET = "patterns"
RUNS = ("exp[1]", "exp1", "lr*", "lr0", "a?b", "axb")
"""Each pattern run, then a run its pattern matches."""
PATTERNS = ("exp[1]", "lr*", "a?b")
BASES = ("team", "team[1]")
SIBLING = "team1"
"""A base directory beside the served one, holding the same runs (``team[1]`` matches it)."""


def write_base(base: Path) -> None:
    """The runs of :data:`RUNS` below ``base``: each an event file and a note naming it."""
    for run in RUNS:
        with SummaryRecord(base / run) as record:
            record.add_value("scalar", "loss", 0.5)
            record.record(1)
        (base / run / "note.txt").write_text(f"{base.name}/{run}")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with bucket_server(BUCKET) as url:
        yield url


class Area:
    """The served base directory and its sibling, locally or in the bucket."""

    def __init__(self, trash: RunTrash, parent: str) -> None:
        self.trash = trash
        self.parent = parent

    def contents(self) -> dict[str, bytes]:
        """Every file below the parent of both base directories, with its bytes."""
        storage = self.trash.storage
        if isinstance(storage, FsspecStorage):
            storage.fs.invalidate_cache()
            found = storage.fs.find(self.parent)
            return {path[len(self.parent) + 1 :]: storage.fs.cat_file(path) for path in found}
        files = {}
        for directory, _, names in os.walk(self.parent):
            for name in names:
                path = Path(directory, name)
                files[str(path.relative_to(self.parent))] = path.read_bytes()
        return files


@pytest.fixture(params=[(where, base) for where in ("local", "s3") for base in BASES],
                ids=lambda param: "-".join(param))  # fmt: skip
def area(request: pytest.FixtureRequest, tmp_path: Path) -> Area:
    where, base = request.param
    local = tmp_path / "area"
    for name in (base, SIBLING):
        write_base(local / name)
    if where == "local":
        return Area(run_trash(None, local / base, {}), str(local))
    options = s3_options(request.getfixturevalue("endpoint"))
    url = f"s3://{BUCKET}/{request.node.name.replace('[', '-').replace(']', '')}"
    storage, parent = open_storage(url, options)
    assert isinstance(storage, FsspecStorage)
    for directory, _, names in os.walk(local):
        for name in names:
            path = Path(directory, name)
            storage.put(f"{parent}/{path.relative_to(local)}", path.read_bytes())
    trash = run_trash(None, f"{url}/{base}", options)  # as a server opens its base directory
    assert trash.root == f"{parent}/{base}"
    return Area(trash, parent)


def _base(area: Area) -> str:
    return area.trash.root[len(area.parent) + 1 :]


def _moved(files: dict[str, bytes], source: str, target: str) -> dict[str, bytes]:
    """``files`` with those below ``source`` moved below ``target``."""
    prefix = source + "/"
    return {
        (target + name[len(source) :] if name.startswith(prefix) else name): data
        for name, data in files.items()
    }


def test_each_pattern_run_is_deleted_restored_and_purged_alone(area: Area) -> None:
    trash, base = area.trash, _base(area)
    before = area.contents()
    assert {f"{base}/{run}/note.txt" for run in RUNS} <= before.keys()
    assert set(Walker(Path(trash.root), trash.storage).walk().runs) == {f"./{r}" for r in RUNS}
    for run in PATTERNS:
        entry_id, trash_location = trash.delete(f"./{run}", time.time())

        assert trash_location == f"{trash.location}/{TRASH_DIR}/{entry_id}/{run}"
        in_trash = f"{base}/{TRASH_DIR}/{entry_id}/{run}"
        assert area.contents() == _moved(before, f"{base}/{run}", in_trash)

        trash.restore(entry_id, f"./{run}")

        assert area.contents() == before

        entry_id, _ = trash.delete(f"./{run}", time.time())
        trash.purge(entry_id)

        gone = f"{base}/{run}/"
        assert area.contents() == {k: v for k, v in before.items() if not k.startswith(gone)}
        assert trash.folders() == {}
        before = area.contents()
    left = {f"./{run}" for run in RUNS if run not in PATTERNS}
    assert set(Walker(Path(trash.root), trash.storage).walk().runs) == left
