"""The change counter: how each replica learns that another one changed the state.

The database holds one number (table ``changes``). Every write transaction of something a
replica keeps in memory (annotations, group colours, run states, the trash) begins by
bumping it (:func:`bump`), which also makes writers of all replicas take turns, and tells
the others (PostgreSQL: ``NOTIFY``, delivered at the commit). Each replica keeps the
highest value it saw in a :class:`Changes`; a front whose cache was loaded at another
value loads again at its next read. The :class:`Watcher` (a daemon thread) moves it when
another replica writes: at once on a notice, else by reading the counter every
``poll_interval`` seconds (SQLite: every 0.25 s; PostgreSQL, where notices come: every 3 s,
so a replica that lost its listening connection catches up).

The audit log and saved views are read from the database at every request: writing them
does not bump the counter, so the run list's version (and its ETag) moves only with what
the run list shows.
"""

from __future__ import annotations

import logging
import threading
import time

from sumlens.board.state.backend import Backend, Tx

_log = logging.getLogger("sumlens.board")

TICK = 0.25
"""The longest the watcher waits before looking again (and what closing it may take)."""


class Changes:
    """The highest change counter this replica has seen (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counter = 0

    @property
    def counter(self) -> int:
        return self._counter

    def seen(self, counter: int) -> None:
        """Take ``counter`` (read, or written by this replica) when it is newer."""
        with self._lock:
            self._counter = max(self._counter, counter)


def read_counter(tx: Tx) -> int:
    """The counter as ``tx`` sees it."""
    row = tx.one("SELECT counter FROM changes WHERE id = 1")
    return int(row[0]) if row is not None else 0


def bump(backend: Backend, tx: Tx) -> int:
    """Move the counter in write transaction ``tx`` (holding every other writer off until
    it ends) and tell the other replicas at the commit; its new value."""
    row = tx.one("UPDATE changes SET counter = counter + 1 WHERE id = 1 RETURNING counter")
    counter = int(row[0]) if row is not None else 0
    backend.notify(tx, counter)
    return counter


class Watcher:
    """A daemon thread moving ``changes`` when another replica writes to ``backend``."""

    def __init__(self, backend: Backend, changes: Changes) -> None:
        self._backend = backend
        self._changes = changes
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start watching (nothing when it watches already)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, name="sumlens-state", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching; returns once the thread ended (within :data:`TICK` or so)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join()

    def _watch(self) -> None:
        next_read = 0.0
        failing = False
        while not self._stop.is_set():
            try:
                noticed = self._backend.wait_for_notice(TICK, self._stop)
                if self._stop.is_set():
                    return
                now = time.monotonic()
                if noticed or now >= next_read:
                    self._changes.seen(self._backend.read(read_counter))
                    next_read = now + self._backend.poll_interval
                    if failing:
                        _log.warning("the state database answers again")
                    failing = False
            except Exception as err:  # the database away: say so once, keep trying
                if not failing:
                    _log.warning("watching the state database for changes failed: %s", err)
                failing = True
                self._stop.wait(TICK)
