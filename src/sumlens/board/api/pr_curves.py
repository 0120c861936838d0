"""PLACEHOLDER being written now: the pr_curves view's routes under ``/api/v1``."""

from __future__ import annotations

from fastapi import APIRouter

from sumlens.board.data.surface import ReadSurface


def make_pr_curve_router(surface: ReadSurface) -> APIRouter:
    """The pr_curves view's routes over ``surface``."""
    return APIRouter(prefix="/api/v1")
