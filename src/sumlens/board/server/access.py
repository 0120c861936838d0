"""The gate in front of every route: who may read, who may write, and the audit of writes.

The table :data:`WRITE_ROUTES` names every route that changes something, the action it
is recorded as and the least role it needs; :data:`READ_POSTS` names the POST routes that
only read (a search with a body). A test lists the app's routes and fails on any other
that is not GET: a new write route cannot slip past the gate unnoticed. A method no table
names is gated as an admin's write all the same.

For a write the gate checks, in this order: the server is not ``--read-only`` (403);
someone is asking (401); their role is enough (403 naming the role needed and the one
held); the request comes from the dashboard's own page (403): an ``Origin`` header that is
not this server's own origin, or a ``Sec-Fetch-Site`` that is not ``same-origin``, means
another page's form, ``fetch`` or ``<img>`` sent it, whatever its content type. A request
with neither header is a script or curl, which holds its own credentials. Once a write
answers below 400, the gate records it in the audit log before the answer leaves.

Routes open to anyone: health, readiness, the sign-in page and its files, and the session
routes (signing in needs no session). Everything else needs a principal: the API answers
401, the page itself sends a token user to the sign-in page.
"""

from __future__ import annotations

import logging
import socket
import time
from urllib.parse import parse_qsl, urlsplit

import anyio
from fastapi.responses import JSONResponse, RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sumlens.board.server.principal import BadToken, Forged, Identify, Principal, header
from sumlens.board.server.roles import Role
from sumlens.board.settings import BoardSettings
from sumlens.board.state.audit import AuditEntry, AuditLog

_log = logging.getLogger("sumlens.board")

WRITE_ROUTES: dict[tuple[str, str], tuple[str, Role]] = {
    ("PUT", "/api/v1/annotation"): ("annotation.set", Role.EDITOR),
    ("PUT", "/api/v1/group-colour"): ("group_colour.set", Role.EDITOR),
    ("POST", "/api/v1/annotations"): ("annotations.import", Role.ADMIN),
    ("PUT", "/api/v1/views"): ("view.save", Role.EDITOR),
    ("DELETE", "/api/v1/views"): ("view.delete", Role.EDITOR),
    ("PUT", "/api/v1/run-state"): ("run.state", Role.EDITOR),
    ("DELETE", "/api/v1/run"): ("run.delete", Role.ADMIN),
    ("POST", "/api/v1/trash/restore"): ("run.restore", Role.ADMIN),
}
"""(method, path without the prefix) -> (action in the audit log, least role)."""
READ_POSTS: frozenset[tuple[str, str]] = frozenset(
    {("POST", "/v1/mindinsight/lineagemgr/lineages")}
)
"""POST routes that only read (MindInsight's lineage search takes its query as a body)."""
READ_ROLES: dict[tuple[str, str], Role] = {("GET", "/api/v1/audit"): Role.EDITOR}
"""Reads that need more than a viewer."""
OPEN_ROUTES: frozenset[tuple[str, str]] = frozenset(
    {
        ("GET", "/api/v1/health"),
        ("HEAD", "/api/v1/health"),
        ("GET", "/api/v1/ready"),
        ("HEAD", "/api/v1/ready"),
        ("GET", "/api/v1/session"),
        ("POST", "/api/v1/session"),
        ("DELETE", "/api/v1/session"),
        ("GET", "/signin"),
        ("HEAD", "/signin"),
    }
)
"""Routes anyone may use, signed in or not."""
SIGNIN_FILES = frozenset(
    {"/static/signin/signin.css", "/static/signin/signin.js", "/static/core/api.js"}
)
"""The sign-in page's own files and the one module it imports, open too (by their exact
paths: a path such as ``/static/signin/%2e%2e/app.js`` is no sign-in file)."""
_READS = ("GET", "HEAD")
_TARGETS = ("run", "name", "id")
"""Query parameters that say what a write is about, in the order looked for."""
MAX_DETAIL = 500


class AccessGate:
    """ASGI middleware: sets ``scope["state"]["principal"]``, refuses what the principal
    may not do, records writes in ``audit`` (:mod:`this module <sumlens.board.server.access>`)."""

    def __init__(
        self,
        app: ASGIApp,
        settings: BoardSettings,
        identify: Identify,
        audit: AuditLog | None,
    ) -> None:
        self.app = app
        self.settings = settings
        self.identify = identify
        self.audit = audit
        self.prefix = settings.url_path_prefix
        self.replica = settings.replica or f"{socket.gethostname()}:{settings.port}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path = scope["method"], self._route_path(scope["path"])
        is_open = (method, path) in OPEN_ROUTES or (method in _READS and path in SIGNIN_FILES)
        refusal: tuple[int, str] | None = None
        principal: Principal | None = None
        try:
            principal = self.identify.who(scope)
        except Forged as err:
            refusal = (403, str(err))
        except BadToken as err:
            refusal = (401, str(err))
        if principal is not None:
            scope.setdefault("state", {})["principal"] = principal
        if is_open:
            if method not in _READS and (why := self.foreign(scope)):
                await self._refuse(scope, receive, send, 403, why)
                return
            await self.app(scope, receive, send)
            return
        write = method not in _READS and (method, path) not in READ_POSTS
        if write and self.settings.read_only:
            detail = "the dashboard is read-only (--read-only): nothing can be changed"
            await self._refuse(scope, receive, send, 403, detail)
            return
        if refusal is not None:
            await self._refuse(scope, receive, send, *refusal)
            return
        if principal is None or principal.role is None:
            await self._unknown(scope, receive, send, method, path)
            return
        action, need = (
            WRITE_ROUTES.get((method, path), ("", Role.ADMIN))
            if write
            else ("", READ_ROLES.get((method, path), Role.VIEWER))
        )
        if principal.role < need:
            what = f"{method} {self.prefix}{path}"
            held = principal.role.value
            detail = f"{what} needs the role {need.value}; {_who(principal)} holds {held}"
            await self._refuse(scope, receive, send, 403, detail)
            return
        if write and (why := self.foreign(scope)):
            await self._refuse(scope, receive, send, 403, why)
            return
        if write and action and self.audit is not None:
            await self.app(scope, receive, self._audited(scope, send, principal, action))
            return
        await self.app(scope, receive, send)

    def _route_path(self, path: str) -> str:
        """``path`` without the URL prefix (unchanged when it is not below it)."""
        if self.prefix and (path == self.prefix or path.startswith(self.prefix + "/")):
            return path[len(self.prefix) :] or "/"
        return path

    def foreign(self, scope: Scope) -> str | None:
        """Why another origin's page sent this request, or None when it did not (the
        dashboard's own page, or a client that is no browser)."""
        site = header(scope, "sec-fetch-site")
        if site is not None and site.lower() != "same-origin":
            return (
                f"a write must come from the dashboard's own page (Sec-Fetch-Site: {site}); "
                "another page may not change anything"
            )
        origin = header(scope, "origin")
        if origin is None:
            return None
        own = _origin(self.identify.scheme(scope), header(scope, "host") or "")
        if _origin_of(origin) != own:
            return (
                f"a write must come from the dashboard's own page: Origin {origin!r} is not "
                f"this server's origin ({own})"
            )
        return None

    async def _unknown(
        self, scope: Scope, receive: Receive, send: Send, method: str, path: str
    ) -> None:
        """Answer a request that needs someone and names no one: the sign-in page for a
        person opening the page in token mode, else 401."""
        token_mode = self.identify.mode == "token"
        if token_mode and method in _READS and path in ("/", ""):
            await RedirectResponse(f"{self.prefix}/signin", status_code=303)(scope, receive, send)
            return
        how = {
            "token": f"sign in at {self.prefix}/signin or send Authorization: Bearer <token>",
            "proxy": "sign in through the authenticating proxy "
            f"(it sets {self.settings.proxy_user_header})",
        }.get(self.identify.mode, "")
        headers = {"WWW-Authenticate": "Bearer"} if token_mode else {}
        await self._refuse(scope, receive, send, 401, f"not signed in: {how}", headers)

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        status: int,
        detail: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer ``{"detail": detail}`` and close (a body sent is not read)."""
        response = JSONResponse(
            {"detail": detail},
            status_code=status,
            headers={**(headers or {}), "Connection": "close"},
        )
        await response(scope, receive, send)

    def _audited(self, scope: Scope, send: Send, principal: Principal, action: str) -> Send:
        """``send``, recording the write in the audit log before an answer below 400
        starts (so whoever reads the log after the answer sees it)."""
        assert self.audit is not None
        audit = self.audit
        query = scope.get("query_string", b"").decode("latin-1")
        params = dict(parse_qsl(query))
        target = next((params[key] for key in _TARGETS if key in params), "")
        detail = f"{scope['method']} {scope['path']}{'?' + query if query else ''}"[:MAX_DETAIL]

        async def send_audited(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                entry = AuditEntry(
                    at=time.time(),
                    user=principal.user,
                    role=principal.role.value if principal.role else None,
                    action=action,
                    target=target,
                    detail=detail,
                    replica=self.replica,
                )
                await anyio.to_thread.run_sync(audit.record, entry)
            await send(message)

        return send_audited


def _who(principal: Principal) -> str:
    if principal.user is not None:
        return f"{principal.user!r}"
    if principal.via == "anonymous":
        return (
            "an anonymous user on a non-local address (start the server with --auth token or "
            "--auth proxy, or --allow-anonymous-writes)"
        )
    return "the local user"


def _origin(scheme: str, host: str) -> str:
    """``scheme://host[:port]``, lowered, without the scheme's default port."""
    host = host.strip().lower()
    default = {"http": ":80", "https": ":443"}.get(scheme, "")
    if default and host.endswith(default):
        host = host[: -len(default)]
    return f"{scheme}://{host}"


def _origin_of(origin: str) -> str:
    """An ``Origin`` header as :func:`_origin` writes origins ("null" stays itself)."""
    parts = urlsplit(origin.strip())
    if not parts.scheme or not parts.netloc:
        return origin.strip().lower()
    return _origin(parts.scheme.lower(), parts.netloc)
