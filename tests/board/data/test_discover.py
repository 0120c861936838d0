"""Walking a base directory again: an unchanged tree is not listed again, and every change
(a new file in an old directory, a new directory, a removed run, a grown file, a link that
leads somewhere new) is still seen, as a fresh walk sees it."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from helpers.storage import RecordingStorage
from helpers.unprivileged import run_unprivileged, shared_dir

from sumlens.board.data.discover import Discovery, Walker, discover

EMPTY_DIRS = 30


def _event_file(directory: Path, seconds: int = 1, data: bytes = b"x" * 10) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"events.out.tfevents.{seconds}.host"
    path.write_bytes(data)
    return path


def _settle(base: Path, clock: Path) -> None:
    """Wait until the file system's clock has moved past every stamp under ``base``, so
    that a change made now gives a directory a new stamp (its clock ticks coarser than
    its nanoseconds)."""
    newest = max(max(os.stat(d).st_mtime_ns, os.stat(d).st_ctime_ns) for d, _, _ in os.walk(base))
    deadline = time.monotonic() + 10
    while True:
        clock.write_bytes(b"tick")
        if os.stat(clock).st_mtime_ns > newest:
            return
        assert time.monotonic() < deadline, "the file system clock does not move"
        time.sleep(0.001)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Two runs (one two levels down) beside empty directories."""
    base = tmp_path / "base"
    _event_file(base / "a")
    _event_file(base / "b" / "c", data=b"y" * 20)
    for i in range(EMPTY_DIRS):
        (base / f"empty{i:02d}").mkdir()
    _settle(base, tmp_path / "clock")
    return base


def _walker(base: Path) -> tuple[Walker, RecordingStorage]:
    storage = RecordingStorage()
    return Walker(base, storage, settle_s=0), storage


def _same_as_a_fresh_walk(found: Discovery, base: Path) -> None:
    assert found == discover(base)


def _walk_twice(base: Path) -> tuple[Walker, RecordingStorage]:
    """A walker that has walked ``base`` twice: the second time listing nothing."""
    walker, storage = _walker(base)
    _same_as_a_fresh_walk(walker.walk(), base)
    assert len(storage.listed()) == EMPTY_DIRS + 4  # base, a, b, b/c and the empty ones
    storage.clear()
    _same_as_a_fresh_walk(walker.walk(), base)
    assert storage.listed() == []
    return walker, storage


def test_an_unchanged_tree_is_not_listed_again(tree: Path) -> None:
    walker, storage = _walk_twice(tree)
    found = walker.walk()
    assert storage.listed() == []
    assert sorted(found.runs) == ["./a", "./b/c"]
    assert [f.size for f in found.runs["./b/c"].files] == [20]


def test_a_new_file_in_an_old_directory_is_seen(tree: Path) -> None:
    walker, storage = _walk_twice(tree)
    _event_file(tree / "a", seconds=2)
    found = walker.walk()
    assert storage.listed() == [str(tree / "a")]
    assert [f.name for f in found.runs["./a"].files] == [
        "events.out.tfevents.1.host",
        "events.out.tfevents.2.host",
    ]
    _same_as_a_fresh_walk(found, tree)


def test_a_new_run_in_an_old_empty_directory_is_seen(tree: Path) -> None:
    walker, storage = _walk_twice(tree)
    _event_file(tree / "empty07" / "new")
    found = walker.walk()
    assert storage.listed() == [str(tree / "empty07"), str(tree / "empty07" / "new")]
    assert "./empty07/new" in found.runs
    _same_as_a_fresh_walk(found, tree)


def test_a_new_sub_directory_of_the_base_is_seen(tree: Path) -> None:
    walker, storage = _walk_twice(tree)
    _event_file(tree / "zz")
    found = walker.walk()
    assert storage.listed() == [str(tree), str(tree / "zz")]
    assert "./zz" in found.runs
    _same_as_a_fresh_walk(found, tree)


def test_a_removed_run_is_gone(tree: Path) -> None:
    walker, storage = _walk_twice(tree)
    shutil.rmtree(tree / "b" / "c")
    found = walker.walk()
    assert storage.listed() == [str(tree / "b")]
    assert sorted(found.runs) == ["./a"]
    _same_as_a_fresh_walk(found, tree)


def test_a_grown_file_is_seen_without_listing(tree: Path) -> None:
    walker, storage = _walk_twice(tree)
    with open(tree / "b" / "c" / "events.out.tfevents.1.host", "ab") as handle:
        handle.write(b"more")
    found = walker.walk()
    assert storage.listed() == []
    assert [f.size for f in found.runs["./b/c"].files] == [24]
    _same_as_a_fresh_walk(found, tree)


def test_a_replaced_file_is_seen(tree: Path) -> None:
    walker, _ = _walk_twice(tree)
    path = tree / "a" / "events.out.tfevents.1.host"
    path.unlink()
    path.mkdir()  # now a directory of the same name: no run there any more
    found = walker.walk()
    assert "./a" not in found.runs
    _same_as_a_fresh_walk(found, tree)


def test_a_directory_changed_just_before_its_listing_is_listed_again(tree: Path) -> None:
    storage = RecordingStorage()
    walker = Walker(tree, storage, settle_s=3600)  # every change counts as recent
    walker.walk()
    storage.clear()
    walker.walk()
    assert len(storage.listed()) == EMPTY_DIRS + 4


def test_a_folder_of_links_is_listed_each_walk_and_follows_its_links(tmp_path: Path) -> None:
    base = tmp_path / "base"
    links = base / "links"
    links.mkdir(parents=True)
    run = tmp_path / "runs" / "one"
    (links / "one").symlink_to(run)  # leads nowhere yet
    _settle(base, tmp_path / "clock")
    walker, storage = _walker(base)
    _same_as_a_fresh_walk(walker.walk(), base)
    assert walker.walk().runs == {}
    assert str(links) in storage.listed()
    _event_file(run)  # the link's directory did not change, but where it leads did
    found = walker.walk()
    assert sorted(found.runs) == ["./links/one"]
    _same_as_a_fresh_walk(found, base)


def test_a_link_loop_and_a_second_name_are_walked_once(tmp_path: Path) -> None:
    """A link back up ends the walk there; of two names of a run the shallowest counts."""
    base = tmp_path / "base"
    _event_file(base / "a" / "run")
    (base / "a" / "back").symlink_to(base)
    (base / "z").symlink_to(base / "a" / "run")
    _settle(base, tmp_path / "clock")
    walker, _ = _walker(base)
    for _ in range(3):
        found = walker.walk()
        assert sorted(found.runs) == ["./z"]
        _same_as_a_fresh_walk(found, base)


def test_bounds_hold_on_every_walk(tree: Path) -> None:
    storage = RecordingStorage()
    walker = Walker(tree, storage, max_runs=1, max_depth=1, settle_s=0)
    for _ in range(3):
        found = walker.walk()
        assert found.truncated
        assert found == discover(tree, max_runs=1, max_depth=1)
        assert sorted(found.runs) == ["./a"]


def test_a_moved_run_is_found_under_its_new_name(tree: Path) -> None:
    walker, storage = _walk_twice(tree)
    (tree / "b").rename(tree / "moved")
    (tree / "b").write_text("a file now")
    found = walker.walk()
    assert sorted(found.runs) == ["./a", "./moved/c"]
    assert storage.listed() == [str(tree), str(tree / "moved"), str(tree / "moved" / "c")]
    _same_as_a_fresh_walk(found, tree)


def test_a_missing_base_directory_is_reported_on_every_walk(tmp_path: Path) -> None:
    walker, _ = _walker(tmp_path / "missing")
    for _ in range(2):
        assert walker.walk().unlisted == {"./": "No such file or directory"}


LOCKED = r"""
import json, sys
from pathlib import Path
from sumlens.board.data.discover import Walker

base = Path(sys.argv[1])
walker = Walker(base, settle_s=0)
seen = []
for step in ("before", "again", "locked", "locked again", "unlocked"):
    if step == "locked":
        (base / "b").chmod(0)
    if step == "unlocked":
        (base / "b").chmod(0o755)
    found = walker.walk()
    seen.append([step, sorted(found.runs), found.unlisted])
print(json.dumps(seen))
"""


def test_a_directory_made_unlistable_is_reported_and_mends() -> None:
    """Its permissions change its stamp: listed again, it is said to be unlistable, and
    its run is back once it can be listed again."""
    with shared_dir("sumlens-discover-") as owned:
        base = owned / "base"
        _event_file(base / "a")
        _event_file(base / "b" / "c")
        _settle(base, owned / "clock")
        done = run_unprivileged(LOCKED, [str(base)], owned)
    assert done.returncode == 0, done.stderr[-3000:]
    both, denied = ["./a", "./b/c"], {"./b": "Permission denied"}
    assert json.loads(done.stdout) == [
        ["before", both, {}],
        ["again", both, {}],
        ["locked", ["./a"], denied],
        ["locked again", ["./a"], denied],
        ["unlocked", both, {}],
    ]


def test_settle_s_must_not_be_negative(tree: Path) -> None:
    with pytest.raises(ValueError, match="settle_s=-1"):
        Walker(tree, settle_s=-1)
