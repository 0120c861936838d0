"""The dashboard as a team sees it: a server signing people in with tokens, and the page's
parts for roles, saved views, a run's lifecycle and the audit log.

The token file and roles file are written here for one viewer, one editor and one admin;
the server's API is asked with a token (``Authorization: Bearer``); the page signs in
through the server's own ``POST api/v1/session`` from the browser context (its cookie),
or through the sign-in page. Every wait is on a condition in the page with a bound.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator

from helpers.board import wait_until
from helpers.board_page import WAIT_MS, BoardPage

TOKENS = {
    "val": "viewer-token-0123456789",
    "eddie": "editor-token-0123456789",
    "ada": "admin-token-0123456789",
}
"""Token names and tokens (at least 16 characters each)."""
ROLES = {"val": "viewer", "eddie": "editor", "ada": "admin"}
"""The role of each token name in the roles file."""

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def write_auth_files(directory: Path) -> tuple[Path, Path]:
    """The token file and roles file of :data:`TOKENS` and :data:`ROLES` in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    tokens = directory / "tokens.txt"
    tokens.write_text(
        "# name:token\n" + "".join(f"{name}:{token}\n" for name, token in TOKENS.items())
    )
    roles = directory / "roles.toml"
    roles.write_text(
        'default = "viewer"\n[tokens]\n'
        + "".join(f'{name} = "{role}"\n' for name, role in ROLES.items())
    )
    return tokens, roles


def api(url: str, path: str, user: str, method: str = "GET", body: Any = None) -> Any:
    """The JSON answer of ``method {url}/api/v1/{path}`` as ``user`` (a name of TOKENS);
    an HTTPError when not 2xx. Never through a proxy of the environment."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{url}/api/v1/{path}", data=data, method=method)
    request.add_header("Authorization", f"Bearer {TOKENS[user]}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with _NO_PROXY.open(request, timeout=5) as response:
        return json.loads(response.read())


def wait_team_loaded(url: str, run_ids: list[str]) -> None:
    """Until the server at ``url`` lists ``run_ids`` (asked as the viewer), none loading."""

    def loaded() -> bool:
        try:
            runs = api(url, "runs", "val")["runs"]
        except (OSError, urllib.error.HTTPError):
            return False
        ready = all(run["status"] != "loading" for run in runs)
        return ready and set(run_ids) <= {run["id"] for run in runs}

    wait_until(loaded, timeout=120)


class TeamPage(BoardPage):
    """The dashboard of a team's server in a page (see BoardPage)."""

    def sign_in(self, user: str) -> None:
        """Sign the page's browser context in as ``user`` (its session cookie)."""
        answer = self.page.request.post(f"{self.url}/api/v1/session", data={"token": TOKENS[user]})
        assert answer.ok, answer.text()

    def wait_session(self) -> None:
        """Until the page has read its session (the write controls are gated)."""
        self.page.wait_for_function(
            "() => ['none', 'token', 'proxy'].includes(document.documentElement.dataset.session)",
            timeout=WAIT_MS,
        )

    def badge(self) -> str:
        """The top bar's badge of who is signed in ('' while it is hidden)."""
        badge = self.page.locator("#session")
        return badge.inner_text() if badge.is_visible() else ""

    def row(self, run: str) -> Locator:
        """The run table's row of ``run``."""
        return self.page.locator(f'.run-row:not([hidden])[data-run-id="{run}"]')

    def select(self, run: str) -> None:
        """Tick ``run`` in the run table."""
        self.row(run).locator("input[type=checkbox]").check()

    def wait_listed(self, run: str, listed: bool) -> None:
        """Until ``run`` is (or is not) a row of the run table."""
        self.page.wait_for_function(
            """([run, listed]) => [...document.querySelectorAll('.run-row:not([hidden])')]
                .some((row) => row.dataset.runId === run) === listed""",
            arg=[run, listed],
            timeout=WAIT_MS,
        )

    def enabled_write_controls(self) -> list[str]:
        """The write controls (marked by core/session.js) shown and enabled now."""
        return self.page.evaluate(
            """() => [...document.querySelectorAll('[data-gate]')]
                .filter((c) => c.checkVisibility() && !c.disabled
                    && c.getAttribute('aria-disabled') !== 'true')
                .map((c) => c.className || c.tagName)"""
        )

    def audit_rows(self) -> list[dict[str, str]]:
        """The Audit view's rows, newest first: user, role, action, target."""
        return self.page.evaluate(
            """() => [...document.querySelectorAll('.audit-entry')].map((row) => ({
                user: row.querySelector('.audit-user').textContent,
                role: row.querySelector('.audit-role').textContent,
                action: row.querySelector('.audit-action').textContent,
                target: row.querySelector('.audit-target').textContent }))"""
        )
