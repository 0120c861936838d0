"""The trash of deleted runs: their files moved aside, to be restored or purged later.

Deleting a run moves its files, through the storage seam's
:class:`~sumlens.io.storage.MoveStorage`, to ``<base dir>/.sumlens-trash/<entry id>/<run
path>`` (:data:`~sumlens.board.data.discover.TRASH_DIR`, which no walk enters, so the run
leaves the run list at the next reload). The entry id is the time of deletion and a random
suffix (``20250102T030405Z-1a2b3c4d``): unique across replicas, and sorted by age.

What belongs to a run: the files of its directory (event files, a projector config, what
plugins write beside them) and the files of its sub-directories that hold no event file at
any depth. A sub-directory holding event files is another run (or a folder of runs) and
stays where it is, as does a symbolic link to a directory (what it leads to is not the
run's own). The base directory itself (``./``) is every run's parent and is never trashed.

A move is all or nothing (the seam's promise): on the local disk a rename per file, put
back on a failure; on object storage a copy per file, and the originals deleted only once
every copy landed. Restoring moves the files back, refused while a run of that name
exists; purging deletes an entry's folder and is idempotent, so two replicas may purge the
same entry at once. Which entries exist, and when each was made, is kept in the shared
state by the routes (:mod:`sumlens.board.api.lifecycle`); this module only moves files.
"""

from __future__ import annotations

import calendar
import os
import re
import secrets
import time
from typing import Any

from sumlens.board.data.discover import TRASH_DIR, tree_lister
from sumlens.board.errors import BoardError, NotFound, QueryError
from sumlens.io.naming import is_event_file_name
from sumlens.io.remote import open_storage
from sumlens.io.storage import MoveStorage, Storage

_ENTRY_ID = re.compile(r"(\d{8}T\d{6}Z)-[0-9a-f]{8}")


class RunNotTrashable(QueryError):
    """A run that cannot be deleted (the base directory itself)."""


class RunConflict(BoardError):
    """A restore whose run exists again (a run of that name, or one of its files)."""

    status = 409


class TrashFailed(BoardError):
    """Moving a run's files failed; the message says what failed and where the files are."""

    status = 500


def new_entry_id(at: float) -> str:
    """A trash entry's id: the UTC time ``at`` (epoch seconds) and 8 random hex digits."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(at)) + "-" + secrets.token_hex(4)


def entry_time(entry_id: str) -> float | None:
    """When the entry ``entry_id`` was made (epoch seconds); None for a name of another
    form (a folder of the trash nobody made here)."""
    match = _ENTRY_ID.fullmatch(entry_id)
    if match is None:
        return None
    return float(calendar.timegm(time.strptime(match.group(1), "%Y%m%dT%H%M%SZ")))


def run_path(run_id: str) -> str:
    """The path of run ``run_id`` below the base directory (``a/b`` for ``./a/b``, ``""`` for
    ``./``); a QueryError naming it when it is no run id."""
    if not run_id.startswith("./"):
        raise QueryError(f"run={run_id!r} is not a run id: it starts with ./ (e.g. ./a/b)")
    rest = run_id[2:].rstrip("/")
    parts = rest.split("/") if rest else []
    if any(part in ("", ".", "..") for part in parts) or "\0" in rest:
        raise QueryError(f"run={run_id!r} is not a run id: no empty, . or .. names in it")
    return rest


class RunTrash:
    """The trash of one base directory: ``root`` in ``storage``, named ``location`` (a path
    or URL, what the run locations of the shared state start with)."""

    def __init__(self, storage: Storage, root: str, location: str) -> None:
        self.storage = storage
        self.root = root.rstrip("/") or root
        self.location = location.rstrip("/") or location

    def run_location(self, run_id: str) -> str:
        """Where run ``run_id`` lies, as the shared state keys it (the base directory's
        location, or below it)."""
        rest = run_path(run_id)
        return self._below(self.location, rest) if rest else self.location

    def trash_location(self, entry_id: str, run_id: str) -> str:
        """Where the files of run ``run_id`` lie in the trash entry ``entry_id``."""
        return self._below(self.location, self._entry_rest(entry_id, run_id))

    def holds(self, trash_location: str) -> bool:
        """Whether ``trash_location`` (an entry's, as the shared state keeps it) lies in this
        base directory's own trash. One state may serve nested base directories (``/data``
        and ``/data/proj``, each with its trash): an entry of the other's trash is not this
        one's to list, restore or purge, even when its run lies below this base directory."""
        return trash_location.startswith(self._below(self.location, TRASH_DIR) + "/")

    def deletable(self, run_id: str) -> str:
        """The location of run ``run_id``; RunNotTrashable for the base directory (``./``)."""
        if not run_path(run_id):
            raise RunNotTrashable(
                f"run={run_id!r} is the base directory itself, which holds every run: only "
                "a run below it can be deleted"
            )
        return self.run_location(run_id)

    def delete(self, run_id: str, at: float) -> tuple[str, str]:
        """Move run ``run_id``'s files to a new trash entry made at ``at``; its id and the
        trash location of the files."""
        self.deletable(run_id)
        rest = run_path(run_id)
        entry_id = new_entry_id(at)
        source = self._path(rest)
        owned = _owned(self._files(source))
        if not owned:
            raise NotFound(f"run={run_id!r} has no files left to delete")
        target = self._path(self._entry_rest(entry_id, run_id))
        self._move([(self._join(source, name), self._join(target, name)) for name in owned])
        self._movable().remove_empty_dirs(source)
        return entry_id, self.trash_location(entry_id, run_id)

    def restore(self, entry_id: str, run_id: str) -> None:
        """Move the files of entry ``entry_id`` back to run ``run_id``'s directory and drop
        the entry's folder; RunConflict when a file of that name is there again."""
        source = self._path(self._entry_rest(entry_id, run_id))
        names = self._files(source)
        if not names:
            raise NotFound(f"the files of trash entry id={entry_id!r} are gone from the trash")
        target = self._path(run_path(run_id))
        try:
            self._move([(self._join(source, name), self._join(target, name)) for name in names])
        except FileExistsError as err:
            raise RunConflict(
                f"run={run_id!r} cannot be restored: its directory holds files of the same "
                f"names again ({err.filename}); move them away first"
            ) from None
        self.purge(entry_id)

    def purge(self, entry_id: str) -> None:
        """Delete the files of entry ``entry_id`` (nothing when they are gone already)."""
        self._check_entry_id(entry_id)
        try:
            self._movable().remove_tree(self._path(f"{TRASH_DIR}/{entry_id}"))
        except OSError as err:
            raise TrashFailed(f"purging trash entry id={entry_id!r} failed: {err}") from None

    def folders(self) -> dict[str, float]:
        """The entry folders the trash holds: id -> when it was made (epoch seconds)."""
        try:
            listed = self.storage.list_dir(self._path(TRASH_DIR), keep=lambda _: False)
        except OSError:  # no trash yet
            return {}
        made = {info.name: entry_time(info.name) for info in listed if info.is_dir}
        return {name: at for name, at in sorted(made.items()) if at is not None}

    def _move(self, moves: list[tuple[str, str]]) -> None:
        try:
            self._movable().move_files(moves)
        except FileExistsError:
            raise
        except OSError as err:
            raise TrashFailed(str(err)) from None

    def _movable(self) -> MoveStorage:
        if not isinstance(self.storage, MoveStorage):
            raise TrashFailed(f"the storage {self.storage!r} cannot move or delete files")
        return self.storage

    def _files(self, directory: str) -> list[str]:
        """Every file below ``directory``, as a path relative to it (``/`` between names);
        none when it is not there. A link to a directory is not entered."""
        lister = tree_lister(self.storage)
        if lister is not None:
            prefix = directory.rstrip("/") + "/"
            try:
                listed = lister(directory)
            except FileNotFoundError:
                return []
            return sorted(path[len(prefix) :] for path, _ in listed if path.startswith(prefix))
        found: list[str] = []
        below = [""]
        while below:
            rest = below.pop()
            try:
                entries = self.storage.list_dir(
                    self._join(directory, rest) if rest else directory, links=True
                )
            except FileNotFoundError:
                continue
            for info in entries:
                name = f"{rest}/{info.name}" if rest else info.name
                if info.is_dir and not info.is_link:
                    below.append(name)
                elif not info.is_dir:
                    found.append(name)
        return sorted(found)

    def _entry_rest(self, entry_id: str, run_id: str) -> str:
        self._check_entry_id(entry_id)
        return f"{TRASH_DIR}/{entry_id}/{run_path(run_id)}".rstrip("/")

    def _check_entry_id(self, entry_id: str) -> None:
        if _ENTRY_ID.fullmatch(entry_id) is None:
            raise QueryError(
                f"id={entry_id!r} is not a trash entry id (e.g. 20250102T030405Z-1a2b3c4d)"
            )

    def _path(self, rest: str) -> str:
        """The storage path of ``rest`` (``/``-separated) below the base directory."""
        return self._join(self.root, rest)

    def _join(self, directory: str, rest: str) -> str:
        path = directory
        for name in rest.split("/"):
            path = self.storage.join(path, name)
        return path

    @staticmethod
    def _below(location: str, rest: str) -> str:
        return location + rest if location.endswith("/") else f"{location}/{rest}"


def _owned(names: list[str]) -> list[str]:
    """The files of ``names`` (relative to a run's directory) that belong to the run: those
    in the directory itself and in sub-directories holding no event file at any depth."""
    with_runs = {name.split("/", 1)[0] for name in names if "/" in name and _is_event_file(name)}
    return [name for name in names if "/" not in name or name.split("/", 1)[0] not in with_runs]


def _is_event_file(path: str) -> bool:
    return is_event_file_name(path.rpartition("/")[2])


def run_trash(surface: Any, base_dir: str | os.PathLike[str], options: dict[str, Any]) -> RunTrash:
    """The trash of the base directory ``surface`` serves: in the loader's own storage when
    it has one, else in the storage ``base_dir`` opens (with fsspec ``options``)."""
    storage = getattr(surface, "storage", None)
    location = getattr(surface, "location", None)
    if isinstance(storage, Storage) and isinstance(location, str):
        return RunTrash(storage, os.fspath(surface.base_dir), location)
    storage, root = open_storage(base_dir, options or None)
    return RunTrash(storage, os.fspath(root), os.fspath(base_dir))
