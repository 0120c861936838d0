"""The dashboard's static files (page, ES modules, styles, plotly.js): compressed once, revalidated.

plotly.min.js alone is 4.8 MB, which took seconds to arrive on a loaded machine. So each file
is read, hashed (BLAKE2b) and gzip-compressed once per process, and again only when its size
or modification time changes; a request that accepts gzip gets the compressed bytes (brotli
would need a dependency the dashboard does not have).

Every answer carries a strong ETag (the content's hash; another one for the gzip bytes, as
they are another representation) and ``Cache-Control: no-cache``: the browser keeps the file
and asks each time whether it changed, which costs a ``304`` without a body when it did not.
A long ``max-age`` would need URLs that change with the content; the pages load theirs by
fixed names (``static/app.js``, ``static/vendor/plotly.min.js``), so with a max-age an
upgraded file would be served stale from the browser's cache.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from fastapi import Request
from fastapi.responses import JSONResponse, Response

MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".wasm": "application/wasm",
}
"""Media types of what the pages load (the platform's table is not the same everywhere)."""
COMPRESSED_TYPES = ("text/", "application/json", "application/wasm", "image/svg+xml")
"""Media types worth compressing (images and fonts are compressed already)."""
GZIP_LEVEL = 9
"""Compression level: paid once per file and process, so the smallest output is worth it."""


@dataclass(frozen=True, slots=True)
class Asset:
    """One file as served: its bytes, their gzip form (None when it saves nothing) and tags."""

    stamp: tuple[int, int]
    media_type: str
    body: bytes
    etag: str
    gzipped: bytes | None
    gzip_etag: str


def load_asset(path: Path, stamp: tuple[int, int]) -> Asset:
    """Read, hash and (for text-like types) compress the file at ``path``."""
    body = path.read_bytes()
    media_type = MEDIA_TYPES.get(path.suffix.lower()) or (
        mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    )
    digest = hashlib.blake2b(body, digest_size=16).hexdigest()
    gzipped = None
    if media_type.startswith(COMPRESSED_TYPES):
        packed = gzip.compress(body, GZIP_LEVEL, mtime=0)  # mtime 0: the same bytes every time
        gzipped = packed if len(packed) < len(body) else None
    return Asset(stamp, media_type, body, f'"{digest}"', gzipped, f'"{digest}-gzip"')


class AssetCache:
    """The assets served so far, each loaded once per change of its file."""

    def __init__(self) -> None:
        self._assets: dict[Path, Asset] = {}
        self._locks: dict[Path, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, path: Path) -> Asset:
        """The asset of ``path`` (``OSError`` when it cannot be read)."""
        stat = os.stat(path)
        stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            asset = self._assets.get(path)
            if asset is not None and asset.stamp == stamp:
                return asset
            lock = self._locks.setdefault(path, threading.Lock())
        with lock:  # one load per change, however many requests arrive meanwhile
            asset = self._assets.get(path)
            if asset is None or asset.stamp != stamp:
                asset = load_asset(path, stamp)
                with self._lock:
                    self._assets[path] = asset
        return asset

    def response(self, request: Request, path: Path) -> Response:
        """The answer to a GET or HEAD of the file at ``path`` (404 when it is not there)."""
        try:
            asset = self.get(path)
        except OSError:
            return JSONResponse({"detail": f"no static file {path.name!r}"}, status_code=404)
        packed = asset.gzipped is not None and accepts_gzip(
            request.headers.get("accept-encoding", "")
        )
        etag = asset.gzip_etag if packed else asset.etag
        headers = {"ETag": etag, "Cache-Control": "no-cache", "Vary": "Accept-Encoding"}
        if etag_matches(request.headers.get("if-none-match", ""), etag):
            return Response(status_code=304, headers=headers)
        if packed:
            headers["Content-Encoding"] = "gzip"
        body = asset.gzipped if packed else asset.body
        return Response(body, media_type=asset.media_type, headers=headers)


def accepts_gzip(header: str) -> bool:
    """Whether an ``Accept-Encoding`` header allows gzip (by name or ``*``, with q > 0)."""
    weights: dict[str, float] = {}
    for part in header.split(","):
        name, _, params = part.partition(";")
        weight = 1.0
        for param in params.split(";"):
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        weights[name.strip().lower()] = weight
    for name in ("gzip", "x-gzip", "*"):
        if name in weights:
            return weights[name] > 0
    return False


def etag_matches(header: str, etag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``etag`` (weakly, as RFC 9110 asks) or ``*``."""
    for item in header.split(","):
        tag = item.strip()
        if tag == "*" or tag.removeprefix("W/") == etag:
            return True
    return False


def static_file(root: Path, name: str) -> Path | None:
    """The file ``name`` names under ``root`` (a resolved path); None for anything outside
    it (``..``, an absolute name, a link leading out) or not a file."""
    try:
        path = (root / name).resolve()
    except (OSError, ValueError):  # a loop of links, a NUL byte
        return None
    if not path.is_relative_to(root) or not path.is_file():
        return None
    return path
