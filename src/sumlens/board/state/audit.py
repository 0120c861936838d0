"""The audit log: who changed what, when, through which replica; newest first.

The server records an entry after every write it answered without error (the action
names are :mod:`sumlens.board.server.access`'s); ``GET /api/v1/audit`` reads it a page at
a time. An entry's words come partly from the request (a run id, a view's name), so each
is cut to :data:`MAX_FIELD_CHARS` rather than refused: recording never fails a write that
was made. Reads go to the database each time (nothing is cached, so writing an entry
does not move the change counter).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sumlens.board.errors import QueryError
from sumlens.board.state.backend import Backend, Tx

MAX_FIELD_CHARS = 4_096
"""The most characters an entry keeps of each of its words (the rest is cut, marked)."""
MAX_PAGE = 1_000
"""The most entries one page holds."""
_CUT = " [...]"


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One change: when (epoch seconds), by whom (user and role; None: the local or an
    anonymous user), the action (e.g. ``annotation.set``), its target (e.g. a run id),
    details, and the replica that made it."""

    at: float
    user: str | None
    role: str | None
    action: str
    target: str
    detail: str
    replica: str

    def as_json(self) -> dict[str, Any]:
        """The entry as ``GET /api/v1/audit`` answers it (without its id)."""
        return asdict(self)


def _cut(text: str | None) -> str | None:
    """``text`` within :data:`MAX_FIELD_CHARS`, marked when cut."""
    if text is None or len(text) <= MAX_FIELD_CHARS:
        return text
    return text[: MAX_FIELD_CHARS - len(_CUT)] + _CUT


class AuditLog:
    """The audit log kept by ``backend`` (thread-safe: each call is one transaction)."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    def record(self, entry: AuditEntry) -> int:
        """Add ``entry``; its id (ids grow: a later entry has a larger one)."""
        values = (
            float(entry.at), _cut(entry.user), _cut(entry.role), _cut(entry.action),
            _cut(entry.target), _cut(entry.detail), _cut(entry.replica),
        )  # fmt: skip

        def add(tx: Tx) -> int:
            row = tx.one(
                "INSERT INTO audit (at, who, role, action, target, detail, replica) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                values,
            )
            assert row is not None
            return int(row[0])

        return self._backend.write(add)

    def page(
        self, limit: int, before: int | None = None
    ) -> tuple[list[tuple[int, AuditEntry]], int | None]:
        """At most ``limit`` entries (1 to :data:`MAX_PAGE`), newest first, of those with
        an id below ``before`` (None: from the newest), each with its id; and the
        ``before`` of the next page (None: this one holds the oldest)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise QueryError(f"limit={limit!r} is not allowed: use 1 to {MAX_PAGE}")
        if before is not None and (
            isinstance(before, bool) or not isinstance(before, int) or before < 1
        ):
            raise QueryError(
                f"before={before!r} is not allowed: an entry's id (a whole number from 1), "
                "the next of the page before"
            )
        rows = self._backend.read(
            lambda tx: tx.rows(
                "SELECT id, at, who, role, action, target, detail, replica FROM audit "
                "WHERE id < ? ORDER BY id DESC LIMIT ?",
                (before if before is not None else 2**62, limit + 1),
            )
        )
        entries = [(int(row[0]), AuditEntry(float(row[1]), *row[2:])) for row in rows[:limit]]
        following = entries[-1][0] if len(rows) > limit else None
        return entries, following
