"""Who is asking: the :class:`Principal` of a request, in each auth mode.

* ``none``: on a loopback address everyone is the local user, an admin (the dashboard of
  one person on one machine). Bound elsewhere, everyone is an anonymous viewer, unless
  ``--allow-anonymous-writes`` makes them admins.
* ``token``: ``Authorization: Bearer <token>`` or the session cookie the sign-in page got
  (:mod:`sumlens.board.server.tokens`); the token's name is the user.
* ``proxy``: the user (or email) and groups headers an authenticating proxy sets, believed
  only from a ``--trusted-proxies`` address. The same headers from anyone else are a
  forgery, refused even on open routes' behalf (:class:`Forged`).

:meth:`Identify.who` answers None for a request that proves nothing (no token, no
header); the gate then decides whether the route needs someone.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie

from starlette.types import Scope

from sumlens.board.server.roles import Role, load_roles
from sumlens.board.server.tokens import COOKIE_NAME, TokenBook
from sumlens.board.settings import BoardSettings


@dataclass(frozen=True)
class Principal:
    """Who made a request: ``user`` (None: the local or anonymous user), the role held,
    and how they were known (``local``, ``token``, ``session``, ``proxy``, ``anonymous``)."""

    user: str | None
    role: Role | None
    via: str


class Forged(Exception):
    """A proxy's user header from an address that is no trusted proxy."""


class BadToken(Exception):
    """A bearer token that is not in the token file (the message never holds it)."""


def header(scope: Scope, name: str) -> str | None:
    """The first value of header ``name`` (any case), stripped; None if absent."""
    wanted = name.lower().encode("latin-1")
    for key, value in scope.get("headers", ()):
        if key == wanted:
            return str(value.decode("latin-1").strip())
    return None


def peer_address(scope: Scope) -> str:
    """The address the request came from ("" when the server does not say)."""
    client = scope.get("client")
    return str(client[0]) if client else ""


class Identify:
    """The auth mode of ``settings``: names the principal of each request."""

    def __init__(self, settings: BoardSettings) -> None:
        self.settings = settings
        self.mode = settings.auth
        self.roles = load_roles(settings.roles_file)
        self.book = TokenBook(settings.token_file) if settings.token_file is not None else None
        self.proxies = tuple(ipaddress.ip_network(net) for net in settings.trusted_proxies)

    def trusted(self, scope: Scope) -> bool:
        """Whether the request's peer is a trusted proxy."""
        try:
            address = ipaddress.ip_address(peer_address(scope))
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped  # an IPv4 proxy met by a server listening on ::
        return any(address in network for network in self.proxies)

    def scheme(self, scope: Scope) -> str:
        """``https`` or ``http``: as a trusted proxy forwarded it (``X-Forwarded-Proto``),
        else the connection's own."""
        forwarded = header(scope, "x-forwarded-proto")
        if forwarded and self.trusted(scope):
            return forwarded.split(",")[0].strip().lower()
        return str(scope.get("scheme", "http"))

    def who(self, scope: Scope) -> Principal | None:
        """The principal of the request, or None when it proves no one. Raises
        :class:`Forged` for an untrusted proxy header, :class:`BadToken` for a bearer
        token not in the file."""
        if self.mode == "token":
            return self._by_token(scope)
        if self.mode == "proxy":
            return self._by_proxy(scope)
        if self.settings.binds_locally:
            return Principal(None, Role.ADMIN, "local")
        # anonymous writers may annotate, not import or delete runs (those need a name)
        anonymous = Role.EDITOR if self.settings.allow_anonymous_writes else Role.VIEWER
        return Principal(None, anonymous, "anonymous")

    def _by_token(self, scope: Scope) -> Principal | None:
        assert self.book is not None
        authorization = header(scope, "authorization")
        if authorization is not None:
            kind, _, token = authorization.partition(" ")
            name = self.book.name_of(token.strip()) if kind.lower() == "bearer" else None
            if name is None:
                raise BadToken(
                    "the Authorization header is not Bearer and a token of the server's token file"
                )
            return Principal(name, self.roles.role_of(token=name), "token")
        session = session_cookie(scope)
        name = self.book.session_name(session) if session else None
        if name is None:
            return None
        return Principal(name, self.roles.role_of(token=name), "session")

    def _by_proxy(self, scope: Scope) -> Principal | None:
        settings = self.settings
        user = header(scope, settings.proxy_user_header) or None
        email = header(scope, settings.proxy_email_header) or None
        groups_text = header(scope, settings.proxy_groups_header)
        if user is None and email is None and groups_text is None:
            return None
        if not self.trusted(scope):
            raise Forged(
                f"a user header ({settings.proxy_user_header}, {settings.proxy_email_header} "
                f"or {settings.proxy_groups_header}) came from {peer_address(scope) or '?'}, "
                "which is not a trusted proxy (--trusted-proxies): refused as forged"
            )
        if user is None and email is None:
            return None
        groups = [group.strip() for group in (groups_text or "").split(",") if group.strip()]
        role = self.roles.role_of(user=user, email=email, groups=groups)
        return Principal(user or email, role, "proxy")


def session_cookie(scope: Scope) -> str | None:
    """The value of the session cookie the request carries, or None."""
    text = header(scope, "cookie")
    if not text:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(text)
    except CookieError:
        return None
    morsel = jar.get(COOKIE_NAME)
    return morsel.value if morsel is not None else None
