"""Several replicas over one state (``board/state/changes.py``), on each database: a write
on one is seen by the other within a second once it watches, and its version moves; a
replica opened late sees everything; migrations run once when replicas open together."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import wait_until

from sumlens.board.state import FILE_NAME, SharedState, open_state
from sumlens.board.state.annotation_checks import Annotation
from sumlens.board.state.migrations import LATEST

BASE = "/logs"
SEEN_WITHIN = 1.0
"""Seconds another replica's write may take to show (the issue's bound)."""


@pytest.fixture
def pair(tmp_path: Path, state_url: str | None) -> Iterator[tuple[SharedState, SharedState]]:
    """Two replicas of one state (one workspace file, or one database), both watching."""
    first = open_state(tmp_path, BASE, state_url, replica="a")
    second = open_state(tmp_path, BASE, state_url, replica="b")
    first.start()
    second.start()
    try:
        yield first, second
    finally:
        first.close()
        second.close()


def test_a_write_on_one_replica_shows_on_the_other(
    pair: tuple[SharedState, SharedState],
) -> None:
    first, second = pair
    assert second.annotations.all() == {}  # loaded before the write: cached
    version = second.version
    first.annotations.put("./r1", Annotation(("seen",), "from a", "#112233"))
    wait_until(lambda: "./r1" in second.annotations.all(), timeout=SEEN_WITHIN, interval=0.02)
    assert second.annotations.get("./r1") == Annotation(("seen",), "from a", "#112233")
    assert second.version > version
    assert second.version == first.version

    first.annotations.put_group_colour("g", "#abcdef")
    wait_until(lambda: second.annotations.group_colour("g"), timeout=SEEN_WITHIN, interval=0.02)
    first.runs.set("./r1", "hidden")
    wait_until(lambda: second.runs.states(), timeout=SEEN_WITHIN, interval=0.02)
    assert second.runs.states() == {"./r1": "hidden"}


def test_writes_of_two_replicas_join(pair: tuple[SharedState, SharedState]) -> None:
    """Each replica's import merges into what the other stored (writers take turns)."""
    first, second = pair
    first.annotations.all(), second.annotations.all()  # both cache the empty state
    threads = [
        threading.Thread(
            target=state.annotations.merge, args=({"./r": Annotation((tag,))},), daemon=True
        )
        for state, tag in ((first, "from-a"), (second, "from-b"))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    wait_until(
        lambda: {len(state.annotations.get("./r").tags) for state in pair} == {2},
        timeout=SEEN_WITHIN,
        interval=0.02,
    )
    assert set(first.annotations.get("./r").tags) == {"from-a", "from-b"}


def test_a_replica_opened_late_sees_everything(tmp_path: Path, state_url: str | None) -> None:
    with open_state(tmp_path, BASE, state_url) as early:
        early.annotations.put("./r1", Annotation(("early",)))
        early.runs.set("./r2", "archived")
        early.views.put("ann", "v", "#/scalars")
    with open_state(tmp_path, BASE, state_url) as late:
        assert late.annotations.all() == {"./r1": Annotation(("early",))}
        assert late.runs.states() == {"./r2": "archived"}
        assert late.views.list("ann") == {"v": "#/scalars"}
        assert late.version >= 2


def test_migrations_run_once_when_replicas_open_together(
    tmp_path: Path, state_url: str | None
) -> None:
    """Eight replicas make the schema at once: one applies each migration, the others wait
    and see it; every one then reads and writes."""
    states = [open_state(tmp_path, BASE, state_url, replica=f"r{i}") for i in range(8)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(states))

    def write(state: SharedState, i: int) -> None:
        try:
            start.wait(timeout=30)
            state.annotations.put(f"./r{i}", Annotation((f"t{i}",)))
        except BaseException as err:  # handed to the test thread
            errors.append(err)

    threads = [
        threading.Thread(target=write, args=(state, i), daemon=True)
        for i, state in enumerate(states)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        with open_state(tmp_path, BASE, state_url) as late:
            assert len(late.annotations.all()) == len(states)
        assert _versions(tmp_path, state_url) == list(range(1, LATEST + 1))
    finally:
        for state in states:
            state.close()


def _versions(workspace: Path, state_url: str | None) -> list[int]:
    """The schema versions recorded, asked of the database directly."""
    query = "SELECT version FROM schema_version ORDER BY version"
    if state_url is None:
        with sqlite3.connect(workspace / FILE_NAME) as db:
            return [version for (version,) in db.execute(query)]
    import psycopg

    with psycopg.connect(state_url) as db:
        return [version for (version,) in db.execute(query)]


def test_the_watcher_stops_with_close(tmp_path: Path, state_url: str | None) -> None:
    before = set(threading.enumerate())  # other tests' states may be watching too
    state = open_state(tmp_path, BASE, state_url)
    state.start()
    state.start()  # once is enough: a second start changes nothing
    watching = [t for t in set(threading.enumerate()) - before if t.name == "sumlens-state"]
    assert len(watching) == 1
    state.close()
    assert not any(thread.is_alive() for thread in watching)


def test_an_annotation_file_of_today_opens_unchanged(tmp_path: Path) -> None:
    """A workspace file sumlens wrote before the shared state (its two tables, no
    ``schema_version``) keeps its rows and gains the later tables."""
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        db.execute(
            "CREATE TABLE run_annotations (location TEXT PRIMARY KEY, tags TEXT NOT NULL, "
            "note TEXT NOT NULL, colour TEXT)"
        )
        db.execute(
            "CREATE TABLE group_colours (base_dir TEXT NOT NULL, name TEXT NOT NULL, "
            "colour TEXT NOT NULL, PRIMARY KEY (base_dir, name))"
        )
        db.execute("INSERT INTO run_annotations VALUES ('/logs/r1', '[\"old\"]', 'kept', NULL)")
        db.execute("INSERT INTO group_colours VALUES ('/logs', 'g', '#010203')")
    with open_state(tmp_path, BASE) as state:
        assert state.annotations.all() == {"./r1": Annotation(("old",), "kept")}
        assert state.annotations.group_colours() == {"g": "#010203"}
        state.views.put(None, "mine", "#/")
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        (version,) = db.execute("SELECT MAX(version) FROM schema_version").fetchone()
    assert {"changes", "audit", "saved_views", "run_states", "trash"} <= tables
    assert version == LATEST
