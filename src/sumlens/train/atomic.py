"""Crash-safe file replacement: write a temp file beside the target, fsync, rename.

A process killed at any point leaves either the old file or the complete new one under the
final name, never a partial file. An interrupted write leaves a hidden temp file,
``.<name>.sumlens-<host>-<pid>.<random>.tmp``, in the same directory; nothing reads
those, and the next :func:`atomic_write` into that directory removes the ones whose
writing process is gone (:func:`remove_stale_temps`).
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import tempfile
import zlib
from collections.abc import Callable
from typing import BinaryIO

from sumlens._log import logger, warn_once

__all__ = ["atomic_write", "remove_stale_temps"]

_HOST = f"{zlib.crc32(socket.gethostname().encode()):08x}"
"""This machine in temp-file names: a process id means something only on its own host."""
_TEMP_NAME = re.compile(r"\A\..+\.sumlens-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)\.[^.]+\.tmp\Z")


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


def _process_is_gone(pid: int) -> bool:
    """True only when no process ``pid`` exists on this host (POSIX ``kill(pid, 0)``)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):  # EPERM: it exists, under another user
        return False
    return False


def remove_stale_temps(directory: str) -> list[str]:
    """Delete the temp files of writes into ``directory`` whose process died; their names.

    Only files named by :func:`atomic_write` on this host are considered, and only those
    whose process no longer exists: a write still running in this or another process
    (a live process id) keeps its file. A no-op where processes can't be probed without
    side effects (Windows, where ``os.kill`` ends the process).
    """
    if os.name != "posix":
        return []
    removed = []
    with contextlib.suppress(FileNotFoundError), os.scandir(directory) as entries:
        for entry in entries:
            match = _TEMP_NAME.match(entry.name)
            if match is None or match["host"] != _HOST or int(match["pid"]) == os.getpid():
                continue
            if not entry.is_file(follow_symlinks=False) or not _process_is_gone(int(match["pid"])):
                continue
            try:
                os.unlink(entry.path)
            except FileNotFoundError:  # another process cleaned it up first
                continue
            except OSError as err:
                warn_once(
                    f"stale-temp:{directory}",
                    "could not remove %s, left by a crashed save: %s",
                    entry.path,
                    err,
                )
                continue
            removed.append(entry.name)
    if removed:
        logger.warning(
            "removed %d temp file(s) left in %s by saves whose process died: %s",
            len(removed),
            directory,
            ", ".join(sorted(removed)),
        )
    return removed


def atomic_write(
    path: str | os.PathLike[str],
    write: Callable[[BinaryIO], None],
    *,
    mode: int | None = None,
) -> str:
    """Call ``write(f)`` on a temp file beside ``path``, then atomically move it to ``path``.

    ``mode`` (e.g. ``0o400``, the checkpoint rule of :mod:`sumlens.train.checkpoint`) is
    applied to the temp file before the rename, so the final name never appears with other
    permissions; without one the file keeps ``mkstemp``'s 0600. Temp files of earlier
    writes into the same directory whose process died are removed first. Returns the
    absolute final path.
    """
    final = os.path.abspath(os.fspath(path))
    directory, base = os.path.split(final)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"directory {directory!r} of {final!r} does not exist")
    remove_stale_temps(directory)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{base}.sumlens-{_HOST}-{os.getpid()}.", suffix=".tmp", dir=directory
    )
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
