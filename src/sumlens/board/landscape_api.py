"""The landscape view's routes under ``/api/v1`` (being built; see the issue)."""

from __future__ import annotations

from fastapi import APIRouter

from sumlens.board.loader import Loader


def make_landscape_router(loader: Loader) -> APIRouter:
    """The landscape view's routes over ``loader``'s runs."""
    del loader
    return APIRouter(prefix="/api/v1")
