"""PLACEHOLDER being written now: the embeddings view's routes under ``/api/v1``."""

from __future__ import annotations

from fastapi import APIRouter

from sumlens.board.data.surface import ReadSurface


def make_embedding_router(surface: ReadSurface) -> APIRouter:
    """The embeddings view's routes over ``surface``."""
    return APIRouter(prefix="/api/v1")
