"""Writes from other origins change nothing: by header (a wrong ``Origin``, a
``Sec-Fetch-Site`` that is not same-origin) and in Chromium, from a page on another port
of 127.0.0.1: a form POST, ``fetch`` with ``mode: "no-cors"`` and an ``<img>``.

The server runs in ``--auth none`` on loopback, where everyone is the local admin: only
the origin checks stand between another page and a write.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from auth_cases import BOUND, NOTE, RUN
from helpers.board import free_port, running_server, wait_until
from helpers.page_server import page_server
from playwright.sync_api import Browser

from sumlens.board.settings import BoardSettings

WAIT_MS = 30_000


@pytest.fixture(scope="module")
def url(auth_base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = BoardSettings.create(
        auth_base, port=free_port(), workspace=tmp_path_factory.mktemp("ws"), reload_interval=0.2
    )
    with running_server(settings) as served:
        wait_until(lambda: httpx.get(served + "/api/v1/runs").json()["runs"], timeout=BOUND)
        yield served


def _unchanged(url: str) -> None:
    """Nothing was written: no annotation, no audit entry."""
    notes = httpx.get(url + "/api/v1/annotations", timeout=BOUND).json()
    assert notes["annotations"] == {} and notes["group_colours"] == {}
    assert httpx.get(url + "/api/v1/audit", timeout=BOUND).json()["entries"] == []


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:1"},
        {"Origin": "https://127.0.0.1"},
        {"Sec-Fetch-Site": "same-site"},
        {"Sec-Fetch-Site": "none"},
    ],
)
def test_a_write_with_another_origin_is_refused(url: str, headers: dict[str, str]) -> None:
    answer = httpx.put(url + "/api/v1/annotation", params={"run": RUN}, json=NOTE, headers=headers)
    assert answer.status_code == 403, answer.text
    _unchanged(url)


def test_the_dashboards_own_origin_and_scripts_may_write(
    url: str, auth_base: Path, tmp_path: Path
) -> None:
    settings = BoardSettings.create(
        auth_base, port=free_port(), workspace=tmp_path / "ws", reload_interval=0.2
    )
    with running_server(settings) as mine:
        port = mine.rsplit(":", 1)[1]
        own = {"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"}
        wait_until(lambda: httpx.get(mine + "/api/v1/runs").json()["runs"], timeout=BOUND)
        for headers in (own, {}):
            answer = httpx.put(
                mine + "/api/v1/annotation", params={"run": RUN}, json=NOTE, headers=headers
            )
            assert answer.status_code == 200, answer.text


@pytest.fixture(scope="module")
def other_origin(url: str) -> Iterator[str]:
    """Pages on another port of 127.0.0.1 that try to write to the dashboard at ``url``."""
    payload = json.dumps({"annotations": {RUN: NOTE}})
    pages = {
        "/form": f'<form id="f" method="POST" enctype="text/plain" '
        f"action=\"{url}/api/v1/annotations\"><input name='{payload[:-2]}' "
        f"value='{payload[-2:]}'></form><script>document.getElementById('f').submit()</script>",
        "/fetch": "<script>window.done = Promise.all(["
        f"fetch({url + '/api/v1/annotations'!r}, {{method: 'POST', mode: 'no-cors', "
        f"body: {payload!r}, headers: {{'Content-Type': 'text/plain'}}}}).catch(() => 0), "
        f"fetch({url + '/api/v1/annotation?run=' + RUN!r}, {{mode: 'no-cors', "
        "credentials: 'include'}).catch(() => 0)])</script>",
        "/img": f'<img src="{url}/api/v1/annotation?run={RUN}">'
        f'<img src="{url}/api/v1/run-state?run={RUN}">',
    }
    with page_server(pages) as port:
        yield f"http://127.0.0.1:{port}"


def test_pages_of_another_origin_change_nothing_in_chromium(
    url: str, other_origin: str, browser: Browser
) -> None:
    answers: list[tuple[str, int]] = []
    page = browser.new_page()
    try:
        page.set_default_timeout(WAIT_MS)
        page.on(
            "response",
            lambda response: (
                answers.append((response.url, response.status))
                if response.url.startswith(url)
                else None
            ),
        )
        with page.expect_response(lambda r: r.url.startswith(url + "/api/v1/annotations")):
            page.goto(other_origin + "/form")
        page.goto(other_origin + "/fetch")
        page.evaluate("window.done")
        page.goto(other_origin + "/img", wait_until="load")
    finally:
        page.close()
    posted = [status for where, status in answers if where.endswith("/api/v1/annotations")]
    assert posted and all(status == 403 for status in posted), answers
    _unchanged(url)
