"""The session routes (``board/server/signin.py``) over an in-memory read surface, in token
mode: ``GET /api/v1/session`` says who asks and why they may not write, ``POST`` signs in
with a token (a wrong one is a 401 that never echoes it), ``DELETE`` signs out. The whole
sign-in story, with real servers and a browser, is in ``tests/board/auth/``."""

from __future__ import annotations

from pathlib import Path

from helpers.board import route_client
from helpers.memory_surface import MemorySurface

from sumlens.board.settings import BoardSettings

TOKEN = "editor-token-0123456789abcdef"


def _settings(tmp_path: Path) -> BoardSettings:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"eddie:{TOKEN}\n")
    return BoardSettings.create(tmp_path, auth="token", token_file=tokens)


def test_a_session_is_opened_read_and_closed(tmp_path: Path) -> None:
    with route_client(MemorySurface(), _settings(tmp_path)) as client:
        nobody = client.get("/api/v1/session").json()
        assert nobody["mode"] == "token" and nobody["user"] is None
        assert nobody["can_write"] is False and "sign" in nobody["why"]
        assert client.get("/api/v1/runs").status_code == 401

        signed = client.post("/api/v1/session", json={"token": TOKEN})
        assert signed.status_code == 200, signed.text
        assert "sumlens_session" in client.cookies
        me = client.get("/api/v1/session").json()
        assert (me["user"], me["role"], me["can_write"], me["why"]) == (
            "eddie",
            "editor",
            True,
            None,
        )
        assert client.get("/api/v1/runs").status_code == 200

        assert client.delete("/api/v1/session").status_code in (200, 204)
        assert client.get("/api/v1/session").json()["user"] is None
        assert client.get("/api/v1/runs").status_code == 401


def test_a_wrong_token_is_refused_without_echoing_it(tmp_path: Path) -> None:
    wrong = "not-the-token-of-anyone-here"
    with route_client(MemorySurface(), _settings(tmp_path)) as client:
        refused = client.post("/api/v1/session", json={"token": wrong})
        assert refused.status_code == 401
        assert wrong not in refused.text and TOKEN not in refused.text
        assert "sumlens_session" not in client.cookies
