"""Every route of the app that is not a read is in the gate's tables: a write route added
later without an entry in ``WRITE_ROUTES`` (action, least role) fails here."""

from __future__ import annotations

from pathlib import Path

from fastapi.routing import APIRoute
from helpers.memory_surface import MemorySurface
from starlette.routing import Route

from sumlens.board.server.access import OPEN_ROUTES, READ_POSTS, READ_ROLES, WRITE_ROUTES
from sumlens.board.server.app import create_app
from sumlens.board.server.roles import Role
from sumlens.board.settings import BoardSettings

PREFIX = "/team/a"


def _routes(tmp_path: Path) -> set[tuple[str, str]]:
    """(method, path without the prefix) of every route of the app: those its OpenAPI
    document lists (the included routers') and those added to the app itself."""
    settings = BoardSettings(
        base_dir=Path("/memory"), workspace=tmp_path / "ws", url_path_prefix=PREFIX
    )
    app = create_app(settings, MemorySurface())
    found = {
        (method.upper(), path.removeprefix(PREFIX))
        for path, operations in app.openapi()["paths"].items()
        for method in operations
    }
    for route in app.routes:
        if isinstance(route, APIRoute | Route) and route.methods:
            found |= {(method, route.path.removeprefix(PREFIX)) for method in route.methods}
    return found


def test_every_route_that_is_not_a_read_is_in_a_table(tmp_path: Path) -> None:
    routes = _routes(tmp_path)
    assert {("PUT", "/api/v1/annotation"), ("POST", "/api/v1/session")} <= routes
    unlisted = sorted(
        (method, path)
        for method, path in routes
        if method not in ("GET", "HEAD")
        and (method, path) not in WRITE_ROUTES
        and (method, path) not in READ_POSTS
        and (method, path) not in OPEN_ROUTES
    )
    assert unlisted == [], "add these to WRITE_ROUTES (or READ_POSTS if they only read)"


def test_the_tables_say_what_the_contract_says() -> None:
    assert WRITE_ROUTES[("POST", "/api/v1/annotations")] == ("annotations.import", Role.ADMIN)
    assert WRITE_ROUTES[("DELETE", "/api/v1/run")] == ("run.delete", Role.ADMIN)
    assert WRITE_ROUTES[("PUT", "/api/v1/annotation")] == ("annotation.set", Role.EDITOR)
    assert READ_ROLES[("GET", "/api/v1/audit")] is Role.EDITOR
    assert Role.VIEWER < Role.EDITOR < Role.ADMIN and max(Role) is Role.ADMIN
    assert not set(WRITE_ROUTES) & READ_POSTS
