"""What a dashboard server is told: one checked, immutable settings object.

Every entry point (``sumlens start``, ``serve``, ``export``, the tests) builds a
:class:`BoardSettings` through :meth:`BoardSettings.create`, so a bad value fails once,
in the caller, with one line naming the argument, the value and what is allowed.

The base directory is a local folder or a URL of any fsspec file system (``s3://bucket/team``,
:mod:`sumlens.io.remote`), which is kept as the string given and opened with the
``storage_options`` (fsspec's: ``endpoint_url``, ``profile``, ``anon``, ...).
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sumlens.board.plugins import DEFAULT_CAPS

if TYPE_CHECKING:
    from sumlens.io.storage import FileInfo, Storage

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
"""Host names that mean this machine only; binding anything else exposes the dashboard."""
DEFAULT_WORKSPACE = Path("~/.sumlens")
SETTINGS_ON_STDIN = "--settings-on-stdin"
"""The option of ``sumlens serve`` (hidden) by which it reads its settings from stdin, as
``sumlens start`` checked them (:meth:`BoardSettings.to_json`)."""
_PREFIX_RE = re.compile(r"(/[A-Za-z0-9._~-]+)+")
_HOST_RE = re.compile(r"[A-Za-z0-9.-]+|\[?[0-9A-Fa-f:.]+\]?")


MAX_CAP = 100_000


def parse_caps(text: str) -> dict[str, int]:
    """``"images=20,histograms=100"`` (TensorBoard's ``--samples_per_plugin``) as caps.

    Plugin names may be singular or plural; a cap must be an int from 2 to 100,000.
    """
    caps: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        plugin = name.strip().lower()
        plugin = plugin[:-1] if plugin not in DEFAULT_CAPS and plugin.endswith("s") else plugin
        if not sep or plugin not in DEFAULT_CAPS:
            raise ValueError(
                f"--samples-per-plugin entry {item!r} is not allowed: use PLUGIN=N with PLUGIN "
                f"one of {', '.join(sorted(DEFAULT_CAPS))}"
            )
        try:
            cap = int(value)
        except ValueError:
            cap = -1
        if not 2 <= cap <= MAX_CAP:
            raise ValueError(
                f"--samples-per-plugin {item!r}: the count must be an int from 2 to {MAX_CAP}"
            )
        caps[plugin] = cap
    return caps


class BoardSettingsError(ValueError):
    """A setting of the dashboard is not allowed; the message names it and what is allowed."""


@dataclass(frozen=True)
class BoardSettings:
    """The dashboard's settings (build them with :meth:`create`, which checks them).

    The defaults below are the only ones: :meth:`create` takes None as "the default", and
    the command line's help strings read them from here (``BoardSettings.port``).
    """

    base_dir: Path | str
    """A local folder (a resolved Path) or a URL (the str given)."""
    host: str = "127.0.0.1"
    port: int = 8080
    reload_interval: float = 3.0
    workspace: Path = DEFAULT_WORKSPACE
    url_path_prefix: str = ""
    allowed_hosts: tuple[str, ...] = ()
    samples_per_plugin: tuple[tuple[str, int], ...] = ()
    watch: bool = True
    """Whether a local base directory is watched for changes rather than walked at every
    reload interval (:mod:`sumlens.board.data.watch`)."""
    storage_options: tuple[tuple[str, Any], ...] = ()
    """The options of the file system of a URL base directory (``--storage-option``)."""

    @classmethod
    def create(
        cls,
        base_dir: str | Path,
        host: str | None = None,
        port: int | None = None,
        reload_interval: float | None = None,
        workspace: str | Path | None = None,
        url_path_prefix: str | None = None,
        allowed_hosts: str | tuple[str, ...] | list[str] | None = None,
        samples_per_plugin: str | None = None,
        watch: bool | None = None,
        storage_options: Mapping[str, Any] | None = None,
    ) -> BoardSettings:
        """Checked settings: the base directory must exist (a URL's is asked for once), the
        rest be in range (None, or an argument left out, is the default)."""
        host = cls.host if host is None else host
        port = cls.port if port is None else port
        reload_interval = cls.reload_interval if reload_interval is None else reload_interval
        options = tuple(sorted(dict(storage_options or {}).items()))
        base = _base_dir(base_dir, dict(options))
        if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
            raise BoardSettingsError(f"--port {port!r} is not allowed: use 1 to 65535")
        if not isinstance(host, str) or not _HOST_RE.fullmatch(host):
            raise BoardSettingsError(f"--host {host!r} is not a host name or IP address")
        try:
            interval = float(reload_interval)
        except (TypeError, ValueError):
            interval = math.nan
        if not (math.isfinite(interval) and 0.05 <= interval <= 86400):
            raise BoardSettingsError(
                f"--reload-interval {reload_interval!r} is not allowed: use seconds from "
                "0.05 to 86400"
            )
        return cls(
            base_dir=base,
            host=host,
            port=port,
            reload_interval=interval,
            workspace=Path(workspace or cls.workspace).expanduser(),
            url_path_prefix=normalise_prefix(url_path_prefix or cls.url_path_prefix),
            allowed_hosts=_hosts(allowed_hosts or cls.allowed_hosts),
            samples_per_plugin=_caps(samples_per_plugin or ""),
            watch=cls.watch if watch is None else bool(watch),
            storage_options=options,
        )

    def to_json(self) -> str:
        """These settings as JSON, for :meth:`from_json` in another process (``sumlens
        start`` hands them to its server this way, checked once, never re-parsed)."""
        return json.dumps(
            {**asdict(self), "base_dir": str(self.base_dir), "workspace": str(self.workspace)}
        )

    @classmethod
    def from_json(cls, text: str) -> BoardSettings:
        """Settings :meth:`to_json` wrote (already checked by :meth:`create` there); a text
        that is not such settings raises :class:`BoardSettingsError`."""
        try:
            given = json.loads(text)
            names = {field.name for field in fields(cls)}
            if not isinstance(given, dict) or set(given) != names:
                raise ValueError(f"the fields are not {sorted(names)}")
            return cls(
                **{
                    **given,
                    "base_dir": _handed_base_dir(given["base_dir"]),
                    "workspace": Path(given["workspace"]),
                    "allowed_hosts": tuple(given["allowed_hosts"]),
                    "samples_per_plugin": tuple(
                        (str(plugin), int(cap)) for plugin, cap in given["samples_per_plugin"]
                    ),
                    "storage_options": tuple(
                        (str(key), value) for key, value in given["storage_options"]
                    ),
                }
            )
        except (ValueError, TypeError) as err:
            raise BoardSettingsError(
                f"the settings handed over are not dashboard settings: {err}"
            ) from None

    @property
    def binds_locally(self) -> bool:
        """Whether the server is reachable from this machine only."""
        return self.host in LOCAL_HOSTS or _is_loopback(self.host)

    def url(self, path: str = "/") -> str:
        """The address of ``path`` on the server, as a browser on this machine reaches it."""
        host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(self.host, self.host)
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.port}{self.url_path_prefix}{path}"

    def accepted_hosts(self) -> frozenset[str]:
        """Host header names (without port) a request may carry (DNS-rebinding guard)."""
        names = {*LOCAL_HOSTS, "[::1]", self.host.lower(), *self.allowed_hosts}
        return frozenset(name.lower() for name in names)


def _base_dir(given: str | Path, options: dict[str, Any]) -> Path | str:
    """The checked base directory: a local folder's resolved path, or the URL given once
    its storage answered that it is a directory there."""
    from sumlens.io.remote import RemoteStorageError, is_url, open_storage

    if not is_url(given):
        if options:
            raise BoardSettingsError(
                f"--storage-option is for a base directory that is a URL (s3://bucket/path, "
                f"...); --summary-base-dir {str(given)!r} is a local folder"
            )
        base = Path(open_storage(given)[1]).expanduser()  # file:// URLs too
        if not base.exists():
            raise BoardSettingsError(f"--summary-base-dir {str(given)!r} does not exist")
        if not base.is_dir():
            raise BoardSettingsError(f"--summary-base-dir {str(given)!r} is not a directory")
        return base.resolve()
    url = str(given)
    try:
        storage, root = open_storage(url, options)
        info = _stat_or_bucket(storage, root)
    except FileNotFoundError:
        raise BoardSettingsError(f"--summary-base-dir {url!r} does not exist") from None
    except RemoteStorageError as err:  # its message names the URL: unreachable, refused ...
        raise BoardSettingsError(f"--summary-base-dir {err}") from None
    except TypeError as err:  # an option the file system does not take (values not shown)
        raise BoardSettingsError(
            f"--storage-option: an option is not accepted for {url!r}: {err}"
        ) from None
    except (OSError, ValueError) as err:
        raise BoardSettingsError(f"--summary-base-dir {url!r}: {err}") from None
    if not info.is_dir:
        raise BoardSettingsError(f"--summary-base-dir {url!r} is not a directory")
    return url


def _stat_or_bucket(storage: Storage, root: str) -> FileInfo:
    """What ``root`` is; for a prefix that holds nothing yet, what its bucket is (object
    stores have no empty folders: runs appear below it once writers upload them)."""
    try:
        return storage.stat(root)
    except FileNotFoundError:
        bucket = root.strip("/").partition("/")[0]
        if not bucket or bucket == root.strip("/"):
            raise
        return storage.stat(bucket)


def _handed_base_dir(text: str) -> Path | str:
    """A base directory as :meth:`BoardSettings.to_json` wrote it."""
    from sumlens.io.remote import is_url

    return text if is_url(text) else Path(text)


def normalise_prefix(prefix: str) -> str:
    """``""`` or ``/a/b``: a leading slash, no trailing one, URL-safe path segments only."""
    if not isinstance(prefix, str):
        raise BoardSettingsError(f"--url-path-prefix {prefix!r} must be a string")
    trimmed = prefix.strip().rstrip("/")
    if not trimmed:
        return ""
    if not trimmed.startswith("/"):
        trimmed = "/" + trimmed
    if not _PREFIX_RE.fullmatch(trimmed) or any(part in (".", "..") for part in trimmed.split("/")):
        raise BoardSettingsError(
            f"--url-path-prefix {prefix!r} is not allowed: use path segments of letters, "
            "digits, '.', '_', '~' and '-', like /sumlens"
        )
    return trimmed


def _hosts(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else list(value)
    hosts = tuple(item.strip().lower() for item in items if item.strip())
    for host in hosts:
        if not _HOST_RE.fullmatch(host):
            raise BoardSettingsError(
                f"--allowed-hosts entry {host!r} is not a host name or IP address"
            )
    return hosts


def _caps(text: str) -> tuple[tuple[str, int], ...]:
    try:
        return tuple(sorted(parse_caps(text).items()))
    except ValueError as err:
        raise BoardSettingsError(str(err)) from None


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
