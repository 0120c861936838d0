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
* Framing. By default a page of the dashboard's own origin may frame it, no other:
  ``X-Frame-Options: SAMEORIGIN`` and ``Content-Security-Policy: frame-ancestors
  'self'`` (behind jupyter-server-proxy the notebook and the dashboard share the origin).
  ``--frame-ancestors`` names other origins that may (a local notebook on another port:
  ``http://localhost:*``). Then no ``X-Frame-Options`` is sent (it cannot name origins),
  the policy lists them after ``'self'``, and the guard lets through the one request of
  another site such a frame makes: its navigation to the page (``GET``/``HEAD`` of a page
  path, ``Sec-Fetch-Dest: iframe``, ``Sec-Fetch-Mode: navigate``). The page is static
  and computes nothing; the browser shows it only inside a listed origin's frame (the
  policy), and its own requests from there are ``same-origin``. Routes stay refused to
  other sites, framed or not.
* :class:`BodyLimit` refuses a body larger than the server reads (413): by its
  ``Content-Length`` before any of it is read, and a streamed (chunked) one as soon as
  what arrived passes the limit, so a request cannot make the server hold more than the
  limit.

Every response is also marked ``nosniff`` and carries the framing policy. No CORS
headers are ever sent.
"""

from __future__ import annotations

import re

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sumlens.board.errors import BoardError
from sumlens.board.request_reading import MAX_BODY_BYTES

_NOSNIFF = (b"x-content-type-options", b"nosniff")
_CLOSE = (b"connection", b"close")
_OWN_SITES = ("same-origin", "none", None)
"""``Sec-Fetch-Site`` of requests the dashboard's page or a person made (None: no header)."""
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[^\[\]:]+)(?::[0-9]*)?")
"""A Host header (lowered): a name or a bracketed IPv6 literal, then an optional port."""


def _frame_headers(frame_ancestors: tuple[str, ...] = ()) -> list[tuple[bytes, bytes]]:
    """The framing policy's headers: the dashboard's own origin may frame it, and the
    origins ``frame_ancestors`` lists (CSP source expressions, checked by the settings);
    ``X-Frame-Options`` only when none is listed (it cannot name one)."""
    policy = " ".join(("frame-ancestors", "'self'", *frame_ancestors)).encode("latin-1")
    headers = [(b"content-security-policy", policy)]
    if not frame_ancestors:
        headers.append((b"x-frame-options", b"SAMEORIGIN"))
    return headers


class HostGuard:
    """Refuse requests for a host the server does not answer to, and those another
    origin's page started (:mod:`this module <sumlens.board.server.guards>`); mark every
    response ``nosniff`` and with the framing policy.

    ``accepted``: host names without port (an IPv6 address with or without brackets);
    ``pages``: the paths of the dashboard's page, which a person may open by a link on
    another site; ``frame_ancestors``: the origins besides its own whose pages may frame
    it (their frame's navigation to a page passes).
    """

    def __init__(
        self,
        app: ASGIApp,
        accepted: frozenset[str],
        pages: frozenset[str],
        frame_ancestors: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.accepted = accepted | {f"[{name}]" for name in accepted if ":" in name}
        self.pages = pages
        self.framed = bool(frame_ancestors)
        self.headers = [_NOSNIFF, *_frame_headers(frame_ancestors)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if _host_name(_header(scope, b"host")) not in self.accepted:
            detail = "Host header not allowed; start the server with --allowed-hosts"
            await _answer(scope, receive, send, 400, detail, self.headers)
            return
        site = _header(scope, b"sec-fetch-site")
        if site not in _OWN_SITES and not self._page_opened(scope):
            detail = (
                f"a page of another origin may not use the dashboard (Sec-Fetch-Site: {site}); "
                "open the dashboard itself"
            )
            await _answer(scope, receive, send, 403, detail, self.headers)
            return

        async def send_guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *self.headers]
            await send(message)

        await self.app(scope, receive, send_guarded)

    def _page_opened(self, scope: Scope) -> bool:
        """Whether this is a navigation to the dashboard's page that another site may
        make: in a tab, by the user's own click (a script cannot send ``Sec-Fetch-User``,
        nor navigate an ``<img>``); or in an ``<iframe>`` when origins that may frame the
        dashboard are listed (the browser shows it only inside theirs)."""
        if scope["method"] not in ("GET", "HEAD") or scope["path"] not in self.pages:
            return False
        if _header(scope, b"sec-fetch-mode") != "navigate":
            return False
        dest = _header(scope, b"sec-fetch-dest")
        if dest == "iframe":
            return self.framed
        return dest == "document" and _header(scope, b"sec-fetch-user") == "?1"


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


async def _answer(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    detail: str,
    marks: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """Answer ``{"detail": detail}`` with ``status`` (and the headers ``marks``), the app
    never called, and close the connection (a body sent with the request is not read, not
    even to drop it)."""
    response = JSONResponse({"detail": detail}, status_code=status, headers={"Connection": "close"})
    response.raw_headers.extend(marks or ())
    await response(scope, receive, send)


def _header(scope: Scope, wanted: bytes) -> str | None:
    """The first value of header ``wanted`` (lower case), stripped and lowered; None if absent."""
    for name, value in scope.get("headers", ()):
        if name == wanted:
            return value.decode("latin-1").strip().lower()
    return None
