"""A local storage that remembers what was asked of it: the seam's calls, counted.

:class:`RecordingStorage` is the real :class:`~sumlens.io.storage.LocalStorage` (every
call does what it does) that also notes each directory listed, path stat'ed or opened and
file written, so a test can tell what went through the seam and what a walk re-listed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import BinaryIO

from sumlens.io.storage import FileInfo, LocalAppendFile, LocalStorage, StrPath


class RecordingStorage(LocalStorage):
    """:class:`LocalStorage`, noting each call's path in ``calls[method]``."""

    def __init__(self, owner_only: bool = False) -> None:
        super().__init__(owner_only)
        self.calls: dict[str, list[str]] = {}

    def _note(self, method: str, path: StrPath) -> None:
        self.calls.setdefault(method, []).append(os.fspath(path))

    def listed(self) -> list[str]:
        """The directories listed so far, in order; forgotten by :meth:`clear`."""
        return self.calls.get("list_dir", [])

    def clear(self) -> None:
        """Forget the calls so far."""
        self.calls.clear()

    def stat(self, path: StrPath) -> FileInfo:
        self._note("stat", path)
        return super().stat(path)

    def list_dir(
        self,
        path: StrPath,
        keep: Callable[[str], bool] | None = None,
        dirs: bool = True,
        links: bool = False,
    ) -> list[FileInfo]:
        self._note("list_dir", path)
        return super().list_dir(path, keep, dirs, links)

    def open_read(self, path: StrPath, offset: int = 0, length: int | None = None) -> BinaryIO:
        self._note("open_read", path)
        return super().open_read(path, offset, length)

    def make_dirs(self, path: StrPath) -> None:
        self._note("make_dirs", path)
        super().make_dirs(path)

    def create(self, path: StrPath) -> None:
        self._note("create", path)
        super().create(path)

    def open_append(self, path: StrPath) -> LocalAppendFile:
        self._note("open_append", path)
        return super().open_append(path)

    def seal(self, path: StrPath) -> None:
        self._note("seal", path)
        super().seal(path)

    def remove(self, path: StrPath) -> None:
        self._note("remove", path)
        super().remove(path)

    def free_bytes(self, path: StrPath) -> int:
        self._note("free_bytes", path)
        return super().free_bytes(path)
