"""The one interface the shared state's fronts use, whichever database keeps the state.

The fronts (annotations, audit, saved views, run states) write their SQL once, in the
words SQLite and PostgreSQL both take (``?`` placeholders, ``INSERT ... ON CONFLICT``,
``RETURNING``), and hand it to a :class:`Backend` as a function of one transaction:
:meth:`Backend.read` and :meth:`Backend.write` run it all or none, and may run it again
after a broken connection, so such a function only reads and writes through its
:class:`Tx`. The few words that differ (a text key compared by code point, an
auto-numbered key) are the :class:`Dialect`'s. What tells other replicas that something
changed (:meth:`Backend.notify`, :meth:`Backend.wait_for_notice`) is the backend's too.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from sumlens.board.errors import BoardError

T = TypeVar("T")


class StateUnavailable(BoardError):
    """The state database does not answer (down, unreachable, locked too long): the change
    asked for may not be stored, and the client should try again."""

    status = 503


class StateSetupError(ValueError):
    """The state cannot be opened as configured (a URL that is not PostgreSQL's, psycopg
    not installed); the message names the setting and what is allowed."""


class Tx(Protocol):
    """One transaction's statements, written with ``?`` placeholders."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; how many rows it changed."""
        ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement once per row of parameters."""
        ...

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row a query answers."""
        ...

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """The first row a query answers (None: none)."""
        ...


@dataclass(frozen=True)
class Dialect:
    """The words of a database's SQL that the two do not share."""

    name: str
    key: str
    """The type of a text key compared by code point (runs' locations sort as ids do)."""
    serial: str
    """An auto-numbered primary key column's type and constraint."""


class Backend(ABC):
    """A database holding the shared state: transactions, and news of other replicas'."""

    dialect: Dialect
    poll_interval: float
    """Seconds between reads of the change counter when no notice came."""

    @abstractmethod
    def read(self, work: Callable[[Tx], T]) -> T:
        """``work`` run in a transaction that writes nothing; what it returns."""

    @abstractmethod
    def write(self, work: Callable[[Tx], T]) -> T:
        """``work`` run in a write transaction, committed when it returns (rolled back
        when it raises); what it returns."""

    @abstractmethod
    def notify(self, tx: Tx, counter: int) -> None:
        """Tell the other replicas, when ``tx`` commits, that the counter is ``counter``."""

    @abstractmethod
    def wait_for_notice(self, timeout: float, stop: threading.Event) -> bool:
        """Wait at most ``timeout`` seconds (less once ``stop`` is set) for another
        replica's notice; whether one came (or may have been missed)."""

    def ready(self) -> bool:
        """Whether the database answers now (one small query; never raises)."""
        try:
            self.read(lambda tx: tx.one("SELECT 1"))
        except StateUnavailable:
            return False
        return True

    @abstractmethod
    def describe(self) -> str:
        """Which database this is, for people (never a password)."""

    @abstractmethod
    def close(self) -> None:
        """Close its connections (a later call opens them again)."""
