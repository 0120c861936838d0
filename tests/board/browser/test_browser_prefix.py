"""The pages behind a reverse proxy: served under --url-path-prefix, they ask only under it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import free_port, running_server, write_run
from helpers.board_data import wait_loaded
from helpers.board_page import BoardPage
from playwright.sync_api import Page, Request

from sumlens.board.settings import BoardSettings

PREFIX = "/sumlens/board"


@pytest.fixture(scope="module")
def prefixed_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server with one small run, under ``PREFIX``."""
    root = tmp_path_factory.mktemp("prefix")
    write_run(root / "base" / "run", range(1, 21), tags=("loss",))
    settings = BoardSettings.create(
        root / "base", port=free_port(), workspace=root / "workspace", url_path_prefix=PREFIX
    )
    with running_server(settings) as url:
        wait_loaded(url, ["./run"])
        yield url


def test_pages_and_api_stay_under_the_prefix(
    page: Page, prefixed_url: str, artifacts: Path
) -> None:
    assert prefixed_url.endswith(PREFIX)
    requests: list[str] = []

    def on_request(request: Request) -> None:
        requests.append(request.url)

    page.on("request", on_request)
    board = BoardPage(page, prefixed_url, artifacts)
    board.open()
    board.wait_runs_listed(["./run"])
    page.get_by_label("Select ./run").check()
    page.locator(".compare").click()
    board.wait_drawn("loss")
    assert [t["x"] for t in board.traces("loss")] == [list(range(1, 21))] * 2
    assert any("/api/v1/scalars?" in url for url in requests)
    assert all(url.startswith(f"{prefixed_url}/") for url in requests), requests
