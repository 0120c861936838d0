"""The shared state's schema, as an ordered list of migrations.

Each migration is applied once, in a transaction of its own, and recorded in the
``schema_version`` table. The caller hands :func:`migrate` a way to run a write
transaction that holds the database's migration lock (SQLite: ``BEGIN IMMEDIATE``;
PostgreSQL: an advisory lock), and each transaction reads the version again under the
lock: when two replicas start at once, one applies a migration and the other waits, then
sees it applied and goes on.

Migration 1 is the layout sumlens kept annotations in before the shared state
(``run_annotations`` and ``group_colours``, created if missing), so a workspace's
``annotations.sqlite`` of that time opens unchanged; files of the first layout, keyed by
base directory and run id, have their rows moved to locations then
(:func:`~sumlens.board.state.first_layout.move_named_rows`). Later migrations add the
change counter, the audit log, saved views, run states and the trash.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from sumlens.board.state.backend import Dialect, Tx
from sumlens.board.state.first_layout import move_named_rows


@dataclass(frozen=True)
class Migration:
    """Schema version ``version``: its statements (``{key}`` and ``{serial}`` are the
    dialect's types), then ``step`` (data moved by code), if any."""

    version: int
    statements: tuple[str, ...]
    step: Callable[[Tx, Dialect], None] | None = None


MIGRATIONS = (
    Migration(
        1,
        (
            "CREATE TABLE IF NOT EXISTS run_annotations (location {key} PRIMARY KEY, "
            "tags TEXT NOT NULL, note TEXT NOT NULL, colour TEXT)",
            "CREATE TABLE IF NOT EXISTS group_colours (base_dir TEXT NOT NULL, "
            "name TEXT NOT NULL, colour TEXT NOT NULL, PRIMARY KEY (base_dir, name))",
        ),
        move_named_rows,
    ),
    Migration(
        2,
        (
            "CREATE TABLE changes (id INTEGER PRIMARY KEY CHECK (id = 1), counter BIGINT NOT NULL)",
            "INSERT INTO changes (id, counter) VALUES (1, 0)",
        ),
    ),
    Migration(
        3,
        (
            "CREATE TABLE audit (id {serial}, at DOUBLE PRECISION NOT NULL, who TEXT, "
            "role TEXT, action TEXT NOT NULL, target TEXT NOT NULL, detail TEXT NOT NULL, "
            "replica TEXT NOT NULL)",
        ),
    ),
    Migration(
        4,
        (
            "CREATE TABLE saved_views (owner TEXT NOT NULL, name TEXT NOT NULL, "
            "hash TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, PRIMARY KEY (owner, name))",
        ),
    ),
    Migration(
        5,
        (
            "CREATE TABLE run_states (location {key} PRIMARY KEY, state TEXT NOT NULL, "
            "at DOUBLE PRECISION NOT NULL)",
            "CREATE TABLE trash (id TEXT PRIMARY KEY, location {key} NOT NULL, "
            "trash_location TEXT NOT NULL, run_id TEXT NOT NULL, "
            "at DOUBLE PRECISION NOT NULL, by_user TEXT)",
        ),
    ),
)
"""Every migration, in order; a new one goes at the end, and none is ever edited."""

LATEST = MIGRATIONS[-1].version

_VERSIONS = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
    "applied_at DOUBLE PRECISION NOT NULL)"
)


def migrate(dialect: Dialect, locked: Callable[[Callable[[Tx], Any]], Any]) -> int:
    """Apply the migrations the database lacks, each in a transaction ``locked`` runs
    holding the migration lock; the schema's version after."""
    for migration in MIGRATIONS:
        locked(partial(_apply, migration=migration, dialect=dialect))
    return LATEST


def _apply(tx: Tx, migration: Migration, dialect: Dialect) -> None:
    """Apply ``migration`` unless the database has it already."""
    tx.execute(_VERSIONS)
    row = tx.one("SELECT COALESCE(MAX(version), 0) FROM schema_version")
    if row is not None and row[0] >= migration.version:
        return
    for statement in migration.statements:
        tx.execute(statement.format(key=dialect.key, serial=dialect.serial))
    if migration.step is not None:
        migration.step(tx, dialect)
    tx.execute(
        "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
        (migration.version, time.time()),
    )
