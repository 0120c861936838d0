"""The dashboard in a Jupyter notebook: :func:`show` and the ``%sumlens`` line magic.

``show(logdir)`` starts the dashboard in the background, exactly as ``sumlens start``
does (:mod:`sumlens.board.server.daemon`: a detached server with its pid file and log in
the workspace), or reuses one already serving the same base directory from the same
workspace, and shows it in an ``<iframe>`` under the cell. The server outlives the
kernel, as ``sumlens start``'s does; stop it with the handle's :meth:`Dashboard.stop` or
``sumlens stop --port N``.

Behind jupyter-server-proxy (JupyterHub, Binder, a remote notebook) the browser cannot
reach ``127.0.0.1:PORT``: the frame goes through the notebook server instead. Of the
proxy's two forms, ``{base}proxy/PORT/`` strips the path down to what follows the port,
while ``{base}proxy/absolute/PORT/`` forwards it whole. The dashboard serves under a path
prefix of its own (``--url-path-prefix``), so it takes the second and is started with
that very path as its prefix: its redirects and cookie paths then name the address the
browser uses, with nothing rewritten by the proxy. A base path the prefix rule refuses
(an e-mail user name's ``@`` in ``/user/a@b.org/``) falls back to the first form, the
dashboard serving at its root (the proxy rewrites its redirects; the page asks for its
data by relative addresses either way). The proxy forwards the browser's ``Host`` header,
which the dashboard's guard accepts only for loopback names and ``--allowed-hosts``: a
hub reached by its own name must be listed there, and the cell says so.

Framing: the dashboard lets only pages of its own origin frame it, unless
``--frame-ancestors`` names others (:mod:`sumlens.board.server.guards`). Behind the proxy
the notebook's page and the dashboard share the notebook server's origin: nothing is
needed. A local notebook is another origin (``localhost:8888`` framing
``127.0.0.1:PORT``), so a dashboard started for one lets this machine's pages frame it
(:data:`LOCAL_FRAME_ANCESTORS`, unless the caller names its own). A running dashboard that
was started without them is still reused; the cell then says to stop it or open the link.

Mistakes (a base directory that does not exist, a port something else holds, a flag the
dashboard does not take) raise :class:`NotebookError`, which IPython shows as one line
rather than a traceback. Needs IPython only to display: ``import sumlens.notebook``
works without it.
"""

from __future__ import annotations

import contextlib
import html
import inspect
import json
import os
import shlex
import socket
import urllib.request
from dataclasses import MISSING, dataclass, fields, replace
from pathlib import Path
from typing import Any

from sumlens.board.server import daemon
from sumlens.board.settings import BoardSettings, BoardSettingsError, normalise_prefix
from sumlens.io.remote import parse_storage_options

__all__ = ["Dashboard", "NotebookError", "load_magic", "show", "sumlens_magic"]

SERVICE_PREFIX_ENV = "JUPYTERHUB_SERVICE_PREFIX"
"""Where JupyterHub (and Binder) put the notebook server's base path, e.g. ``/user/ana/``;
its presence means the browser reaches the kernel's machine through that server only."""
LOCAL_FRAME_ANCESTORS = ("http://localhost:*", "http://127.0.0.1:*")
"""Origins whose pages may frame a dashboard started for a local notebook: this machine's,
on any port (where Jupyter serves the notebook). Not ``http://[::1]:*``: browsers take no
IPv6 address in a ``frame-ancestors`` policy."""
MIN_HEIGHT, MAX_HEIGHT = 100, 10_000
"""The frame's height in pixels."""
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""Our own server is asked directly, never through an ``http_proxy`` from the environment."""
_FLAG_FIELDS = {
    "logdir": "base_dir",
    "replica-name": "replica",
    "storage-option": "storage_options",
    "summary-base-dir": "base_dir",
}
"""Flags of ``sumlens serve`` whose setting has another name."""


class NotebookError(ValueError):
    """The dashboard could not be shown; the message says why, for the notebook's user."""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of a traceback: the message, in one line."""
        return [f"sumlens: error: {self}"]


@dataclass(frozen=True)
class Dashboard:
    """A dashboard shown in a notebook: the background server, the address the frame
    shows, the workspace holding its pid file, whether it was already running, whether
    the frame goes through the notebook server's proxy, and whether the server lets the
    notebook's page frame it (False: a reused server started without the origins)."""

    server: daemon.Server
    address: str
    workspace: Path
    reused: bool
    proxied: bool
    frameable: bool = True

    def stop(self) -> None:
        """Stop the server (as ``sumlens stop --port N --workspace W``)."""
        try:
            daemon.stop(self.workspace, self.server.port)
        except daemon.DaemonError as err:
            raise NotebookError(str(err)) from None

    def __repr__(self) -> str:
        return (
            f"<sumlens dashboard at {self.address} serving {self.server.base_dir} "
            f"(port {self.server.port}, pid {self.server.pid})>"
        )


def show(
    logdir: str | os.PathLike[str],
    port: int | None = None,
    height: int = 800,
    *,
    proxy: bool | str | None = None,
    **settings: Any,
) -> Dashboard:
    """Start (or reuse) a background dashboard for ``logdir`` and show it under the cell.

    ``port``: the server's port (None: a running server for the same base directory and
    workspace, else a free port). ``proxy``: reach it through jupyter-server-proxy (True:
    under ``$JUPYTERHUB_SERVICE_PREFIX``, or ``/``; a str: under that base path; None:
    when ``$JUPYTERHUB_SERVICE_PREFIX`` is set). ``settings``: any other setting of
    ``sumlens start`` by its :class:`~sumlens.board.settings.BoardSettings` name
    (``workspace``, ``reload_interval``, ``allowed_hosts``, ``auth`` ...); without the
    proxy, ``frame_ancestors`` defaults to :data:`LOCAL_FRAME_ANCESTORS`.
    """
    from IPython.display import HTML, display

    _checked_height(height)
    dashboard = _start_or_reuse(logdir, port, proxy, settings)
    display(HTML(_frame(dashboard, height, "allowed_hosts" in settings)))
    return dashboard


def sumlens_magic(line: str) -> None:
    """``%sumlens --logdir DIR [--port N] [--height PX] [--proxy[=BASE]] [flags of sumlens
    serve]``: :func:`show` from a line of flags."""
    show(**_magic_arguments(line))


def load_magic(ipython: Any) -> None:
    """Register the ``%sumlens`` line magic with an IPython shell."""
    ipython.register_magic_function(sumlens_magic, magic_kind="line", magic_name="sumlens")


def _start_or_reuse(
    logdir: str | os.PathLike[str],
    port: int | None,
    proxy: bool | str | None,
    given: dict[str, Any],
) -> Dashboard:
    """The dashboard for these arguments: one already running when it fits, else a new one."""
    _check_setting_names(given)
    base_path = _base_path(proxy)
    if base_path is None:
        given = {"frame_ancestors": LOCAL_FRAME_ANCESTORS, **given}
    if base_path is not None and given.get("url_path_prefix"):
        raise NotebookError(
            f"url_path_prefix={given['url_path_prefix']!r} can't be combined with the proxy: "
            "behind it the dashboard's prefix is the proxy's path"
        )
    try:
        settings = BoardSettings.create(os.fspath(logdir), port=port, **given)
    except BoardSettingsError as err:
        raise NotebookError(str(err)) from None
    workspace = settings.workspace.resolve()
    proxied = base_path is not None
    for server, policy in _running(workspace, str(settings.base_dir)):
        address = _address(server.url, server.port, base_path)
        if (port is None or server.port == port) and address is not None:
            frameable = proxied or set(settings.frame_ancestors) <= policy
            return Dashboard(
                server, address, workspace, reused=True, proxied=proxied, frameable=frameable
            )
    settings = replace(settings, port=_free_port(settings.host) if port is None else port)
    frame = None
    if base_path is not None:
        frame, prefix = _proxy_paths(base_path, settings.port)
        settings = replace(settings, url_path_prefix=prefix)
    try:
        server = daemon.start(settings).server
    except daemon.DaemonError as err:
        raise NotebookError(str(err)) from None
    return Dashboard(server, frame or server.url, workspace, reused=False, proxied=proxied)


def _check_setting_names(given: dict[str, Any]) -> None:
    """Refuse a keyword that is not a setting of the dashboard, naming those that are."""
    allowed = set(inspect.signature(BoardSettings.create).parameters) - {"cls", "base_dir", "port"}
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise NotebookError(
            f"{', '.join(unknown)}: not a setting of the dashboard; the settings are "
            f"logdir, port, height, proxy, {', '.join(sorted(allowed))}"
        )


def _checked_height(height: int) -> None:
    if isinstance(height, bool) or not isinstance(height, int):
        raise NotebookError(f"height={height!r} is not allowed: use whole pixels")
    if not MIN_HEIGHT <= height <= MAX_HEIGHT:
        raise NotebookError(
            f"height={height!r} is not allowed: use pixels from {MIN_HEIGHT} to {MAX_HEIGHT}"
        )


def _base_path(proxy: bool | str | None) -> str | None:
    """The notebook server's base path when the frame goes through its proxy, else None."""
    service = os.environ.get(SERVICE_PREFIX_ENV)
    if proxy is None:
        proxy = service is not None
    if proxy is False:
        return None
    path = (service or "/") if proxy is True else proxy
    if not isinstance(path, str) or not path.startswith("/"):
        raise NotebookError(
            f"proxy={proxy!r} is not allowed: use True, False, None or the notebook server's "
            "base path, like '/user/ana/'"
        )
    return path if path.endswith("/") else path + "/"


def _proxy_paths(base_path: str, port: int) -> tuple[str, str]:
    """The frame's address through the proxy and the dashboard's prefix behind it
    (module docstring: the whole path forwarded, or the root for a path it can't serve)."""
    absolute = f"{base_path}proxy/absolute/{port}"
    try:
        return absolute + "/", normalise_prefix(absolute)
    except BoardSettingsError:
        return f"{base_path}proxy/{port}/", ""


def _address(url: str, port: int, base_path: str | None) -> str | None:
    """The frame's address of a running server at ``url``, or None when it does not fit
    (its prefix is not the one this way of reaching it needs)."""
    if base_path is None:
        return url
    frame, prefix = _proxy_paths(base_path, port)
    return frame if url.endswith(f":{port}{prefix}/") else None


def _running(workspace: Path, base_dir: str) -> list[tuple[daemon.Server, set[str]]]:
    """The servers of ``workspace`` serving ``base_dir`` that answer with their own pid
    (a pid file of a server gone, or of another, names nobody here: ``sumlens start`` and
    ``stop`` clean those up), each with the origins besides its own that may frame it."""
    found = []
    for path in sorted(workspace.glob("sumlens-*.json")):
        try:
            server = daemon.Server(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            continue
        policy = _framing_policy(server) if server.base_dir == base_dir else None
        if policy is not None:
            found.append((server, policy))
    return found


def _framing_policy(server: daemon.Server) -> set[str] | None:
    """The origins the ``frame-ancestors`` policy of ``server``'s answers lists besides
    its own; None when it does not answer its health route as itself (its pid)."""
    try:
        health = server.url.rstrip("/") + daemon.HEALTH_PATH
        with _NO_PROXY.open(health, timeout=1.0) as response:
            body = json.loads(response.read())
            policy = response.headers.get("Content-Security-Policy", "")
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict) or body.get("pid") != server.pid:
        return None
    _, _, sources = policy.partition("frame-ancestors")
    return set(sources.partition(";")[0].split()) - {"'self'"}


def _free_port(host: str) -> int:
    """A port nothing listens on now at ``host`` (the system's choice)."""
    try:
        with socket.socket() as probe:
            probe.bind((host, 0))
            return int(probe.getsockname()[1])
    except OSError as err:
        raise NotebookError(f"host={host!r}: no port to listen on there: {err}") from None


def _frame(dashboard: Dashboard, height: int, hosts_given: bool) -> str:
    """The cell's HTML: the frame, then a line saying what it shows and how to stop it."""
    server = dashboard.server
    address = html.escape(dashboard.address, quote=True)
    how = "already running" if dashboard.reused else "started"
    stop = f"sumlens stop --port {server.port} --workspace {shlex.quote(str(dashboard.workspace))}"
    lines = [
        f'<iframe src="{address}" width="100%" height="{height}" frameborder="0" '
        'title="sumlens dashboard"></iframe>',
        f"<div>sumlens dashboard ({how}, pid {server.pid}) serving "
        f"{html.escape(server.base_dir)}: "
        f'<a href="{address}" target="_blank" rel="noopener">open in a new tab</a>; '
        f"stop it with <code>{html.escape(stop)}</code></div>",
    ]
    if not dashboard.frameable:
        lines.append(
            "<div>This dashboard was started without letting the notebook's page frame it "
            "(<code>--frame-ancestors</code>), so the frame can't show it: stop it with the "
            "command above and run the cell again, or open it in a new tab.</div>"
        )
    if dashboard.proxied and not hosts_given:
        lines.append(
            "<div>Through the notebook server's proxy: if the frame answers "
            "<q>Host header not allowed</q>, name the host of this notebook's address "
            "with <code>--allowed-hosts</code> (or <code>allowed_hosts=</code>).</div>"
        )
    return "\n".join(lines)


def _magic_arguments(line: str) -> dict[str, Any]:
    """The keyword arguments of :func:`show` that a ``%sumlens`` line gives.

    ``--logdir``, ``--port``, ``--height`` and ``--proxy`` (or ``--proxy=BASE``) are
    :func:`show`'s own; any other flag is a flag of ``sumlens serve``, named as there:
    ``--name VALUE`` or ``--name=VALUE`` for the setting ``name`` (dashes as
    underscores), ``--name`` alone for a setting that is off by default, ``--no-name``
    for one that is on, ``--storage-option KEY=VALUE`` repeatable. Values are handed to
    :meth:`BoardSettings.create` as the command line's are, which checks them.
    """
    try:
        tokens = shlex.split(line)
    except ValueError as err:
        raise NotebookError(f"%sumlens {line!r}: {err}") from None
    defaults = {f.name: f.default for f in fields(BoardSettings) if f.default is not MISSING}
    given: dict[str, Any] = {}
    storage: list[str] = []
    while tokens:
        token = tokens.pop(0)
        if not token.startswith("--") or token == "--":
            raise NotebookError(f"%sumlens: {token!r} is not a flag (flags look like --logdir)")
        flag, has_value, value = token[2:].partition("=")
        name = _FLAG_FIELDS.get(flag, flag.replace("-", "_"))
        if flag == "proxy":
            given["proxy"] = value if has_value else True
            continue
        switched = name[3:] if name.startswith("no_") else None
        if switched is not None and defaults.get(switched) is True and not has_value:
            given[switched] = False
            continue
        if defaults.get(name) is False and not has_value:
            given[name] = True
            continue
        if name not in defaults and name not in ("base_dir", "height"):
            raise NotebookError(
                f"%sumlens: --{flag} is not a flag of the dashboard; see `sumlens serve --help`"
            )
        if not has_value:
            if not tokens or tokens[0].startswith("--"):
                raise NotebookError(f"%sumlens: --{flag} needs a value")
            value = tokens.pop(0)
        if name == "storage_options":
            storage.append(value)
        else:
            given[name] = value
    if storage:
        try:
            given["storage_options"] = parse_storage_options(storage)
        except ValueError as err:
            raise NotebookError(str(err)) from None
    if "base_dir" not in given:
        raise NotebookError("%sumlens needs --logdir DIR (the folder whose runs are shown)")
    given["logdir"] = given.pop("base_dir")
    for number in ("port", "height"):
        if number in given:
            given[number] = _whole_number(number, given[number])
    return given


def _whole_number(flag: str, text: str) -> int:
    with contextlib.suppress(ValueError):
        return int(text)
    raise NotebookError(f"%sumlens: --{flag} {text!r} is not a whole number")
