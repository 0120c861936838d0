"""PLACEHOLDER being written now: the audio view's routes under ``/api/v1``."""

from __future__ import annotations

from fastapi import APIRouter

from sumlens.board.data.surface import ReadSurface


def make_audio_router(surface: ReadSurface) -> APIRouter:
    """The audio view's routes over ``surface``."""
    return APIRouter(prefix="/api/v1")
