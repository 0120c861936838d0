"""JSON responses as every route of the dashboard sends them."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import Response

_NUMPY = orjson.OPT_SERIALIZE_NUMPY


def json_response(body: Any) -> Response:
    """``body`` encoded by orjson (numpy arrays included; NaN and infinities as null)."""
    return Response(orjson.dumps(body, option=_NUMPY), media_type="application/json")
