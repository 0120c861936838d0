"""A user's saved views under ``/api/v1``: the page's addresses, named, on every replica.

* ``GET /views`` answers ``{"views": {name: hash}}``, the asking user's views (the signed-in
  user's; the local or an anonymous user's are kept under no name).
* ``PUT /views?name=<name>`` with ``{"hash": "#/scalars?run=..."}`` saves (or replaces)
  one and answers the user's views; ``DELETE /views?name=<name>`` deletes one (404 when
  there is none) and answers them too.

Who is asking comes from the server's gate (``request.state.principal``), read here without
importing it: a request it did not mark is the local user's. The bounds and checks are
:mod:`sumlens.board.state.views`'.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from sumlens.board.errors import NotFound, QueryError
from sumlens.board.request_reading import asking_user, json_body
from sumlens.board.responses import json_response
from sumlens.board.state import SharedState

NameParam = Annotated[str, Query(description="the view's name")]


async def _hash_body(request: Request) -> str:
    """The address a ``PUT /views`` body gives, or a 4xx saying what is wrong."""
    body = await json_body(request)
    if not isinstance(body, dict) or set(body) != {"hash"} or not isinstance(body["hash"], str):
        raise QueryError(
            f'body={body!r:.80} is not allowed: a saved view is {{"hash": "#/..."}}, the '
            "page's address after '#'"
        )
    return body["hash"]


def make_views_router(shared: SharedState) -> APIRouter:
    """The saved views routes, kept in ``shared``."""
    router = APIRouter(prefix="/api/v1")

    @router.get("/views", summary="The asking user's saved views")
    def list_views(request: Request) -> Response:
        return json_response({"views": shared.views.list(asking_user(request))})

    @router.put("/views", summary="Save (or replace) one of the asking user's views")
    async def put_view(request: Request, name: NameParam) -> Response:
        user, address = asking_user(request), await _hash_body(request)

        def put() -> Response:  # off the event loop: it writes to the database
            shared.views.put(user, name, address)
            return json_response({"views": shared.views.list(user)})

        return await run_in_threadpool(put)

    @router.delete("/views", summary="Delete one of the asking user's views")
    def delete_view(request: Request, name: NameParam) -> Response:
        user = asking_user(request)
        if not shared.views.delete(user, name):
            raise NotFound(f"name={name!r:.80} is not one of your saved views")
        return json_response({"views": shared.views.list(user)})

    return router
