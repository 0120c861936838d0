"""Object storage behind the storage seam: any ``fsspec`` file system as a :class:`Storage`.

:func:`open_storage` turns what a user typed (a path, ``file://``, ``s3://``, ``gs://``,
``az://``, ``memory://`` ...) into a storage and the path inside it. Local paths and
``file://`` stay on :data:`~sumlens.io.storage.LOCAL_STORAGE`: ``os.scandir`` and buffered
``open`` are what make local reading fast (no per-call wrapper, real inodes for the
dashboard's change detection), and an fsspec layer in between would only slow them down.

:class:`FsspecStorage` is written for what object storage charges: every request. A
listing of a whole tree is one recursive listing (:meth:`FsspecStorage.list_tree`), and a
file opened at an offset is read by one ranged GET from there (:class:`RangedFile`), so a
grown object costs its new bytes only. Every request is counted in ``requests``
(:class:`RequestStats`). What fails because of the store itself (a missing bucket, refused
credentials, an endpoint that cannot be reached, any other error of its client library) is
a :class:`RemoteStorageError`: one line naming the URL and the cause, raised without the
client's chain of errors (logged at debug level), and never showing a password a URL held.
An endpoint URL holding credentials (``http://user:password@host``) is refused before any
request, naming the option. ``fsspec`` and its protocol packages are imported only here,
when a URL is opened, so ``import sumlens`` stays free of them.
"""

from __future__ import annotations

import io
import json
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar, cast
from urllib.parse import urlsplit

from sumlens._log import logger
from sumlens.io.storage import LOCAL_STORAGE, FileInfo, Storage

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

T = TypeVar("T")

WINDOW = 64 * 1024 * 1024
"""Bytes one ranged GET asks for at most (what an open remote file holds in memory)."""

EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "az": "azure", "abfs": "azure"}
"""The sumlens extra that installs each protocol's package."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://")
_CREDENTIAL_CODES = frozenset(
    {
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "AccessDenied",
        "ExpiredToken",
        "InvalidToken",
        "InvalidClientTokenId",
        "AuthorizationHeaderMalformed",
    }
)
_CONNECT_ERRORS = frozenset(
    {"EndpointConnectionError", "ConnectTimeoutError", "ClientConnectorError", "ConnectError"}
)
_CLIENT_LIBRARIES = (
    "botocore",
    "aiobotocore",
    "aiohttp",
    "s3fs",
    "gcsfs",
    "google",
    "adlfs",
    "azure",
)
"""Packages whose own errors (not the built-in ``OSError``s fsspec raises, such as
``FileNotFoundError``) are failures of the store's client."""
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\s]*@")
_ENDPOINT_OPTIONS = (("endpoint_url",), ("client_kwargs", "endpoint_url"))


class RemoteStorageError(OSError):
    """The store itself failed (missing bucket, refused credentials, unreachable endpoint).

    Its message is one line: the URL, then the cause.
    """


class RequestStats:
    """Requests one storage made, thread-safe: ``listings`` (one per page or listing call),
    ``stats`` (metadata look-ups of one path), ``gets`` (reads), ``bytes`` read, ``puts``
    (objects written whole) and ``bytes_put``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.listings = 0
        self.stats = 0
        self.gets = 0
        self.bytes = 0
        self.puts = 0
        self.bytes_put = 0

    def count(
        self,
        listings: int = 0,
        stats: int = 0,
        gets: int = 0,
        nbytes: int = 0,
        puts: int = 0,
        bytes_put: int = 0,
    ) -> None:
        """Add to the counters."""
        with self._lock:
            self.listings += listings
            self.stats += stats
            self.gets += gets
            self.bytes += nbytes
            self.puts += puts
            self.bytes_put += bytes_put

    def snapshot(self) -> dict[str, int]:
        """The counters now, as one consistent dict (subtract two to cost a reload)."""
        with self._lock:
            return {
                "listings": self.listings,
                "stats": self.stats,
                "gets": self.gets,
                "bytes": self.bytes,
                "puts": self.puts,
                "bytes_put": self.bytes_put,
            }


def is_url(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` is a URL of a storage other than the local disk (not ``file://``)."""
    if not isinstance(location, str):
        return False
    match = _SCHEME.match(location)
    return match is not None and match.group(1).lower() != "file"


def open_storage(
    location: str | os.PathLike[str], options: Mapping[str, Any] | None = None
) -> tuple[Storage, str]:
    """The storage holding ``location`` and the path inside it.

    A local path or ``file://`` URL gives ``(LOCAL_STORAGE, local path)``; any other URL an
    :class:`FsspecStorage` over ``fsspec``'s file system for its protocol, made with
    ``options`` (fsspec's own: for ``s3://`` e.g. ``endpoint_url``, ``key``, ``secret``,
    ``anon``, ``profile``). Nothing is requested yet.
    """
    options = dict(options or {})
    if not is_url(location):
        if options:
            raise ValueError(
                f"options {sorted(options)} were given for location={os.fspath(location)!r}, "
                "a local path: storage options apply to URLs only (s3://, gs://, ...)"
            )
        text = os.fspath(location)
        if isinstance(text, str) and text.lower().startswith("file://"):
            text = text[len("file://") :]
        return LOCAL_STORAGE, text
    return _open_url(cast(str, location), options)


def parse_storage_options(items: list[str]) -> dict[str, Any]:
    """``--storage-option KEY=VALUE`` flags as fsspec options: a value is JSON when it parses
    (``false``, ``3``, ``{"endpoint_url": ...}``), else the string itself."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(
                f"--storage-option {item!r} is not KEY=VALUE (e.g. endpoint_url=http://host:9000)"
            )
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
        options[key.strip()] = value
    return options


def _open_url(url: str, options: dict[str, Any]) -> tuple[FsspecStorage, str]:
    import fsspec
    from fsspec.core import url_to_fs

    scheme = _SCHEME.match(url)
    assert scheme is not None  # open_storage hands URLs only
    protocol = scheme.group(1).lower()
    try:
        fsspec.get_filesystem_class(protocol)
    except ImportError as err:
        extra = EXTRAS.get(protocol)
        hint = f"pip install 'sumlens[{extra}]'" if extra else "install its fsspec package"
        raise RemoteStorageError(
            f"{url}: the {protocol}:// protocol needs a package that is not installed: {hint}"
        ) from err
    except ValueError as err:
        raise ValueError(f"location={url!r}: fsspec knows no protocol {protocol!r}") from err
    _refuse_credentials_in_endpoints(options)
    try:
        fs, path = url_to_fs(url, **options)
    except TypeError as err:
        raise ValueError(
            f"options {sorted(options)} are not all accepted by fsspec's {protocol}:// file "
            f"system: {err}"
        ) from err
    return FsspecStorage(fs), path.rstrip("/") or path


def option_at(options: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The storage option at ``path`` (``("client_kwargs", "endpoint_url")``) of nested
    ``options``, or None where it is not set."""
    value: Any = options
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _without_credentials(text: str) -> str:
    """``text`` with the ``user:password@`` of every URL in it masked (``http://***@host``)."""
    return _USERINFO.sub(r"\g<scheme>***@", text)


def _refuse_credentials_in_endpoints(options: Mapping[str, Any]) -> None:
    """A ValueError naming the option when an endpoint URL holds credentials: S3's client
    signs requests with the key and secret, and its HTTP client refuses a URL's own (after
    retrying); and a password in a URL would be shown in every message naming it."""
    for path in _ENDPOINT_OPTIONS:
        value = option_at(options, path)
        if isinstance(value, str) and "@" in urlsplit(value).netloc:
            name = "".join(f"[{key!r}]" for key in path)
            raise ValueError(
                f"storage_options{name}={_without_credentials(value)!r} holds credentials "
                "(user:password@ in the URL), which the store's client does not use: give the "
                "endpoint without them, and the credentials as the file system's own options "
                "(for s3://: 'key' and 'secret', or a 'profile')"
            )


class FsspecStorage:
    """A :class:`~sumlens.io.storage.Storage` over an fsspec file system.

    Paths are the file system's own (no protocol: ``bucket/run/file`` for S3), joined with
    ``"/"``. No listing is cached: each call asks the store, so what it says is current.
    """

    def __init__(self, fs: AbstractFileSystem) -> None:
        self.fs = fs
        self.requests = RequestStats()

    def url(self, path: str | os.PathLike[str]) -> str:
        """``path`` as a URL (with the protocol), for messages."""
        return str(self.fs.unstrip_protocol(os.fspath(path)))

    def join(self, directory: str | os.PathLike[str], name: str) -> str:
        """``directory/name``."""
        return f"{os.fspath(directory).rstrip('/')}/{name}"

    def stat(self, path: str | os.PathLike[str]) -> FileInfo:
        """One metadata look-up of ``path`` (a file, or a prefix that holds files)."""
        path = os.fspath(path)
        self.requests.count(stats=1)
        self.fs.invalidate_cache(path)
        details = self._call(path, lambda: self.fs.info(path))
        return _file_info(details)

    def list_dir(
        self,
        path: str | os.PathLike[str],
        keep: Callable[[str], bool] | None = None,
        dirs: bool = True,
        links: bool = False,
    ) -> list[FileInfo]:
        """One listing of ``path``'s entries (object stores have no links to list)."""
        path = os.fspath(path)
        self.requests.count(listings=1)
        self.fs.invalidate_cache(path)
        entries = self._call(path, lambda: self.fs.ls(path, detail=True))
        found = []
        for details in entries:
            info = _file_info(details)
            if info.is_dir:
                if dirs and details["name"].rstrip("/") != path.rstrip("/"):
                    found.append(info)
            elif info.is_file and (keep is None or keep(info.name)):
                found.append(info)
        return found

    def list_tree(self, path: str | os.PathLike[str]) -> list[tuple[str, FileInfo]]:
        """Every file below ``path`` with its path, from one recursive listing (``find``)."""
        path = os.fspath(path)
        self.requests.count(listings=1)
        try:
            found = self._call(path, lambda: self.fs.find(path, detail=True))
        finally:
            self.fs.invalidate_cache(path)
        return [(name, _file_info(details)) for name, details in found.items()]

    def open_read(
        self, path: str | os.PathLike[str], offset: int = 0, length: int | None = None
    ) -> BinaryIO:
        """``path`` at ``offset``: one ranged GET from there (of the rest, up to ``length``
        or :data:`WINDOW` bytes), never the bytes before it."""
        window = WINDOW if length is None else max(1, min(length, WINDOW))
        return cast(BinaryIO, RangedFile(self, os.fspath(path), offset, window))

    def get(self, path: str, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` of ``path`` (fewer at its end): one ranged GET."""
        self.requests.count(gets=1)
        try:
            data = self._call(path, lambda: self.fs.cat_file(path, start=start, end=end))
        except OSError as err:
            if not any(_error_code(link) == "InvalidRange" for link in _chain(err)):
                raise
            data = b""  # ``start`` is at (or past) the end
        self.requests.count(nbytes=len(data))
        return bytes(data)

    def put(self, path: str, data: bytes | memoryview) -> None:
        """Write ``data`` as the whole object ``path`` (replacing it): one put (a multipart
        upload for a big one)."""
        self.requests.count(puts=1)
        self._call(path, lambda: self.fs.pipe_file(path, bytes(data)))
        self.requests.count(bytes_put=len(data))

    def size(self, path: str) -> int:
        """The size of ``path`` now: one metadata look-up."""
        return self.stat(path).size

    def move_files(self, moves: Sequence[tuple[str, str]]) -> None:
        """Copy every file on the store (a server-side copy each, counted as a put), then
        delete the originals (:meth:`_delete`): a copy that fails leaves the originals as
        they were (the copies made are deleted again). Whether a target exists is asked with
        one listing of the targets' common directory."""
        if not moves:
            return
        targets = [target for _, target in moves]
        taken = sorted(set(targets) & set(self._files_below(_common_directory(targets))))
        if taken:
            raise FileExistsError(17, f"{len(taken)} target(s) exist already", self.url(taken[0]))
        copied: list[str] = []
        for source, target in moves:
            try:
                self.requests.count(puts=1)
                self._call(source, partial(self.fs.cp_file, source, target))
            except OSError as err:
                raise self._undo_copies(copied, source, target, err) from err
            copied.append(target)
        try:
            self._delete([source for source, _ in moves])
        except OSError as err:
            raise OSError(
                err.errno,
                f"every file was copied to {self.url(_common_directory(targets))}, but deleting "
                f"the originals failed ({err}): some are in both places",
            ) from err
        finally:
            self.fs.invalidate_cache()

    def remove_tree(self, path: str) -> None:
        """Delete every object below ``path`` (one listing, then :meth:`_delete`); nothing
        when there is none."""
        try:
            self._delete(self._files_below(path))
        finally:
            self.fs.invalidate_cache()

    def remove_empty_dirs(self, path: str) -> None:
        """Nothing to do: a directory of object storage is the prefix of its objects, gone
        with the last of them."""

    def _delete(self, paths: Sequence[str]) -> None:
        """Delete each file of ``paths``, one request each; one gone already (another
        replica purging the same folder) is not an error. Never fsspec's ``rm``: it reads a
        path holding ``[``, ``]``, ``*`` or ``?`` as a glob pattern and deletes what that
        matches instead (``exp[1]/f`` matches ``exp1/f``, another run's file)."""
        for path in paths:
            try:
                self._call(path, partial(self.fs.rm_file, path))
            except FileNotFoundError:
                continue

    def _files_below(self, path: str) -> list[str]:
        """The paths of the files below ``path`` (none when it is not there): one listing."""
        self.requests.count(listings=1)
        try:
            return list(self._call(path, lambda: self.fs.find(path)))
        except FileNotFoundError:
            return []
        finally:
            self.fs.invalidate_cache(path)

    def _undo_copies(self, copied: list[str], source: str, target: str, err: OSError) -> OSError:
        """Delete the copies made before ``err``; the error saying what failed."""
        reason = f"copying {self.url(source)} to {self.url(target)} failed ({err})"
        try:
            self._delete(copied)
        except OSError as cleanup:
            return OSError(
                err.errno,
                f"{reason}; the originals are whole, but {len(copied)} copies made before "
                f"could not be deleted ({cleanup})",
            )
        finally:
            self.fs.invalidate_cache()
        return OSError(err.errno, f"{reason}; the originals are whole, nothing was moved")

    def _call(self, path: str, call: Callable[[], T]) -> T:
        """``call()``, with a failure of the store itself turned into a RemoteStorageError."""
        try:
            return call()
        except Exception as err:
            cause = _store_failure(err)
            if cause is not None:
                logger.debug("%s failed", self.url(path), exc_info=err)
                raise RemoteStorageError(f"{self.url(path)}: {cause}") from None
            if isinstance(err, FileNotFoundError):
                raise FileNotFoundError(2, "No such file or directory", self.url(path)) from err
            raise


class RangedFile(io.RawIOBase):
    """A remote file read by ranged GETs of ``window`` bytes: the first at the offset it
    was opened at.

    Positions are the file's own. The bytes of the last GET are held; a read outside them
    asks for the next window. ``seek(0, SEEK_END)`` knows the size without a request when
    the last GET reached the end.
    """

    def __init__(self, storage: FsspecStorage, path: str, offset: int, window: int) -> None:
        super().__init__()
        if offset < 0:
            raise ValueError(f"offset={offset!r} must be a byte offset >= 0")
        self._storage = storage
        self._path = path
        self._window = window
        """Bytes one GET asks for."""
        self._pos = offset
        self._size: int | None = None
        self._start = offset
        self._data = b""
        self._fetch(offset)

    def _fetch(self, start: int) -> None:
        self._start = start
        self._data = self._storage.get(self._path, start, start + self._window)
        if len(self._data) < self._window and (self._data or start == 0):
            self._size = start + len(self._data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_SET:
            self._pos = offset
        elif whence == os.SEEK_CUR:
            self._pos += offset
        elif whence == os.SEEK_END:
            self._pos = self._known_size() + offset
        else:
            raise ValueError(f"whence={whence!r} is not os.SEEK_SET, SEEK_CUR or SEEK_END")
        if self._pos < 0:
            raise ValueError(f"negative position {self._pos} in {self._storage.url(self._path)}")
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        got = 0
        while got < len(view):
            chunk = self._held(len(view) - got)
            if not chunk:
                break
            view[got : got + len(chunk)] = chunk
            got += len(chunk)
            self._pos += len(chunk)
        return got

    def _held(self, n: int) -> memoryview:
        """Up to ``n`` bytes at the position, fetching the window there if not held."""
        at = self._pos - self._start
        if not 0 <= at < len(self._data):
            if self._size is not None and self._pos >= self._size:
                return memoryview(b"")
            self._fetch(self._pos)
            at = 0
        return memoryview(self._data)[at : at + n]

    def _known_size(self) -> int:
        if self._size is None:
            self._size = self._storage.size(self._path)
        return self._size


def _common_directory(paths: Sequence[str]) -> str:
    """The deepest directory holding every one of ``paths`` (``/``-separated)."""
    parents = [path.rpartition("/")[0].split("/") for path in paths]
    common = parents[0]
    for parts in parents[1:]:
        length = 0
        while length < min(len(common), len(parts)) and common[length] == parts[length]:
            length += 1
        common = common[:length]
    return "/".join(common)


def _file_info(details: Mapping[str, Any]) -> FileInfo:
    """A FileInfo from fsspec's ``info`` dict (mtime from the object's last-modified time)."""
    name = str(details["name"]).rstrip("/").rpartition("/")[2]
    is_dir = details.get("type") == "directory"
    mtime_ns = _mtime_ns(details)
    return FileInfo(
        name,
        is_dir,
        not is_dir,
        0 if is_dir else int(details.get("size") or 0),
        mtime_ns,
        mtime_ns,
    )


def _mtime_ns(details: Mapping[str, Any]) -> int:
    """Nanoseconds since the epoch of the entry's last change, 0 where the store has none."""
    for key in ("LastModified", "last_modified", "mtime", "updated", "created"):
        value = details.get(key)
        if isinstance(value, datetime):
            return int(value.timestamp() * 1e9)
        if isinstance(value, (int, float)):
            return int(value * 1e9)
        if isinstance(value, str):
            try:
                return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1e9)
            except ValueError:
                continue
    return 0


def _store_failure(err: BaseException) -> str | None:
    """What the store failed on (bucket, credentials, endpoint, its client), in one line
    with no password; None for other errors."""
    links = list(_chain(err))
    for link in links:
        code = _error_code(link)
        if code == "NoSuchBucket":
            return "the bucket does not exist (NoSuchBucket)"
        if code in _CREDENTIAL_CODES:
            return f"the credentials were refused ({code})"
    for link in links:
        if type(link).__name__ in _CONNECT_ERRORS or isinstance(link, ConnectionError):
            return f"cannot reach the endpoint ({_one_line(link)})"
        if isinstance(link, PermissionError):
            return (
                f"access was refused ({_one_line(link)}): check the credentials and the permissions"
            )
    if type(err).__module__.partition(".")[0] in _CLIENT_LIBRARIES:
        return f"the store's client failed ({type(err).__name__}: {_one_line(err)})"
    return None


def _one_line(err: BaseException) -> str:
    """``str(err)`` on one line, any password in a URL masked."""
    return _without_credentials(" ".join(str(err).split()))


def _chain(err: BaseException) -> Iterator[BaseException]:
    """``err`` and the errors it was raised from or during."""
    seen: set[int] = set()
    link: BaseException | None = err
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def _error_code(err: BaseException) -> str | None:
    """The error code of a botocore-style ``ClientError`` (its ``response``), else None."""
    response = getattr(err, "response", None)
    if isinstance(response, Mapping):
        error = response.get("Error")
        if isinstance(error, Mapping):
            return error.get("Code")
    return None


def locate(
    path: str | os.PathLike[str],
    storage: Storage = LOCAL_STORAGE,
    options: Mapping[str, Any] | None = None,
) -> tuple[Storage, str | os.PathLike[str]]:
    """What a reader's ``(path, storage, storage_options)`` arguments stand for.

    A URL with no explicit storage opens its storage (:func:`open_storage`); anything
    else is kept as given. Options need a URL to apply to.
    """
    if storage is LOCAL_STORAGE and is_url(path):
        return open_storage(path, options)
    if options:
        raise ValueError(
            f"storage_options {sorted(options)} apply to a URL path opened here, not to "
            f"path={os.fspath(path)!r} with storage={storage!r}"
        )
    return storage, path
