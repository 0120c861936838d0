"""The shared state in one SQLite file: the embedded default, ``<workspace>/annotations.sqlite``.

The file is made at the first write: a server nobody annotates leaves nothing behind.
Until then reads are answered by an empty in-memory database of the same schema, so the
fronts never ask whether the file exists; once another process has made it, the next read
opens it. One connection serves every thread in turn (a lock around it); write
transactions begin ``IMMEDIATE``, so writers of several processes take turns and a
migration is applied by one. Other processes' changes are found by reading the change
counter every :attr:`SQLiteBackend.poll_interval` seconds (a read of one row).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from sumlens.board.state.backend import Backend, Dialect, StateUnavailable, Tx
from sumlens.board.state.migrations import migrate

T = TypeVar("T")

SQLITE = Dialect(name="sqlite", key="TEXT", serial="INTEGER PRIMARY KEY AUTOINCREMENT")
BUSY_TIMEOUT = 30.0
"""Seconds a statement waits for another process's transaction before giving up."""


class _SQLiteTx:
    """A transaction's statements on a connection (:class:`~sumlens.board.state.backend.Tx`)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._db.execute(sql, params).rowcount

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._db.executemany(sql, rows)

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.execute(sql, params).fetchall()

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._db.execute(sql, params).fetchone()
        return row


def _transaction(db: sqlite3.Connection, begin: str, work: Callable[[Tx], T]) -> T:
    """``work`` in one transaction begun with ``begin``: committed, or rolled back when
    it raises."""
    db.execute(begin)
    try:
        result = work(_SQLiteTx(db))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return result


class SQLiteBackend(Backend):
    """The state in the SQLite file at ``path``."""

    dialect = SQLITE
    poll_interval = 0.25

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._blank: sqlite3.Connection | None = None

    def read(self, work: Callable[[Tx], T]) -> T:
        with self._lock, _answered(self.describe()):
            return _transaction(self._connection(make=False), "BEGIN", work)

    def write(self, work: Callable[[Tx], T]) -> T:
        with self._lock, _answered(self.describe()):
            return _transaction(self._connection(make=True), "BEGIN IMMEDIATE", work)

    def notify(self, tx: Tx, counter: int) -> None:
        """Nothing to send: the other processes read the counter."""

    def wait_for_notice(self, timeout: float, stop: threading.Event) -> bool:
        stop.wait(timeout)
        return False

    def describe(self) -> str:
        return f"sqlite {self.path}"

    def close(self) -> None:
        with self._lock:
            for db in (self._db, self._blank):
                if db is not None:
                    db.close()
            self._db = self._blank = None

    def _connection(self, make: bool) -> sqlite3.Connection:
        """The file's connection (opened, and its schema brought up to date, at the first
        use; the file made when ``make``), or the empty stand-in while there is no file."""
        if self._db is None:
            if not make and not self.path.is_file():
                if self._blank is None:
                    self._blank = self._open(":memory:")
                return self._blank
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = self._open(self.path)
        return self._db

    @staticmethod
    def _open(where: Path | str) -> sqlite3.Connection:
        """A connection to ``where`` in autocommit mode (transactions begun by hand), its
        migrations applied."""
        db = sqlite3.connect(
            where, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False
        )
        try:
            migrate(SQLITE, lambda work: _transaction(db, "BEGIN IMMEDIATE", work))
        except BaseException:
            db.close()
            raise
        return db


@contextlib.contextmanager
def _answered(where: str) -> Iterator[None]:
    """SQLite's operational errors (locked too long, disk I/O, a file it cannot open) as
    :class:`StateUnavailable` naming the database ``where``."""
    try:
        yield
    except sqlite3.OperationalError as err:
        raise StateUnavailable(f"the state database ({where}) did not answer: {err}") from err
