"""Python run as an unprivileged user, for tests of files that cannot be read.

Permissions do not stop root, as whom the tests may run: a test that makes a file
unreadable (chmod 000) runs its checks in a child process as ``nobody`` when we are root
(as whoever runs the tests otherwise), over files that user owns.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

NOBODY = 65534
"""The user (and group) id of ``nobody``."""


@contextlib.contextmanager
def shared_dir(prefix: str) -> Iterator[Path]:
    """A new folder the unprivileged user can use (pytest's own are root's, mode 0700),
    removed afterwards whatever modes the test left inside it."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for inside in [path, *path.rglob("*")]:
            if not inside.is_symlink():
                inside.chmod(0o755)
        shutil.rmtree(path)


def run_unprivileged(
    code: str, args: list[str], owned: Path, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run Python ``code`` with ``args`` as ``nobody`` when we are root (``owned`` and all
    inside it given to it first, numba's cache of compiled kernels there too), else as us;
    our import path goes with it.

    ``nobody`` may not reach this interpreter (a venv over a Python in root's home): the
    system's Python of the same version is tried then. Skips the test when none works.
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    if os.geteuid() != 0:
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    cache = owned / "numba-cache"  # numba caches compiled kernels where it can write
    cache.mkdir(exist_ok=True)
    env["NUMBA_CACHE_DIR"] = str(cache)
    for path in [owned, *owned.rglob("*")]:
        os.chown(path, NOBODY, NOBODY)
    as_nobody = {"user": NOBODY, "group": NOBODY, "extra_groups": [], "cwd": owned}
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in (sys.executable, os.path.realpath(sys.executable), f"/usr/bin/{version}"):
        try:
            subprocess.run(
                [python, "-c", "import sumlens.board.data.loader"],
                env=env,
                check=True,
                capture_output=True,
                timeout=120,
                **as_nobody,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        return subprocess.run(
            [python, "-c", code, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            **as_nobody,
        )
    pytest.skip("no Python interpreter the unprivileged user nobody can run")
