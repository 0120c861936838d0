"""Finding the runs under a base directory: every directory that holds event files.

A run is named as MindInsight names a train job: its directory relative to the base
directory, ``./`` for the base directory itself and ``./a/b`` below it. The walk is bounded
(depth and run count, each said once when reached, never silently cut). Directories are
listed through a :class:`~sumlens.io.storage.Storage` (the local file system by default):
one listing per directory, so 10,000 runs take a fraction of a second.

Symbolic links are followed, to files and to directories (a folder of links to the runs
one compares, as TensorBoard users build), wherever they lead. Each real directory is
walked once: a link back to an ancestor ends there (no loop), and a directory reached by
several names is listed under the first one the walk meets, which goes breadth-first in
name order (the shallowest name; of names at one depth, the first in sorted order).

The dashboard's trash (:data:`TRASH_DIR`, where deleted runs wait to be restored or
purged) is never walked, at any depth: its runs are not served.

A directory that cannot be listed (permissions, I/O errors) is reported in
:attr:`Discovery.unlisted` with the reason, so a run in it is said to be unreadable
rather than vanishing.

Walking again is cheap while little changes: a :class:`Walker` keeps each directory's
listing with the directory's stamp (modification and change times, identity), and lists
again only a directory whose stamp changed, since entries are added, removed and renamed
only by changing it. The event files and sub-directories it listed before are stat'ed
again (a file grows, or is made unreadable, without its directory changing), so an idle
base directory of 20,000 empty sub-directories costs one stat each per walk. A listing is
not reused when it was made less than ``settle_s`` after its directory last changed (a
file system's clock ticks coarser than its nanoseconds: a change in the same tick leaves
the same stamp; a file server whose clock lags more than that could hide such a change
until the directory changes again), nor when the directory holds symbolic links (what a
link leads to can change while its directory does not).

Object storage (a storage with ``list_tree``: :class:`sumlens.io.remote.FsspecStorage`) has
no directories to stat and charges per request: there each walk is ONE recursive listing of
everything below the base directory (its pages included), grouped into runs by directory
with the same run ids, file order, depth and run bounds as the walk above (breadth-first
in name order), where listing level by level would cost a request per directory per reload.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sumlens.board.projector_config import CONFIG_FILE
from sumlens.io.naming import file_kind, file_order_key, is_event_file_name
from sumlens.io.storage import LOCAL_STORAGE, FileInfo, Storage

MAX_DEPTH = 32
"""Directory levels below the base directory that are searched."""
MAX_RUNS = 100_000
"""Runs listed at most (MindInsight stops at 999)."""
SETTLE_S = 2.0
"""A directory's listing is reused by the next walk only if it was made this many seconds
after the directory last changed (see :class:`Walker`)."""

TRASH_DIR = ".sumlens-trash"
"""The folder of the base directory holding deleted runs (:mod:`sumlens.board.data.trash`);
no walk enters a folder of this name."""

_log = logging.getLogger("sumlens.board")

TreeLister = Callable[[str], list[tuple[str, FileInfo]]]
"""A storage's ``list_tree``: every file below a path, with what it is, in one listing."""


def tree_lister(storage: Any) -> TreeLister | None:
    """``storage.list_tree`` where the storage has one (object storage: a whole tree costs
    one listing, a directory's stat a request), else None (walked level by level)."""
    lister = getattr(storage, "list_tree", None)
    return lister if callable(lister) else None


@dataclass(frozen=True, slots=True)
class FoundFile:
    """An event file as the walk saw it."""

    name: str
    kind: str
    size: int
    mtime_ns: int
    ctime_ns: int
    """Changes with the contents and with permissions (a file made unreadable)."""


@dataclass(frozen=True, slots=True)
class FoundRun:
    """A run directory, its event files in reading order and its embedding projector's
    config when it has one (:mod:`sumlens.board.projector_config`)."""

    id: str
    path: Path
    files: tuple[FoundFile, ...]
    projector: FoundFile | None = None


@dataclass(slots=True)
class Discovery:
    """The runs found, whether a bound cut the walk short, and the directories (by run id)
    that could not be listed, with the reason."""

    runs: dict[str, FoundRun]
    truncated: bool = False
    unlisted: dict[str, str] = field(default_factory=dict)
    links: bool = False
    """Whether a directory walked holds symbolic links (what they lead to can change
    without any directory of the tree changing)."""


def run_id(base_dir: Path, directory: Path) -> str:
    """``./`` for the base directory, ``./a/b`` for a directory below it."""
    relative = directory.relative_to(base_dir).as_posix()
    return "./" if relative == "." else f"./{relative}"


def discover(
    base_dir: Path,
    max_runs: int = MAX_RUNS,
    max_depth: int = MAX_DEPTH,
    storage: Storage = LOCAL_STORAGE,
) -> Discovery:
    """Walk ``base_dir`` breadth-first once and return its runs (at most ``max_runs``).

    A caller that walks the same directory again and again keeps a :class:`Walker`."""
    return Walker(base_dir, storage, max_runs, max_depth).walk()


@dataclass(frozen=True, slots=True)
class _Listing:
    """What listing one directory found, and whether it may stand for the next walk."""

    stamp: tuple[int, int, int | None, int | None]
    """The directory's modification and change times, device and inode when it was listed."""
    reusable: bool
    links: bool
    """Whether the directory holds symbolic links (it is then never reusable)."""
    files: tuple[str, ...]
    """Its event files' paths, in reading order (and its projector config's, if any)."""
    subdirs: tuple[str, ...]
    """Its sub-directories' paths, in name order."""


_Entry = tuple[str, FileInfo]
"""A path and what it is."""


class Walker:
    """Walks one base directory again and again, listing only the directories that changed.

    Each :meth:`walk` finds what :func:`discover` would find at that moment (see the module
    docstring for what it reuses from the walk before). One walk at a time.
    """

    def __init__(
        self,
        base_dir: Path,
        storage: Storage = LOCAL_STORAGE,
        max_runs: int = MAX_RUNS,
        max_depth: int = MAX_DEPTH,
        settle_s: float = SETTLE_S,
    ) -> None:
        if not settle_s >= 0:
            raise ValueError(f"settle_s={settle_s!r} must be seconds >= 0")
        self.base_dir = base_dir
        self.storage = storage
        self.max_runs = max_runs
        self.max_depth = max_depth
        self._settle_ns = int(settle_s * 1e9)
        self._listings: dict[str, _Listing] = {}

    def walk(self) -> Discovery:
        """Walk the base directory breadth-first; its runs (at most ``max_runs``)."""
        lister = tree_lister(self.storage)
        if lister is not None:
            return self._walk_tree(lister)
        found = Discovery({})
        before, self._listings = self._listings, {}
        try:
            base = self.storage.stat(os.fspath(self.base_dir))
        except OSError as err:
            found.unlisted["./"] = _reason(err)
            return found
        seen = {base.identity}  # real directories walked
        level = [(os.fspath(self.base_dir), base)]
        for depth in range(self.max_depth + 1):
            below: list[_Entry] = []
            for directory, info in level:
                try:
                    files, subdirs = self._contents(directory, info, before)
                except OSError as err:
                    found.unlisted[run_id(self.base_dir, Path(directory))] = _reason(err)
                    continue
                if self._listings[directory].links:
                    found.links = True
                events = [f for f in files if f.name != CONFIG_FILE]
                if events:
                    if len(found.runs) >= self.max_runs:
                        found.truncated = True
                        return found
                    path = Path(directory)
                    name = run_id(self.base_dir, path)
                    projector = next((_projector(f) for f in files if f.name == CONFIG_FILE), None)
                    found.runs[name] = FoundRun(
                        name, path, tuple(map(_found_file, events)), projector
                    )
                for entry in subdirs:  # in name order: the first name of a directory wins
                    if entry[1].name == TRASH_DIR:
                        continue
                    identity = entry[1].identity  # (device, inode); None where unknown
                    if identity is not None:
                        if identity in seen:
                            continue
                        seen.add(identity)
                    if depth < self.max_depth:
                        below.append(entry)
                    else:
                        found.truncated = True
            if not below:
                break
            level = below
        return found

    def _walk_tree(self, lister: TreeLister) -> Discovery:
        """The runs of one recursive listing, in the order and within the bounds of the
        breadth-first walk (directories by depth, then by their names' path)."""
        found = Discovery({})
        base = os.fspath(self.base_dir)
        try:
            entries = lister(base)
        except OSError as err:
            found.unlisted["./"] = _reason(err)
            return found
        prefix = base.rstrip("/") + "/"
        directories: dict[str, list[FileInfo]] = {}
        for path, info in entries:
            if not path.startswith(prefix):
                continue  # the base itself, were it an object
            directory, _, name = path[len(prefix) :].rpartition("/")
            if TRASH_DIR in directory.split("/"):
                continue
            if directory.count("/") + bool(directory) > self.max_depth:
                found.truncated = True
            elif info.is_file and _listed(name):
                directories.setdefault(directory, []).append(info._replace(name=name))
        for directory in sorted(directories, key=_breadth_first):
            files = sorted(directories[directory], key=lambda f: file_order_key(f.name))
            events = [f for f in files if f.name != CONFIG_FILE]
            if not events:
                continue
            if len(found.runs) >= self.max_runs:
                found.truncated = True
                break
            name = f"./{directory}" if directory else "./"
            projector = next((_projector(f) for f in files if f.name == CONFIG_FILE), None)
            location = Path(prefix + directory) if directory else self.base_dir
            found.runs[name] = FoundRun(name, location, tuple(map(_found_file, events)), projector)
        return found

    def _contents(
        self, directory: str, info: FileInfo, before: dict[str, _Listing]
    ) -> tuple[list[FileInfo], list[_Entry]]:
        """The event files (in reading order) and sub-directories (in name order) of
        ``directory``: from the walk before when its stamp did not change, else listed."""
        stamp = info[4:8]  # mtime_ns, ctime_ns, device, inode
        listing = before.get(directory)
        if listing is not None and listing.reusable and listing.stamp == stamp:
            found = self._restat(listing) if listing.files or listing.subdirs else ([], [])
            if found is not None:
                self._listings[directory] = listing
                return found
        listing, found = self._list(directory, stamp)
        self._listings[directory] = listing
        return found

    def _list(
        self, directory: str, stamp: tuple[int, int, int | None, int | None]
    ) -> tuple[_Listing, tuple[list[FileInfo], list[_Entry]]]:
        """List ``directory``: the listing to keep, its event files and sub-directories."""
        listed_at = time.time_ns()
        entries = self.storage.list_dir(directory, keep=_listed, links=True)
        join = self.storage.join
        files = sorted((e for e in entries if e.is_file), key=lambda f: file_order_key(f.name))
        subdirs = [(join(directory, e.name), e) for e in sorted(entries, key=_name) if e.is_dir]
        settled = max(stamp[0], stamp[1]) < listed_at - self._settle_ns
        links = any(e.is_link for e in entries)
        listing = _Listing(
            stamp,
            settled and not links,
            links,
            tuple(join(directory, f.name) for f in files),
            tuple(path for path, _ in subdirs),
        )
        return listing, (files, subdirs)

    def _restat(self, listing: _Listing) -> tuple[list[FileInfo], list[_Entry]] | None:
        """The listed entries of an unchanged directory as they are now; None when one of
        them is gone or changed kind (the directory is listed again then)."""
        stat = self.storage.stat
        files: list[FileInfo] = []
        subdirs: list[_Entry] = []
        try:
            for path in listing.files:
                info = stat(path)
                if not info.is_file:
                    return None
                files.append(info)
            for path in listing.subdirs:
                info = stat(path)
                if not info.is_dir:
                    return None
                subdirs.append((path, info))
        except OSError:
            return None
        return files, subdirs


def _name(info: FileInfo) -> str:
    return info.name


def _breadth_first(directory: str) -> tuple[int, list[str]]:
    """Where the breadth-first walk meets ``directory`` (a path relative to the base)."""
    parts = directory.split("/") if directory else []
    return len(parts), parts


def _listed(name: str) -> bool:
    """Whether a walk lists a file named ``name``: an event file or a projector config."""
    return name == CONFIG_FILE or is_event_file_name(name)


def _projector(info: FileInfo) -> FoundFile:
    return FoundFile(info.name, "projector", info.size, info.mtime_ns, info.ctime_ns)


def _found_file(info: FileInfo) -> FoundFile:
    kind = file_kind(info.name)
    assert kind is not None  # listed only when it has one
    return FoundFile(info.name, kind, info.size, info.mtime_ns, info.ctime_ns)


def _reason(err: OSError) -> str:
    return err.strerror or str(err)
