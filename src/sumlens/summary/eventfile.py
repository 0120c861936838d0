"""``EventFile``: one logical output file that appears on first write and rotates when full.

It owns the byte-level promises of the writer:

* created lazily, exclusively (a clash takes the next free second, never a counter),
  with the modes its storage gives (the umask's; with ``owner_only`` 0600 while open and
  0400 once closed, in a directory made with mode 0700);
* each rotated file starts again with the format's header record (the version event),
  so every file stands alone for MindInsight and TensorBoard;
* ``max_file_size`` is never exceeded: a record that does not fit starts a new file, and
  a record too large for any file is an error;
* the disk guard refuses only what cannot fit: the records that the free space holds
  are written, whole, and the rest fail with ``ENOSPC``. (MindSpore wanted 32 times the
  bytes free, which on a small disk refused steps that fitted with 99% of it free.)
* a failed write (ENOSPC, EFBIG ...) is cut back to the last complete record, so the file
  stays readable to its end, keeps every record that fitted, and later records can
  follow; a new file whose header cannot be written is removed again, so no file ever
  lacks its header.

Files are made, appended to and closed only through a
:class:`~sumlens.io.storage.WriteStorage` (the local disk by default), the writer's side of
the storage seam.
"""

from __future__ import annotations

import dataclasses
import errno
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sumlens.io.framing import encode_record
from sumlens.io.naming import claim_free_name
from sumlens.io.storage import LOCAL_STORAGE, AppendFile, WriteStorage


def _whole_records(ends: np.ndarray, nbytes: int) -> int:
    """Bytes of the whole records (ending at ``ends``) within the first ``nbytes``."""
    whole = int(np.searchsorted(ends, nbytes, side="right"))
    return int(ends[whole - 1]) if whole else 0


class RecordTooLargeError(ValueError):
    """One record (with the file's header) does not fit in ``max_file_size``."""


@dataclasses.dataclass(eq=False)
class EventFile:
    """Append-only records to ``directory/make_name(t)``, rotating at ``max_file_size``.

    ``seconds`` is the time in the first file's name (a later file takes the next free
    second); ``header`` returns the serialized first record of each new file (or None
    for none); ``on_new_file(path, fd)`` is called for each new file once its header is
    written. ``path`` is the current file, ``paths`` every file written so far. Files are
    created, written, sealed when closed and removed through ``storage``.
    """

    directory: Path
    make_name: Callable[[int], str]
    seconds: int
    max_file_size: int | None = None
    header: Callable[[], bytes] | None = None
    on_new_file: Callable[[Path, int], None] | None = None
    storage: WriteStorage = LOCAL_STORAGE
    part_bytes: int | None = None
    """A size past which the next record starts a new file, unlike ``max_file_size`` not a
    limit: a record larger than a part is a file of its own (object storage's parts)."""
    path: Path | None = dataclasses.field(default=None, init=False)
    paths: list[Path] = dataclasses.field(default_factory=list, init=False)
    _file: AppendFile | None = dataclasses.field(default=None, init=False, repr=False)
    _size: int = dataclasses.field(default=0, init=False, repr=False)
    _header_size: int = dataclasses.field(default=0, init=False, repr=False)

    @property
    def expected_path(self) -> Path:
        """The current file, or the name the first file will get."""
        return self.path or self.directory / self.make_name(self.seconds)

    def append(self, payloads: list[bytes]) -> None:
        """Frame and write ``payloads`` in order, opening or rotating files as needed."""
        records = [encode_record(payload) for payload in payloads]
        self.append_framed(b"".join(records), np.cumsum([len(r) for r in records]))

    def append_framed(
        self, data: bytes | bytearray | memoryview | np.ndarray, ends: np.ndarray
    ) -> None:
        """Write records framed back to back in ``data`` (``ends[i]``: end of record i).

        Each write takes as many whole records as fit before the size limit; a record
        that does not fit starts the next file. A record that no file can hold is left
        out, the records after it are still written, and then the first such record's
        :class:`RecordTooLargeError` is raised.
        """
        view = (data.data if isinstance(data, np.ndarray) else memoryview(data)).cast("B")
        start, first, count = 0, 0, len(ends)
        too_large: RecordTooLargeError | None = None
        while first < count:
            size = int(ends[first]) - start
            if self._file is None or self._over_limit(size):
                try:
                    self._rotate(size)
                except RecordTooLargeError as err:
                    too_large = too_large or err
                    start, first = int(ends[first]), first + 1
                    continue
            last = count
            limit = self._limit()
            if limit is not None:
                room = start + limit - self._size
                last = max(first + 1, int(np.searchsorted(ends, room, side="right")))
            stop = int(ends[last - 1])
            self._write(view[start:stop], ends[first:last] - start)
            start, first = stop, last
        if too_large is not None:
            raise too_large

    def _limit(self) -> int | None:
        """The size the current file may reach (None: no limit)."""
        sizes = [size for size in (self.max_file_size, self.part_bytes) if size is not None]
        return min(sizes) if sizes else None

    def _over_limit(self, extra: int) -> bool:
        grown = self._size + extra
        if self.max_file_size is not None and grown > self.max_file_size:
            return True
        part = self.part_bytes
        return part is not None and self._size > self._header_size and grown > part

    def _rotate(self, record_size: int) -> None:
        header = encode_record(self.header()) if self.header else b""
        if self.max_file_size is not None and len(header) + record_size > self.max_file_size:
            raise RecordTooLargeError(
                f"a record of {record_size} bytes does not fit in max_file_size="
                f"{self.max_file_size} (with the {len(header)}-byte version record); "
                "raise max_file_size"
            )
        self.close()
        self.storage.make_dirs(os.fspath(self.directory))
        path, self.seconds = claim_free_name(
            self.directory, self.make_name, self.seconds, self.storage
        )
        self._file = file = self.storage.open_append(os.fspath(path))
        self.path, self._size = path, 0
        try:
            self._write(header, np.array([len(header)]))
        except BaseException:
            # Without its header the file must not take records: give the name back, so
            # the next append starts over with a new file that has one.
            file.close()
            self._file, self.path = None, None
            self.storage.remove(os.fspath(path))
            raise
        self._header_size = self._size
        self.paths.append(path)
        if self.on_new_file is not None:
            self.on_new_file(path, file.fileno())

    def _write(self, data: bytes | bytearray | memoryview, ends: np.ndarray) -> None:
        """Append the whole records in ``data`` (``ends``: their end offsets) that fit.

        Raises ``OSError`` after writing those that fit when not all do; the file always
        ends after a whole record.
        """
        view = memoryview(data)
        if not view:
            return
        file = self._file
        assert file is not None  # opened by _rotate before any write
        free = self.storage.free_bytes(os.fspath(self.directory))
        fits = len(view) if free >= len(view) else _whole_records(ends, free)
        written = 0
        try:
            while written < fits:
                count = file.write(view[written:fits])
                if count == 0:
                    raise OSError(errno.EIO, "write returned 0 bytes", str(self.path))
                written += count
        except OSError:
            kept = _whole_records(ends, written)  # drop the torn record after them
            file.truncate(self._size + kept)
            self._size += kept
            raise
        self._size += written
        if fits < len(view):
            raise OSError(
                errno.ENOSPC,
                f"no space left on the disk: the {free} bytes free held {fits} of "
                f"{len(view)} bytes of records, the rest is not written",
                str(self.path),
            )

    def close(self) -> None:
        """Close the current file and seal it (:meth:`WriteStorage.seal`: 0400 when
        owner-only); later writes open a new one."""
        if self._file is not None:
            self._file.close()
            self._file = None
            if self.path is not None:
                self.storage.seal(os.fspath(self.path))
            self.seconds += 1
