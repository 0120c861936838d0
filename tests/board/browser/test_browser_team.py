"""One dashboard for a whole team, in Chromium (issue 42, the page's parts).

A real server signing people in with tokens (a viewer, an editor, an admin from a roles
file), and a read-only one: the page hides or disables every write control a role cannot
use and says why; an editor's tag lands in the Audit view; a read-only server says so;
the sign-in page refuses a wrong token and lets the right one in; a saved view goes round
(saved, opened, deleted); a hidden run leaves the list, comes back with the switch, and is
restored; an admin's delete moves a run to the trash and Undo brings it back. Every wait is
on a condition in the page with a bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import free_port, running_server, write_run
from helpers.board_data import wait_loaded
from helpers.board_page import WAIT_MS
from helpers.plugin_page import watched_page
from helpers.team_page import TOKENS, TeamPage, api, wait_team_loaded, write_auth_files
from playwright.sync_api import Browser, Page

from sumlens.board.settings import BoardSettings

RUNS = ["./a", "./b", "./c"]
AUDIT_PAGE = 100  # audit/audit.js PAGE: entries per request


def _write_runs(base: Path) -> None:
    for run in RUNS:
        write_run(base / run[2:], range(1, 6))


@pytest.fixture(scope="module")
def team_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of three runs signing in the tokens of helpers.team_page (reloading every
    0.5 s, so a deleted or restored run leaves or joins the list soon)."""
    root = tmp_path_factory.mktemp("team")
    _write_runs(root / "base")
    tokens, roles = write_auth_files(root / "auth")
    settings = BoardSettings.create(
        root / "base",
        port=free_port(),
        reload_interval=0.5,
        workspace=root / "workspace",
        auth="token",
        token_file=tokens,
        roles_file=roles,
    )
    with running_server(settings) as url:
        wait_team_loaded(url, RUNS)
        yield url


def _team(page: Page, url: str, artifacts: Path, user: str, fragment: str = "") -> TeamPage:
    """The page signed in as ``user``, opened at ``fragment``, its runs and session known."""
    team = TeamPage(page, url, artifacts)
    team.sign_in(user)
    team.open(fragment)
    team.wait_session()
    return team


def test_a_viewer_sees_no_enabled_write_control_and_the_reason(
    page: Page, team_url: str, artifacts: Path
) -> None:
    team = _team(page, team_url, artifacts, "val")
    team.wait_runs_listed(RUNS)
    assert team.badge().startswith("val · viewer")
    assert page.locator(".session-sign-out").is_visible()
    why = page.locator(".runs-why")
    assert why.is_visible() and "viewer" in why.inner_text()
    importing = page.locator(".import-annotations")
    assert importing.is_disabled() and "viewer" in (importing.get_attribute("title") or "")
    assert page.locator(".edit-annotation").count() == 3  # each row's, hidden
    team.select("./a")
    assert team.enabled_write_controls() == []
    assert page.locator("nav a[data-view=audit]").is_hidden()

    page.locator(".saved-views summary").click()
    assert page.locator(".saved-views-why").is_visible()
    assert page.locator(".saved-view-form").is_hidden()
    team.screenshot("team-viewer-runs")
    page.locator(".saved-views summary").click()

    team.open("/scalars?run=./a")
    page.locator(".sidebar .colour-input").first.wait_for(state="attached")
    assert page.locator(".sidebar .colour-input").first.is_disabled()
    assert "viewer" in page.locator(".sidebar .sidebar-why").inner_text()
    assert team.enabled_write_controls() == []
    team.open("/audit")  # typed by hand: it says why, and asks the server nothing
    note = page.locator(".audit-note")
    note.wait_for()
    assert "editors and admins" in note.inner_text()


def test_an_editor_edits_a_tag_and_the_audit_view_shows_it(
    page: Page, team_url: str, artifacts: Path
) -> None:
    team = _team(page, team_url, artifacts, "eddie")
    team.wait_runs_listed(RUNS)
    assert team.badge().startswith("eddie · editor")
    assert page.locator(".runs-why").is_hidden()
    importing = page.locator(".import-annotations")
    assert importing.is_disabled() and "admin" in (importing.get_attribute("title") or "")

    team.row("./a").locator(".edit-annotation").click()
    editor = page.locator("dialog.annotation-editor[open]")
    editor.locator(".annotation-tags").fill("baseline")
    editor.locator("button[type=submit]").click()
    team.row("./a").locator(".run-tag", has_text="baseline").wait_for()
    team.select("./a")
    assert page.locator(".run-hide").is_visible()
    assert page.locator(".run-delete").is_hidden()  # an admin's

    page.locator("nav a[data-view=audit]").click()
    page.locator(".audit-entry[data-action='annotation.set']").first.wait_for()
    newest = team.audit_rows()[0]
    assert newest["user"] == "eddie" and newest["role"] == "editor"
    assert newest["action"] == "annotation.set" and "./a" in newest["target"]
    team.screenshot("team-audit")


def test_the_audit_view_pages_back_with_older(page: Page, team_url: str, artifacts: Path) -> None:
    for i in range(AUDIT_PAGE + 5):  # more changes than one page of the log shows
        api(
            team_url,
            "annotation?run=./b",
            "eddie",
            "PUT",
            {"tags": [f"t{i}"], "note": "", "colour": None},
        )
    team = _team(page, team_url, artifacts, "eddie", "/audit")
    rows = page.locator(".audit-entry")
    page.wait_for_function(
        "(n) => document.querySelectorAll('.audit-entry').length === n",
        arg=AUDIT_PAGE,
        timeout=WAIT_MS,
    )
    assert page.locator(".audit-target").first.inner_text() == "./b"
    page.locator(".audit-older").click()
    page.wait_for_function(
        "(n) => document.querySelectorAll('.audit-entry').length > n",
        arg=AUDIT_PAGE,
        timeout=WAIT_MS,
    )
    ids = [int(i) for i in rows.evaluate_all("(rows) => rows.map((r) => r.dataset.id)")]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)  # newest first
    assert page.locator(".audit-older").is_hidden()  # nothing older left
    assert team.audit_rows()[-1]["action"] == "annotation.set"


def test_a_read_only_server_says_so(page: Page, tmp_path: Path, artifacts: Path) -> None:
    _write_runs(tmp_path / "base")
    settings = BoardSettings.create(
        tmp_path / "base", port=free_port(), workspace=tmp_path / "ws", read_only=True
    )
    with running_server(settings) as url:
        wait_loaded(url, RUNS)
        team = TeamPage(page, url, artifacts)
        team.open()
        team.wait_runs_listed(RUNS)
        team.wait_session()
        assert "read-only" in team.badge()
        why = page.locator(".runs-why")
        assert why.is_visible() and "read-only" in why.inner_text()
        team.select("./b")
        assert team.enabled_write_controls() == []
        team.screenshot("team-read-only")
        page.goto("about:blank")  # no poll meets the stopped server


def test_sign_in_with_a_wrong_token_says_so_and_the_right_one_lands_on_the_page(
    browser: Browser, team_url: str, artifacts: Path
) -> None:
    with watched_page(browser) as (page, seen):
        seen.allow_console_error(r"status of 401")  # the wrong token's, the lapsed session's
        page.goto(f"{team_url}/")
        page.wait_for_url("**/signin")
        _sign_in_with(page, "not-a-token-of-this-server")
        refusal = page.locator("[role=alert]")
        refusal.wait_for()
        assert "token is wrong" in refusal.inner_text()
        _sign_in_with(page, TOKENS["eddie"])
        team = TeamPage(page, team_url, artifacts)
        team.wait_session()
        assert team.badge().startswith("eddie · editor")
        team.wait_runs_listed(RUNS)

        # the sign-in lapses (the cookie is gone): the next poll's 401 sends the page to
        # the sign-in page, and signing in again comes back to the same address
        team.open("/runs?q=b")
        page.context.clear_cookies()
        page.wait_for_url("**/signin#/runs?q=b")
        _sign_in_with(page, TOKENS["eddie"])
        team.wait_session()
        team.wait_runs_listed(["./b"])
        assert page.evaluate("location.hash") == "#/runs?q=b"
        assert team.listed_runs() == ["./b"]

        page.locator(".session-sign-out").click()
        page.wait_for_url("**/signin")
        assert page.context.cookies() == []

        # an address opened while signed out: the server sends it to the sign-in page (the
        # hash rides along), and signing in lands on that address
        page.goto(f"{team_url}/#/runs?q=a")
        page.wait_for_url("**/signin#/runs?q=a")
        _sign_in_with(page, TOKENS["eddie"])
        team.wait_runs_listed(["./a"])
        assert page.evaluate("location.hash") == "#/runs?q=a"


def _sign_in_with(page: Page, token: str) -> None:
    """Type ``token`` into the sign-in page and send it."""
    page.locator("input[type=password]").fill(token)
    page.locator("button[type=submit]").click()


def test_a_saved_view_goes_round(page: Page, team_url: str, artifacts: Path) -> None:
    team = _team(page, team_url, artifacts, "eddie", "/scalars?run=./b&smoothing=0.3")
    page.locator(".saved-views summary").click()
    page.locator(".saved-view-name").fill("b, smoothed less")
    page.locator(".saved-view-form button[type=submit]").click()
    saved = page.locator('.saved-view[data-name="b, smoothed less"]')
    saved.wait_for()
    kept = api(team_url, "views", "eddie")["views"]
    assert kept["b, smoothed less"] == "#/scalars?run=./b&smoothing=0.3"  # as the address had it
    assert api(team_url, "views", "val")["views"] == {}  # each user's own
    team.screenshot("team-saved-views")

    page.locator("nav a[data-view=runs]").click()
    page.locator(".saved-views summary").click()
    saved.locator(".saved-view-link").click()
    page.wait_for_function(
        "(hash) => location.hash === hash", arg=kept["b, smoothed less"], timeout=WAIT_MS
    )
    assert page.locator("#scalars-view").is_visible()

    page.locator(".saved-views summary").click()
    saved.locator(".saved-view-delete").click()
    saved.wait_for(state="detached")
    assert api(team_url, "views", "eddie")["views"] == {}


def test_a_hidden_run_leaves_the_list_shows_with_the_switch_and_is_restored(
    page: Page, team_url: str, artifacts: Path
) -> None:
    team = _team(page, team_url, artifacts, "eddie")
    team.wait_runs_listed(RUNS)
    team.select("./b")
    page.locator(".run-hide").click()
    team.wait_listed("./b", False)
    assert "1 hidden or archived" in page.locator(".runs-view .count").inner_text()

    page.locator(".show-hidden").check()
    team.wait_listed("./b", True)
    assert team.row("./b").locator(".run-state").inner_text() == "hidden"
    assert "hidden=1" in page.evaluate("location.hash")
    team.screenshot("team-hidden-run")

    page.locator(".run-restore").click()  # ./b is still selected
    team.row("./b").locator(".run-state").wait_for(state="detached")
    page.locator(".show-hidden").uncheck()
    team.wait_listed("./b", True)
    states = {run["id"]: run["state"] for run in api(team_url, "runs", "val")["runs"]}
    assert states["./b"] is None


def test_an_admin_deletes_a_run_and_undoes_it(page: Page, team_url: str, artifacts: Path) -> None:
    team = _team(page, team_url, artifacts, "ada")
    team.wait_runs_listed(RUNS)
    assert page.locator(".import-annotations").is_enabled()
    team.select("./c")
    page.locator(".run-delete").click()
    question = page.locator(".run-delete-confirm")
    assert "./c" in question.inner_text()
    page.locator(".run-delete-yes").click()
    message = page.locator(".run-action-message")
    message.locator(".run-undo").wait_for()
    assert "Moved ./c to the trash, kept 30 days" in message.inner_text()
    team.wait_listed("./c", False)

    page.locator(".trash-toggle").click()
    page.locator('.trash-entry[data-run="./c"]').wait_for()
    team.screenshot("team-trash")

    message.locator(".run-undo").click()
    page.locator(".run-action-message", has_text="Back from the trash: ./c").wait_for()
    team.wait_listed("./c", True)
    actions = [entry["action"] for entry in api(team_url, "audit", "ada")["entries"][:2]]
    assert actions == ["run.restore", "run.delete"]
