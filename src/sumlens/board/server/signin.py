"""Signing in and out, and what the page may offer: the session routes and the sign-in page.

* ``GET {prefix}/api/v1/session``: the auth mode, who the page's user is, their role,
  whether they may write or administer, and in one sentence why not. The page hides what
  the role cannot do and shows that sentence.
* ``POST {prefix}/api/v1/session`` with ``{"token": "..."}`` (``--auth token``): sets the
  session cookie (HttpOnly, SameSite=Strict, the prefix's path, Secure over TLS); a wrong
  token is a 401 that does not repeat it. ``DELETE`` clears the cookie.
* ``GET {prefix}/signin``: a small page that posts the token as JSON (never in a URL)
  and goes back to the dashboard (``static/signin/``).

These are added to the app itself (no router module: routers live in ``api/``).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from sumlens.board.server.principal import Identify, Principal, peer_address
from sumlens.board.server.roles import Role
from sumlens.board.server.static_assets import AssetCache
from sumlens.board.server.tokens import COOKIE_NAME, SESSION_SECONDS
from sumlens.board.settings import BoardSettings

_log = logging.getLogger("sumlens.board")

MAX_TOKEN_CHARS = 4096
"""The longest token a sign-in reads (the file's tokens are far shorter)."""
MAX_SIGNIN_BYTES = 8192
"""The most of a sign-in body read: anyone may send one, so no one makes the server hold
more (the 32 MiB limit of signed-in requests does not apply)."""


def add_session_routes(
    app: FastAPI, settings: BoardSettings, identify: Identify, static_root: Path
) -> None:
    """Add the session routes and the sign-in page under ``settings.url_path_prefix``."""
    prefix = settings.url_path_prefix
    cookie_path = f"{prefix}/"
    assets = AssetCache()

    @app.get(f"{prefix}/api/v1/session", summary="Who the page's user is and what they may do")
    def session(request: Request) -> dict[str, object]:
        principal: Principal | None = getattr(request.state, "principal", None)
        return describe(settings, principal)

    @app.post(f"{prefix}/api/v1/session", summary="Sign in with a token (sets a session cookie)")
    async def sign_in(request: Request) -> Response:
        if identify.book is None:
            return _detail(
                409, f"signing in is for --auth token; this server's auth mode is {settings.auth}"
            )
        token = _token_of(await _small_body(request, MAX_SIGNIN_BYTES))
        if token is None:
            return _detail(
                400,
                'the body must be JSON {"token": "..."} with the token as a string of at most '
                f"{MAX_TOKEN_CHARS} characters, {MAX_SIGNIN_BYTES:,} bytes in all",
            )
        name = identify.book.name_of(token)
        if name is None:
            _log.warning("a sign-in with a wrong token, from %s", peer_address(request.scope))
            return _detail(401, "that token is not one of this server's tokens")
        principal = Principal(name, identify.roles.role_of(token=name), "session")
        response = JSONResponse(describe(settings, principal))
        response.set_cookie(
            COOKIE_NAME,
            identify.book.make_session(name),
            max_age=SESSION_SECONDS,
            path=cookie_path,
            secure=identify.scheme(request.scope) == "https",
            httponly=True,
            samesite="strict",
        )
        return response

    @app.delete(f"{prefix}/api/v1/session", summary="Sign out (clears the session cookie)")
    def sign_out(request: Request) -> Response:
        response = JSONResponse({"signed_out": True})
        response.delete_cookie(
            COOKIE_NAME,
            path=cookie_path,
            secure=identify.scheme(request.scope) == "https",
            httponly=True,
            samesite="strict",
        )
        return response

    @app.api_route(f"{prefix}/signin", methods=["GET", "HEAD"], include_in_schema=False)
    def signin_page(request: Request) -> Response:
        return assets.response(request, static_root / "signin" / "index.html")


def describe(settings: BoardSettings, principal: Principal | None) -> dict[str, object]:
    """The session's answer: mode, user, role, what they may do and why not."""
    role = principal.role if principal is not None else None
    why = _why_not(settings, principal)
    return {
        "mode": settings.auth,
        "user": principal.user if principal is not None else None,
        "role": role.value if role is not None else None,
        "read_only": settings.read_only,
        "can_write": why is None,
        "can_admin": why is None and role is Role.ADMIN,
        "why": why,
    }


def _why_not(settings: BoardSettings, principal: Principal | None) -> str | None:
    """Why this principal may not write, in one sentence (None: they may)."""
    if settings.read_only:
        return "The dashboard is read-only: the server was started with --read-only."
    if principal is None or principal.role is None:
        return "You are not signed in."
    if principal.role >= Role.EDITOR:
        return None
    if principal.via == "anonymous":
        return (
            "The dashboard serves a non-local address without sign-in, so everyone may only "
            "read (the server needs --auth token or proxy, or --allow-anonymous-writes)."
        )
    return "Your role is viewer: changing notes, colours, views or runs needs the editor role."


async def _small_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None when it is longer than ``limit`` bytes (by its
    ``Content-Length`` before any is read, else as soon as what arrived passes it)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return body


def _token_of(body: bytes | None) -> str | None:
    """The token of a sign-in body, or None when the body is not ``{"token": str}``."""
    if body is None:
        return None
    try:
        given = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    token = given.get("token") if isinstance(given, dict) else None
    if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_CHARS:
        return None
    return token.strip()


def _detail(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)
