"""The shared state of one dashboard replica, and :func:`open_state`, which opens it.

Without a URL the state is the SQLite file ``<workspace>/annotations.sqlite`` (a single
server's embedded default, the file sumlens kept annotations in before); with a
``postgresql://`` URL it is that database, which several replicas share. Either way the
same fronts run over it (:class:`SharedState`), and a change one replica writes is seen
by the others within a second once :meth:`SharedState.start` runs the watcher.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from sumlens.board.state.annotations import AnnotationStore
from sumlens.board.state.audit import AuditLog
from sumlens.board.state.backend import Backend
from sumlens.board.state.changes import Changes, Watcher
from sumlens.board.state.runs import RunStates
from sumlens.board.state.sqlite import SQLiteBackend
from sumlens.board.state.views import SavedViews

FILE_NAME = "annotations.sqlite"
"""The state's file in the workspace folder (SQLite)."""


class SharedState:
    """Annotations, the audit log, saved views and run states of ``base_dir``'s runs, kept
    by ``backend``; ``replica`` names this replica in the audit log."""

    def __init__(self, backend: Backend, base_dir: str, replica: str = "") -> None:
        self.replica = replica
        self._backend = backend
        self._changes = Changes()
        self._watcher = Watcher(backend, self._changes)
        self.annotations = AnnotationStore(backend, self._changes, base_dir)
        self.audit = AuditLog(backend)
        self.views = SavedViews(backend)
        self.runs = RunStates(backend, self._changes, base_dir)

    @property
    def version(self) -> int:
        """Moves on any change of what replicas keep in memory, by any replica."""
        return self._changes.counter

    def start(self) -> None:
        """Watch for other replicas' changes (a daemon thread, until :meth:`close`)."""
        self._watcher.start()

    def close(self) -> None:
        """Stop watching and close the database's connections (a later use opens them)."""
        self._watcher.stop()
        self._backend.close()

    def ready(self) -> bool:
        """Whether the database answers now."""
        return self._backend.ready()

    def describe(self) -> str:
        """``sqlite <path>`` or ``postgresql host:port/database`` (never a password)."""
        return self._backend.describe()

    def __enter__(self) -> SharedState:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        err: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def open_state(
    workspace: Path, base_dir: str, url: str | None = None, replica: str = ""
) -> SharedState:
    """The shared state of ``base_dir``'s runs: in ``workspace``'s SQLite file (``~``
    expanded) when ``url`` is None, else in the PostgreSQL database at ``url``
    (``postgresql://`` or ``postgres://``; psycopg is imported only then). Nothing is
    opened yet: the database is reached at the first use."""
    if url is None:
        backend: Backend = SQLiteBackend(Path(workspace).expanduser() / FILE_NAME)
    else:
        from sumlens.board.state.postgres import PostgresBackend

        backend = PostgresBackend(url)
    return SharedState(backend, base_dir, replica)
