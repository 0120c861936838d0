"""Run states (hidden, archived) and the trash, shared by every replica.

A run's state is keyed by its location, as its annotation is
(:func:`~sumlens.board.state.locations.run_location`), so it follows the run whichever
directory above it is served. :meth:`RunStates.states` is answered from memory, loaded
again when the change counter moved (another replica wrote). A trash entry says where a
deleted run's files were moved (the lifecycle routes move them; this module keeps the
record); its run id is the run's under this base directory.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

from sumlens.board.errors import QueryError
from sumlens.board.state.annotation_checks import MAX_RUN_ID_CHARS, check_run_id
from sumlens.board.state.backend import Backend, Tx
from sumlens.board.state.changes import Changes, bump, read_counter
from sumlens.board.state.locations import below, normal, run_id_at, run_location

STATES = ("hidden", "archived")
"""The states a run may be set to (None: shown, as every run starts)."""
_ENTRY_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class _Absent(Exception):
    """The trash entry to remove is not there (the transaction is rolled back)."""


@dataclass(frozen=True, slots=True)
class TrashEntry:
    """A run moved to the trash: the entry's id, the run's id and location, where its files
    went, when (epoch seconds) and by whom (None: the local or an anonymous user)."""

    id: str
    run_id: str
    location: str
    trash_location: str
    at: float
    by: str | None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def check_state(state: Any) -> str | None:
    """``state`` when a run may be set to it: one of :data:`STATES`, or None (shown)."""
    if state is not None and state not in STATES:
        raise QueryError(
            f"state={state!r:.80} is not allowed: a run's state is "
            f"{' or '.join(map(repr, STATES))}, or null to show it again"
        )
    return state


def check_entry_id(entry_id: Any, where: str = "id") -> str:
    """``entry_id`` when it can name a trash entry (1 to 64 letters, digits, ``_``, ``-``)."""
    if not isinstance(entry_id, str) or not _ENTRY_ID.fullmatch(entry_id):
        raise QueryError(
            f"{where}={entry_id!r:.80} is not allowed: a trash entry's id is 1 to 64 letters, "
            "digits, '_' or '-'"
        )
    return entry_id


def _check_location(location: Any, where: str) -> str:
    """``location`` when it can be a run's path or URL (a non-empty string of sane length)."""
    if not isinstance(location, str) or not location or len(location) > 2 * MAX_RUN_ID_CHARS:
        raise QueryError(
            f"{where}={location!r:.80} is not allowed: a path or URL of at most "
            f"{2 * MAX_RUN_ID_CHARS:,} characters"
        )
    return location


class RunStates:
    """The states and trash entries of the runs of ``base_dir``, kept by ``backend``.

    Thread-safe; :meth:`states` is answered from memory."""

    def __init__(self, backend: Backend, changes: Changes, base_dir: str) -> None:
        self._backend = backend
        self._changes = changes
        self._base = normal(base_dir)
        self._lock = threading.Lock()
        self._states: dict[str, str] | None = None
        self._loaded_at = -1

    def states(self) -> dict[str, str]:
        """The state of every run that has one, by run id (sorted)."""
        with self._lock:
            if self._states is None or self._loaded_at != self._changes.counter:
                self._loaded_at, self._states = self._backend.read(self._load)
                self._changes.seen(self._loaded_at)
            return dict(self._states)

    def set(self, run_id: str, state: str | None) -> str | None:
        """Set run ``run_id``'s state (None: shown again); return it."""
        run_id, state = check_run_id(run_id), check_state(state)
        location = run_location(self._base, run_id)

        def store(tx: Tx) -> int:
            counter = bump(self._backend, tx)
            if state is None:
                tx.execute("DELETE FROM run_states WHERE location = ?", (location,))
            else:
                tx.execute(
                    "INSERT INTO run_states (location, state, at) VALUES (?, ?, ?) ON CONFLICT "
                    "(location) DO UPDATE SET state = excluded.state, at = excluded.at",
                    (location, state, time.time()),
                )
            return counter

        self._changed(self._backend.write(store))
        return state

    def trashed(self) -> list[TrashEntry]:
        """The trash entries of the runs of this base directory, oldest first: also those a
        replica serving a directory above or below this one made, whose files lie in that
        directory's trash (the lifecycle routes keep only the entries of this base
        directory's own trash)."""
        condition, params = below(self._base)
        rows = self._backend.read(
            lambda tx: tx.rows(
                "SELECT id, location, trash_location, at, by_user FROM trash "
                f"WHERE {condition} ORDER BY at, id",
                params,
            )
        )
        entries = []
        for entry_id, location, trash_location, at, by in rows:
            run_id = run_id_at(self._base, location)
            if run_id is not None:
                entries.append(TrashEntry(entry_id, run_id, location, trash_location, at, by))
        return entries

    def add_trash(self, entry: TrashEntry) -> None:
        """Record ``entry`` (its id new)."""
        check_entry_id(entry.id, "entry.id")
        check_run_id(entry.run_id, "entry.run_id")
        _check_location(entry.location, "entry.location")
        _check_location(entry.trash_location, "entry.trash_location")

        def store(tx: Tx) -> int:
            counter = bump(self._backend, tx)
            if tx.one("SELECT 1 FROM trash WHERE id = ?", (entry.id,)) is not None:
                raise QueryError(f"entry.id={entry.id!r} is not allowed: the trash holds it")
            tx.execute(
                "INSERT INTO trash (id, location, trash_location, run_id, at, by_user) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (entry.id, entry.location, entry.trash_location, entry.run_id,
                 float(entry.at), entry.by),
            )  # fmt: skip
            return counter

        self._changed(self._backend.write(store))

    def remove_trash(self, entry_id: str) -> bool:
        """Forget trash entry ``entry_id`` (restored or purged); whether it was there (of
        two replicas removing it at once, one is told True)."""
        check_entry_id(entry_id)

        def remove(tx: Tx) -> int:
            counter = bump(self._backend, tx)
            if not tx.execute("DELETE FROM trash WHERE id = ?", (entry_id,)):
                raise _Absent  # rolled back: the counter stays
            return counter

        try:
            self._changed(self._backend.write(remove))
        except _Absent:
            return False
        return True

    def _load(self, tx: Tx) -> tuple[int, dict[str, str]]:
        """The change counter, then the states of the base directory's runs, in ``tx``."""
        counter = read_counter(tx)
        condition, params = below(self._base)
        found = {}
        for location, state in tx.rows(
            f"SELECT location, state FROM run_states WHERE {condition}", params
        ):
            run_id = run_id_at(self._base, location)
            if run_id is not None:
                found[run_id] = state
        return counter, dict(sorted(found.items()))

    def _changed(self, counter: int) -> None:
        """Take the counter a write of this replica left."""
        self._changes.seen(counter)
        with self._lock:
            self._states = None
