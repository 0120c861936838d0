"""``sumlens serve``/``start`` with the team options: flags, their environment variables
(the flag wins), one-line errors that never show a token or a password, and a server
started from the environment alone whose log holds no token."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from auth_cases import BOUND, TOKENS, bearer
from helpers.board import free_port

from sumlens.board.settings import BoardSettings, BoardSettingsError, state_for_display

pytestmark = pytest.mark.skipif(os.name != "posix", reason="start/stop are POSIX only")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of one test: its own HOME, no SUMLENS_ variable from outside."""
    (tmp_path / "home").mkdir()
    clean = {key: value for key, value in os.environ.items() if not key.startswith("SUMLENS_")}
    return {**clean, "HOME": str(tmp_path / "home")}


def _sumlens(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sumlens", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _error(out: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one error line of a command that failed, holding ``words``."""
    assert out.returncode == 1, (out.stdout, out.stderr)
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sumlens serve: error: "), out.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def test_bad_team_options_fail_in_one_line(
    env: dict[str, str], auth_base: Path, tmp_path: Path, token_file: Path
) -> None:
    serve = ("serve", f"--logdir={auth_base}", f"--port={free_port()}")
    _error(_sumlens(env, *serve, "--auth", "ldap"), "--auth 'ldap'", "none, token or proxy")
    _error(_sumlens(env, *serve, "--auth", "token"), "--auth token needs --token-file")
    _error(_sumlens(env, *serve, "--auth", "proxy"), "--auth proxy needs --trusted-proxies")
    _error(
        _sumlens(env, *serve, "--auth", "proxy", "--trusted-proxies", "10.0.0.0/8,proxy.lan"),
        "--trusted-proxies entry 'proxy.lan'",
    )
    secret = "alice:short-secret"
    bad = tmp_path / "bad-tokens"
    bad.write_text(f"# ok\nbob:{TOKENS['bob']}\n{secret}\n")
    line = _error(
        _sumlens(env, *serve, "--auth", "token", "--token-file", str(bad)),
        "line 3",
        "at least 16",
    )
    assert "short-secret" not in line and TOKENS["bob"] not in line
    noname = tmp_path / "no-name"
    noname.write_text(TOKENS["alice"] + "\n")
    line = _error(_sumlens(env, *serve, "--auth", "token", "--token-file", str(noname)), "line 1")
    assert TOKENS["alice"] not in line
    empty = tmp_path / "empty"
    empty.write_text("# nobody yet\n")
    _error(_sumlens(env, *serve, "--auth", "token", "--token-file", str(empty)), "holds no token")
    missing = tmp_path / "missing"
    _error(_sumlens(env, *serve, "--auth", "token", "--token-file", str(missing)), "does not exist")
    roles = tmp_path / "roles.toml"
    roles.write_text('[users]\nzoe = "owner"\n')
    _error(_sumlens(env, *serve, "--roles-file", str(roles)), "users.zoe = 'owner'", "viewer")
    roles.write_text("default = \n")
    _error(_sumlens(env, *serve, "--roles-file", str(roles)), "is not TOML")
    line = _error(
        _sumlens(env, *serve, "--state", "mysql://me:hunter2@db/sumlens"), "--state", "***"
    )
    assert "hunter2" not in line
    _error(_sumlens(env, *serve, "--trash-retention-days", "-1"), "--trash-retention-days")
    _error(
        _sumlens(env, *serve, "--token-file", str(token_file)), "--token-file is for --auth token"
    )


def test_environment_variables_give_settings_and_flags_win(
    env: dict[str, str], auth_base: Path
) -> None:
    port = f"--port={free_port()}"
    out = _sumlens({**env, "SUMLENS_AUTH": "ldap"}, "serve", f"--logdir={auth_base}", port)
    _error(out, "--auth 'ldap'", "(from the environment: SUMLENS_AUTH)")
    out = _sumlens(
        {**env, "SUMLENS_AUTH": "ldap", "SUMLENS_LOGDIR": str(auth_base)},
        "serve",
        port,
        "--auth=proxy",
    )
    _error(out, "--auth proxy needs --trusted-proxies")  # the flag's mode, not the variable's
    out = _sumlens({**env, "SUMLENS_READ_ONLY": "maybe"}, "serve", f"--logdir={auth_base}", port)
    _error(out, "SUMLENS_READ_ONLY='maybe'", "1, true or yes")
    out = _sumlens(env, "serve", port)
    _error(out, "$SUMLENS_LOGDIR")


@pytest.fixture
def started(
    env: dict[str, str], auth_base: Path, tmp_path: Path, token_file: Path
) -> Iterator[tuple[str, Path]]:
    """``sumlens start`` configured by environment variables alone: token auth, read-only,
    a replica name; yields its URL and its log; stops it afterwards."""
    port = free_port()
    workspace = tmp_path / "ws"
    team = {
        "SUMLENS_LOGDIR": str(auth_base),
        "SUMLENS_PORT": str(port),
        "SUMLENS_WORKSPACE": str(workspace),
        "SUMLENS_AUTH": "token",
        "SUMLENS_TOKEN_FILE": str(token_file),
        "SUMLENS_READ_ONLY": "yes",
        "SUMLENS_REPLICA_NAME": "replica-a",
    }
    out = _sumlens({**env, **team}, "start")
    assert out.returncode == 0, out.stderr
    try:
        yield f"http://127.0.0.1:{port}", workspace / f"sumlens-{port}.log"
    finally:
        stopped = _sumlens(env, "stop", f"--port={port}", f"--workspace={workspace}")
        assert stopped.returncode == 0, stopped.stderr


def test_a_server_started_from_the_environment_logs_no_token(started: tuple[str, Path]) -> None:
    url, log = started
    assert httpx.get(url + "/api/v1/runs", timeout=BOUND).status_code == 401
    session = httpx.get(url + "/api/v1/session", headers=bearer("alice"), timeout=BOUND).json()
    assert session["mode"] == "token" and session["user"] == "alice"
    assert session["read_only"] is True and session["can_write"] is False
    wrong = "a-wrong-token-0123456789abc"
    httpx.post(url + "/api/v1/session", json={"token": wrong}, timeout=BOUND)
    httpx.get(url + "/api/v1/runs", headers={"Authorization": f"Bearer {wrong}"}, timeout=BOUND)
    httpx.post(url + "/api/v1/session", json={"token": TOKENS["alice"]}, timeout=BOUND)
    health = httpx.get(url + "/api/v1/health", timeout=BOUND).text
    written = log.read_text()
    for token in [*TOKENS.values(), wrong]:
        assert token not in written and token not in health


def test_settings_carry_the_team_fields_and_mask_passwords(
    auth_base: Path, token_file: Path
) -> None:
    settings = BoardSettings.create(
        auth_base,
        auth="token",
        token_file=token_file,
        trusted_proxies=["10.1.2.3", "fd00::/8"],
        read_only=True,
        state="postgresql://team:s3cret@db.lan:5433/sumlens",
        trash_retention_days="7.5",
        replica="a",
    )
    assert settings.trusted_proxies == ("10.1.2.3/32", "fd00::/8")
    assert settings.trash_retention_days == 7.5
    handed = settings.to_json()
    assert BoardSettings.from_json(handed) == settings
    for token in TOKENS.values():
        assert token not in handed
    shown = state_for_display(settings.state or "")
    assert shown == "postgresql://team:***@db.lan:5433/sumlens"
    with pytest.raises(BoardSettingsError, match="--proxy-user-header") as err:
        BoardSettings.create(auth_base, proxy_user_header="X User")
    assert "X User" in str(err.value)
