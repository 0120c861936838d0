"""Asking a server under test: clients that take no proxy from the environment."""

from __future__ import annotations

import urllib.request
from typing import Any

import httpx
import orjson

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def local(port: int, prefix: str = "") -> str:
    """The address of a server on 127.0.0.1:``port`` (and ``prefix``, a path)."""
    return f"http://127.0.0.1:{port}{prefix}"


def connect(base_url: str, timeout: float = 120) -> httpx.Client:
    """An HTTP client of ``base_url`` (no proxies from the environment)."""
    return httpx.Client(base_url=base_url, trust_env=False, timeout=timeout)


def get_body(http: httpx.Client, path: str, params: Any = None) -> bytes | None:
    """The body of ``GET path``, or None while the server does not answer it (yet)."""
    try:
        response = http.get(path, params=params)
    except httpx.TransportError:
        return None
    return response.content if response.status_code == 200 else None


def get_json(http: httpx.Client, path: str, params: Any = None) -> Any:
    """The JSON body of ``GET path``, or None while the server does not answer it (yet)."""
    body = get_body(http, path, params)
    return None if body is None else orjson.loads(body)


def fetch_bytes(url: str, timeout: float = 60) -> bytes:
    """The body of ``GET url`` through the standard library's plain client (the browser
    benchmarks time single big answers with it); an ``OSError`` when it fails."""
    with _NO_PROXY.open(url, timeout=timeout) as answer:
        return bytes(answer.read())
