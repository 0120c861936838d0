"""The readiness probe a load balancer or Kubernetes asks before sending a replica traffic.

``GET /api/v1/health`` (the run list's router) says the process answers: a liveness probe.
``GET /api/v1/ready`` says the replica can serve what a user asks for:

* the loader has finished its first pass over the base directory, so the run list is whole
  (a replica started late over a large bucket answers its health probe at once, but would
  show a short run list until then);
* the shared state (``app.state.shared``: annotations, saved views, the audit log, on
  SQLite or PostgreSQL) answers (its ``ready()``, one small query that never raises), so
  a write would land.

Ready: 200 ``{"ready": true}``. Not ready: 503 ``{"ready": false, "waiting_for": [...],
"detail": ...}``, ``waiting_for`` naming ``"runs"`` and/or ``"state"``. The probe never
blocks on the loader.
"""

from __future__ import annotations

from typing import Protocol

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from sumlens.board.data.surface import ReadSurface

_WHY = {
    "runs": "the first pass over the base directory is not done",
    "state": "the shared state (its database) does not answer",
}


class _Answering(Protocol):
    """What the probe asks of the shared state."""

    def ready(self) -> bool: ...


def make_probe_router(surface: ReadSurface) -> APIRouter:
    """``GET /api/v1/ready`` over ``surface`` and the application's shared state."""
    router = APIRouter(prefix="/api/v1")

    @router.get(
        "/ready",
        summary="Whether this replica can serve: the runs are listed and the state answers",
        responses={503: {"description": "not ready; waiting_for says for what"}},
    )
    def ready(request: Request) -> JSONResponse:
        waiting = []
        if surface.status()["loading"]:
            waiting.append("runs")
        shared: _Answering | None = getattr(request.app.state, "shared", None)
        if shared is not None and not shared.ready():
            waiting.append("state")
        if not waiting:
            return JSONResponse({"ready": True})
        return JSONResponse(
            {
                "ready": False,
                "waiting_for": waiting,
                "detail": "; ".join(_WHY[name] for name in waiting),
            },
            status_code=503,
            headers={"Cache-Control": "no-store"},
        )

    return router
