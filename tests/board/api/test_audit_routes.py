"""``GET /api/v1/audit`` (``board/api/audit.py``) over the real app, on each database: the
entries newest first, a page at a time, and bad paging refused naming the parameter."""

from __future__ import annotations

from pathlib import Path

from helpers.board import route_client
from helpers.memory_surface import MemorySurface

from sumlens.board.settings import BoardSettings
from sumlens.board.state.audit import MAX_PAGE, AuditEntry


def test_the_audit_log_comes_a_page_at_a_time(tmp_path: Path, state_url: str | None) -> None:
    settings = BoardSettings(base_dir=Path("/memory"), workspace=tmp_path, state=state_url)
    with route_client(MemorySurface(), settings) as client:
        shared = client.app.state.shared
        for i in range(3):
            shared.audit.record(
                AuditEntry(10.0 + i, "ann", "editor", "view.save", f"v{i}", "", "r1")
            )
        ours = [entry for entry in client.get("/api/v1/audit").json()["entries"]
                if entry["action"] == "view.save"]  # fmt: skip
        assert [entry["target"] for entry in ours] == ["v2", "v1", "v0"]
        assert set(ours[0]) == {"id", "at", "user", "role", "action", "target", "detail",
                                "replica"}  # fmt: skip
        first = client.get("/api/v1/audit", params={"limit": 1}).json()
        assert len(first["entries"]) == 1 and first["next"] == first["entries"][0]["id"]
        after = client.get("/api/v1/audit", params={"limit": 1, "before": first["next"]})
        assert after.json()["entries"][0]["id"] < first["next"]
        for params in ({"limit": 0}, {"limit": MAX_PAGE + 1}, {"before": 0}, {"before": "x"}):
            refused = client.get("/api/v1/audit", params=params)
            assert refused.status_code == 422, params
            assert next(iter(params)) in refused.json()["detail"]


def test_an_empty_audit_log_has_no_next(tmp_path: Path) -> None:
    settings = BoardSettings(base_dir=Path("/memory"), workspace=tmp_path)
    with route_client(MemorySurface(), settings) as client:
        assert client.get("/api/v1/audit").json() == {"entries": [], "next": None}


def test_a_before_past_any_id_is_refused_naming_it(tmp_path: Path) -> None:
    settings = BoardSettings(base_dir=Path("/memory"), workspace=tmp_path)
    with route_client(MemorySurface(), settings) as client:
        answer = client.get("/api/v1/audit", params={"before": 10**20})
        assert answer.status_code == 422 and "before=" in answer.json()["detail"]
