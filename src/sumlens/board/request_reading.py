"""What a write route reads of a request besides its query: its JSON body, and who asks.

Every route that takes a body takes JSON only (a page of another site can send a form or
plain text without asking, but not JSON; the server's gate refuses other origins' writes
on top of this), at most :data:`MAX_BODY_BYTES`, and answers a 4xx naming what is wrong.
Who asks is the principal the server's gate put on the request (``request.state``); a
request it did not name (the local user, an anonymous one) is nobody's: None.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request

from sumlens.board.errors import BoardError

MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest body a route reads (an annotation import is the largest)."""


class BodyError(BoardError):
    """A request body that is not JSON, or too large."""

    status = 400


class MediaTypeError(BoardError):
    """A request body that does not say it is JSON."""

    status = 415


async def json_body(request: Request, limit: int = MAX_BODY_BYTES) -> Any:
    """The request's JSON body (at most ``limit`` bytes), or a 4xx saying what is wrong."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise MediaTypeError(
            f"Content-Type={media or None!r} is not allowed: send the body as application/json"
        )
    body = await request.body()
    if len(body) > limit:
        raise BodyError(f"the body holds {len(body):,} bytes: at most {limit:,}")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as err:
        raise BodyError(f"the body is not JSON ({err})") from None


def asking_user(request: Request) -> str | None:
    """The name of who asks (the gate's principal), None where nobody is named."""
    user = getattr(getattr(request.state, "principal", None), "user", None)
    return user if isinstance(user, str) else None
