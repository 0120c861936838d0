"""Process-wide bookkeeping of open ``SummaryRecord``s.

* **Active record** for summary operators: the innermost record entered with ``with``
  in the current context (a context variable, so threads and asyncio tasks each see
  their own), else the most recently opened one that is still open. With none, operator
  values are dropped at once.
* **Exit**: a forgotten ``close()`` still happens at interpreter exit (``atexit``) and on
  SIGTERM (our handler flushes and closes every open record, then hands the signal on to
  whatever handler was there before, or to the default action, which ends the process).
  Python lets only the main thread install a signal handler, and records are often made
  on other threads (a trainer's worker thread, a callback run by a framework): so the
  handler is installed when this module is first imported on the main thread
  (``from sumlens import SummaryRecord`` does it), else by the first record made on the
  main thread. While no record is open it only hands the signal on.
* **Fork**: in a forked child (DataLoader workers, for example) every inherited record is
  switched off: the writer thread does not exist there, so it must neither write nor wait.
"""

from __future__ import annotations

import atexit
import contextvars
import os
import signal
import threading
import weakref
from collections.abc import Callable
from typing import Any, Protocol


class Record(Protocol):
    """What the registry needs of a record (``sumlens.summary.record.SummaryRecord`` is one;
    it registers itself, so the registry never imports it)."""

    @property
    def is_open(self) -> bool:
        """False once closed (and in a forked child)."""

    def close(self, timeout: float | None = None) -> None:
        """Write everything and close the files, waiting at most ``timeout`` seconds."""

    def add_operator_value(self, plugin: str, name: str, value: Any) -> None:
        """Take a summary operator's value for the next step."""


EXIT_FLUSH_TIMEOUT = 60.0
"""Seconds exit and SIGTERM wait for each record's data to reach the disk (never forever)."""

_open: list[tuple[weakref.ReferenceType[Record], Callable[[Any], None]]] = []
"""Each open record, and what switches it off in a forked child (see :func:`register`)."""
_entered: contextvars.ContextVar[tuple[Record, ...]] = contextvars.ContextVar(
    "sumlens_entered_records", default=()
)
_lock = threading.RLock()
"""Reentrant: the SIGTERM handler runs on the main thread, possibly while it holds the lock."""
_previous_sigterm: Any = None


def register(record: Record, after_fork: Callable[[Any], None]) -> None:
    """Note ``record`` as open (and make sure exit and SIGTERM close it).

    ``after_fork(record)`` runs in a forked child, where the record must neither write nor
    wait; it is a plain function (an unbound method), so the registry holds no strong
    reference to the record.
    """
    with _lock:
        _open.append((weakref.ref(record), after_fork))
    _install_sigterm_handler()


def unregister(record: Record) -> None:
    """Forget ``record`` (it was closed)."""
    with _lock:
        _open[:] = [entry for entry in _open if entry[0]() not in (None, record)]


def open_records() -> list[Record]:
    """Every open record, oldest first."""
    with _lock:
        return [r for ref, _ in _open if (r := ref()) is not None]


def enter(record: Record) -> contextvars.Token:
    """Make ``record`` the innermost active record of this context."""
    return _entered.set((*_entered.get(), record))


def leave(token: contextvars.Token) -> None:
    """Undo the matching :func:`enter`."""
    _entered.reset(token)


def active_record() -> Record | None:
    """Where summary-operator values go now (see the module docstring); None drops them."""
    for record in reversed(_entered.get()):
        if record.is_open:
            return record
    with _lock:
        for ref, _ in reversed(_open):
            record = ref()
            if record is not None and record.is_open:
                return record
    return None


def close_all(timeout: float | None = EXIT_FLUSH_TIMEOUT) -> None:
    """Close every open record (used at exit and on SIGTERM), waiting at most ``timeout`` each."""
    for record in reversed(open_records()):
        record.close(timeout=timeout)


def _on_sigterm(signum: int, frame: Any) -> None:
    close_all(timeout=EXIT_FLUSH_TIMEOUT)
    previous = _previous_sigterm
    if callable(previous):
        previous(signum, frame)
    elif previous != signal.SIG_IGN:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)


def _install_sigterm_handler() -> None:
    """Chain our SIGTERM handler in front of the current one (main thread only).

    Every record made on the main thread calls this again: a handler the program set
    after ours replaced it, and is chained behind ours anew.
    """
    global _previous_sigterm
    if threading.current_thread() is not threading.main_thread():
        return
    current = signal.getsignal(signal.SIGTERM)
    if current is _on_sigterm or current is signal.SIG_IGN:
        return
    _previous_sigterm = current
    signal.signal(signal.SIGTERM, _on_sigterm)


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.RLock()
    for ref, after_fork in _open:
        record = ref()
        if record is not None:
            after_fork(record)
    _open.clear()


atexit.register(close_all)
os.register_at_fork(after_in_child=_after_fork_in_child)
_install_sigterm_handler()
