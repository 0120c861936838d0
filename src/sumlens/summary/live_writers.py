"""Telling that another writer records into the same directory at the same time.

MindInsight and TensorBoard show one directory as one run, so two writers of the same
rank recording into one directory at once interleave two runs' values: what MindSpore's
docs call abnormal data (one directory, one training). ``SummaryRecord`` warns once when
it finds such a writer: in this process through the open records, in other processes
through locks. A writer holds a non-blocking exclusive ``flock`` on each summary file
while it has it open; the lock goes with the file's last descriptor, so a closed file,
or one whose process has died however it died, holds none. A new writer that can not
take a shared lock on a writable file of its rank in its directory has found a live
writer. Nothing is added to the directory (the lock is on the event file itself, and
readers never lock). Where ``fcntl`` is missing (Windows) only one process's records
are told apart.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Collection
from pathlib import Path

from sumlens._log import warn_once
from sumlens.io.naming import file_kind, file_rank, tensorboard_file_rank

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_EVENT_KINDS = ("summary", "tensorboard")
_made_here: set[str] = set()
"""The summary files this process made: never another process's live files, so never
probed (a long run's own rotated files cost nothing). A forked child starts it again:
for the child they are its parent's."""
os.register_at_fork(after_in_child=_made_here.clear)


def hold(fd: int) -> None:
    """Mark the summary file open on ``fd`` as a live writer's (until it is closed)."""
    if fcntl is None:  # pragma: no cover - Windows
        return
    with contextlib.suppress(OSError):  # a file system without locks: not told apart
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _rank_of(name: str) -> int | None:
    """The rank a summary file name of ours carries."""
    return file_rank(name) if file_kind(name) == "summary" else tensorboard_file_rank(name)


def _held(path: Path) -> bool:
    """Whether another open file holds ``path``'s lock (a shared lock can not be taken)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # gone, or not ours to read
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # releases the shared lock, if it was taken
    return False


def live_files(directory: Path, rank: int, own: Collection[Path] = ()) -> list[Path]:
    """Summary files of ``rank`` in ``directory`` that another live writer holds.

    Files this process made are not asked, nor read-only ones (an ``owner_only`` writer
    makes its files read-only when it closes them); any other file of ``rank`` is opened
    and its lock probed.
    """
    if fcntl is None:  # pragma: no cover - Windows
        return []
    found = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    for entry in entries:
        path = Path(entry.path)
        if file_kind(entry.name) not in _EVENT_KINDS or _rank_of(entry.name) != rank:
            continue
        if entry.path in _made_here:
            continue
        try:
            writable = entry.is_file() and entry.stat().st_mode & stat.S_IWUSR
        except OSError:
            continue
        if writable and path not in own and _held(path):
            found.append(path)
    return found


def say_shared(directory: Path, rank: int, where: str) -> None:
    """Warn, once per directory and rank, that another writer records there (``where``)."""
    warn_once(
        f"shared-directory:{directory}:{rank}",
        "another summary writer records into %s at the same time (rank %d, %s): "
        "MindInsight and TensorBoard show one directory as one run, so the two runs' "
        "values are mixed; give each run a directory of its own",
        directory,
        rank,
        where,
    )


def say_if_shared(directory: Path, rank: int, open_here: bool) -> None:
    """Warn if another writer of ``rank`` records into ``directory`` now: an open record of
    this process (``open_here``), or a live writer's file (checked again by each new file
    a record writes: :func:`check_new_file`)."""
    if open_here:
        say_shared(directory, rank, "another SummaryRecord of this process")
        return
    others = live_files(directory, rank)
    if others:
        say_shared(directory, rank, f"in another process: its {others[0].name} is open")


def check_new_file(directory: Path, rank: int, path: Path, fd: int) -> None:
    """For a summary file just created: hold it, and warn if another writer is live."""
    _made_here.add(os.fspath(path))  # first: a writer of another thread must not take it,
    hold(fd)  # locked, for another process's
    others = live_files(directory, rank, own=(path,))
    if others:
        say_shared(directory, rank, f"in another process: its {others[0].name} is open")
