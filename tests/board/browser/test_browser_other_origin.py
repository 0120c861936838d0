"""Pages of other origins in Chromium: what they make the dashboard do.

A page on another port of 127.0.0.1 is ``same-site`` to the dashboard (not same-origin):
Chromium sends ``Sec-Fetch-Site: same-site`` with its ``<img>``, and the server used to
answer it. An ``<img>`` there whose URL carries a pattern past the bounds held both cores
for minutes. Now such a request is refused before its parameters are read (a pattern the
server would refuse with a 400 gets a 403: it was not even parsed), from a page on
another port as from a page of another site (``localhost``: cross-site). A person
clicking a link to the dashboard on such a page still opens it, and the page then works.

Chromium blocks the page from reading such an answer (``ERR_BLOCKED_BY_ORB``: JSON to an
``<img>``), so what it sent and what the server answered are read from its DevTools
protocol (the request's headers as sent, the response's status as received).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pytest
from helpers.board_data import RUN_IDS
from helpers.board_page import WAIT_MS
from helpers.page_server import page_server
from playwright.sync_api import Browser, Page

UNPARSABLE = "(unclosed"
"""A pattern the server answers 400 to once it reads it."""


@pytest.fixture(scope="module")
def other_port(board_url: str) -> Iterator[int]:
    """A port of 127.0.0.1 serving pages that point at the dashboard at ``board_url``."""
    scalars = f"{board_url}/api/v1/scalars?run={RUN_IDS[0]}&tag_regex={quote(UNPARSABLE)}"
    pages = {
        "/img": f'<img src="{scalars}">',
        "/fetch": f"<script>fetch({scalars!r}, {{mode: 'no-cors'}}).catch(() => 0)</script>",
        "/links": f'<a id="page" href="{board_url}/">dashboard</a>'
        f'<a id="route" href="{board_url}/api/v1/runs">runs</a>',
        "/script": f"<script>location.href = {board_url + '/'!r}</script>",
    }
    with page_server(pages) as port:
        yield port


@dataclass
class Exchange:
    """A request of the page as Chromium sent it, and the status it received."""

    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    status: int | None = None


@pytest.fixture
def tab(browser: Browser) -> Iterator[tuple[Page, dict[str, Exchange]]]:
    """A fresh page of its own context (failed loads are what these tests expect) and
    its requests by DevTools id."""
    context = browser.new_context()
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    seen: dict[str, Exchange] = {}
    devtools = context.new_cdp_session(page)
    devtools.send("Network.enable")

    def sent(event: dict[str, Any]) -> None:
        seen.setdefault(event["requestId"], Exchange()).url = event["request"]["url"]

    def headers(event: dict[str, Any]) -> None:
        got = {k.lower(): v for k, v in event["headers"].items()}
        seen.setdefault(event["requestId"], Exchange()).headers = got

    def received(event: dict[str, Any]) -> None:
        seen.setdefault(event["requestId"], Exchange()).status = event["statusCode"]

    devtools.on("Network.requestWillBeSent", sent)
    devtools.on("Network.requestWillBeSentExtraInfo", headers)
    devtools.on("Network.responseReceivedExtraInfo", received)
    yield page, seen
    context.close()


def _answered(page: Page, seen: dict[str, Exchange], path: str, exact: bool = False) -> Exchange:
    """The first request to a URL holding ``path`` (``exact``: that URL) once its answer
    has arrived (waited for, bounded)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        found = [
            e
            for e in seen.values()
            if (e.url == path if exact else path in e.url) and e.status is not None
        ]
        if found:
            return found[0]
        assert time.monotonic() < deadline, f"no answer to {path}"
        page.wait_for_timeout(50)  # lets Playwright deliver the DevTools events


def _other(host: str, port: int, path: str) -> str:
    return f"http://{host}:{port}{path}"


@pytest.mark.parametrize(
    ("host", "site"), [("127.0.0.1", "same-site"), ("localhost", "cross-site")]
)
@pytest.mark.parametrize("how", ["img", "fetch"])
def test_a_request_another_origin_started_does_no_work(
    tab: tuple[Page, dict[str, Exchange]], other_port: int, host: str, site: str, how: str
) -> None:
    page, seen = tab
    page.goto(_other(host, other_port, f"/{how}"))
    exchange = _answered(page, seen, "/api/v1/scalars")
    assert exchange.headers["sec-fetch-site"] == site
    assert exchange.status == 403  # not 400: the pattern was never parsed


def test_the_same_request_from_the_dashboard_itself_is_read(
    tab: tuple[Page, dict[str, Exchange]], board_url: str
) -> None:
    """The contrast: from the dashboard's own page (same-origin), the pattern is parsed."""
    page, _ = tab
    page.goto(f"{board_url}/")
    answer = page.evaluate(
        """async (url) => { const r = await fetch(url); return [r.status, await r.json()]; }""",
        f"{board_url}/api/v1/scalars?run={RUN_IDS[0]}&tag_regex={quote(UNPARSABLE)}",
    )
    assert answer[0] == 400 and f"tag_regex={UNPARSABLE!r}" in answer[1]["detail"]


def test_a_person_opens_the_dashboard_from_a_link_on_another_port(
    tab: tuple[Page, dict[str, Exchange]], board_url: str, other_port: int
) -> None:
    """A click on a link to the page (a notebook on another port) opens a working
    dashboard; a link to a route is refused, and so is a navigation a script made."""
    page, seen = tab
    page.goto(_other("127.0.0.1", other_port, "/links"))
    with page.expect_navigation() as opened:
        page.click("#page")
    assert opened.value is not None and opened.value.status == 200
    page.wait_for_function(
        "(id) => [...document.querySelectorAll('.run-link')].some((a) => a.textContent === id)",
        arg=RUN_IDS[0],
    )
    runs = _answered(page, seen, "/api/v1/runs")
    assert runs.headers["sec-fetch-site"] == "same-origin" and runs.status == 200

    page.goto(_other("127.0.0.1", other_port, "/links"))
    with page.expect_navigation() as opened:
        page.click("#route")
    assert opened.value is not None and opened.value.status == 403

    seen.clear()
    page.goto(_other("127.0.0.1", other_port, "/script"))
    scripted = _answered(page, seen, f"{board_url}/", exact=True)
    assert "sec-fetch-user" not in scripted.headers and scripted.status == 403
