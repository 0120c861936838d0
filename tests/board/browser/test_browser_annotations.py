"""Run tags and notes in Chromium: typed in the run list's editor, they survive a restart of
the real server on the same workspace, filter the run list (from the tag menu and from a
tag's chip), a bad tag is refused in the editor with the server's words, and a shared file
imports from the toolbar; nothing is written into the log directories."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.board import free_port, running_server, write_run
from helpers.board_data import get_json, wait_loaded
from helpers.board_page import BoardPage
from helpers.plugin_page import watched_page
from playwright.sync_api import Browser, Page

from sumlens.board.settings import BoardSettings

RUNS = ["./lr0.1/seed1", "./lr0.1/seed2", "./lr0.01/seed1"]
EDITOR = "dialog.annotation-editor[open]"
"""The editor open now (the run list and the dashboard each have one)."""


def _server(base: Path, workspace: Path) -> BoardSettings:
    return BoardSettings.create(base, port=free_port(), reload_interval=0.5, workspace=workspace)


def _row(page: Page, run: str) -> str:
    return f'.run-row:not([hidden])[data-run-id="{run}"]'


def _edit(page: Page, run: str, tags: str, note: str) -> None:
    page.locator(f"{_row(page, run)} .edit-annotation").click()
    editor = page.locator(EDITOR)
    editor.locator(".annotation-tags").fill(tags)
    editor.locator(".annotation-note").fill(note)
    editor.locator("button[type=submit]").click()


def _chips(page: Page, run: str) -> list[str]:
    return page.locator(f"{_row(page, run)} .run-tag").all_inner_texts()


def test_tags_and_notes_survive_a_restart_and_filter_the_list(
    browser: Browser, tmp_path: Path, artifacts: Path
) -> None:
    base, workspace = tmp_path / "logs", tmp_path / "workspace"
    for run in RUNS:
        write_run(base / run[2:], range(1, 6))
    logged = sorted(path.relative_to(base) for path in base.rglob("*"))

    with watched_page(browser) as (page, seen):
        with running_server(_server(base, workspace)) as url:
            wait_loaded(url, RUNS)
            board = BoardPage(page, url, artifacts)
            board.open()
            board.wait_runs_listed(RUNS)
            _edit(page, RUNS[0], "baseline, lr=0.1,", "diverges after step 3")
            page.wait_for_function(
                "(sel) => document.querySelectorAll(sel).length === 2",
                arg=f"{_row(page, RUNS[0])} .run-tag",
            )
            _edit(page, RUNS[2], "small-lr", "")

            seen.allow_console_error(r"status of 422")  # the server refuses the next tag
            _edit(page, RUNS[1], "x" * 65, "kept while the tag is fixed")
            error = page.locator(f"{EDITOR} .annotation-error")
            error.wait_for(state="visible")
            assert "tags[0]=" in error.inner_text() and "at most 64" in error.inner_text()
            board.screenshot("runs-annotation-refused")
            page.locator(f"{EDITOR} button[type=button]").click()
            assert _chips(page, RUNS[1]) == []
            page.goto("about:blank")  # no poll meets the stopped server

        with running_server(_server(base, workspace)) as url:  # the same workspace
            wait_loaded(url, RUNS)
            board = BoardPage(page, url, artifacts)
            board.open()
            board.wait_runs_listed(RUNS)
            assert _chips(page, RUNS[0]) == ["baseline", "lr=0.1"]
            assert _chips(page, RUNS[2]) == ["small-lr"]
            cell = page.locator(f"{_row(page, RUNS[2])} .annotation").text_content()
            assert cell == "✎small-lr"  # no note: no text after the chip
            note = page.locator(f"{_row(page, RUNS[0])} .run-note")
            assert note.inner_text() == "diverges after step 3"

            page.locator(".tag-filter").select_option("baseline")
            board.wait_row_count(1)
            assert board.listed_runs() == [RUNS[0]]
            page.locator(".tag-filter").select_option("")
            board.wait_row_count(3)
            page.locator(f"{_row(page, RUNS[2])} .run-tag").click()  # a chip filters too
            board.wait_row_count(1)
            assert board.listed_runs() == [RUNS[2]]
            page.locator(".tag-filter").select_option("")

            shared = tmp_path / "shared.json"
            shared.write_text(
                json.dumps(
                    {
                        "base_dir": "/somewhere/else",
                        "annotations": {
                            RUNS[1]: {"tags": ["baseline"], "note": "from a teammate",
                                      "colour": None},
                        },
                    }
                )
            )  # fmt: skip
            page.locator(".runs-view input[type=file]").set_input_files(shared)
            page.locator(".annotation-message", has_text="1 added").wait_for()
            page.locator(".tag-filter").select_option("baseline")
            board.wait_row_count(2)
            assert board.listed_runs() == [RUNS[0], RUNS[1]]
            page.locator(".tag-filter").select_option("")
            board.wait_row_count(3)
            board.screenshot("runs-tags-notes")

            with page.expect_download() as saved:
                page.locator("button", has_text="Export tags").click()
            exported = json.loads(Path(saved.value.path()).read_text())
            assert set(exported["annotations"]) == set(RUNS)
            page.goto("about:blank")  # no poll meets the stopped server

    assert sorted(path.relative_to(base) for path in base.rglob("*")) == logged


def test_a_runs_dashboard_edits_its_tags_and_note_and_the_tag_filter_is_in_the_url(
    browser: Browser, tmp_path: Path, artifacts: Path
) -> None:
    base, workspace = tmp_path / "logs", tmp_path / "workspace"
    for run in RUNS:
        write_run(base / run[2:], range(1, 6))
    with running_server(_server(base, workspace)) as url, watched_page(browser) as (page, _):
        wait_loaded(url, RUNS)
        board = BoardPage(page, url, artifacts)
        board.open(f"/run?run={RUNS[1]}")
        strip = page.locator(".dash-annotation")
        strip.locator(".dash-edit-annotation", has_text="Add tags and a note").click()
        editor = page.locator(EDITOR)
        assert editor.locator(".annotation-title").inner_text() == f"Tags and note of {RUNS[1]}"
        editor.locator(".annotation-tags").fill("promising, seed=2")
        editor.locator(".annotation-note").fill("try a longer warm-up")
        editor.locator("button[type=submit]").click()
        page.wait_for_function(
            "() => document.querySelectorAll('.dash-annotation .dash-tag').length === 2"
        )
        assert strip.locator(".dash-note").inner_text() == "try a longer warm-up"
        board.screenshot("dashboard-annotation")
        stored = get_json(f"{url}/api/v1/annotations")["annotations"][RUNS[1]]
        assert stored == {
            "tags": ["promising", "seed=2"],
            "note": "try a longer warm-up",
            "colour": None,
        }

        # reopened, the editor holds what was saved; a reload shows it from the server
        strip.locator(".dash-edit-annotation", has_text="Edit tags and note").click()
        assert editor.locator(".annotation-tags").input_value() == "promising, seed=2"
        editor.locator("button[type=button]").click()
        page.reload()
        page.wait_for_function(
            "() => document.querySelectorAll('.dash-annotation .dash-tag').length === 2"
        )

        # a tag opens the run list filtered by it; the filter is in the URL, so it survives
        # a reload (and a shared link)
        strip.locator(".dash-tag", has_text="promising").click()
        board.wait_row_count(1)
        assert board.listed_runs() == [RUNS[1]]
        assert "runtag=promising" in page.url
        page.reload()
        board.wait_row_count(1)
        assert board.listed_runs() == [RUNS[1]]
        assert page.locator(".tag-filter").input_value() == "promising"
        page.locator(".tag-filter").select_option("")
        board.wait_row_count(3)
        assert "runtag=" not in page.url
        page.go_back()  # the filter changes replace the history entry: back is the dashboard
        page.locator(".dash-annotation .dash-tag").first.wait_for()
