"""Reading event files: one file at a time, resumable, and whole run directories.

:class:`RecordFile` reads the records of one file in chunks, from a byte offset it
remembers, so a growing file can be read again later from where the last read
stopped. :func:`iter_events` is the public entry point: a file or a run directory in,
:class:`~sumlens.io.events.Event` values out, with the damage met counted in
``.stats`` of the returned stream. Every reader takes a ``storage``
(:class:`~sumlens.io.storage.Storage`, the local file system by default): files are listed
and opened through it alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from sumlens._log import warn_once
from sumlens.io.crc import masked_crc32c
from sumlens.io.decode import DECODERS, PayloadError, decode_tag
from sumlens.io.events import Event
from sumlens.io.framing import HEADER_SIZE, OVERHEAD, ReadStats, scan_all, valid_header_at
from sumlens.io.naming import event_files, file_kind
from sumlens.io.remote import RemoteStorageError, locate
from sumlens.io.storage import LOCAL_STORAGE, Storage

CHUNK_SIZE = 16 * 1024 * 1024
"""Bytes read at a time; a record larger than this is read whole."""


class NotAnEventFileError(ValueError):
    """The file holds no event records at all (it is some other kind of file)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(
            f"{os.fspath(path)!r} is not an event file: no record in it has a valid "
            "length CRC (expected MindSpore summary/lineage or TensorBoard event records)"
        )
        self.path = os.fspath(path)


class RecordChangedError(PayloadError):
    """The bytes where a record was are no longer that record: its file changed since."""


def sniff_kind(path: Path, storage: Storage = LOCAL_STORAGE) -> str:
    """The kind of an event file: by its name, else by its first record's payload."""
    kind = file_kind(path.name)
    if kind is not None:
        return kind
    with storage.open_read(os.fspath(path)) as handle:
        head = handle.read(256)
    if b"brain.Event" in head:
        return "tensorboard"
    if b"MindSpore.Event" in head:
        return "summary"
    return "lineage"


class RecordFile:
    """The records of one event file, read from a remembered offset onwards.

    Each :meth:`read_payloads` call returns the complete records between the current
    offset and the end of the file and advances the offset past them; an incomplete
    last record stays unread (its bytes are reported as ``torn_tail_bytes``), so calling
    again after the writer appended more picks it up. The file is opened through
    ``storage`` for each read.
    """

    def __init__(
        self, path: str | os.PathLike[str], offset: int = 0, storage: Storage = LOCAL_STORAGE
    ) -> None:
        self.path = Path(path)
        self.offset = offset
        self.storage = storage
        self.stats = ReadStats()
        self._tail = 0  # torn-tail bytes last counted in self.stats

    def read_payloads(
        self, stats: ReadStats | None = None, limit: int | None = None
    ) -> Iterator[bytes]:
        """Yield the payload of each complete record from the current offset on.

        With ``limit``, reading stops after the chunk in which ``limit`` bytes were passed
        (so a huge file can be read a bounded piece at a time; call again to go on).
        """
        for _, payload in self.read_located(stats, limit):
            yield payload

    def read_located(
        self, stats: ReadStats | None = None, limit: int | None = None
    ) -> Iterator[tuple[int, bytes]]:
        """Like :meth:`read_payloads`, with each payload's byte offset in the file.

        A reader that keeps only where a value is (not the value) reads it again later
        with :func:`read_events_at`.
        """
        stats = self.stats if stats is None else stats
        with self.storage.open_read(os.fspath(self.path), self.offset) as handle:
            size = handle.seek(0, os.SEEK_END)
            resumed_at = self.offset
            seen_before = stats.records + stats.corrupt_records
            while self.offset < size and (limit is None or self.offset - resumed_at < limit):
                handle.seek(self.offset)
                buf = handle.read(max(CHUNK_SIZE, self._needed(handle, size)))
                if not buf:
                    break
                records, stop = scan_all(buf, 0, len(buf), stats)
                view = memoryview(buf)
                for _, start, length in records:
                    yield self.offset + start, bytes(view[start : start + length])
                if stop == 0 or self.offset + len(buf) >= size:
                    self.offset += stop
                    break
                self.offset += stop
            tail = max(0, size - self.offset)
            if stats is self.stats:  # running totals: count the tail as it is now, once
                stats.torn_tail_bytes += tail - self._tail
                self._tail = tail
            else:  # a caller's stats get this read's view
                stats.torn_tail_bytes += tail
            nothing_found = stats.records + stats.corrupt_records == seen_before
            if resumed_at == 0 and nothing_found and self.offset > 0:
                raise NotAnEventFileError(self.path)

    def _needed(self, handle: BinaryIO, size: int) -> int:
        """Bytes needed to hold the whole record at the current offset (0 if unknown).

        Only a length whose CRC checks is believed, and never beyond the end of the file.
        """
        handle.seek(self.offset)
        header = handle.read(HEADER_SIZE)
        handle.seek(self.offset)
        if len(header) < HEADER_SIZE or not valid_header_at(header, 0):
            return 0
        return min(int.from_bytes(header[:8], "little") + OVERHEAD, size - self.offset)


class EventStream:
    """An iterator over the events of a file or run directory, with the counts of what it skipped.

    ``stats`` (a :class:`~sumlens.io.framing.ReadStats`) is complete once iteration ends.
    """

    def __init__(self, path: str | os.PathLike[str], storage: Storage = LOCAL_STORAGE) -> None:
        self.path = Path(path)
        self.storage = storage
        self.stats = ReadStats()
        self._iterator = self._events()

    def __iter__(self) -> EventStream:
        return self

    def __next__(self) -> Event:
        return next(self._iterator)

    def _events(self) -> Iterator[Event]:
        in_directory = is_directory(self.path, self.storage)
        for path in resolve_files(self.path, self.storage):
            decode = DECODERS[sniff_kind(path, self.storage)]
            name = path.name
            try:
                for payload in RecordFile(path, storage=self.storage).read_payloads(self.stats):
                    try:
                        events = decode(payload, name, self.stats)
                    except PayloadError:
                        self.stats.reject_record()
                        continue
                    yield from events
            except NotAnEventFileError as err:
                if not in_directory:
                    raise
                note_unreadable(err, self.stats)


def note_unreadable(err: NotAnEventFileError, stats: ReadStats) -> None:
    """Count a run directory's file that holds no record, and say so once; reading goes on."""
    stats.unreadable_files.append(err.path)
    warn_once(f"unreadable:{err.path}", "%s; skipped", err)


def read_events_at(
    path: str | os.PathLike[str],
    kind: str,
    offset: int,
    length: int,
    tag: str | None = None,
    storage: Storage = LOCAL_STORAGE,
) -> list[Event]:
    """The events of the one record whose payload is ``length`` bytes at ``offset``
    (only those named ``tag`` when given: the step's other values are not decoded).

    For readers that remembered where a value was (see ``other`` of
    :func:`sumlens.io.read_file_scalars`) and read it only when it is asked for. Raises
    :class:`RecordChangedError` when those bytes are no longer that record (the file was
    replaced), another :class:`~sumlens.io.decode.PayloadError` when the record is there
    but its value is damaged (what only converting it shows), and ``OSError`` when the file
    cannot be read (``FileNotFoundError`` when it is gone).
    """
    if kind not in DECODERS:
        raise ValueError(f"kind={kind!r} is not one of {', '.join(map(repr, DECODERS))}")
    payload = read_record_at(path, offset, length, storage)
    if tag is not None:
        return decode_tag(kind, payload, os.path.basename(path), tag)
    return DECODERS[kind](payload, os.path.basename(path), ReadStats())


def read_record_at(
    path: str | os.PathLike[str], offset: int, length: int, storage: Storage = LOCAL_STORAGE
) -> bytes:
    """The payload of ``length`` bytes at ``offset``, checked against the CRC after it.

    Raises :class:`RecordChangedError` when those bytes are no longer that record, and
    ``OSError`` when the file cannot be read.
    """
    if offset < 0 or length < 0:
        raise ValueError(f"offset={offset!r} and length={length!r} must be >= 0")
    with storage.open_read(os.fspath(path), offset, length + 4) as handle:
        payload = handle.read(length)  # on object storage: one GET of this record alone
        crc = handle.read(4)
    if (
        len(payload) != length
        or len(crc) != 4
        or masked_crc32c(payload) != int.from_bytes(crc, "little")
    ):
        raise RecordChangedError(
            f"no record of {length} bytes at offset {offset} of {os.fspath(path)!r}"
        )
    return payload


def is_directory(path: str | os.PathLike[str], storage: Storage = LOCAL_STORAGE) -> bool:
    """Whether ``path`` is a directory now (False for what cannot be stat'ed)."""
    try:
        return storage.stat(os.fspath(path)).is_dir
    except OSError:
        return False


def resolve_files(path: str | os.PathLike[str], storage: Storage = LOCAL_STORAGE) -> list[Path]:
    """The event files ``path`` stands for: itself if a file, its event files if a directory."""
    path = Path(path)
    try:
        info = storage.stat(os.fspath(path))
    except RemoteStorageError:
        raise
    except OSError:
        info = None
    if info is not None and info.is_dir:
        return event_files(path, storage)
    if info is not None and info.is_file:
        return [path]
    raise FileNotFoundError(f"path={os.fspath(path)!r} is neither an event file nor a directory")


def iter_events(
    path: str | os.PathLike[str],
    storage: Storage = LOCAL_STORAGE,
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> EventStream:
    """Events of one event file or of every event file of a run directory, in file order.

    ``path`` may be a URL (``s3://bucket/run``, any fsspec protocol), opened with
    ``storage_options`` (:func:`sumlens.io.remote.open_storage`).

    A directory contributes the files MindInsight and TensorBoard would pick
    (``summary.<n>`` names, ``_lineage`` files, ``tfevents`` files); anything else in it
    is ignored. Damage is skipped and counted in the returned stream's ``stats``.
    """
    storage, path = locate(path, storage, storage_options)
    return EventStream(path, storage)
