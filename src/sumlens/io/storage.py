"""Storage behind one seam: where event files are listed, read and written.

Every reader of event files (:mod:`sumlens.io.reader`, :mod:`sumlens.io.scalars`, the
dashboard's discovery) and the summary writer (:mod:`sumlens.summary.eventfile`) reach
files only through the two small interfaces declared here, in the spirit of
TensorBoard's ``Logdir``/``GFile`` layer:

* :class:`Storage` reads: list one directory, stat one path, open a file for reading at
  an offset;
* :class:`WriteStorage` writes: make a directory, create a file exclusively, append to it
  (:class:`AppendFile`), mark it complete once done, remove it, and say how much room is
  left;
* :class:`MoveStorage` moves files that exist (all of a batch or none) and deletes whole
  directories: what the dashboard's trash of runs does with a run's files.

:class:`LocalStorage` (the local file system, ``os.scandir``/``open``/``os.write``) is the
first implementation of both and every reader's and writer's default. Paths are strings
(any ``os.PathLike`` is accepted and turned into one), and what a listing or a stat
returns is a plain :class:`FileInfo`, so a storage with no file descriptors and no
``os.DirEntry`` (an object store behind an ``fsspec`` file system) can implement the same
methods.

File modes on the local disk follow the umask, as ``os.makedirs`` and ``open`` do and as
torch's and TensorBoard's writers do: directories ``0o777 & ~umask``, files
``0o666 & ~umask`` (0755 and 0644 under the usual umask 022), left as they are when a file
is complete, so a dashboard under a service account, teammates on a shared volume and a
group-readable NFS read the logs and ``rm -r`` does not ask about each file. MindSpore's
owner-only rule is one argument away (``LocalStorage(owner_only=True)``, the writers'
``owner_only=True``): directories 0700, files 0600 while written and 0400 once complete.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG
from typing import BinaryIO, NamedTuple, Protocol, runtime_checkable

StrPath = str | os.PathLike[str]
_PLAIN_JOIN = os.sep == "/" and os.altsep is None
_REMOVE_TRIES = 5
"""Walks of a tree being deleted while another process deletes it too."""


class FileInfo(NamedTuple):
    """One file or directory as a listing or a stat saw it (links followed).

    ``mtime_ns`` of a directory changes when entries are added to it, removed or renamed
    (not when a file in it grows); ``ctime_ns`` also changes with its permissions.
    ``device`` and ``inode`` identify the real file where the storage has them (a local
    file system), else they are None. (A named tuple: walks make one per directory.)
    """

    name: str
    is_dir: bool
    is_file: bool
    """A regular file (not a directory, a device, a pipe ...)."""
    size: int
    mtime_ns: int
    ctime_ns: int
    device: int | None = None
    inode: int | None = None
    is_link: bool = False
    """Whether the name is a symbolic link (what it says is about the link's target)."""

    @property
    def identity(self) -> tuple[int, int] | None:
        """``(device, inode)``: the same for every name of one real file; None if unknown."""
        if self.device is None or self.inode is None:
            return None
        return self.device, self.inode


@runtime_checkable
class Storage(Protocol):
    """Where event files are read from: list, stat, open at an offset.

    Implementations raise ``OSError`` for what cannot be done (``FileNotFoundError`` for
    a path that is not there, ``PermissionError``, ``NotADirectoryError``), with the path
    in the error, as the ``os`` functions do; readers count or report those and go on.
    """

    def join(self, directory: str, name: str) -> str:
        """The path of ``name`` inside ``directory``."""
        ...

    def stat(self, path: str) -> FileInfo:
        """What ``path`` is now (links followed)."""
        ...

    def list_dir(
        self,
        path: str,
        keep: Callable[[str], bool] | None = None,
        dirs: bool = True,
        links: bool = False,
    ) -> list[FileInfo]:
        """The entries of directory ``path`` (one level, in no particular order).

        Every sub-directory is listed (none with ``dirs=False``); a file only when it is a
        regular file and ``keep(name)`` accepts its name (all of them when ``keep`` is
        None), so a storage where each entry's details cost a call can skip what nobody
        reads. An entry that vanishes while listed, or a link leading nowhere, is left out;
        with ``links=True`` each symbolic link left out is listed all the same, as an entry
        that is neither a directory nor a file (for callers that must know where links are:
        what a link leads to can change while its directory does not).
        """
        ...

    def open_read(self, path: str, offset: int = 0, length: int | None = None) -> BinaryIO:
        """``path`` opened for reading, positioned at byte ``offset``.

        A binary file object (``read``, ``readinto``, ``seek``, ``tell``, ``close``, a
        context manager) whose ``read(n)`` returns ``n`` bytes unless the file ends first,
        and whose ``seek(0, os.SEEK_END)`` returns the file's size as it is now.
        ``length``, when the caller knows it, is how many bytes it means to read from
        ``offset``: a hint, so a store that charges per request and byte asks for no more
        (reading further still works).
        """
        ...


@runtime_checkable
class AppendFile(Protocol):
    """A file open for appending, from :meth:`WriteStorage.open_append`."""

    def write(self, data: bytes | bytearray | memoryview) -> int:
        """Append ``data``; the number of bytes written, which may be fewer (call again).

        ``OSError`` when nothing could be written (a full disk, a file size limit)."""
        ...

    def truncate(self, size: int) -> None:
        """Cut the file back to ``size`` bytes (a torn record after a failed write)."""
        ...

    def flush(self) -> None:
        """Hand what was written to the storage, readable by other processes."""
        ...

    def close(self) -> None:
        """Flush and close the file."""
        ...

    def fileno(self) -> int:
        """The operating system's descriptor (``OSError`` where there is none)."""
        ...


@runtime_checkable
class WriteStorage(Protocol):
    """Where event files are written: each file created once and appended to."""

    def make_dirs(self, path: str) -> None:
        """Make directory ``path`` and its parents where missing."""
        ...

    def create(self, path: str) -> None:
        """Create ``path`` empty; ``FileExistsError`` if it exists (two writers never share
        a file)."""
        ...

    def open_append(self, path: str) -> AppendFile:
        """``path`` (created before) opened for appending."""
        ...

    def seal(self, path: str) -> None:
        """The closed file ``path`` is complete: its writer adds nothing more to it."""
        ...

    def remove(self, path: str) -> None:
        """Remove file ``path``."""
        ...

    def free_bytes(self, path: str) -> int:
        """Bytes that can still be written below directory ``path``."""
        ...


@runtime_checkable
class MoveStorage(Protocol):
    """Where files are moved and deleted, a batch at a time.

    :meth:`move_files` moves every file of a batch or none: a failure half-way leaves each
    file where it was (and says what failed), so a run is never split between two places.
    """

    def move_files(self, moves: Sequence[tuple[str, str]]) -> None:
        """Move each ``(source, target)`` file, making the targets' directories.

        ``FileExistsError`` (nothing moved) when a target exists; any other ``OSError``
        after every file already moved was put back where it was.
        """
        ...

    def remove_tree(self, path: str) -> None:
        """Delete directory ``path`` and everything below it; nothing when it is not there."""
        ...

    def remove_empty_dirs(self, path: str) -> None:
        """Remove directory ``path`` and the directories below it that hold nothing (what
        moving their files away left); a directory that still holds something stays."""
        ...


def free_disk_bytes(directory: StrPath) -> int:
    """Free bytes on the local file system holding ``directory`` (a seam for tests)."""
    return shutil.disk_usage(directory).free


class LocalAppendFile:
    """An :class:`AppendFile` on a local file: unbuffered ``os.write`` on one descriptor."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes | bytearray | memoryview) -> int:
        """Append ``data`` with one ``os.write``; the bytes written."""
        return os.write(self._fd, data)

    def truncate(self, size: int) -> None:
        """Cut the file back to ``size`` bytes."""
        os.ftruncate(self._fd, size)

    def flush(self) -> None:
        """Nothing to do: every write went to the operating system at once."""

    def close(self) -> None:
        """Close the descriptor."""
        os.close(self._fd)

    def fileno(self) -> int:
        """The descriptor."""
        return self._fd


class LocalStorage:
    """The local file system, as both :class:`Storage` and :class:`WriteStorage`.

    Directories and files are made with the modes the umask leaves (see the module's
    docstring); with ``owner_only`` only their owner may use them (0700, 0600, and 0400
    once complete), as MindSpore makes its files.
    """

    def __init__(self, owner_only: bool = False) -> None:
        self.owner_only = owner_only
        self._dir_mode = 0o700 if owner_only else 0o777
        self._file_mode = 0o600 if owner_only else 0o666

    def __repr__(self) -> str:
        return f"LocalStorage(owner_only={self.owner_only})"

    def join(self, directory: StrPath, name: str) -> str:
        """``os.path.join`` (on POSIX without its checks: walks join once per directory)."""
        directory = os.fspath(directory)
        if _PLAIN_JOIN and directory and directory[-1] != "/":
            return f"{directory}/{name}"
        return os.path.join(directory, name)

    def stat(self, path: StrPath) -> FileInfo:
        """``os.stat`` (links followed) as a :class:`FileInfo`."""
        path = os.fspath(path)
        st = os.lstat(path)  # one call for what is not a link
        is_link = S_ISLNK(st.st_mode)
        name = path.rpartition(os.sep)[2] if _PLAIN_JOIN else os.path.basename(path)
        return _info(name, os.stat(path) if is_link else st, is_link)

    def list_dir(
        self,
        path: StrPath,
        keep: Callable[[str], bool] | None = None,
        dirs: bool = True,
        links: bool = False,
    ) -> list[FileInfo]:
        """One ``os.scandir``; only what is returned is stat'ed."""
        found: list[FileInfo] = []
        with os.scandir(path) as entries:
            for entry in entries:
                info = _entry_info(entry, keep, dirs)
                if info is not None:
                    found.append(info)
                elif links and _is_link(entry):
                    found.append(FileInfo(entry.name, False, False, 0, 0, 0, is_link=True))
        return found

    def open_read(self, path: StrPath, offset: int = 0, length: int | None = None) -> BinaryIO:
        """``open(path, "rb")`` (buffered), at ``offset`` (``length`` changes nothing here)."""
        handle = open(path, "rb")  # noqa: SIM115 - handed to the caller, who closes it
        if offset:
            handle.seek(offset)
        return handle

    def make_dirs(self, path: StrPath) -> None:
        """Mode ``0o777 & ~umask`` (0700 when owner-only) for the directory itself; parents
        get ``0o777 & ~umask``."""
        Path(path).mkdir(mode=self._dir_mode, parents=True, exist_ok=True)

    def create(self, path: StrPath) -> None:
        """``O_CREAT | O_EXCL`` with mode ``0o666 & ~umask`` (0600 when owner-only)."""
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, self._file_mode))

    def open_append(self, path: StrPath) -> LocalAppendFile:
        """``O_WRONLY | O_APPEND``: every write lands at the end, unbuffered."""
        return LocalAppendFile(os.open(path, os.O_WRONLY | os.O_APPEND))

    def seal(self, path: StrPath) -> None:
        """Mode 0400 when owner-only; else the file keeps the mode it was made with."""
        if self.owner_only:
            os.chmod(path, 0o400)

    def remove(self, path: StrPath) -> None:
        """``os.unlink``."""
        os.unlink(path)

    def free_bytes(self, path: StrPath) -> int:
        """Free bytes on the disk (:func:`free_disk_bytes`)."""
        return free_disk_bytes(path)

    def move_files(self, moves: Sequence[tuple[StrPath, StrPath]]) -> None:
        """One ``os.rename`` per file (a symbolic link is moved as the link); on a failure
        the files already moved are renamed back, newest first."""
        pairs = [(os.fspath(source), os.fspath(target)) for source, target in moves]
        taken = [target for _, target in pairs if os.path.lexists(target)]
        if taken:
            raise FileExistsError(17, f"{len(taken)} target(s) exist already", taken[0])
        done: list[tuple[str, str]] = []
        try:
            for source, target in pairs:
                self.make_dirs(os.path.dirname(target))
                os.rename(source, target)
                done.append((source, target))
        except OSError as err:
            raise _put_back(done, source, target, err) from err

    def remove_tree(self, path: StrPath) -> None:
        """``shutil.rmtree``; what another process deletes meanwhile is not an error (the
        walk starts again over what is left, a few times at most)."""
        for _ in range(_REMOVE_TRIES):
            try:
                shutil.rmtree(path)
                return
            except FileNotFoundError:
                if not os.path.lexists(path):
                    return
        shutil.rmtree(path)

    def remove_empty_dirs(self, path: StrPath) -> None:
        """``os.rmdir`` from the deepest directory up; those still holding something stay."""
        path = os.fspath(path)
        for directory, _, _ in sorted(os.walk(path), key=lambda walked: -len(walked[0])):
            try:
                os.rmdir(directory)
            except OSError:  # not empty, or gone
                continue


def _entry_info(
    entry: os.DirEntry[str], keep: Callable[[str], bool] | None, dirs: bool
) -> FileInfo | None:
    """What ``list_dir`` says of ``entry``; None for what it leaves out."""
    try:
        if entry.is_dir():
            if not dirs:
                return None
        elif (keep is not None and not keep(entry.name)) or not entry.is_file():
            return None
        return _info(entry.name, entry.stat(), entry.is_symlink())
    except OSError:  # vanished, or a broken link, while listed
        return None


def _put_back(done: list[tuple[str, str]], source: str, target: str, err: OSError) -> OSError:
    """Rename the files of ``done`` back; the error saying what failed, and whether
    everything is where it was again."""
    stuck = []
    for moved_from, moved_to in reversed(done):
        try:
            os.rename(moved_to, moved_from)
        except OSError:
            stuck.append(moved_to)
    reason = err.strerror or str(err)
    if stuck:
        return OSError(
            err.errno,
            f"moving {source!r} to {target!r} failed ({reason}), and {len(stuck)} file(s) "
            f"moved before could not be put back: they are at {stuck[:3]!r}",
        )
    return OSError(
        err.errno, f"moving {source!r} to {target!r} failed ({reason}); nothing was moved"
    )


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _info(name: str, st: os.stat_result, is_link: bool) -> FileInfo:
    mode = st.st_mode
    return FileInfo(
        name,
        S_ISDIR(mode),
        S_ISREG(mode),
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_dev,
        st.st_ino,
        is_link,
    )


LOCAL_STORAGE = LocalStorage()
"""The default storage of every reader and writer (modes from the umask)."""
OWNER_ONLY_STORAGE = LocalStorage(owner_only=True)
"""The local disk for writers made with ``owner_only=True``."""


def local_storage(owner_only: bool) -> LocalStorage:
    """The local write storage of a writer made with ``owner_only``."""
    return OWNER_ONLY_STORAGE if owner_only else LOCAL_STORAGE


def dir_mode(owner_only: bool) -> int:
    """The mode to make a writer's directory with (``mkdir``'s, before the umask)."""
    return 0o700 if owner_only else 0o777
