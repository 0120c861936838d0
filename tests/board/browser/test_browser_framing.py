"""Who may show the dashboard in a frame, in Chromium.

By default a page of the dashboard's own origin may (behind jupyter-server-proxy the
notebook and the dashboard share one), and no other: a page on another port of
127.0.0.1 (same-site) or on ``localhost`` (cross-site) that frames it gets nothing, and
the dashboard is asked for nothing but its page. A server started with
``frame_ancestors`` lets the pages of those origins frame it, and the page works there;
an origin it does not list still gets nothing, although the server answered the frame's
navigation: the browser keeps the policy.

Whether a frame got nothing is read after its ``load`` event (which a blocked frame
fires too): Chromium then shows its own error page there (``chrome-error://``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers.board import free_port, running_server
from helpers.board_data import RUN_IDS, wait_loaded
from helpers.board_page import WAIT_MS
from helpers.page_server import page_server
from playwright.sync_api import Browser, Page, Request

from sumlens.board.settings import BoardSettings

ERROR_PAGE = "chrome-error://chromewebdata/"
"""The address of the page Chromium shows in a frame whose content it refused."""
FRAMER = '<iframe src="{src}" width="900" height="600"></iframe>'
LOADED = "document.body.dataset.framed = 'yes'"
"""Set by the frame's ``load`` event (whether it showed the page or refused it)."""


@dataclass
class Tab:
    """A page of its own browser context, the URLs it requested and its script errors."""

    page: Page
    requested: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def frame_another_origin(self, host: str, port: int) -> None:
        """Open the framing page at ``host:port`` and wait until its frame has loaded."""
        self.page.goto(f"http://{host}:{port}/framer")
        self.page.wait_for_selector("body[data-framed='yes']", state="attached")

    def framed_address(self) -> str:
        """The address of the document in the page's one frame."""
        [child] = self.page.main_frame.child_frames
        return child.url

    def wait_runs_listed(self) -> None:
        """Until the frame's dashboard lists the first run (bounded)."""
        row = self.page.frame_locator("iframe").locator(
            ".run-row:not([hidden]) .run-link", has_text=RUN_IDS[0]
        )
        row.first.wait_for(timeout=WAIT_MS)


@pytest.fixture
def tab(browser: Browser) -> Iterator[Tab]:
    """A fresh page of its own context (frames refused are what some tests expect)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(WAIT_MS)
    opened = Tab(context.new_page())

    def on_request(request: Request) -> None:
        opened.requested.append(request.url)

    opened.page.on("request", on_request)
    opened.page.on("pageerror", lambda error: opened.errors.append(str(error)))
    yield opened
    context.close()


def _framer(src: str) -> dict[str, str]:
    """The pages of a server of another origin: ``/framer`` frames ``src``."""
    iframe = FRAMER.format(src=src).replace("<iframe ", f'<iframe onload="{LOADED}" ')
    return {"/framer": f"<!doctype html><body>{iframe}</body>"}


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"], ids=["same-site", "cross-site"])
def test_another_origin_may_not_frame_the_dashboard_by_default(
    tab: Tab, board_url: str, host: str
) -> None:
    with page_server(_framer(f"{board_url}/")) as port:
        tab.frame_another_origin(host, port)
    assert tab.framed_address() == ERROR_PAGE
    asked = [url for url in tab.requested if url.startswith(board_url)]
    assert asked == [f"{board_url}/"]  # nothing of the page ran: no script, no route
    assert not tab.errors, tab.errors


def test_a_page_of_the_dashboards_own_origin_may_frame_it(tab: Tab, board_url: str) -> None:
    """As behind jupyter-server-proxy, where the notebook's page shares the origin."""
    tab.page.goto(f"{board_url}/")
    tab.page.evaluate(
        "(html) => { document.body.innerHTML = html; }", FRAMER.format(src=f"{board_url}/")
    )
    tab.wait_runs_listed()
    assert tab.framed_address() == f"{board_url}/"
    assert not tab.errors, tab.errors


@pytest.fixture(scope="module")
def framed_url(board_base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server over the session's runs that lets pages on 127.0.0.1 (any port) frame it."""
    settings = BoardSettings.create(
        board_base,
        port=free_port(),
        workspace=tmp_path_factory.mktemp("framed"),
        frame_ancestors="http://127.0.0.1:*",
    )
    with running_server(settings) as url:
        wait_loaded(url, RUN_IDS)
        yield url


def test_a_listed_origin_frames_a_working_dashboard(tab: Tab, framed_url: str) -> None:
    with page_server(_framer(f"{framed_url}/")) as port:
        tab.frame_another_origin("127.0.0.1", port)
        tab.wait_runs_listed()
    assert tab.framed_address() == f"{framed_url}/"
    assert f"{framed_url}/api/v1/runs" in tab.requested
    assert not tab.errors, tab.errors


def test_an_origin_not_listed_gets_nothing_though_the_server_answered(
    tab: Tab, framed_url: str
) -> None:
    """``localhost`` is not ``127.0.0.1``: the guard lets the frame's navigation through
    (any site's), and the browser refuses to show the answer, by the policy."""
    with (
        page_server(_framer(f"{framed_url}/")) as port,
        tab.page.expect_response(f"{framed_url}/") as answered,
    ):
        tab.frame_another_origin("localhost", port)
    assert answered.value.status == 200
    assert tab.framed_address() == ERROR_PAGE
    assert [url for url in tab.requested if url.startswith(framed_url)] == [f"{framed_url}/"]
    assert not tab.errors, tab.errors
