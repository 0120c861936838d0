"""Every ``/api/v1`` route the application serves (as its OpenAPI document lists them) is
asked by a route test of this folder, over the in-memory read surface, so a route added
later comes with its tests here."""

from __future__ import annotations

from pathlib import Path

from helpers.memory_surface import MemorySurface

from sumlens.board.server.app import create_app
from sumlens.board.settings import BoardSettings

HERE = Path(__file__).resolve().parent


def test_every_own_route_is_asked_here() -> None:
    app = create_app(BoardSettings(base_dir=Path("/memory")), MemorySurface())
    own = sorted(path for path in app.openapi()["paths"] if path.startswith("/api/v1/"))
    assert {"/api/v1/runs", "/api/v1/scalars", "/api/v1/graph", "/api/v1/lineage"} <= set(own)
    sources = "".join(path.read_text() for path in HERE.glob("test_*_routes.py"))
    asked = [(f'"{path}"', f'"{path}?', f'"{path[8:]}"', f'"{path[8:]}?') for path in own]
    untested = [path for path, ways in zip(own, asked, strict=True) if not any(
        way in sources for way in ways)]  # fmt: skip
    assert untested == []
