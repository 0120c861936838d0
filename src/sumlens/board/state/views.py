"""Saved views: a user's named addresses of the page (``#/scalars?run=...``), to open again
on any replica.

Views belong to a user (the signed-in user's name; None, the local or an anonymous user,
keeps them under ``""``). Bounds: a name is at most :data:`MAX_NAME_CHARS` characters, an
address at most :data:`MAX_HASH_CHARS`, a user keeps at most :data:`MAX_VIEWS` (saving
over an existing name is always taken). Reads go to the database each time.
"""

from __future__ import annotations

import re
import time
from typing import Any

from sumlens.board.errors import QueryError
from sumlens.board.state.backend import Backend, Tx

MAX_NAME_CHARS = 200
MAX_HASH_CHARS = 8_000
MAX_VIEWS = 500
"""The most views one user keeps."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class ViewLimit(QueryError):
    """A view past :data:`MAX_VIEWS` of its user: too many to keep."""

    status = 413


def check_view_name(name: Any) -> str:
    """``name`` when it can name a view: a string of 1 to :data:`MAX_NAME_CHARS`
    characters, not only spaces, with no control character."""
    if (
        not isinstance(name, str)
        or not name.strip()
        or len(name) > MAX_NAME_CHARS
        or _CONTROL.search(name)
    ):
        raise QueryError(
            f"name={name!r:.80} is not allowed: a view's name is 1 to {MAX_NAME_CHARS} "
            "characters (not only spaces, no control character)"
        )
    return name


def check_view_hash(given: Any) -> str:
    """``given`` when it is a page's address hash: ``#`` and at most
    :data:`MAX_HASH_CHARS` characters in all, with no control character."""
    if (
        not isinstance(given, str)
        or not given.startswith("#")
        or len(given) > MAX_HASH_CHARS
        or _CONTROL.search(given)
    ):
        raise QueryError(
            f"hash={given!r:.80} is not allowed: a view is the page's address after '#' "
            f"(e.g. '#/scalars?run=./a'), at most {MAX_HASH_CHARS:,} characters, with no "
            "control character"
        )
    return given


class SavedViews:
    """The users' saved views kept by ``backend`` (thread-safe: each call is one
    transaction)."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend

    def list(self, user: str | None) -> dict[str, str]:
        """``user``'s views: name -> address hash, by name."""
        rows = self._backend.read(
            lambda tx: tx.rows("SELECT name, hash FROM saved_views WHERE owner = ?", (user or "",))
        )
        return dict(sorted((str(name), str(hash_)) for name, hash_ in rows))

    def put(self, user: str | None, name: str, hash_: str) -> None:
        """Save ``hash_`` as ``user``'s view ``name`` (replacing one of that name);
        :class:`ViewLimit` when it would be one more than :data:`MAX_VIEWS`."""
        name, hash_ = check_view_name(name), check_view_hash(hash_)
        owner = user or ""

        def save(tx: Tx) -> None:
            row = tx.one(
                "SELECT COUNT(*) FROM saved_views WHERE owner = ? AND name <> ?", (owner, name)
            )
            if row is not None and int(row[0]) >= MAX_VIEWS:
                raise ViewLimit(
                    f"name={name!r:.80} would be view {int(row[0]) + 1:,}: a user keeps at most "
                    f"{MAX_VIEWS:,} (MAX_VIEWS); delete one first"
                )
            tx.execute(
                "INSERT INTO saved_views (owner, name, hash, at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (owner, name) DO UPDATE SET hash = excluded.hash, at = excluded.at",
                (owner, name, hash_, time.time()),
            )

        self._backend.write(save)

    def delete(self, user: str | None, name: str) -> bool:
        """Delete ``user``'s view ``name``; whether there was one."""
        name = check_view_name(name)
        removed = self._backend.write(
            lambda tx: tx.execute(
                "DELETE FROM saved_views WHERE owner = ? AND name = ?", (user or "", name)
            )
        )
        return removed > 0
