"""The dashboard's errors, each carrying the HTTP status it is answered with.

Routes and the data wing raise these; :mod:`sumlens.board.server.app` turns every one into
``{"detail": message}`` with its :attr:`BoardError.status`, in one handler, so no route maps
errors by hand.
"""

from __future__ import annotations


class BoardError(Exception):
    """A request the dashboard cannot answer as asked; the message says why, for the user."""

    status = 500


class QueryError(BoardError, ValueError):
    """A request parameter is not allowed; the message names it and what is allowed."""

    status = 422


class PatternError(QueryError):
    """A user's pattern that RE2 does not take."""

    status = 400


class NotFound(BoardError, LookupError):
    """What was asked for is not (or no longer) there; the message says what."""

    status = 404


class ValueUnreadable(BoardError):
    """A kept value that cannot be read back: damaged in its file, or its file cannot be
    read. The message says which value and why; the run's damage counts it."""

    status = 422
