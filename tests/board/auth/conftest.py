"""Fixtures of the auth tests: a base directory with one run, token and roles files, and
real servers on free loopback ports in each auth mode (httpx clients talk to them)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from auth_cases import BOUND, ROLES, RUN, TOKENS, Serve, bearer
from helpers.board import free_port, running_server, wait_until, write_run

from sumlens.board.settings import BoardSettings


@pytest.fixture(scope="session")
def auth_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A base directory holding one run, ``./a``."""
    base = tmp_path_factory.mktemp("auth") / "base"
    write_run(base / "a", range(1, 20))
    return base


@pytest.fixture(scope="session")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The token file of :data:`TOKENS`."""
    path = tmp_path_factory.mktemp("secrets") / "tokens.txt"
    lines = ["# the team's tokens", ""] + [f"{name}:{token}" for name, token in TOKENS.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="session")
def roles_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The roles file of :data:`ROLES`."""
    path = tmp_path_factory.mktemp("roles") / "roles.toml"
    path.write_text(ROLES)
    return path


@pytest.fixture
def serve(auth_base: Path, tmp_path: Path) -> Serve:
    """``serve(**settings)``: a context manager running the real server over
    :func:`auth_base` with those settings (each server its own workspace); yields its URL
    once the run is listed."""

    @contextlib.contextmanager
    def served(**given: Any) -> Iterator[str]:
        settings = BoardSettings.create(
            auth_base,
            port=free_port(),
            workspace=given.pop("workspace", None) or tmp_path / f"ws{free_port()}",
            reload_interval=0.2,
            **given,
        )
        with running_server(settings) as url:
            wait_until(lambda: _listed(url, given), timeout=BOUND)
            yield url

    return served


def _listed(url: str, given: dict[str, Any]) -> bool:
    """Whether the server lists the run (asked as whoever may read in its mode)."""
    headers = {}
    if given.get("auth") == "token":
        headers = bearer("alice")
    elif given.get("auth") == "proxy":
        headers = {"X-Forwarded-User": "carol"}
    answer = httpx.get(f"{url}/api/v1/runs", headers=headers, timeout=BOUND)
    return answer.status_code == 200 and any(run["id"] == RUN for run in answer.json()["runs"])
