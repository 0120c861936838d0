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
storage options known to hold no secret (:data:`KEPT_OPTIONS`; the names of the others
are listed, never their values), and the writing process. What a killed writer left is
uploaded later by ``sumlens upload`` (:func:`open_left`, :func:`left_spools`).

Only the files a writer makes are ever uploaded (:meth:`Spool.files`): regular files with
one name, under the names of :func:`~sumlens.io.naming.writer_file_kind`, reached without
following a symbolic link at any step. Anything else found in a spool directory (a link
to a file elsewhere, a file of another name) is never read, and :meth:`Spool.refused`
names it, so a crafted spool cannot send other files to a bucket.

Directories and files get the modes the umask leaves (0700 and 0600 with ``owner_only``),
as a local run directory's; the writer tells the spool which event files it closed
(:meth:`SpoolWriteStorage.seal`), so the spool removes those once they are in the store,
as it does an exported tensor (complete once it has its name); the projector's files,
which grow and are rewritten, are kept until the writer is done.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
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
from typing import Any, BinaryIO

from sumlens.io.framing import HEADER_SIZE, OVERHEAD, valid_header_at
from sumlens.io.naming import writer_file_kind
from sumlens.io.remote import (
    FsspecStorage,
    RemoteStorageError,
    is_url,
    open_storage,
    option_at,
)
from sumlens.io.storage import LocalStorage, dir_mode

PART_BYTES = 8 * 1024 * 1024
"""The size an event file written for a URL grows to before the next part starts: each
upload puts a file whole, so this bounds the bytes of one put (and of the puts while a
part fills, :mod:`sumlens.io.uploader`), and a run's bytes over it bound its objects."""
MANIFEST = ".sumlens-spool.json"
"""The file in each spool directory that says where its files go."""
MAX_MANIFEST_BYTES = 1024 * 1024
"""A manifest larger than this is not one (a writer's is a few hundred bytes)."""
SPOOL_ENV = "SUMLENS_SPOOL_DIR"
"""The environment variable naming the directory spools are made in."""
KEPT_OPTIONS: dict[str, Any] = {
    "anon": None,
    "endpoint_url": None,
    "region_name": None,
    "profile": None,
    "use_ssl": None,
    "requester_pays": None,
    "version_aware": None,
    "project": None,
    "account_name": None,
    "account_host": None,
    "client_kwargs": {"endpoint_url": None, "region_name": None, "use_ssl": None, "verify": None},
    "config_kwargs": {
        "signature_version": None,
        "region_name": None,
        "connect_timeout": None,
        "read_timeout": None,
        "s3": {"addressing_style": None},
    },
}
"""The storage options a manifest keeps (fsspec's for S3, GCS and Azure), at any depth: a
key mapping to None keeps a plain value (a string, number, bool or null), one mapping to a
dict keeps the dict's kept keys. Every other option is left out, whatever its name:
secrets hide under names no pattern knows (Azure's ``connection_string`` holds the
account key, ``headers`` an ``Authorization``), and the manifest is as readable as the
run's files."""
WHERE_OPTIONS = (
    ("endpoint_url",),
    ("client_kwargs", "endpoint_url"),
    ("account_name",),
    ("account_host",),
    ("profile",),
    ("use_ssl",),
    ("client_kwargs", "use_ssl"),
    ("client_kwargs", "verify"),
)
"""The kept options that choose where and how uploads go (besides the URL: the endpoint,
the account, and whether the connection is encrypted and checked): ``sumlens upload`` asks
before sending files where and as a manifest's ones say."""
UPLOAD_PROTOCOLS = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "memory"})
"""The protocols a left spool's URL may name for ``sumlens upload``: the object stores
writers spool for (``memory``: fsspec's in-process store). Their file systems make no
connection until a file is asked for; others (ftp, sftp, smb, http ...) would connect to
a host a crafted manifest names as soon as they are made, before the user was asked."""
_PLAIN = (str, int, float, bool, type(None))
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
    ``seal`` also notes the file in ``closed`` (the spool's :attr:`Spool.closed`): it is
    complete, and goes once all of it is in the store.
    """

    def __init__(
        self, root: Path, taken: set[str], owner_only: bool = False, closed: set[str] | None = None
    ) -> None:
        super().__init__(owner_only)
        self._root = root
        self._taken = taken
        self.closed = set() if closed is None else closed

    def _relative(self, path: str | os.PathLike[str]) -> str:
        return Path(path).relative_to(self._root).as_posix()

    def create(self, path: str | os.PathLike[str]) -> None:
        """``O_EXCL`` creation, also refusing a name that exists in the remote directory."""
        if self._relative(path) in self._taken:
            raise FileExistsError(17, "the remote directory holds this name", os.fspath(path))
        super().create(path)

    def seal(self, path: str | os.PathLike[str]) -> None:
        """Seal as the local disk does, and note the file as closed."""
        super().seal(path)
        self.closed.add(self._relative(path))


class Spool:
    """A local directory mirrored into ``remote_dir`` of ``storage`` (``url``: its URL)."""

    def __init__(self, local_dir: Path, storage: FsspecStorage, remote_dir: str, url: str) -> None:
        self.local_dir = local_dir
        self.storage = storage
        self.remote_dir = remote_dir.rstrip("/")
        self.url = url
        self.closed: set[str] = set()
        """The event files (relative paths) their writer closed: complete."""
        self._sent: dict[str, _Sent] = {}

    def remote_url(self, relative: str) -> str:
        """The URL the spooled file ``relative`` goes to."""
        return self.storage.url(f"{self.remote_dir}/{relative}")

    def files(self) -> Iterator[tuple[str, Path]]:
        """Every spooled file a writer made (``relative``, ``path``): the manifest,
        half-written files and everything :meth:`refused` names left out."""
        for relative, path, why in _entries(self.local_dir):
            if why is None:
                yield relative, path

    def refused(self) -> list[tuple[str, str]]:
        """What the spool directory holds besides its writer's files, never uploaded:
        ``(relative path, why)`` for each link, file of another kind or name, by path."""
        return refused_files(self.local_dir)

    def sync(self, finished: bool = False) -> SyncResult:
        """Put every file that changed since its last put; remove the files that are
        complete in the store (closed by the writer, or any with ``finished``: the writer
        is gone). A file that fails is kept for the next pass."""
        result = SyncResult()
        with _Directory(self.local_dir) as root:
            for relative, path in sorted(self.files()):
                try:
                    self._sync_file(root, relative, path, finished, result)
                except FileNotFoundError:  # removed by its writer meanwhile: nothing to send
                    self._sent.pop(relative, None)
                except Exception as err:
                    result.failed[relative] = err
        return result

    def _sync_file(
        self, root: _Directory, relative: str, path: Path, finished: bool, result: SyncResult
    ) -> None:
        kind = writer_file_kind(relative)
        event = kind == "event"
        # Asked before the file is read: once closed, its size is final. An export is
        # complete when it appears (written aside, then renamed).
        closed = finished or kind == "export" or relative in self.closed
        sent = self._sent.setdefault(relative, _Sent(uploaded=-1))
        signature = None
        with root.open_file(relative) as handle:
            info = os.fstat(handle.fileno())
            if event:
                data = self._event_prefix(handle, sent, info.st_size)
            else:
                signature = (info.st_size, info.st_mtime_ns)
                data = handle.read() if signature != sent.signature else None
        if data is not None:
            self.storage.put(f"{self.remote_dir}/{relative}", data)
            sent.uploaded = len(data)
            sent.signature = signature
            result.puts += 1
            result.bytes += len(data)
        if closed and self._complete(event, sent, info.st_size):
            path.unlink()
            del self._sent[relative]
            self.closed.discard(relative)

    def _event_prefix(self, handle: BinaryIO, sent: _Sent, size: int) -> bytes | None:
        """The file's whole records when they reach further than the object; else None
        (an object is never made before a whole record is there to go in it)."""
        if size <= sent.uploaded or size < sent.scanned:
            return None
        data = handle.read(size)
        sent.scanned = whole_records_end(data, sent.scanned)
        if sent.scanned <= max(sent.uploaded, 0):
            return None
        return data[: sent.scanned]

    @staticmethod
    def _complete(event: bool, sent: _Sent, size: int) -> bool:
        """Whether the store holds all of a closed file (an event file's torn tail, which
        its writer never finished, excepted)."""
        if event:
            return sent.scanned == max(sent.uploaded, 0)
        return sent.signature is not None and sent.uploaded == size

    def left(self) -> dict[str, int]:
        """The files still in the spool, with their bytes: after a ``finished`` pass, those
        that could not be uploaded."""
        return left_files(self.local_dir)

    def give_up(self) -> None:
        """Note in the manifest that the writer has stopped uploading (what is left is for
        ``sumlens upload``, even while the writer's process still runs)."""
        path = self.local_dir / MANIFEST
        manifest = read_manifest(self.local_dir)
        manifest["closed"] = True
        path.write_text(json.dumps(manifest, indent=1))

    def remove_if_done(self) -> bool:
        """Remove the spool directory when nothing but its manifest and half-written files
        is left in it (no file to upload, nothing :meth:`refused`); True if it was removed."""
        return remove_if_empty(self.local_dir)


def left_files(local_dir: Path) -> dict[str, int]:
    """The files a writer made in spool directory ``local_dir`` (not yet uploaded), with
    their bytes; read from the local disk alone, so ``sumlens upload`` can show them before
    anything reaches the store."""
    found = {}
    for relative, path, why in _entries(local_dir):
        if why is None:
            with contextlib.suppress(FileNotFoundError):
                found[relative] = path.lstat().st_size
    return found


def refused_files(local_dir: Path) -> list[tuple[str, str]]:
    """What spool directory ``local_dir`` holds besides its writer's files, never uploaded:
    ``(relative path, why)`` for each link, file of another kind or name, by path."""
    return sorted((relative, why) for relative, _, why in _entries(local_dir) if why is not None)


def remove_if_empty(local_dir: Path) -> bool:
    """Remove spool directory ``local_dir`` when nothing but its manifest and half-written
    files is left in it; True if it was removed."""
    if any(True for _ in _entries(local_dir)):
        return False
    shutil.rmtree(local_dir, ignore_errors=True)
    return True


def _entries(local_dir: Path) -> Iterator[tuple[str, Path, str | None]]:
    """Every entry below spool directory ``local_dir`` (links not followed), with why it is
    not one of its writer's files (None when it is)."""
    for folder, dirs, names in os.walk(local_dir):
        for name in dirs:
            path = Path(folder) / name
            if path.is_symlink():
                yield path.relative_to(local_dir).as_posix(), path, "a symbolic link"
        for name in names:
            path = Path(folder) / name
            relative = path.relative_to(local_dir).as_posix()
            if relative == MANIFEST or name.endswith(_WRITING_SUFFIXES):
                continue
            try:
                info = path.lstat()
            except FileNotFoundError:  # removed meanwhile
                continue
            yield relative, path, _not_made_by_writer(relative, info)


def _not_made_by_writer(relative: str, info: os.stat_result) -> str | None:
    """Why the spool entry ``relative`` (``lstat``'ed: ``info``) is not a file its writer
    made, or None when it is one."""
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_nlink != 1:
        return f"a file with {info.st_nlink} names (hard links)"
    if writer_file_kind(relative) is None:
        return "not a file a sumlens writer makes"
    return None


class _Directory:
    """A directory held open, whose files are opened without following a link at any step
    (``O_NOFOLLOW`` below its descriptor), so that a name swapped for a link after it was
    listed is refused, not followed. Where the system has neither (Windows), each path is
    checked with ``lstat`` before it is opened."""

    _SAFE = hasattr(os, "O_NOFOLLOW") and os.open in os.supports_dir_fd

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def __enter__(self) -> _Directory:
        if self._SAFE:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._fd is not None:
            os.close(self._fd)

    def open_file(self, relative: str) -> BinaryIO:
        """``relative`` opened for reading, when it is still a file its writer made (else
        ``OSError`` saying why)."""
        parts = relative.split("/")
        if self._fd is None:  # pragma: no cover - Windows
            fd = _checked_open(self.path / relative, relative)
        else:
            fd = self._open_below(parts)
        info = os.fstat(fd)
        why = _not_made_by_writer(relative, info)
        if why is not None:
            os.close(fd)
            raise OSError(errno.EPERM, f"not uploaded: {why}", os.fspath(self.path / relative))
        return os.fdopen(fd, "rb")

    def _open_below(self, parts: list[str]) -> int:
        assert self._fd is not None
        nofollow = os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)  # never waits on a pipe
        opened: list[int] = []
        at = self._fd
        try:
            for part in parts[:-1]:
                at = os.open(part, os.O_RDONLY | os.O_DIRECTORY | nofollow, dir_fd=at)
                opened.append(at)
            return os.open(parts[-1], os.O_RDONLY | nofollow, dir_fd=at)
        finally:
            for fd in opened:
                os.close(fd)


def _checked_open(path: Path, relative: str) -> int:  # pragma: no cover - Windows
    why = _not_made_by_writer(relative, path.lstat())
    if why is not None:
        raise OSError(errno.EPERM, f"not uploaded: {why}", os.fspath(path))
    return os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))


def kept_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The options a manifest may hold (:data:`KEPT_OPTIONS`), and the dotted names of
    those left out (``client_kwargs.aws_secret_access_key``), never their values."""
    return _kept(options, KEPT_OPTIONS, "")


def _kept(
    options: Mapping[str, Any], allowed: Mapping[str, Any], prefix: str
) -> tuple[dict[str, Any], list[str]]:
    kept: dict[str, Any] = {}
    left_out: list[str] = []
    for key, value in options.items():
        name = f"{prefix}{key}"
        rule = allowed.get(key, False) if isinstance(key, str) else False
        if rule is None and isinstance(value, _PLAIN):
            kept[key] = value
        elif isinstance(rule, dict) and isinstance(value, Mapping):
            inner, inner_left = _kept(value, rule, f"{name}.")
            if inner:
                kept[key] = inner
            left_out += inner_left
        else:
            left_out.append(name)
    return kept, sorted(left_out)


def where_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options among ``options`` that choose where uploads go (:data:`WHERE_OPTIONS`),
    by dotted name."""
    found = {}
    for path in WHERE_OPTIONS:
        value = option_at(options, path)
        if value is not None:
            found[".".join(path)] = value
    return found


def create(
    url: str,
    options: Mapping[str, Any] | None = None,
    root: str | os.PathLike[str] | None = None,
    owner_only: bool = False,
) -> tuple[Spool, SpoolWriteStorage]:
    """A new spool for a writer of ``url``, and the write storage its files are made with
    (the umask's modes; only their owner's with ``owner_only``).

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
    local_dir.mkdir(mode=dir_mode(owner_only), parents=True)
    kept, left_out = kept_options(options or {})
    manifest = {
        "url": url,
        "options": kept,
        "left_out": left_out,
        "pid": os.getpid(),
        "host": socket.gethostname(),
    }
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    with os.fdopen(os.open(local_dir / MANIFEST, flags, 0o600 if owner_only else 0o666), "w") as f:
        f.write(json.dumps(manifest, indent=1))
    spool = Spool(local_dir, storage, remote_dir, url)
    return spool, SpoolWriteStorage(local_dir, taken, owner_only, spool.closed)


def _remote_names(storage: FsspecStorage, remote_dir: str) -> set[str]:
    """Names of the files in the remote directory now (none when it does not exist yet)."""
    try:
        listing = storage.list_dir(remote_dir, dirs=False)
    except FileNotFoundError:
        return set()
    return {info.name for info in listing}


def read_manifest(local_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of spool directory ``local_dir`` (``ValueError`` if it has none, or
    one that is not a manifest: a link, too large, not JSON, not the right fields)."""
    path = Path(local_dir) / MANIFEST
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        with os.fdopen(os.open(path, flags), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ValueError("not a regular file")
            text = handle.read(MAX_MANIFEST_BYTES + 1)
        if len(text) > MAX_MANIFEST_BYTES:
            raise ValueError(f"larger than {MAX_MANIFEST_BYTES} bytes")
        manifest = json.loads(text)
    except FileNotFoundError:
        raise ValueError(
            f"{os.fspath(local_dir)!r} is not a sumlens spool: no {MANIFEST}"
        ) from None
    except (OSError, ValueError) as err:
        raise ValueError(f"{os.fspath(path)!r} is not a readable spool manifest: {err}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("url"), str):
        raise ValueError(f"{os.fspath(path)!r} is not a spool manifest (no 'url')")
    left_out = manifest.get("left_out", [])
    if not isinstance(manifest.get("options", {}), dict) or not (
        isinstance(left_out, list) and all(isinstance(name, str) for name in left_out)
    ):
        raise ValueError(f"{os.fspath(path)!r} is not a spool manifest ('options', 'left_out')")
    return manifest


@dataclasses.dataclass
class UploadTarget:
    """Where ``sumlens upload`` would send a left spool's files, and with which options."""

    url: str
    options: dict[str, Any]
    """The manifest's kept options, under those given by the user."""
    from_manifest: dict[str, Any]
    """The options choosing where uploads go (:data:`WHERE_OPTIONS`, by dotted name) that
    the manifest sets and the user did not give."""
    ignored: list[str]
    """Options in the manifest that a writer never keeps (:data:`KEPT_OPTIONS`), not used."""
    left_out: list[str]
    """The writer's options its manifest did not keep, that the user did not give either."""

    def matches(self, url: str | None) -> bool:
        """Whether the user named this destination: ``url`` is the target's URL or a
        directory above it, and no option choosing where uploads go comes from the
        manifest alone."""
        if url is None or self.from_manifest:
            return False
        named = url.rstrip("/")
        return self.url.rstrip("/") == named or self.url.startswith(named + "/")


def upload_target(manifest: Mapping[str, Any], options: Mapping[str, Any] | None) -> UploadTarget:
    """The destination of a left spool's files (its ``manifest``, from :func:`read_manifest`)
    with the user's ``options`` merged over the manifest's. Only the options a writer keeps
    are taken from a manifest, which anyone able to write the spool could have made."""
    url = str(manifest["url"])
    protocol = url.partition("://")[0].lower()
    if protocol not in UPLOAD_PROTOCOLS:
        raise ValueError(
            f"its manifest names url={url!r}: sumlens upload sends spools only to object "
            f"storage ({', '.join(sorted(UPLOAD_PROTOCOLS - {'memory'}))})"
        )
    given = dict(options or {})
    kept, ignored = kept_options(manifest.get("options", {}))
    merged = {**kept, **given}
    user_where = where_options(given)
    chosen = {k: v for k, v in where_options(merged).items() if k not in user_where}
    left_out = [
        name for name in manifest.get("left_out", []) if name.partition(".")[0] not in given
    ]
    return UploadTarget(url, merged, chosen, ignored, left_out)


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

    ``options`` are merged over the manifest's (:func:`upload_target`: the secrets were
    never written down).
    """
    target = upload_target(read_manifest(local_dir), options)
    url = target.url
    storage, remote_dir = open_storage(url, target.options)
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
