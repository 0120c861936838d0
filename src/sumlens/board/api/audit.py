"""``GET /api/v1/audit?limit=<n>&before=<id>``: who changed what, newest first, a page at a
time (editors and admins only: the server's gate holds that rule).

Answers ``{"entries": [{"id", "at", "user", "role", "action", "target", "detail",
"replica"}], "next": <id> | null}``; ``next`` is the ``before`` of the next (older) page,
null on the last. The entries are :mod:`sumlens.board.state.audit`'s.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from sumlens.board.responses import json_response
from sumlens.board.state import SharedState
from sumlens.board.state.audit import MAX_PAGE

DEFAULT_LIMIT = 100


def make_audit_router(shared: SharedState) -> APIRouter:
    """The audit log's route, read from ``shared``."""
    router = APIRouter(prefix="/api/v1")

    @router.get("/audit", summary="Who changed what and when, newest first")
    def audit(
        limit: Annotated[
            int, Query(ge=1, le=MAX_PAGE, description="the most entries in the page")
        ] = DEFAULT_LIMIT,
        before: Annotated[
            int | None,
            Query(ge=1, le=2**63 - 1, description="entries older than this id (next's value)"),
        ] = None,
    ) -> Response:
        entries, following = shared.audit.page(limit, before)
        return json_response(
            {
                "entries": [{"id": at_id, **entry.as_json()} for at_id, entry in entries],
                "next": following,
            }
        )

    return router
