"""What a request must be before any route runs: addressed to this server, started by its
own page (or a person), and of a body small enough to hold.

* :class:`HostGuard` refuses a request whose ``Host`` header is not the bound host, a
  loopback name or an ``--allowed-hosts`` entry (a page of another site cannot reach the
  dashboard through DNS rebinding). The header is parsed whole: a name or a bracketed
  IPv6 literal, then at most ``:port``; ``[::1].evil.com`` is no loopback name.
* It also refuses, before any work, a request another origin's page started: a browser
  marks it ``Sec-Fetch-Site: cross-site`` or ``same-site``. Same-site is not same-origin:
  a page on another port of 127.0.0.1 is same-site to the dashboard, and a plain ``<img>``
  there would otherwise run any route. The dashboard's own requests are ``same-origin``,
  an address typed or a bookmark ``none``, curl and scripts send no such header: these
  pass. A person clicking a link to the dashboard's page on another site's page (a
  notebook on another port) opens it: a top-level navigation the user made, to the page
  alone, not to a route that computes.
* :class:`BodyLimit` refuses a body larger than the server reads (413): by its
  ``Content-Length`` before any of it is read, and a streamed (chunked) one as soon as
  what arrived passes the limit, so a request cannot make the server hold more than the
  limit.

Every response is also marked ``nosniff`` and not to be framed by other sites. No CORS
headers are ever sent.
"""

from __future__ import annotations

import re

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sumlens.board.errors import BoardError

MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest request body the server reads (an annotation import is the largest)."""

_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY")]
_CLOSE = (b"connection", b"close")
_OWN_SITES = ("same-origin", "none", None)
"""``Sec-Fetch-Site`` of requests the dashboard's page or a person made (None: no header)."""
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[^\[\]:]+)(?::[0-9]*)?")
"""A Host header (lowered): a name or a bracketed IPv6 literal, then an optional port."""


class HostGuard:
    """Refuse requests for a host the server does not answer to, and those another
    origin's page started (:mod:`this module <sumlens.board.server.guards>`); mark every
    response ``nosniff`` and not to be framed.

    ``accepted``: host names without port (an IPv6 address with or without brackets);
    ``pages``: the paths of the dashboard's page, which a person may open by a link on
    another site.
    """

    def __init__(self, app: ASGIApp, accepted: frozenset[str], pages: frozenset[str]) -> None:
        self.app = app
        self.accepted = accepted | {f"[{name}]" for name in accepted if ":" in name}
        self.pages = pages

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if _host_name(_header(scope, b"host")) not in self.accepted:
            detail = "Host header not allowed; start the server with --allowed-hosts"
            await _answer(scope, receive, send, 400, detail)
            return
        site = _header(scope, b"sec-fetch-site")
        if site not in _OWN_SITES and not self._opened_by_a_person(scope):
            detail = (
                f"a page of another origin may not use the dashboard (Sec-Fetch-Site: {site}); "
                "open the dashboard itself"
            )
            await _answer(scope, receive, send, 403, detail)
            return

        async def send_guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *_HEADERS]
            await send(message)

        await self.app(scope, receive, send_guarded)

    def _opened_by_a_person(self, scope: Scope) -> bool:
        """Whether this is the dashboard's page, opened in a tab by the user's own click
        (a script cannot send ``Sec-Fetch-User``, nor navigate an ``<img>``)."""
        return (
            scope["method"] in ("GET", "HEAD")
            and scope["path"] in self.pages
            and _header(scope, b"sec-fetch-mode") == "navigate"
            and _header(scope, b"sec-fetch-dest") == "document"
            and _header(scope, b"sec-fetch-user") == "?1"
        )


def _host_name(header: str | None) -> str:
    """The host of a ``Host`` header value, lowered and without its port (an IPv6 literal
    keeps its brackets); "" when the value is not a host and an optional ``:port``."""
    if header is None:
        return ""
    found = _HOST.fullmatch(header.strip().lower())
    return found[1] if found else ""


class BodyTooLarge(BoardError):
    """A request body past :class:`BodyLimit`'s limit."""

    status = 413


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with a 413, reading none of a body whose
    ``Content-Length`` is over it and no more of a streamed one than the limit (a route
    reading past it gets :class:`BodyTooLarge`, answered by the app's error handler)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None and not declared.isdigit():
            await _answer(scope, receive, send, 400, f"Content-Length={declared!r} is not a size")
            return
        if declared is not None and int(declared) > self.limit:
            detail = (
                f"the request body holds {int(declared):,} bytes (its Content-Length): the "
                f"dashboard reads at most {self.limit:,} ({self.limit / 2**20:g} MiB)"
            )
            await _answer(scope, receive, send, 413, detail)
            return
        received = 0
        started = over = False

        async def receive_limited() -> Message:
            nonlocal received, over
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                over = received > self.limit
                if over:
                    raise BodyTooLarge(
                        f"the request body is larger than {self.limit:,} bytes "
                        f"({self.limit / 2**20:g} MiB), the most the dashboard reads"
                    )
            return message

        async def send_watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if over:  # uvicorn would read (and drop) the rest to keep the connection
                    message["headers"] = [*message.get("headers", ()), _CLOSE]
            await send(message)

        try:
            await self.app(scope, receive_limited, send_watched)
        except BodyTooLarge as err:  # read outside a route's error handling
            if started:
                raise
            await _answer(scope, receive, send, err.status, str(err))  # and close


async def _answer(scope: Scope, receive: Receive, send: Send, status: int, detail: str) -> None:
    """Answer ``{"detail": detail}`` with ``status``, the app never called, and close the
    connection (a body sent with the request is not read, not even to drop it)."""
    response = JSONResponse({"detail": detail}, status_code=status, headers={"Connection": "close"})
    await response(scope, receive, send)


def _header(scope: Scope, wanted: bytes) -> str | None:
    """The first value of header ``wanted`` (lower case), stripped and lowered; None if absent."""
    for name, value in scope.get("headers", ()):
        if name == wanted:
            return value.decode("latin-1").strip().lower()
    return None
