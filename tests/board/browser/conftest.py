"""Fixtures of the browser tests: the real server over runs sumlens wrote, and real Chromium.

The browser is Debian's Chromium at ``/usr/bin/chromium``, driven by Python Playwright;
Playwright's own browser downloads are never used. Without that binary these tests fail
(they do not skip): a dashboard nobody has seen render is not tested.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from helpers.board import free_port, running_server
from helpers.board_data import RUN_IDS, wait_loaded, write_base
from helpers.board_page import WAIT_MS, BoardPage
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, Request

from sumlens.board.settings import BoardSettings

ARTIFACTS = Path(__file__).parent / "artifacts"
"""Screenshots of the pages (git-ignored); also copied to $SUMLENS_ARTIFACTS when set."""
RELOAD_INTERVAL = 0.5


@pytest.fixture(scope="session")
def board_base(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> Path:
    """The base directory of the session's server (see ``board_data.write_base``)."""
    base = tmp_path_factory.mktemp("board") / "base"
    write_base(base, golden_dir)
    return base


@pytest.fixture(scope="session")
def board_url(board_base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real dashboard server over ``board_base`` (reloading every 0.5 s), once loaded."""
    settings = BoardSettings.create(
        board_base,
        port=free_port(),
        reload_interval=RELOAD_INTERVAL,
        workspace=tmp_path_factory.mktemp("workspace"),
    )
    with running_server(settings) as url:
        wait_loaded(url, RUN_IDS)
        yield url


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh 1440x900 page; its test fails on a script error, a failed load, a dialog or a
    request to anything but the local server.

    ``page.dialogs`` lists the messages of the dialogs that opened (each is dismissed).
    """
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(WAIT_MS)
    tab = context.new_page()
    problems: list[str] = []
    dialogs: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(f"console error: {message.text}")

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    def on_request(request: Request) -> None:
        url = urlsplit(request.url)
        if url.scheme not in ("data", "blob") and url.hostname != "127.0.0.1":
            problems.append(f"request outside the server: {request.url}")

    tab.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    tab.on("request", on_request)
    tab.on("console", on_console)
    tab.on("dialog", on_dialog)
    tab.dialogs = dialogs  # type: ignore[attr-defined]
    yield tab
    context.close()
    assert not dialogs, f"dialogs opened: {dialogs}"
    assert not problems, "\n".join(problems)


@pytest.fixture
def board(page: Page, board_url: str, artifacts: Path) -> BoardPage:
    """The dashboard of the session's server in a fresh page."""
    return BoardPage(page, board_url, artifacts)
