"""Requests a hostile page or client can send: patterns that backtrack or cost too much,
other origins' pages, and Host headers that only look local.

Over the real server on 127.0.0.1. A pattern that makes Python's ``re`` backtrack for
minutes (holding the GIL, so nothing else is answered) must be matched in bounded time; a
pattern the engine cannot take, or one past the bounds on what a pattern may cost (RE2 is
linear, but nested capture groups cost minutes and gigabytes), is refused with a 400
naming the parameter and the bound, before anything is matched. A request another
origin's page started (``Sec-Fetch-Site: cross-site`` or ``same-site``) is refused before
its parameters are even read. Every answer says who may frame it: by default the
dashboard's own origin alone; with ``frame_ancestors``, the origins listed too, whose
frames' navigations to the page (and to nothing else) pass the guard.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from urllib.parse import quote, urlencode

import pytest
from helpers.board import free_port, running_server, wait_until, write_run

from sumlens.board.query.selection import (
    MAX_PATTERN_GROUPS,
    MAX_PATTERN_LENGTH,
    MAX_PATTERN_NESTING,
    MAX_PATTERN_PROGRAM,
)
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


FRAME_ANCESTORS = ("http://localhost:*", "https://hub.example.org")


@pytest.fixture(scope="module")
def framed_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server that lets the pages of ``FRAME_ANCESTORS`` frame it."""
    root = tmp_path_factory.mktemp("framed")
    write_run(root / "base" / "a", range(1, 5))
    settings = BoardSettings.create(
        root / "base", port=free_port(), workspace=root / "ws", frame_ancestors=FRAME_ANCESTORS
    )
    with running_server(settings) as served:
        yield served


def _exchange(
    url: str, path: str, headers: dict[str, str] | None = None, method: str = "GET"
) -> tuple[int, bytes, http.client.HTTPMessage]:
    """Status, body and headers of one request to the server at ``url``."""
    netloc = url.split("//", 1)[1].split("/", 1)[0]
    connection = http.client.HTTPConnection(netloc, timeout=BOUND)
    try:
        connection.request(method, url.split(netloc, 1)[1] + path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read(), response.headers
    finally:
        connection.close()


def _get(
    url: str, path: str, headers: dict[str, str] | None = None, method: str = "GET"
) -> tuple[int, bytes]:
    status, body, _ = _exchange(url, path, headers, method)
    return status, body


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


NESTED = "(" * 5000 + "a" + ")" * 5000
"""The attack run's 10 KB pattern: 0.2 s and 400 MB a tag in RE2, minutes for a big run."""


@pytest.mark.parametrize(
    ("pattern", "bound"),
    [
        (NESTED, f"at most {MAX_PATTERN_LENGTH}"),
        ("(" * 17 + "loss" + ")" * 17, f"nest at most {MAX_PATTERN_NESTING}"),
        ("(.?){1000}", f"at most {MAX_PATTERN_PROGRAM:,}"),
    ],
    ids=["long", "nested", "program"],
)
@pytest.mark.parametrize("route", ["scalars", "scalars/download", "snapshot", "groups"])
def test_a_pattern_past_a_bound_is_a_400_naming_it_and_the_bound(
    url: str, route: str, pattern: str, bound: str
) -> None:
    name = "group_regex" if route == "groups" else "tag_regex"
    path = "scalars/groups" if route == "groups" else route
    query = {"run": "./a", "tag": "acc", name: pattern}
    status, body = _json(url, f"/api/v1/{path}?" + urlencode({**query, "by": "regex"}))
    assert status == 400
    detail = body["detail"]
    assert detail.startswith(f"{name}=") and bound in detail and "\n" not in detail
    assert len(detail) < 400  # the 10 KB pattern is not repeated back whole


def test_group_regex_keeps_at_most_its_bound_of_capture_groups(url: str) -> None:
    """Capture groups name a group: ``group_regex`` keeps them, up to a bound; a pattern
    that only selects (``tag_regex``) may have any number, RE2 then ignores them."""
    many = "(a)?" * (MAX_PATTERN_GROUPS + 1) + "acc"
    status, body = _json(
        url,
        "/api/v1/scalars/groups?" + urlencode({"run": "./a", "tag": "acc", "group_regex": many}),
    )
    assert status == 400 and f"at most {MAX_PATTERN_GROUPS}" in body["detail"]
    status, got = _json(url, "/api/v1/scalars?" + urlencode({"run": "./a", "tag_regex": many}))
    assert status == 200 and [s["tag"] for s in got["series"]] == ["acc"]
    at_bound = "(a)?" * (MAX_PATTERN_GROUPS - 1) + "(.)"
    status, got = _json(
        url,
        "/api/v1/scalars/groups?"
        + urlencode({"run": "./a", "tag": "acc", "group_regex": at_bound}),
    )
    assert status == 200 and [g["name"] for g in got["groups"]] == [" " * 15 + "."]


def test_patterns_within_the_bounds_select(url: str) -> None:
    nested = "(" * MAX_PATTERN_NESTING + "acc" + ")" * MAX_PATTERN_NESTING
    literal = r"[(((((((((((((((((]?\(?(?:\Q((((((((((((((((((\E)?acc"  # literal parentheses
    for pattern in (nested, literal, "(?:[a-z]{1,50}/)*acc$"):
        status, got = _json(
            url, "/api/v1/scalars?" + urlencode({"run": "./a", "tag_regex": pattern})
        )
        assert status == 200 and [s["tag"] for s in got["series"]] == ["acc"], pattern


def test_pages_of_other_sites_are_refused(url: str) -> None:
    for path in ("/api/v1/health", "/api/v1/runs", "/static/app.js", "/"):
        status, body = _get(url, path, {"Sec-Fetch-Site": "cross-site"})
        assert status == 403, path
        assert "cross-site" in json.loads(body)["detail"]
    for site in ("same-origin", "none", None):
        headers = {} if site is None else {"Sec-Fetch-Site": site}
        status, _ = _get(url, "/api/v1/health", headers)
        assert status == 200, site


@pytest.mark.parametrize("site", ["same-site", "cross-site"])
@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "PUT"])
def test_a_request_another_origin_started_does_no_work(url: str, site: str, method: str) -> None:
    """A page on another port of 127.0.0.1 is same-site, not same-origin: its ``<img>``
    is refused like another site's, before the pattern is even parsed (a bad one would
    be a 400) and before the body is read."""
    bad = "/api/v1/scalars?" + urlencode({"run": "./a", "tag_regex": "(unclosed"})
    path = "/api/v1/annotation?run=./a" if method == "PUT" else bad
    status, body = _get(url, path, {"Sec-Fetch-Site": site, "Content-Type": "text/plain"}, method)
    assert status == 403
    if method != "HEAD":
        assert f"Sec-Fetch-Site: {site}" in json.loads(body)["detail"]
    status, body = _get(url, bad, {"Sec-Fetch-Site": "same-origin"})
    assert status == 400 and "tag_regex='(unclosed'" in json.loads(body)["detail"]  # read


NAVIGATION = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-User": "?1"}
"""What Chromium sends when a person clicks a link that opens a page in the tab."""


def test_a_person_may_open_the_page_from_a_link_on_another_origin(url: str) -> None:
    """A click on a link to the dashboard in a notebook on another port opens it; the
    same link to a route that computes, or a navigation no person made, is refused."""
    for site in ("same-site", "cross-site"):
        status, _ = _get(url, "/", {"Sec-Fetch-Site": site, **NAVIGATION})
        assert status == 200, site
        status, _ = _get(url, "/api/v1/runs", {"Sec-Fetch-Site": site, **NAVIGATION})
        assert status == 403, site
        scripted = {**NAVIGATION, "Sec-Fetch-User": "?0"}
        status, _ = _get(url, "/", {"Sec-Fetch-Site": site, **scripted})
        assert status == 403, site
        framed = {**NAVIGATION, "Sec-Fetch-Dest": "iframe"}  # no frame_ancestors here
        status, _ = _get(url, "/", {"Sec-Fetch-Site": site, **framed})
        assert status == 403, site


FRAMING = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}
"""What Chromium sends when an ``<iframe>`` loads a page."""


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/", {}),
        ("/api/v1/health", {}),
        ("/api/v1/runs", {"Sec-Fetch-Site": "cross-site"}),  # the guard's own refusal
        ("/", {"Host": "evil.example"}),
    ],
)
def test_only_the_dashboards_own_origin_may_frame_it_by_default(
    url: str, path: str, headers: dict[str, str]
) -> None:
    _, _, answered = _exchange(url, path, headers)
    assert answered["X-Frame-Options"] == "SAMEORIGIN"
    assert answered["Content-Security-Policy"] == "frame-ancestors 'self'"
    assert answered["X-Content-Type-Options"] == "nosniff"


def test_the_listed_origins_may_frame_the_dashboard(framed_url: str) -> None:
    """``X-Frame-Options`` can't name an origin: it is left out, the policy lists them."""
    for path in ("/", "/api/v1/health", "/static/app.js"):
        status, _, answered = _exchange(framed_url, path)
        assert status == 200, path
        assert answered["Content-Security-Policy"] == (
            "frame-ancestors 'self' http://localhost:* https://hub.example.org"
        )
        assert answered["X-Frame-Options"] is None


@pytest.mark.parametrize("site", ["same-site", "cross-site"])
def test_a_listed_origins_frame_opens_the_page_and_nothing_else(framed_url: str, site: str) -> None:
    """The frame's navigation to the page passes (the browser shows it only in a listed
    origin's frame); to a route, as another kind of load, or by another method, it is
    refused as before."""
    for method in ("GET", "HEAD"):
        status, _ = _get(framed_url, "/", {"Sec-Fetch-Site": site, **FRAMING}, method)
        assert status == 200, method
    refused = [
        ("GET", "/api/v1/runs", FRAMING),
        ("GET", "/api/v1/health", FRAMING),
        ("GET", "/static/app.js", FRAMING),
        ("POST", "/", FRAMING),
        ("GET", "/", {**FRAMING, "Sec-Fetch-Mode": "no-cors"}),
        ("GET", "/", {**FRAMING, "Sec-Fetch-Dest": "frame"}),
        ("GET", "/", {**FRAMING, "Sec-Fetch-Dest": "image"}),
        ("GET", "/", {**NAVIGATION, "Sec-Fetch-User": "?0"}),
        ("PUT", "/api/v1/annotation?run=./a", FRAMING),
    ]
    for method, path, headers in refused:
        status, _ = _get(framed_url, path, {"Sec-Fetch-Site": site, **headers}, method)
        assert status == 403, (method, path, headers)


@pytest.mark.parametrize(
    "host",
    [
        "[::1].evil.com",
        "[::1]evil",
        "[::1]:80.evil.com",
        "[::1]:80:80",
        "[evil.com]",
        "[::1",
        "127.0.0.1.evil.com",
        "127.0.0.1:80:80",
        "127.0.0.1:http",
        "localhost.evil.com",
        "evil.com",
        "evil.com:8080",
        "::1",
    ],
)
def test_a_host_header_that_only_looks_local_is_refused(url: str, host: str) -> None:
    status, body = _get(url, "/api/v1/health", {"Host": host})
    assert status == 400, host
    assert "Host header not allowed" in json.loads(body)["detail"]


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "127.0.0.1:8080", "LOCALHOST", "localhost:1", "localhost:", "[::1]", "[::1]:80"],
)
def test_local_host_headers_pass(url: str, host: str) -> None:
    status, _ = _get(url, "/api/v1/health", {"Host": host})
    assert status == 200, host
