"""The page's static files in Chromium: sent compressed, kept, and revalidated, never stale.

The first Scalars visit fetched plotly.js (4.8 MB) and the ES modules uncompressed; now
they arrive gzip-compressed, and a second visit sends no file again (each is revalidated
and answered 304).
The bytes of the first visit are written to ``<artifacts>/first_scalars_visit.json``.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
from pathlib import Path
from urllib.parse import urlsplit

from helpers.board_data import RUN_IDS
from helpers.board_page import BoardPage
from playwright.sync_api import Page, Response

_SIZES = """() => [performance.getEntriesByType('navigation')[0],
    ...performance.getEntriesByType('resource')]
    .map((e) => ({ name: e.name.split('#')[0], encoded: e.encodedBodySize,
                   decoded: e.decodedBodySize, transfer: e.transferSize }))"""


def _static(url: str) -> bool:
    path = urlsplit(url).path
    return "/api/" not in path and path.rsplit("/", 1)[-1].endswith((".js", ".css", ".html", ""))


def _first_scalars_visit(board: BoardPage) -> list[Response]:
    """Open Scalars of one run in the page, until its chart is drawn; the static answers."""
    answers: list[Response] = []
    board.page.on("response", lambda r: answers.append(r) if _static(r.url) else None)
    board.open("/scalars?run=./ours/ms")
    board.wait_drawn("loss")
    return answers


def _save(board: BoardPage, name: str, data: object) -> None:
    path = board.artifacts / name
    path.write_text(json.dumps(data, indent=1))
    extra = os.environ.get("SUMLENS_ARTIFACTS")
    if extra and Path(extra).resolve() != board.artifacts.resolve():
        Path(extra).mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, Path(extra) / name)


def test_static_files_arrive_compressed_and_revalidate(board: BoardPage, page: Page) -> None:
    answers = _first_scalars_visit(board)
    sizes = [e for e in page.evaluate(_SIZES) if _static(e["name"])]
    names = {urlsplit(e["name"]).path.rsplit("/", 1)[-1] for e in sizes}
    assert {"plotly.min.js", "app.js", "style.css", ""} <= names  # "": the page itself
    for entry in sizes:
        if entry["decoded"] > 2048:
            assert entry["encoded"] < 0.6 * entry["decoded"], entry
    for answer in answers:
        assert answer.status == 200, answer.url
        headers = answer.all_headers()
        assert headers.get("content-encoding") == "gzip", answer.url
        assert headers.get("etag", "").startswith('"') and "no-cache" in headers["cache-control"]
    encoded = sum(e["encoded"] for e in sizes)
    decoded = sum(e["decoded"] for e in sizes)
    _save(board, "first_scalars_visit.json", {"compressed": encoded, "uncompressed": decoded,
                                              "files": sizes})  # fmt: skip

    # A second visit, in a new tab of the same browser (same cache). Chromium asks whether
    # each file changed (If-None-Match) and is answered 304, without a body: only the
    # headers are transferred (it reports the cached answer's 200 to the page).
    tags = {answer.url: answer.all_headers()["etag"] for answer in answers}
    second = BoardPage(page.context.new_page(), board.url, board.artifacts)
    again = _first_scalars_visit(second)
    assert {answer.url for answer in again} == set(tags)
    for answer in again:
        assert answer.request.all_headers().get("if-none-match") == tags[answer.url]
    transferred = {e["name"]: e["transfer"] for e in second.page.evaluate(_SIZES)}
    for url in tags:
        assert transferred[url] < 1024, (url, transferred[url])  # headers only
    plotly = next(url for url in tags if url.endswith("/plotly.min.js"))
    status, _ = _get(plotly, {"If-None-Match": tags[plotly], "Accept-Encoding": "gzip"})
    assert status == 304


def _get(url: str, headers: dict[str, str]) -> tuple[int, bytes]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.netloc, timeout=30)
    try:
        connection.request("GET", parts.path, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_run_list_page_loads(board: BoardPage) -> None:
    """The page works with the guards on (Chromium sends Sec-Fetch-Site: same-origin)."""
    board.open()
    board.wait_runs_listed(RUN_IDS)
