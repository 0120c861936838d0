"""What the auth tests share: the team's tokens and roles, a run and a note, clients."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import httpx

TOKENS = {
    "alice": "alice-token-0123456789abcdef",
    "bob": "bob-token-0123456789abcdefgh",
    "root@ops": "root-token-0123456789abcdefg",
}
"""alice is an editor, bob a viewer, root@ops an admin (:data:`ROLES`)."""
ROLES = """
default = "viewer"
[tokens]
alice = "editor"
"root@ops" = "admin"
[users]
carol = "editor"
[emails]
"dan@example.com" = "admin"
[groups]
ml-admins = "admin"
"""
Serve = Callable[..., contextlib.AbstractContextManager[str]]
"""The ``serve`` fixture: ``serve(**settings)`` runs a server, yields its URL."""
RUN = "./a"
NOTE = {"tags": ["checked"], "note": "looks fine", "colour": None}
"""An annotation body an editor may PUT for :data:`RUN`."""
BOUND = 30.0


def bearer(name: str) -> dict[str, str]:
    """The Authorization header of the token of ``name``."""
    return {"Authorization": f"Bearer {TOKENS[name]}"}


def other_client(url: str) -> httpx.Client:
    """A client whose connections come from 127.0.0.2 (a peer that is no trusted proxy)."""
    return httpx.Client(
        base_url=url, transport=httpx.HTTPTransport(local_address="127.0.0.2"), timeout=BOUND
    )
