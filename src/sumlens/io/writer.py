"""``RecordWriter``: appends framed records to one event file.

This is the bottom of every writer sumlens has: it owns one open file, frames each
payload (:func:`~sumlens.io.framing.encode_record`) and appends it. Batching, threads and
rotation live above it, in the summary writer pipeline.

Records are buffered until :meth:`RecordWriter.flush`. A forked child would inherit the
unflushed buffer and write it a second time when it exits, so every open writer is
flushed just before a fork.
"""

from __future__ import annotations

import contextlib
import os
import weakref
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from sumlens._checks import check_bool
from sumlens.io.framing import encode_record

_open_writers: weakref.WeakSet[RecordWriter] = weakref.WeakSet()


class RecordWriter:
    """Append records to ``path``, created if missing with mode ``0o666 & ~umask`` as
    ``open`` makes files (0600, only its owner's, with ``owner_only``)."""

    def __init__(self, path: str | os.PathLike[str], *, owner_only: bool = False) -> None:
        self.path = Path(path)
        mode = 0o600 if check_bool(owner_only, "owner_only", "RecordWriter") else 0o666
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, mode)
        self._file = os.fdopen(fd, "ab", buffering=1024 * 1024)
        self.bytes_written = 0
        _open_writers.add(self)

    def write(self, payload: bytes) -> None:
        """Frame ``payload`` and append it (buffered until :meth:`flush`)."""
        record = encode_record(payload)
        self._file.write(record)
        self.bytes_written += len(record)

    def write_many(self, payloads: Iterable[bytes]) -> None:
        """Frame and append several payloads in order."""
        for payload in payloads:
            self.write(payload)

    def flush(self) -> None:
        """Hand everything written so far to the operating system (readable by other processes)."""
        self._file.flush()

    def close(self) -> None:
        """Flush and close the file; later calls do nothing."""
        if not self._file.closed:
            self._file.close()
        _open_writers.discard(self)

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _flush_before_fork() -> None:
    for writer in list(_open_writers):
        # a full disk: the data stays buffered and the writer's own next call says so
        with contextlib.suppress(OSError, ValueError):
            writer.flush()


os.register_at_fork(before=_flush_before_fork)
