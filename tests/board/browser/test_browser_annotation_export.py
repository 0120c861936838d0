"""The run list's "Export tags" saves every annotation although the server pages its export.

``GET /api/v1/annotations`` answers at most ``MAX_PAGE`` runs at a time now; the page reads
every page and saves one file. In Chromium over the real server: with more annotations
than three pages hold (imported for runs not served, and one set in the page's editor),
the saved file holds them all, with the base directory and group colours and without the
pages' cursor, and imports whole into another workspace.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from helpers.board import free_port, running_server, write_run
from helpers.board_data import get_json, wait_loaded
from helpers.board_page import BoardPage
from helpers.plugin_page import watched_page
from playwright.sync_api import Browser

from sumlens.board.settings import BoardSettings

RUNS = ["./a", "./b"]
MAX_PAGE = 1_000
"""The most runs a page of the export holds (``annotations.MAX_PAGE``)."""
IMPORTED = 2 * MAX_PAGE + MAX_PAGE // 2
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _send(url: str, method: str, body: Any) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method=method,
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    with _NO_PROXY.open(request, timeout=30) as response:
        return json.loads(response.read())


def test_export_tags_saves_every_page(browser: Browser, tmp_path: Path, artifacts: Path) -> None:
    base = tmp_path / "logs"
    for run in RUNS:
        write_run(base / run[2:], range(1, 4))
    settings = BoardSettings.create(base, port=free_port(), workspace=tmp_path / "ws")
    given = {f"./old/r{i:05d}": {"tags": ["old"], "note": f"n{i}", "colour": None}
             for i in range(IMPORTED)}  # fmt: skip
    with running_server(settings) as url, watched_page(browser) as (page, _):
        wait_loaded(url, RUNS)
        done = _send(f"{url}/api/v1/annotations", "POST", {"annotations": given})
        assert done["added"] == IMPORTED
        _send(f"{url}/api/v1/group-colour?group=g", "PUT", {"colour": "#abcdef"})
        _send(f"{url}/api/v1/annotation?run=./a", "PUT",
              {"tags": ["mine"], "note": "", "colour": None})  # fmt: skip
        assert get_json(f"{url}/api/v1/annotations")["next"] is not None  # paged

        board = BoardPage(page, url, artifacts)
        board.open()
        board.wait_runs_listed(RUNS)
        with page.expect_download() as saved:
            page.locator("button", has_text="Export tags").click()
        assert saved.value.suggested_filename == "annotations.json"
        exported = json.loads(Path(saved.value.path()).read_text())

    assert set(exported) == {"base_dir", "annotations", "group_colours"}
    assert exported["base_dir"] == str(base)
    assert exported["group_colours"] == {"g": "#abcdef"}
    assert len(exported["annotations"]) == IMPORTED + 1
    assert exported["annotations"]["./a"] == {"tags": ["mine"], "note": "", "colour": None}
    assert {name: each for name, each in exported["annotations"].items() if name != "./a"} == given

    other = BoardSettings.create(base, port=free_port(), workspace=tmp_path / "ws2")
    with running_server(other) as url:
        wait_loaded(url, RUNS)
        assert _send(f"{url}/api/v1/annotations", "POST", exported)["added"] == IMPORTED + 1
