"""Requests a hostile page or client can send: patterns that backtrack, and other sites' pages.

Over the real server on 127.0.0.1. A pattern that makes Python's ``re`` backtrack for
minutes (holding the GIL, so nothing else is answered) must be matched in bounded time,
and a pattern the engine cannot take is refused with a 400 naming the parameter.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from urllib.parse import quote, urlencode

import pytest
from helpers.board import free_port, running_server, wait_until, write_run

from sumlens.board.settings import BoardSettings

EVIL = "(.*)*(.*)*(.*)*(.*)*(.*)*(.*)*$x"
"""Python's ``re`` needs hours for this against a 20-character tag (it can never match)."""
LONG_TAG = "train/loss_of_the_first_head"
BOUND = 30.0
"""Seconds any answer below may take on a loaded machine (a bound on a wait, not a budget)."""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("guards")
    write_run(root / "base" / "a", range(1, 50), tags=(LONG_TAG, "acc"))
    settings = BoardSettings.create(
        root / "base", port=free_port(), workspace=root / "ws", reload_interval=0.2
    )
    with running_server(settings) as served:
        wait_until(lambda: _json(served, "/api/v1/runs")[1].get("loading") is False)
        yield served


def _get(url: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    netloc = url.split("//", 1)[1].split("/", 1)[0]
    connection = http.client.HTTPConnection(netloc, timeout=BOUND)
    try:
        connection.request("GET", url.split(netloc, 1)[1] + path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _json(url: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    status, body = _get(url, path, headers)
    return status, json.loads(body)


def test_a_backtracking_pattern_does_not_freeze_the_server(url: str) -> None:
    answers: list[tuple[int, dict]] = []
    query = f"/api/v1/scalars?run=./a&tag_regex={quote(EVIL)}"
    evil = threading.Thread(target=lambda: answers.append(_json(url, query)), daemon=True)
    evil.start()
    status, health = _json(url, "/api/v1/health")  # answered while the pattern runs
    assert status == 200 and health["status"] == "ok"
    evil.join(BOUND)
    assert answers == [(200, answers[0][1])] and answers[0][1]["series"] == []
    status, body = _get(url, f"/api/v1/scalars/download?run=./a&tag_regex={quote(EVIL)}")
    assert status == 200 and body.decode().splitlines() == ["run,rank,tag,step,wall_time,value"]


def test_patterns_still_select(url: str) -> None:
    status, got = _json(url, "/api/v1/scalars?" + urlencode({"run": "./a", "tag_regex": "^tr.*d$"}))
    assert status == 200 and [s["tag"] for s in got["series"]] == [LONG_TAG]


@pytest.mark.parametrize("pattern", ["(unclosed", r"(a)\1", "(?=loss)", "a{5000}"])
@pytest.mark.parametrize("route", ["scalars", "scalars/download"])
def test_a_pattern_re2_refuses_is_a_400_naming_it(url: str, route: str, pattern: str) -> None:
    status, body = _json(url, f"/api/v1/{route}?" + urlencode({"run": "./a", "tag_regex": pattern}))
    assert status == 400
    detail = body["detail"]
    assert f"tag_regex={pattern!r}" in detail and "RE2" in detail and "\n" not in detail


def test_pages_of_other_sites_are_refused(url: str) -> None:
    for path in ("/api/v1/health", "/api/v1/runs", "/static/app.js", "/"):
        status, body = _get(url, path, {"Sec-Fetch-Site": "cross-site"})
        assert status == 403, path
        assert "cross-site" in json.loads(body)["detail"]
    for site in ("same-origin", "same-site", "none", None):
        headers = {} if site is None else {"Sec-Fetch-Site": site}
        status, _ = _get(url, "/api/v1/health", headers)
        assert status == 200, site
