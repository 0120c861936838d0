"""A writer's spool: the local directory whose files are mirrored to a remote directory.

Object stores cannot append to an object, so a writer whose log directory is a URL writes
its event files, as it would locally, into a spool directory on the local disk, and
:meth:`Spool.sync` mirrors them: each file becomes the object of the same name in the
remote directory, put whole (an object is replaced, never appended to). An event file is
put only up to its last whole record, so a reader never meets a torn record in the
store, and each put of a growing file is a longer prefix of the same bytes: a reader that
had read the object before reads on from its offset. The writer keeps each event file
small (:data:`PART_BYTES`), so a put stays cheap and a long run leaves a bounded number of
objects (its bytes over ``PART_BYTES``). A file the writer has closed (made read-only) is
removed from the spool once all of it is in the store, so the spool holds what is being
written and what could not be uploaded yet.

Each spool directory holds a manifest (:data:`MANIFEST`): the URL it mirrors to, the
non-secret storage options, and the writing process. What a killed writer left is uploaded
later by ``sumlens upload`` (:func:`open_left`, :func:`left_spools`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import shutil
import socket
import stat
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from sumlens.io.framing import HEADER_SIZE, OVERHEAD, valid_header_at
from sumlens.io.naming import file_kind
from sumlens.io.remote import FsspecStorage, RemoteStorageError, is_url, open_storage
from sumlens.io.storage import LocalStorage

PART_BYTES = 8 * 1024 * 1024
"""The size an event file written for a URL grows to before the next part starts: each
upload puts a file whole, so this bounds the bytes of one put (and of the puts while a
part fills, :mod:`sumlens.io.uploader`), and a run's bytes over it bound its objects."""
MANIFEST = ".sumlens-spool.json"
"""The file in each spool directory that says where its files go."""
SPOOL_ENV = "SUMLENS_SPOOL_DIR"
"""The environment variable naming the directory spools are made in."""
_SECRET = re.compile(r"key|secret|token|password|credential|sas", re.IGNORECASE)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_WRITING_SUFFIXES = (".partial", ".tmp")
"""Files written aside under these names are renamed when complete: never uploaded."""


def default_spool_root() -> Path:
    """Where spools are made: ``$SUMLENS_SPOOL_DIR``, else ``~/.cache/sumlens/spool``."""
    configured = os.environ.get(SPOOL_ENV)
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "sumlens" / "spool"


def whole_records_end(data: bytes | memoryview, start: int = 0) -> int:
    """The offset after the last whole record in ``data``, scanning from record offset
    ``start``: a record still being written (or a length that is not a record's) ends it."""
    end = len(data)
    pos = start
    while end - pos >= OVERHEAD and valid_header_at(data, pos):
        length = int.from_bytes(data[pos : pos + 8], "little")
        stop = pos + HEADER_SIZE + length + 4
        if stop > end:
            break
        pos = stop
    return pos


@dataclasses.dataclass
class _Sent:
    """What the store holds of one spooled file."""

    uploaded: int = 0
    """Bytes of the object (-1: not put yet)."""
    scanned: int = 0
    """Offset of the first record not known to be whole (event files)."""
    signature: tuple[int, int] | None = None
    """``(size, mtime_ns)`` of the file as last put (other files)."""


@dataclasses.dataclass
class SyncResult:
    """One :meth:`Spool.sync` pass: files put, bytes put, and the files that failed."""

    puts: int = 0
    bytes: int = 0
    failed: dict[str, BaseException] = dataclasses.field(default_factory=dict)


class SpoolWriteStorage(LocalStorage):
    """The local disk for a spool's writer, refusing names the remote directory holds.

    A new file must not replace an object another writer left there, so ``create``
    treats those names as taken (the writer then moves on to the next free name).
    """

    def __init__(self, root: Path, taken: set[str]) -> None:
        self._root = root
        self._taken = taken

    def create(self, path: str | os.PathLike[str]) -> None:
        """``O_EXCL`` creation, also refusing a name that exists in the remote directory."""
        relative = Path(path).relative_to(self._root).as_posix()
        if relative in self._taken:
            raise FileExistsError(17, "the remote directory holds this name", os.fspath(path))
        super().create(path)


class Spool:
    """A local directory mirrored into ``remote_dir`` of ``storage`` (``url``: its URL)."""

    def __init__(self, local_dir: Path, storage: FsspecStorage, remote_dir: str, url: str) -> None:
        self.local_dir = local_dir
        self.storage = storage
        self.remote_dir = remote_dir.rstrip("/")
        self.url = url
        self._sent: dict[str, _Sent] = {}

    def remote_url(self, relative: str) -> str:
        """The URL the spooled file ``relative`` goes to."""
        return self.storage.url(f"{self.remote_dir}/{relative}")

    def files(self) -> Iterator[tuple[str, Path]]:
        """Every spooled file (``relative``, ``path``), the manifest and half-written ones
        left out."""
        for folder, _, names in os.walk(self.local_dir):
            for name in names:
                if name == MANIFEST or name.endswith(_WRITING_SUFFIXES):
                    continue
                path = Path(folder) / name
                yield path.relative_to(self.local_dir).as_posix(), path

    def sync(self, finished: bool = False) -> SyncResult:
        """Put every file that changed since its last put; remove the files that are
        complete in the store (closed by the writer, or any with ``finished``: the writer
        is gone). A file that fails is kept for the next pass."""
        result = SyncResult()
        for relative, path in sorted(self.files()):
            try:
                self._sync_file(relative, path, finished, result)
            except FileNotFoundError:  # removed by its writer meanwhile: nothing to send
                self._sent.pop(relative, None)
            except Exception as err:
                result.failed[relative] = err
        return result

    def _sync_file(self, relative: str, path: Path, finished: bool, result: SyncResult) -> None:
        info = path.stat()
        closed = finished or not info.st_mode & stat.S_IWUSR
        sent = self._sent.setdefault(relative, _Sent(uploaded=-1))
        signature = None
        if file_kind(path.name) is not None:
            data = self._event_prefix(path, sent, info.st_size)
        else:
            signature = (info.st_size, info.st_mtime_ns)
            data = path.read_bytes() if signature != sent.signature else None
        if data is not None:
            self.storage.put(f"{self.remote_dir}/{relative}", data)
            sent.uploaded = len(data)
            sent.signature = signature
            result.puts += 1
            result.bytes += len(data)
        if closed and self._complete(path, sent, info.st_size):
            path.unlink()
            del self._sent[relative]

    def _event_prefix(self, path: Path, sent: _Sent, size: int) -> bytes | None:
        """The file's whole records when they reach further than the object; else None
        (an object is never made before a whole record is there to go in it)."""
        if size <= sent.uploaded or size < sent.scanned:
            return None
        with open(path, "rb") as handle:
            data = handle.read(size)
        sent.scanned = whole_records_end(data, sent.scanned)
        if sent.scanned <= max(sent.uploaded, 0):
            return None
        return data[: sent.scanned]

    def _complete(self, path: Path, sent: _Sent, size: int) -> bool:
        """Whether the store holds all of a closed file (an event file's torn tail, which
        its writer never finished, excepted)."""
        if file_kind(path.name) is not None:
            return sent.scanned == max(sent.uploaded, 0)
        return sent.signature is not None and sent.uploaded == size

    def left(self) -> dict[str, int]:
        """The files still in the spool, with their bytes: after a ``finished`` pass, those
        that could not be uploaded."""
        found = {}
        for relative, path in self.files():
            with contextlib.suppress(FileNotFoundError):
                found[relative] = path.stat().st_size
        return found

    def give_up(self) -> None:
        """Note in the manifest that the writer has stopped uploading (what is left is for
        ``sumlens upload``, even while the writer's process still runs)."""
        path = self.local_dir / MANIFEST
        manifest = read_manifest(self.local_dir)
        manifest["closed"] = True
        path.write_text(json.dumps(manifest, indent=1))

    def remove_if_done(self) -> bool:
        """Remove the spool directory when no file is left in it; True if it was removed."""
        if any(True for _ in self.files()):
            return False
        shutil.rmtree(self.local_dir, ignore_errors=True)
        return True


def _safe_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options that may be written down: JSON values, no secret by name."""
    kept = {}
    for key, value in options.items():
        if _SECRET.search(key):
            continue
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        kept[key] = value
    return kept


def create(
    url: str, options: Mapping[str, Any] | None = None, root: str | os.PathLike[str] | None = None
) -> tuple[Spool, SpoolWriteStorage]:
    """A new spool for a writer of ``url``, and the write storage its files are made with.

    The remote directory is listed once now: a missing bucket or refused credentials fail
    here, with one line naming the URL (:class:`RemoteStorageError`), and the names it holds
    are not taken again.
    """
    if not is_url(url):
        raise ValueError(f"url={url!r} is not a URL of object storage (s3://, gs://, ...)")
    storage, remote_dir = open_storage(url, options)
    if not isinstance(storage, FsspecStorage):  # pragma: no cover - is_url said otherwise
        raise ValueError(f"url={url!r} does not name object storage")
    taken = _remote_names(storage, remote_dir)
    folder = Path(root) if root is not None else default_spool_root()
    digest = hashlib.sha256(url.encode()).hexdigest()[:10]
    tail = _UNSAFE.sub("_", url.rstrip("/").rpartition("/")[2])[:40] or "root"
    local_dir = folder / f"{tail}-{digest}-{os.getpid()}-{time.time_ns()}"
    local_dir.mkdir(mode=0o700, parents=True)
    manifest = {
        "url": url,
        "options": _safe_options(options or {}),
        "pid": os.getpid(),
        "host": socket.gethostname(),
    }
    (local_dir / MANIFEST).write_text(json.dumps(manifest, indent=1))
    return Spool(local_dir, storage, remote_dir, url), SpoolWriteStorage(local_dir, taken)


def _remote_names(storage: FsspecStorage, remote_dir: str) -> set[str]:
    """Names of the files in the remote directory now (none when it does not exist yet)."""
    try:
        listing = storage.list_dir(remote_dir, dirs=False)
    except FileNotFoundError:
        return set()
    return {info.name for info in listing}


def read_manifest(local_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of spool directory ``local_dir`` (``ValueError`` if it has none)."""
    path = Path(local_dir) / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(
            f"{os.fspath(local_dir)!r} is not a sumlens spool: no {MANIFEST}"
        ) from None
    except ValueError as err:
        raise ValueError(f"{os.fspath(path)!r} is not a readable spool manifest: {err}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("url"), str):
        raise ValueError(f"{os.fspath(path)!r} is not a spool manifest (no 'url')")
    return manifest


def writer_alive(manifest: Mapping[str, Any]) -> bool:
    """Whether the writer of the spool still uploads it: not closed, and its process still
    runs (on this host)."""
    pid = manifest.get("pid")
    if manifest.get("closed") or manifest.get("host") != socket.gethostname():
        return False
    if not isinstance(pid, int):
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def open_left(local_dir: str | os.PathLike[str], options: Mapping[str, Any] | None = None) -> Spool:
    """The spool a writer left in ``local_dir``, to be uploaded by someone else.

    ``options`` are merged over the manifest's (the secrets were never written down).
    """
    manifest = read_manifest(local_dir)
    merged = {**manifest.get("options", {}), **(options or {})}
    url = manifest["url"]
    storage, remote_dir = open_storage(url, merged)
    if not isinstance(storage, FsspecStorage):
        raise RemoteStorageError(f"{url}: a spool's URL must name object storage")
    return Spool(Path(local_dir), storage, remote_dir, url)


def left_spools(location: str | os.PathLike[str]) -> list[Path]:
    """The spool directories at ``location``: itself when it is one, else those in it."""
    path = Path(location)
    if (path / MANIFEST).is_file():
        return [path]
    if not path.is_dir():
        raise ValueError(f"SPOOL={os.fspath(location)!r} is not a directory")
    return sorted(child for child in path.iterdir() if (child / MANIFEST).is_file())
