"""The command line and the package metadata."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sumlens
from sumlens import _log
from sumlens.board.plugins import DEFAULT_CAPS
from sumlens.board.settings import BoardSettings
from sumlens.cli import main


def test_version_matches_package() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "sumlens", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"sumlens {sumlens.__version__}"


def test_import_does_not_load_numba_or_torch() -> None:
    code = "import sys, sumlens, sumlens.io; print('numba' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_read_lists_values(golden_dir, capsys) -> None:
    assert main(["read", str(golden_dir / "all_plugins")]) == 0
    out = capsys.readouterr().out
    assert "scalar" in out and "loss" in out and "corrupt: 0" in out


def _read_cli(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sumlens", "read", str(path)], capture_output=True, text=True
    )


def _assert_one_line_error(out: subprocess.CompletedProcess[str], path: Path, what: str) -> None:
    assert out.returncode == 1
    assert out.stdout == ""
    assert "Traceback" not in out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("sumlens read: error: ")
    assert repr(str(path)) in lines[0] and what in lines[0]


def test_read_a_missing_path_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    _assert_one_line_error(_read_cli(missing), missing, "neither an event file nor a directory")


def test_read_a_directory_without_event_files_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a run")
    _assert_one_line_error(_read_cli(tmp_path), tmp_path, "directory with no event files")


def test_read_a_base_directory_lists_its_runs(golden_dir: Path, tmp_path: Path) -> None:
    """Runs in sub-directories are named, with how to read one (not "no event files")."""
    import shutil

    base = tmp_path / "base dir"
    shutil.copytree(golden_dir, base / "golden")
    out = _read_cli(base)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    lines = out.stdout.splitlines()
    assert "3 runs below it" in lines[0] and repr(str(base)) in lines[0]
    assert [line.split()[0] for line in lines[1:4]] == [
        "./golden/all_plugins",
        "./golden/collector",
        "./golden/landscape",
    ]
    assert lines[-1] == f"read one with: sumlens read '{base}/golden/all_plugins'"


def test_read_a_file_that_is_not_an_event_file_is_one_line(tmp_path: Path) -> None:
    other = tmp_path / "weights.bin"
    other.write_bytes(bytes(range(256)) * 20)
    _assert_one_line_error(_read_cli(other), other, "is not an event file")


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads unreadable files"
)
def test_read_an_unreadable_directory_is_one_line(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        _assert_one_line_error(_read_cli(locked), locked, "Permission denied")
    finally:
        locked.chmod(0o700)


def test_log_level_from_environment() -> None:
    code = "import logging, sumlens; print(logging.getLogger('sumlens').level)"
    env = {**os.environ, "SUMLENS_LOG_LEVEL": "debug"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert int(out.stdout) == logging.DEBUG


def test_warn_once_per_cause(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        assert _log.warn_once("test-cause-a", "first %s", 1)
        assert not _log.warn_once("test-cause-a", "again %s", 2)
        assert _log.warn_once("test-cause-b", "other")
    assert [r.getMessage() for r in caplog.records] == ["first 1", "other"]


@pytest.mark.parametrize("command", ["start", "serve"])
def test_board_help_shows_the_settings_defaults(command: str, capsys) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"(default {BoardSettings.port})" in help_text
    assert f"(default {BoardSettings.host}: this machine only)" in help_text
    assert f"(default {BoardSettings.reload_interval:g})" in help_text
    assert f"(default {BoardSettings.workspace})" in help_text
    assert "--settings-on-stdin" not in help_text  # what start hands its server, not for users
    for plugin, cap in DEFAULT_CAPS.items():
        assert f"{plugin}={cap}" in help_text
