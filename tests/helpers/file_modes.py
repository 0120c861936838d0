"""File modes for the tests of who may read what writers make: a umask for a block, the
modes of a tree, and reading it as another user.

Permissions do not stop root, as whom the tests may run, so "another user can read it" is
checked in a child process as ``nobody`` (with its own group, or with the files' group);
only root can become another user, so those checks skip otherwise.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.unprivileged import NOBODY

_READ_ALL = """
import os, sys
for path in sys.argv[1:]:
    try:
        os.listdir(path) if os.path.isdir(path) else open(path, "rb").read()
    except OSError as err:
        print(path, err.strerror)
"""


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    """``mask`` as the process's umask within the block (the previous one after)."""
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def modes_below(directory: Path) -> dict[str, int]:
    """The permission bits of ``directory`` (as ``"."``) and of everything below it (links
    not followed), by relative path."""
    found = {".": directory.lstat().st_mode & 0o7777}
    for path in directory.rglob("*"):
        found[path.relative_to(directory).as_posix()] = path.lstat().st_mode & 0o7777
    return found


def unreadable_as_nobody(paths: list[Path], group: int = NOBODY) -> list[str]:
    """The paths of ``paths`` that user ``nobody``, in group ``group``, cannot read (a file's
    bytes, a directory's listing), each with the reason. Skips the test unless we are root.
    """
    if os.geteuid() != 0:
        pytest.skip("reading as another user needs root")
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in (sys.executable, os.path.realpath(sys.executable), f"/usr/bin/{version}"):
        try:
            result = subprocess.run(
                [python, "-I", "-c", _READ_ALL, *map(os.fspath, paths)],
                user=NOBODY,
                group=group,
                extra_groups=[],
                cwd="/",
                env={},
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        return result.stdout.splitlines()
    pytest.skip("no Python interpreter the unprivileged user nobody can run")
