"""Watching a local base directory: an idle tree is not walked, a change is seen soon,
and where watching cannot work the loader walks at every reload interval as before."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.board import wait_until, write_run

from sumlens.board.data.loader import Loader
from sumlens.board.data.watch import TreeWatch, mount_type, why_not_watched

INTERVAL = 0.05
IDLE_LOOKS = 20
"""Reload intervals an idle loader is watched for."""


@pytest.fixture
def base(tmp_path: Path) -> Path:
    path = tmp_path / "base"
    path.mkdir()
    return path


def _started(base: Path, workspace: Path, watch: bool = True) -> Loader:
    loader = Loader(base, workspace, reload_interval=INTERVAL, watch=watch)
    loader.start()
    return loader


def _idle_passes(loader: Loader) -> int:
    """Passes the loader makes over :data:`IDLE_LOOKS` reload intervals of an idle tree."""
    before = loader.passes
    loader.wait_for_pass(before + IDLE_LOOKS + 1, timeout=IDLE_LOOKS * INTERVAL)
    return loader.passes - before


def _watching(loader: Loader) -> bool:
    return wait_until(lambda: loader.status()["watching"], timeout=30)


def test_an_idle_watched_tree_is_not_walked_and_a_change_is_seen(
    base: Path, tmp_path: Path
) -> None:
    write_run(base / "a", range(1, 4))
    loader = _started(base, tmp_path / "ws")
    try:
        assert _watching(loader)
        assert loader.status()["polling_reason"] is None
        assert wait_until(lambda: {r["id"] for r in loader.runs()} == {"./a"})
        # the walk the watch's start asks for (it may be over already)
        loader.wait_for_pass(loader.passes + 1, timeout=10 * INTERVAL)
        assert _idle_passes(loader) <= 1

        write_run(base / "deep" / "b", range(1, 6))  # a new run, below a new directory
        assert wait_until(lambda: {r["id"] for r in loader.runs()} == {"./a", "./deep/b"})
        write_run(base / "a", range(4, 9))  # grows an existing file
        assert wait_until(lambda: _points(loader, "./a") == 8)
    finally:
        loader.stop()


def _points(loader: Loader, run: str) -> int:
    return next((r["points"] for r in loader.runs() if r["id"] == run), 0)


def test_without_watching_every_interval_walks(base: Path, tmp_path: Path) -> None:
    write_run(base / "a", range(1, 4))
    loader = _started(base, tmp_path / "ws", watch=False)
    try:
        assert loader.wait_for_pass(2)
        status = loader.status()
        assert status["watching"] is False and "--no-watch" in status["polling_reason"]
        assert _idle_passes(loader) > 1
    finally:
        loader.stop()


def test_a_tree_with_links_is_walked_at_every_interval(base: Path, tmp_path: Path) -> None:
    """What a link leads to lies outside the watch: its changes raise no event there."""
    outside = tmp_path / "outside"
    write_run(outside, range(1, 4))
    os.symlink(outside, base / "linked")
    loader = _started(base, tmp_path / "ws")
    try:
        assert _watching(loader)
        assert wait_until(lambda: _points(loader, "./linked") == 3)
        assert _idle_passes(loader) > 1
        write_run(outside, range(4, 6))
        assert wait_until(lambda: _points(loader, "./linked") == 5)
    finally:
        loader.stop()


def test_a_watch_walks_again_after_its_longest_pause(base: Path) -> None:
    watch = TreeWatch(base, full_walk_s=0.0)
    watch.start()
    try:
        assert wait_until(lambda: watch.watching, timeout=30)
        assert watch.due() and watch.due()  # every look is past a pause of 0 s
    finally:
        watch.stop()
    assert not watch.watching and watch.due()


def test_a_watch_told_off_never_starts(base: Path) -> None:
    watch = TreeWatch(base, off="watching is off (--no-watch)")
    watch.start()
    watch.start()
    assert not watch.watching and watch.reason == "watching is off (--no-watch)"
    assert watch.due() and watch.due()


def test_a_stopped_watch_asks_for_walks(base: Path) -> None:
    watch = TreeWatch(base)
    watch.start()
    assert wait_until(lambda: watch.watching, timeout=30)
    assert watch.due()  # the walk that follows the watch's start
    assert not watch.due()
    watch.stop()
    assert not watch.watching and watch.due() and watch.due()


MOUNTS = "\n".join(
    [
        r"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
        r"40 22 0:45 / /mnt/team\040runs rw,relatime shared:2 - nfs4 server:/runs rw",
        r"41 22 0:46 / /mnt/bucket rw - fuse.s3fs s3fs rw",
        r"42 40 0:47 / /mnt/team\040runs/local rw - tmpfs tmpfs rw",
        "a line that is not a mount",
    ]
)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/home/me/runs", "ext4"),
        ("/mnt/team runs", "nfs4"),
        ("/mnt/team runs/exp1", "nfs4"),
        ("/mnt/team runsx", "ext4"),
        ("/mnt/team runs/local/exp", "tmpfs"),
        ("/mnt/bucket/exp", "fuse.s3fs"),
    ],
)
def test_the_innermost_mount_names_the_file_system(path: str, kind: str) -> None:
    assert mount_type(path, MOUNTS) == kind


def test_a_local_tree_can_be_watched(base: Path) -> None:
    assert why_not_watched(base) is None
