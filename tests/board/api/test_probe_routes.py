"""The readiness probe (``board/api/probes.py``) over an in-memory read surface: 503
naming what it waits for while the first pass goes on, 200 once it is done, under the URL
prefix too, and open to a plain GET like the health probe."""

from __future__ import annotations

from pathlib import Path

from helpers.board import route_client
from helpers.memory_surface import MemorySurface

from sumlens.board.settings import BoardSettings


def test_ready_waits_for_the_first_pass() -> None:
    surface = MemorySurface(loading=True)
    with route_client(surface) as client:
        waiting = client.get("/api/v1/ready")
        assert waiting.status_code == 503
        body = waiting.json()
        assert body["ready"] is False and body["waiting_for"] == ["runs"]
        assert "first pass over the base directory" in body["detail"]
        assert waiting.headers["cache-control"] == "no-store"
        surface.set_status(loading=False)
        ready = client.get("/api/v1/ready")
        assert ready.status_code == 200 and ready.json() == {"ready": True}


def test_ready_lives_under_the_prefix() -> None:
    settings = BoardSettings(base_dir=Path("/memory"), url_path_prefix="/sumlens")
    with route_client(MemorySurface(), settings) as client:
        assert client.get("/sumlens/api/v1/ready").json() == {"ready": True}
        assert client.get("/api/v1/ready").status_code == 404
