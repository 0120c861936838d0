"""Where a record's files go: a local directory, or object storage through a spool.

A local ``log_dir`` is made (mode ``0o777 & ~umask``, as ``os.makedirs``; 0700 with
``owner_only``) and written directly. A URL (``s3://``, ``gs://``,
``az://``, ``memory://`` ...) is written through a spool on the local disk
(:mod:`sumlens.io.spool`): the record's files are made there as they would be locally, in
parts of at most :data:`~sumlens.io.spool.PART_BYTES`, and an uploader
(:mod:`sumlens.io.uploader`) puts them in the store every ``upload_secs``, at each
``flush()`` and at ``close()``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sumlens._checks import check_directory, check_number
from sumlens.io import spool as spools
from sumlens.io.remote import is_url
from sumlens.io.storage import LOCAL_STORAGE, WriteStorage, dir_mode, local_storage
from sumlens.io.uploader import Uploader, UploadError

UPLOAD_SECS = 10.0
"""Default seconds between uploads of a record written to a URL."""


@dataclasses.dataclass
class Destination:
    """A record's place for files: ``directory`` on the local disk (the spool for a URL),
    made through ``storage``; ``uploader`` puts them in the store (None when local)."""

    directory: Path
    storage: WriteStorage = LOCAL_STORAGE
    uploader: Uploader | None = None

    @property
    def part_bytes(self) -> int | None:
        """The size at which an event file continues in a new part (None: no limit)."""
        return None if self.uploader is None else spools.PART_BYTES

    def location(self, path: Path) -> str:
        """What to tell a user of a file at ``path``: its URL in the store, or the path."""
        if self.uploader is None:
            return os.fspath(path)
        return self.uploader.spool.remote_url(path.relative_to(self.directory).as_posix())

    def flush(self) -> None:
        """Put what was written in the store now (a no-op for a local directory)."""
        if self.uploader is not None:
            self.uploader.flush()

    def close(self, timeout: float | None) -> UploadError | None:
        """Upload the rest (retrying up to ``timeout`` seconds); the error for what is left."""
        if self.uploader is None:
            return None
        try:
            self.uploader.close(timeout)
        except UploadError as err:
            return err
        return None


def open_destination(
    log_dir: object,
    owner: str,
    max_length: int,
    storage_options: Mapping[str, Any] | None = None,
    spool_dir: str | os.PathLike[str] | None = None,
    upload_secs: float = UPLOAD_SECS,
    owner_only: bool = False,
) -> Destination:
    """The destination of ``log_dir``, checked for ``owner``'s error messages.

    For a URL the store is asked once now (a missing bucket or refused credentials fail
    here, naming the URL); storage options and the spool apply to URLs only. Directories
    and files get the modes the umask leaves, or only their owner's with ``owner_only``
    (:class:`~sumlens.io.storage.LocalStorage`), the spool's as a local directory's.
    """
    if isinstance(log_dir, str) and is_url(log_dir):
        if len(log_dir) > max_length:
            raise ValueError(
                f"For '{owner}', the argument 'log_dir' must be at most {max_length} "
                f"characters, but got {len(log_dir)}"
            )
        interval = check_number(upload_secs, "upload_secs", owner, above=0.0)
        spool, storage = spools.create(log_dir, storage_options, spool_dir, owner_only)
        return Destination(spool.local_dir, storage, Uploader(spool, interval))
    for name, value in (("storage_options", storage_options), ("spool_dir", spool_dir)):
        if value:
            raise ValueError(
                f"For '{owner}', the argument '{name}' applies to a log_dir URL (s3://, gs://, "
                f"...), but log_dir={log_dir!r} is a local path"
            )
    path = Path(check_directory(log_dir, "log_dir", owner, max_length))
    path.mkdir(mode=dir_mode(owner_only), parents=True, exist_ok=True)
    return Destination(path, local_storage(owner_only))
