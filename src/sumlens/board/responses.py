"""Responses as every route of the dashboard sends them: JSON, and images' media types."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import Response

_NUMPY = orjson.OPT_SERIALIZE_NUMPY


def json_response(body: Any) -> Response:
    """``body`` encoded by orjson (numpy arrays included; NaN and infinities as null)."""
    return Response(orjson.dumps(body, option=_NUMPY), media_type="application/json")


_IMAGE_TYPES = ((b"\x89PNG", "image/png"), (b"\xff\xd8", "image/jpeg"), (b"GIF8", "image/gif"))


def image_media_type(encoded: bytes) -> str | None:
    """The media type of an encoded image a browser shows (PNG, JPEG, GIF); None otherwise."""
    return next((media for magic, media in _IMAGE_TYPES if encoded.startswith(magic)), None)
