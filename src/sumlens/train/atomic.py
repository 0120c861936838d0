"""Crash-safe file replacement: write a temp file beside the target, fsync, rename.

A process killed at any point leaves either the old file or the complete new one under the
final name, never a partial file. An interrupted write can leave a hidden ``.<name>.*.tmp``
file in the same directory; nothing reads those.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from typing import BinaryIO

__all__ = ["atomic_write"]


def _fsync_dir(directory: str) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories can't be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(
    path: str | os.PathLike[str],
    write: Callable[[BinaryIO], None],
    *,
    mode: int | None = None,
) -> str:
    """Call ``write(f)`` on a temp file beside ``path``, then atomically move it to ``path``.

    ``mode`` (e.g. ``0o400``) is applied to the temp file before the rename, so the final
    name never appears with other permissions. Returns the absolute final path.
    """
    final = os.path.abspath(os.fspath(path))
    directory, base = os.path.split(final)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"directory {directory!r} of {final!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        if os.name == "nt" and os.path.exists(final):  # pragma: no cover - Windows only
            # os.replace can't overwrite a read-only file on Windows.
            os.chmod(final, 0o600)
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)
    return final
