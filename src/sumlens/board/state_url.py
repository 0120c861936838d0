"""The ``--state`` URL of the shared state's PostgreSQL database: read as libpq reads it,
checked once, and never shown, logged or put in an error with its password.

libpq does not read a URL as :func:`urllib.parse.urlsplit` does: the user and password end
at the first ``@`` before any ``/`` (a ``?`` or ``#`` in a password is part of it), a
``host=`` parameter stands for the host (a socket folder when it starts with ``/``), later
parameters win over the parts before ``?``, and a stray ``%`` or space is refused with an
error that quotes the bad part: the password. So this module reads the URL by libpq's rules
(:func:`parse_state_url`), and when psycopg is installed it asks libpq too (its
``conninfo_to_dict``), refusing a URL the two read differently. What it takes is
``postgresql://user:password@host[:port][,host[:port]...]/database[?key=value&...]`` (or
``postgres://``), the host in the netloc or in a ``host=`` parameter; anything else is
refused with a message naming ``--state`` and showing the URL masked.

What counts as a password here: the part between the user's ``:`` and the ``@``, and the
values of ``password=`` and ``sslpassword=``. :func:`state_for_display` masks them in any
text given as a URL, valid or not; for one it cannot read, it masks everything from the
first ``:`` after ``//`` to the last ``@`` (a raw ``@`` or ``/`` in a password makes libpq
take the rest of it for the host). :meth:`StateUrl.scrub` takes every form of the
passwords (as written and percent-decoded) out of any text, such as a driver's error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

SCHEMES = ("postgresql://", "postgres://")
SECRET_KEYS = ("password", "sslpassword")
"""The parameters whose values are secrets."""
MASK = "***"
MAX_PORT = 65535
USAGE = (
    "use postgresql://user:password@host[:port]/database, or a socket folder as "
    "postgresql://user:password@/database?host=/var/run/postgresql (write @ / % and a "
    "space in a password as %40 %2F %25 %20), or leave --state out for SQLite in the "
    "workspace"
)
_HOST_NAME_RE = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9._-]*[A-Za-z0-9_])?")
_IPV6_RE = re.compile(r"[0-9A-Fa-f:.]+")
_KEY_RE = re.compile(r"[a-z_]+")
_PERCENT_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_URL_SECRET_RE = re.compile(
    r"(?<=[?&])((?:ssl)?password=).*?(?=&[A-Za-z_]+=|$)", re.DOTALL | re.IGNORECASE
)
"""A ``password=`` or ``sslpassword=`` parameter's value: up to the next parameter or the end
(so a raw ``&`` in a password does not end it early)."""
_KEYWORD_SECRET_RE = re.compile(
    r"((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S+)", re.DOTALL | re.IGNORECASE
)
"""A password in libpq's ``key=value`` form (``host=db password='my secret'``)."""


class StateUrlError(ValueError):
    """A ``--state`` URL that is not allowed; the message shows it masked and says why."""


@dataclass(frozen=True)
class StateUrl:
    """A ``--state`` URL as libpq reads it: where it points and what in it is secret."""

    hosts: tuple[str, ...]
    """Host names, addresses or socket folders (percent-decoded), one or more."""
    ports: tuple[str, ...]
    """A port for each host, or one for all (``""``: libpq's default, 5432)."""
    database: str
    """The database's name (``""``: libpq's default, the user's name)."""
    secrets: tuple[str, ...] = field(repr=False)
    """Every password of the URL as written and percent-decoded, longest first."""

    def describe(self) -> str:
        """``postgresql host:port/database``: where the state is (no user, no password)."""
        ports = self.ports * len(self.hosts) if len(self.ports) == 1 else self.ports
        where = ",".join(
            f"{_bracketed(host)}:{port}" if port else _bracketed(host)
            for host, port in zip(self.hosts, ports, strict=True)
        )
        return f"postgresql {where}/{self.database}"

    def scrub(self, text: str) -> str:
        """``text`` with each of the URL's passwords, in any form, replaced by ``***``."""
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text


def parse_state_url(url: object) -> StateUrl:
    """``url`` read as libpq reads it, or a :class:`StateUrlError` (naming ``--state``, the
    URL masked, and what is wrong) when sumlens does not take it."""
    if not isinstance(url, str):
        raise StateUrlError(
            f"--state is not allowed as a {type(url).__name__}: it is a URL string; {USAGE}"
        )

    def refuse(why: str) -> StateUrlError:
        return StateUrlError(f"--state {state_for_display(url)!r} is not allowed: {why}; {USAGE}")

    scheme = next((prefix for prefix in SCHEMES if url.startswith(prefix)), None)
    if scheme is None:
        raise refuse("a PostgreSQL URL starts with postgresql:// or postgres://")
    if any(char <= " " or char == "\x7f" for char in url):
        raise refuse("it holds a space or a control character")
    raw = _split(url[len(scheme) :], refuse)
    parsed = _decoded(raw, refuse)
    params = dict(parsed.params)
    host_param = params.get("host")
    hosts = parsed.hosts if host_param is None else tuple(host_param.split(","))
    port_param = params.get("port")
    ports = parsed.ports if port_param is None else tuple(port_param.split(","))
    _check_hosts(hosts, refuse)
    _check_ports(ports, len(hosts), refuse)
    secrets = {raw.password, parsed.password}
    for (key, value), (_, raw_value) in zip(parsed.params, raw.params, strict=True):
        if key in SECRET_KEYS:
            secrets |= {value, raw_value}
    state = StateUrl(
        hosts=hosts,
        ports=ports,
        database=params.get("dbname", parsed.database),
        secrets=tuple(sorted(filter(None, secrets), key=len, reverse=True)),
    )
    seen = {
        "user": params.get("user", parsed.user),
        "password": params.get("password", parsed.password),
        "host": ",".join(hosts),
        "port": ",".join(ports),
        "dbname": state.database,
    }
    disagreement = _libpq_disagrees(url, seen)
    if disagreement:
        raise refuse(disagreement)
    return state


def state_for_display(url: str) -> str:
    """``url`` with its passwords replaced by ``***`` (safe to print and log), whether or not
    it is a URL sumlens takes; any percent-encoding elsewhere is left as written."""
    head, sep, rest = url.partition("://")
    if not sep:
        return _KEYWORD_SECRET_RE.sub(lambda found: found[1] + MASK, url)
    at = rest.rfind("@")
    if at >= 0:
        user, colon, _ = rest[:at].partition(":")
        if colon:
            rest = f"{user}:{MASK}{rest[at:]}"
    return f"{head}://{_URL_SECRET_RE.sub(lambda found: found[1] + MASK, rest)}"


def _bracketed(host: str) -> str:
    """``host``, in ``[]`` when it is an IPv6 address (so that a port after it reads as one)."""
    return f"[{host}]" if ":" in host and not host.startswith("/") else host


@dataclass(frozen=True)
class _Parts:
    """The pieces of a URL after its scheme, as libpq splits them."""

    user: str
    password: str
    hosts: tuple[str, ...]
    ports: tuple[str, ...]
    database: str
    params: tuple[tuple[str, str], ...]


_RefuseType = Callable[[str], StateUrlError]
"""Makes the error refusing the URL being read, saying why."""


def _split(rest: str, refuse: _RefuseType) -> _Parts:
    """``rest`` (the URL after ``scheme://``) cut where libpq cuts it, nothing decoded."""
    user = password = ""
    credentials = re.match(r"[^@/]*@", rest)
    pos = 0
    if credentials is not None:
        user, _, password = rest[: credentials.end() - 1].partition(":")
        pos = credentials.end()
    if "@" in rest[pos:]:
        raise refuse("it holds an '@' besides the one that ends user:password")
    hosts: list[str] = []
    ports: list[str] = []
    while True:
        if rest.startswith("[", pos):
            close = rest.find("]", pos)
            if close < 0:
                raise refuse("an IPv6 address lacks its closing ']'")
            host, pos = rest[pos + 1 : close], close + 1
            if pos < len(rest) and rest[pos] not in ":/?,":
                raise refuse("an IPv6 address in [] is followed by more than a port")
            if not _IPV6_RE.fullmatch(host):
                raise refuse("the address in [] is not an IPv6 address")
        else:
            end = _until(rest, pos, ":/?,")
            host, pos = rest[pos:end], end
        port = ""
        if rest.startswith(":", pos):
            end = _until(rest, pos + 1, "/?,")
            port, pos = rest[pos + 1 : end], end
        hosts.append(host)
        ports.append(port)
        if not rest.startswith(",", pos):
            break
        pos += 1
    database = ""
    if rest.startswith("/", pos):
        database, _, query = rest[pos + 1 :].partition("?")
    elif rest.startswith("?", pos):
        query = rest[pos + 1 :]
    else:
        query = ""
    return _Parts(user, password, tuple(hosts), tuple(ports), database, _params(query, refuse))


def _until(text: str, pos: int, stops: str) -> int:
    """Where in ``text``, from ``pos``, the first of ``stops`` is (its length if none)."""
    while pos < len(text) and text[pos] not in stops:
        pos += 1
    return pos


def _params(query: str, refuse: _RefuseType) -> tuple[tuple[str, str], ...]:
    """The ``key=value`` pairs of ``query`` (a trailing ``&`` allowed), nothing decoded."""
    items = query.split("&") if query else []
    if len(items) > 1 and items[-1] == "":
        items.pop()
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or "=" in value:
            raise refuse("a parameter after '?' is not one key=value")
        pairs.append((key, value))
    return tuple(pairs)


def _decoded(raw: _Parts, refuse: _RefuseType) -> _Parts:
    """``raw`` with each piece percent-decoded as libpq decodes it."""

    def decode(text: str) -> str:
        if _PERCENT_RE.search(text):
            raise refuse("a '%' is not followed by two hex digits (write '%' as %25)")
        data = bytearray()
        pieces = text.split("%")
        data += pieces[0].encode()
        for piece in pieces[1:]:
            byte = int(piece[:2], 16)
            if byte == 0:
                raise refuse("it holds %00, which libpq does not allow")
            data.append(byte)
            data += piece[2:].encode()
        try:
            return data.decode()
        except UnicodeDecodeError:
            raise refuse("its percent-encoded bytes are not UTF-8") from None

    params = tuple((decode(key), decode(value)) for key, value in raw.params)
    for key, _ in params:
        if not _KEY_RE.fullmatch(key):
            raise refuse("a parameter's name is not a libpq connection keyword")
    return _Parts(
        user=decode(raw.user),
        password=decode(raw.password),
        hosts=tuple(decode(host) for host in raw.hosts),
        ports=tuple(decode(port) for port in raw.ports),
        database=decode(raw.database),
        params=params,
    )


def _check_hosts(hosts: tuple[str, ...], refuse: _RefuseType) -> None:
    """Each host a name, an address or a socket folder (an absolute path)."""
    if hosts == ("",):
        raise refuse("it names no host: give one after '@', or a socket folder as ?host=/path")
    for host in hosts:
        if not (host.startswith("/") or _HOST_NAME_RE.fullmatch(host) or _IPV6_RE.fullmatch(host)):
            raise refuse("a host is not a host name, an address or a socket folder (/path)")


def _check_ports(ports: tuple[str, ...], hosts: int, refuse: _RefuseType) -> None:
    """Each port a number from 1 to 65535 (or left out), one for all hosts or one each."""
    if len(ports) not in (1, hosts):
        raise refuse(f"it gives {len(ports)} ports for {hosts} hosts")
    for port in ports:
        if port and not (port.isascii() and port.isdigit() and 1 <= int(port) <= MAX_PORT):
            raise refuse(f"a port is not a number from 1 to {MAX_PORT}")


def _libpq_disagrees(url: str, seen: dict[str, str]) -> str | None:
    """Why libpq (asked through psycopg, when installed) does not take ``url`` as read here
    (``seen``: the connection values this module read); None when it does, or when there is
    no psycopg to ask. libpq's own words are not used: they quote the URL's bad part."""
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        return None
    try:
        read = conninfo_to_dict(url)
    except (psycopg.Error, ValueError):
        return (
            "libpq (PostgreSQL's client library) does not accept it: is each parameter "
            "after '?' one of libpq's connection keywords?"
        )
    if any(str(read.get(key, "")) != value for key, value in seen.items()):
        return "libpq reads its parts differently from sumlens"
    return None
