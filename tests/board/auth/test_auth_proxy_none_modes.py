"""``--auth proxy`` and ``--auth none`` over the real app, and ``--read-only``.

Proxy: the user header is believed from a trusted proxy (127.0.0.1 here) only; the same
header from 127.0.0.2 is refused as forged; no header is a 401. None: on loopback everyone
is the local admin; on a non-local address (the app asked in process, nothing bound)
everyone is an anonymous viewer unless ``--allow-anonymous-writes``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from auth_cases import BOUND, NOTE, RUN, Serve, other_client
from helpers.board import free_port, route_client, running_server

from sumlens.board.server.access import WRITE_ROUTES
from sumlens.board.server.principal import Identify
from sumlens.board.settings import BoardSettings

CAROL = {"X-Forwarded-User": "carol"}
"""An editor (``[users]``)."""


def test_proxy_users_and_groups_get_their_roles(serve: Serve, roles_file: Path) -> None:
    with serve(auth="proxy", trusted_proxies="127.0.0.1/32", roles_file=roles_file) as url:
        who = {
            "carol": {"X-Forwarded-User": "carol"},
            "dan@example.com": {"X-Forwarded-Email": "dan@example.com"},
            "eve": {"X-Forwarded-User": "eve", "X-Forwarded-Groups": "staff, ml-admins"},
            "frank": {"X-Forwarded-User": "frank"},
            # a user name spelt as an admin's email is no email: users and emails apart
            "dan@example.com (a user name)": {"X-Forwarded-User": "dan@example.com"},
        }
        roles = {
            name: httpx.get(url + "/api/v1/session", headers=headers).json()["role"]
            for name, headers in who.items()
        }
        assert roles == {
            "carol": "editor",
            "dan@example.com": "admin",
            "eve": "admin",
            "frank": "viewer",
            "dan@example.com (a user name)": "viewer",
        }
        assert httpx.get(url + "/api/v1/runs", timeout=BOUND).status_code == 401
        refused = httpx.put(
            url + "/api/v1/annotation", params={"run": RUN}, json=NOTE, headers=who["frank"]
        )
        assert refused.status_code == 403 and "'frank' holds viewer" in refused.json()["detail"]
        landed = httpx.put(
            url + "/api/v1/annotation", params={"run": RUN}, json=NOTE, headers=CAROL
        )
        assert landed.status_code == 200, landed.text
        audit = httpx.get(url + "/api/v1/audit", headers=CAROL, timeout=BOUND).json()
        assert audit["entries"][0]["user"] == "carol"
        assert audit["entries"][0]["action"] == "annotation.set"


def test_a_proxy_header_from_another_address_is_forged(serve: Serve) -> None:
    with serve(auth="proxy", trusted_proxies="127.0.0.1") as url, other_client(url) as other:
        answer = other.get("/api/v1/runs", headers={"X-Forwarded-User": "root"})
        assert answer.status_code == 403 and "forged" in answer.json()["detail"]
        put = other.put(
            "/api/v1/annotation", params={"run": RUN}, json=NOTE, headers={"X-Forwarded-User": "x"}
        )
        assert put.status_code == 403
        assert other.get("/api/v1/runs").status_code == 401
        assert other.get("/api/v1/health").status_code == 200


def test_none_mode_on_a_network_address_lets_anonymous_users_read_only(
    auth_base: Path, tmp_path: Path
) -> None:
    settings = BoardSettings.create(
        auth_base, host="0.0.0.0", workspace=tmp_path / "ws", reload_interval=0.2
    )
    with route_client(settings=settings) as client:
        session = client.get("/api/v1/session").json()
        assert session["role"] == "viewer" and session["can_write"] is False
        assert "without sign-in" in session["why"]
        answer = client.put("/api/v1/annotation", params={"run": RUN}, json=NOTE)
        assert answer.status_code == 403
        assert "anonymous user on a non-local address" in answer.json()["detail"]
    opened = BoardSettings.create(
        auth_base,
        host="0.0.0.0",
        workspace=tmp_path / "ws2",
        allow_anonymous_writes=True,
        reload_interval=0.2,
    )
    with route_client(settings=opened) as client:
        session = client.get("/api/v1/session").json()
        # anonymous writers annotate; importing and deleting runs need a name (a role)
        assert (session["role"], session["can_write"], session["can_admin"]) == (
            "editor", True, False)  # fmt: skip
        assert client.delete("/api/v1/run", params={"run": RUN}).status_code == 403


def test_none_mode_on_loopback_is_the_local_admin(serve: Serve) -> None:
    with serve() as url:
        session = httpx.get(url + "/api/v1/session", timeout=BOUND).json()
        assert session == {
            "mode": "none",
            "user": None,
            "role": "admin",
            "read_only": False,
            "can_write": True,
            "can_admin": True,
            "why": None,
        }


@pytest.mark.parametrize(("method", "path"), sorted(WRITE_ROUTES))
def test_read_only_refuses_every_write_for_everyone(
    method: str, path: str, read_only_url: str
) -> None:
    answer = httpx.request(
        method, read_only_url + path, params={"run": RUN, "name": "v", "id": "x"}, json={}
    )
    assert answer.status_code == 403
    assert "read-only" in answer.json()["detail"]


@pytest.fixture(scope="module")
def read_only_url(auth_base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = BoardSettings.create(
        auth_base,
        port=free_port(),
        workspace=tmp_path_factory.mktemp("ro"),
        read_only=True,
        reload_interval=0.2,
    )
    with running_server(settings) as url:
        session = httpx.get(url + "/api/v1/session", timeout=BOUND).json()
        assert session["read_only"] is True and session["can_write"] is False
        assert "read-only" in session["why"]
        yield url


def test_an_ipv4_proxy_met_on_an_ipv6_socket_is_trusted(tmp_path: Path) -> None:
    """A server listening on ``::`` sees an IPv4 proxy as ``::ffff:a.b.c.d``: still trusted."""
    settings = BoardSettings.create(tmp_path, auth="proxy", trusted_proxies="10.0.0.5")
    identify = Identify(settings)
    mapped = {"type": "http", "client": ("::ffff:10.0.0.5", 4000), "headers": []}
    other = {"type": "http", "client": ("::ffff:10.0.0.6", 4000), "headers": []}
    assert identify.trusted(mapped) and not identify.trusted(other)
