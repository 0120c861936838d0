"""What a dashboard server is told: one checked, immutable settings object.

Every entry point (``sumlens start``, ``serve``, ``export``, the tests) builds a
:class:`BoardSettings` through :meth:`BoardSettings.create`, so a bad value fails once,
in the caller, with one line naming the argument, the value and what is allowed.

The base directory is a local folder or a URL of any fsspec file system (``s3://bucket/team``,
:mod:`sumlens.io.remote`), which is kept as the string given and opened with the
``storage_options`` (fsspec's: ``endpoint_url``, ``profile``, ``anon``, ...).

Who may see and write (``auth``, its files, ``read_only`` ...) is checked here too: the
token file and the roles file are read once by :meth:`BoardSettings.create`, so a bad line
fails at the command line, not at the first request. Settings keep the files' paths, never
their contents (a token is a secret: it is not in the settings JSON ``sumlens start``
hands its server, nor in any message; an error names a token file's line, not its text).
The server reads the files again itself (:mod:`sumlens.board.server.tokens`).
"""

from __future__ import annotations

import importlib
import ipaddress
import json
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sumlens.board.plugins import DEFAULT_CAPS
from sumlens.board.state_url import StateUrlError, parse_state_url
from sumlens.board.state_url import state_for_display as state_for_display

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
_FRAME_SOURCE_RE = re.compile(
    r"https?://(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*(?::(?P<port>[0-9]{1,5}|\*))?"
)
"""An origin that may frame the dashboard (a CSP host-source): scheme, host (a name or an
IPv4 address, maybe ``*.`` for any subdomain) and an optional port or ``:*``. Not an IPv6
literal: the CSP grammar has none, and Chromium drops ``http://[::1]:*`` with an error."""
AUTH_MODES = ("none", "token", "proxy")
"""Who is asking: nobody checked (``none``), a bearer token or session (``token``), or the
user an authenticating proxy names in a header (``proxy``)."""
ROLE_NAMES = ("viewer", "editor", "admin")
"""The roles, least first: a viewer reads, an editor writes notes, views and run states,
an admin also imports annotations and deletes runs."""
MIN_TOKEN_LENGTH = 16
_TOKEN_NAME_RE = re.compile(r"[A-Za-z0-9._@-]+")
_HEADER_NAME_RE = re.compile(r"[A-Za-z0-9-]+")
_REPLICA_RE = re.compile(r"[A-Za-z0-9._:@-]{0,200}")
_ROLE_TABLES = ("tokens", "users", "emails", "groups")
MAX_RETENTION_DAYS = 36500.0


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
    auth: str = "none"
    """One of :data:`AUTH_MODES`."""
    token_file: Path | None = None
    """Lines ``name:token`` (``--auth token``); read by the server, never copied here."""
    roles_file: Path | None = None
    """TOML mapping tokens, users and groups to roles (:func:`read_roles_file`)."""
    trusted_proxies: tuple[str, ...] = ()
    """Addresses or networks (CIDR) whose forwarded headers are believed."""
    proxy_user_header: str = "X-Forwarded-User"
    proxy_email_header: str = "X-Forwarded-Email"
    proxy_groups_header: str = "X-Forwarded-Groups"
    read_only: bool = False
    """Every write route answers 403, for everyone."""
    allow_anonymous_writes: bool = False
    """In ``--auth none`` on a non-local address: let anyone write (else all are viewers)."""
    state: str | None = None
    """A ``postgresql://`` URL of the shared state; None: SQLite in the workspace. It may
    hold a password: show it with :func:`state_for_display` only."""
    trash_retention_days: float = 30.0
    replica: str = ""
    """This replica's name in the audit log ("": ``hostname:port``)."""
    frame_ancestors: tuple[str, ...] = ()
    """Origins besides the dashboard's own whose pages may frame it (CSP source
    expressions, ``http://localhost:*``; :mod:`sumlens.board.server.guards`)."""

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
        auth: str | None = None,
        token_file: str | Path | None = None,
        roles_file: str | Path | None = None,
        trusted_proxies: str | tuple[str, ...] | list[str] | None = None,
        proxy_user_header: str | None = None,
        proxy_email_header: str | None = None,
        proxy_groups_header: str | None = None,
        read_only: bool | None = None,
        allow_anonymous_writes: bool | None = None,
        state: str | None = None,
        trash_retention_days: float | str | None = None,
        replica: str | None = None,
        frame_ancestors: str | tuple[str, ...] | list[str] | None = None,
    ) -> BoardSettings:
        """Checked settings: the base directory must exist (a URL's is asked for once), the
        rest be in range (None, or an argument left out, is the default); the token and
        roles files are read and checked (their contents are not kept)."""
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
        mode = _auth(cls.auth if auth is None else auth, token_file, trusted_proxies)
        tokens = None if token_file is None else Path(token_file).expanduser().resolve()
        if tokens is not None:
            read_token_file(tokens)
        roles = None if roles_file is None else Path(roles_file).expanduser().resolve()
        if roles is not None:
            read_roles_file(roles)
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
            auth=mode,
            token_file=tokens,
            roles_file=roles,
            trusted_proxies=_proxies(trusted_proxies or ()),
            proxy_user_header=_header_name("--proxy-user-header", proxy_user_header, cls),
            proxy_email_header=_header_name("--proxy-email-header", proxy_email_header, cls),
            proxy_groups_header=_header_name("--proxy-groups-header", proxy_groups_header, cls),
            read_only=_flag("--read-only", read_only),
            allow_anonymous_writes=_flag("--allow-anonymous-writes", allow_anonymous_writes),
            state=_state(state),
            trash_retention_days=_retention(trash_retention_days),
            replica=_replica(replica),
            frame_ancestors=_frame_ancestors(frame_ancestors or ()),
        )

    def to_json(self) -> str:
        """These settings as JSON, for :meth:`from_json` in another process (``sumlens
        start`` hands them to its server this way, checked once, never re-parsed)."""
        paths = {
            name: None if getattr(self, name) is None else str(getattr(self, name))
            for name in ("token_file", "roles_file")
        }
        return json.dumps(
            {
                **asdict(self),
                **paths,
                "base_dir": str(self.base_dir),
                "workspace": str(self.workspace),
            }
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
                    "token_file": _handed_path(given["token_file"]),
                    "roles_file": _handed_path(given["roles_file"]),
                    "trusted_proxies": tuple(str(p) for p in given["trusted_proxies"]),
                    "frame_ancestors": tuple(str(o) for o in given["frame_ancestors"]),
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


def _handed_path(text: str | None) -> Path | None:
    """A file's path as :meth:`BoardSettings.to_json` wrote it (None: not given)."""
    return None if text is None else Path(text)


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


def _frame_ancestors(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Origins that may frame the dashboard, each a CSP source expression
    ``scheme://host[:port]`` (``:*`` any port, ``*.`` any subdomain), lowered."""
    items = value.split(",") if isinstance(value, str) else list(value)
    origins = []
    for item in items:
        origin = item.strip().lower() if isinstance(item, str) else item
        if origin == "":
            continue
        found = _FRAME_SOURCE_RE.fullmatch(origin) if isinstance(origin, str) else None
        port = found["port"] if found else None
        if not found or (port not in (None, "*") and not 1 <= int(port) <= 65535):
            raise BoardSettingsError(
                f"--frame-ancestors entry {item!r} is not allowed: use origins "
                "scheme://host[:port] with scheme http or https, host a name or IPv4 address "
                "(browsers take no IPv6 one here), port a number or * (any port), like "
                "http://localhost:* or https://hub.example.org, comma separated"
            )
        origins.append(origin)
    return tuple(dict.fromkeys(origins))


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


def _auth(
    mode: str,
    token_file: str | Path | None,
    trusted_proxies: str | tuple[str, ...] | list[str] | None,
) -> str:
    """The auth mode, checked with what it needs (a token file, trusted proxies)."""
    if mode not in AUTH_MODES:
        raise BoardSettingsError(
            f"--auth {mode!r} is not allowed: use {', '.join(AUTH_MODES[:-1])} or {AUTH_MODES[-1]}"
        )
    if mode == "token" and token_file is None:
        raise BoardSettingsError(
            "--auth token needs --token-file FILE: lines of name:token (tokens of at least "
            f"{MIN_TOKEN_LENGTH} characters)"
        )
    if mode != "token" and token_file is not None:
        raise BoardSettingsError(f"--token-file is for --auth token; the auth mode is {mode!r}")
    if mode == "proxy" and not trusted_proxies:
        raise BoardSettingsError(
            "--auth proxy needs --trusted-proxies: the addresses or networks (CIDR) of the "
            "authenticating proxy, whose user headers alone are believed"
        )
    return mode


def read_token_file(path: Path) -> dict[str, str]:
    """The tokens of a token file, by name: lines ``name:token``, ``#`` comments and blank
    lines skipped. Raises :class:`BoardSettingsError` naming the file and a bad line's
    number (never its text: it may hold a token)."""
    shown = f"--token-file {str(path)!r}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BoardSettingsError(f"{shown} does not exist") from None
    except IsADirectoryError:
        raise BoardSettingsError(f"{shown} is a directory, not a file") from None
    except UnicodeDecodeError:
        raise BoardSettingsError(f"{shown} is not UTF-8 text") from None
    except OSError as err:
        raise BoardSettingsError(f"{shown} can't be read: {err.strerror}") from None
    tokens: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, token = (part.strip() for part in line.partition(":"))
        where = f"{shown} line {number}"
        if not sep or not _TOKEN_NAME_RE.fullmatch(name):
            raise BoardSettingsError(
                f"{where} is not name:token with a name of letters, digits and . _ @ - "
                "(the line is not shown: it may hold a token)"
            )
        if len(token) < MIN_TOKEN_LENGTH or any(c.isspace() for c in token):
            raise BoardSettingsError(
                f"{where}: the token of {name!r} must be at least {MIN_TOKEN_LENGTH} "
                "characters, without spaces"
            )
        if name in tokens:
            raise BoardSettingsError(f"{where}: the name {name!r} is given twice")
        if token in tokens.values():
            raise BoardSettingsError(f"{where}: the token of {name!r} is another name's too")
        tokens[name] = token
    if not tokens:
        raise BoardSettingsError(f"{shown} holds no token: add lines of name:token")
    return tokens


def read_roles_file(path: Path) -> dict[str, Any]:
    """A roles file, checked: ``{"default": role, "tokens": {...}, "users": {...},
    "emails": {...}, "groups": {...}}``, every role one of :data:`ROLE_NAMES` (``default``
    absent: editor)."""
    shown = f"--roles-file {str(path)!r}"
    try:
        tomllib = importlib.import_module("tomllib")  # Python 3.11 and later
    except ImportError:
        raise BoardSettingsError(f"{shown}: reading TOML needs Python 3.11 or later") from None

    try:
        given = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BoardSettingsError(f"{shown} does not exist") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise BoardSettingsError(f"{shown} is not TOML: {err}") from None
    except OSError as err:
        raise BoardSettingsError(f"{shown} can't be read: {err.strerror}") from None
    unknown = sorted(set(given) - {"default", *_ROLE_TABLES})
    if unknown:
        raise BoardSettingsError(
            f"{shown}: {', '.join(map(repr, unknown))} is not allowed: use default = ROLE "
            f"and the tables {', '.join(f'[{name}]' for name in _ROLE_TABLES)}"
        )
    checked: dict[str, Any] = {"default": _role(shown, "default", given.get("default", "editor"))}
    for table in _ROLE_TABLES:
        entries = given.get(table, {})
        if not isinstance(entries, dict):
            raise BoardSettingsError(f"{shown}: {table} must be a table [{table}] of name = ROLE")
        checked[table] = {
            str(name): _role(shown, f"{table}.{name}", role) for name, role in entries.items()
        }
    return checked


def _role(shown: str, key: str, role: object) -> str:
    if role not in ROLE_NAMES:
        raise BoardSettingsError(
            f"{shown}: {key} = {role!r} is not a role: use {', '.join(ROLE_NAMES)}"
        )
    return str(role)


def _proxies(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Addresses or CIDR networks, as networks' text (``10.0.0.1`` -> ``10.0.0.1/32``)."""
    items = value.split(",") if isinstance(value, str) else list(value)
    networks = []
    for item in (str(item).strip() for item in items):
        if not item:
            continue
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise BoardSettingsError(
                f"--trusted-proxies entry {item!r} is not an IP address or a network in "
                "CIDR form (10.0.0.0/8, ::1)"
            ) from None
    return tuple(networks)


def _header_name(flag: str, value: str | None, defaults: type[BoardSettings]) -> str:
    if value is None:
        return str(getattr(defaults, flag[2:].replace("-", "_")))
    if not isinstance(value, str) or not _HEADER_NAME_RE.fullmatch(value):
        raise BoardSettingsError(
            f"{flag} {value!r} is not a header name: use letters, digits and '-'"
        )
    return value


def _flag(flag: str, value: bool | None) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BoardSettingsError(f"{flag} {value!r} is not allowed: use true or false")
    return value


def _state(url: str | None) -> str | None:
    """A PostgreSQL URL libpq takes (checked by :mod:`sumlens.board.state_url`, never shown
    whole), or None for SQLite."""
    if url is None:
        return None
    try:
        parse_state_url(url)
    except StateUrlError as err:
        raise BoardSettingsError(str(err)) from None
    return url


def _retention(days: float | str | None) -> float:
    if days is None:
        return BoardSettings.trash_retention_days
    try:
        value = float(days)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= MAX_RETENTION_DAYS):
        raise BoardSettingsError(
            f"--trash-retention-days {days!r} is not allowed: use days from 0 to "
            f"{MAX_RETENTION_DAYS:g}"
        )
    return value


def _replica(name: str | None) -> str:
    if name is None:
        return ""
    if not isinstance(name, str) or not _REPLICA_RE.fullmatch(name):
        raise BoardSettingsError(
            f"--replica-name {name!r} is not allowed: use up to 200 letters, digits and . _ : @ -"
        )
    return name
