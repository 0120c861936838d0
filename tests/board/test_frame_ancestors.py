"""The ``frame_ancestors`` setting: which origins' pages may frame the dashboard.

Checked once by :meth:`BoardSettings.create` (each entry a CSP source expression
``scheme://host[:port|:*]``), handed to ``sumlens start``'s server unchanged, and given on
the command line as ``--frame-ancestors a,b`` or as ``$SUMLENS_FRAME_ANCESTORS`` (the flag
wins); a real ``sumlens start`` then answers with the policy naming them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import free_port, wait_until, write_run
from helpers.notebook_server import NO_PROXY, stop_all

from sumlens.board.settings import BoardSettings, BoardSettingsError


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("frames") / "base"
    write_run(folder / "run", range(1, 5))
    return folder


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        (None, ()),
        ("", ()),
        ("http://localhost:*", ("http://localhost:*",)),
        (
            " HTTP://LocalHost:8888 , https://*.hub.example.org,http://127.0.0.1:*,",
            ("http://localhost:8888", "https://*.hub.example.org", "http://127.0.0.1:*"),
        ),
        (["https://hub.example.org", "https://hub.example.org"], ("https://hub.example.org",)),
        (("http://10.0.0.7:65535",), ("http://10.0.0.7:65535",)),
    ],
)
def test_origins_are_kept_lowered_and_once(
    base: Path, given: str | list[str] | None, kept: tuple[str, ...]
) -> None:
    settings = BoardSettings.create(base, frame_ancestors=given)
    assert settings.frame_ancestors == kept
    assert BoardSettings.from_json(settings.to_json()) == settings


@pytest.mark.parametrize(
    "entry",
    [
        "localhost:8888",  # no scheme
        "ftp://localhost",
        "*",
        "'self'",
        "'none'",
        "http://localhost:8888/notebooks",  # a path
        "http://localhost:0",
        "http://localhost:70000",
        "http://localhost:port",
        "http://[::1]:*",  # browsers take no IPv6 literal in frame-ancestors
        "http://evil.example script-src *",
        "http://a.example;script-src",
        'http://"a.example"',
        "http://",
    ],
)
def test_an_entry_that_is_no_origin_is_refused_naming_it(base: Path, entry: str) -> None:
    with pytest.raises(BoardSettingsError) as raised:
        BoardSettings.create(base, frame_ancestors=f"http://localhost:*,{entry}")
    message = str(raised.value)
    assert message.startswith(f"--frame-ancestors entry {entry!r} is not allowed")
    assert "scheme://host[:port]" in message and "\n" not in message


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of one command: its own HOME, no SUMLENS_ variable from outside."""
    (tmp_path / "home").mkdir()
    clean = {key: value for key, value in os.environ.items() if not key.startswith("SUMLENS_")}
    return {**clean, "HOME": str(tmp_path / "home")}


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    """The workspace of the servers a test starts; they are stopped at its end."""
    folder = tmp_path / "ws"
    yield folder
    stop_all(folder)


def _sumlens(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sumlens", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _error_line(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 1, (out.stdout, out.stderr)
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sumlens start: error: "), out.stderr
    return lines[0]


def test_a_bad_flag_or_variable_fails_in_one_line(
    base: Path, env: dict[str, str], workspace: Path
) -> None:
    start = ("start", f"--logdir={base}", f"--port={free_port()}", f"--workspace={workspace}")
    line = _error_line(_sumlens(env, *start, "--frame-ancestors", "http://ok.example,nope"))
    assert "--frame-ancestors entry 'nope' is not allowed" in line
    line = _error_line(_sumlens({**env, "SUMLENS_FRAME_ANCESTORS": "ftp://x"}, *start))
    assert "--frame-ancestors entry 'ftp://x'" in line
    assert "(from the environment: SUMLENS_FRAME_ANCESTORS)" in line
    assert not list(workspace.glob("sumlens-*.json"))


def _policy(port: int) -> str:
    """The framing policy the server on ``port`` answers with (waited for, bounded)."""

    def answered() -> str | None:
        try:
            with NO_PROXY.open(f"http://127.0.0.1:{port}/api/v1/health", timeout=5) as answer:
                return str(answer.headers["Content-Security-Policy"])
        except OSError:
            return None

    return str(wait_until(answered))


def test_the_variable_and_the_flag_reach_the_server(
    base: Path, env: dict[str, str], workspace: Path
) -> None:
    variable = {**env, "SUMLENS_FRAME_ANCESTORS": "http://localhost:*,http://127.0.0.1:*"}
    first, second = free_port(), free_port()
    start = ("start", f"--logdir={base}", f"--workspace={workspace}")
    out = _sumlens(variable, *start, f"--port={first}")
    assert out.returncode == 0, out.stderr
    assert _policy(first) == "frame-ancestors 'self' http://localhost:* http://127.0.0.1:*"
    out = _sumlens(
        variable, *start, f"--port={second}", "--frame-ancestors=https://hub.example.org"
    )
    assert out.returncode == 0, out.stderr
    assert _policy(second) == "frame-ancestors 'self' https://hub.example.org"  # the flag wins
