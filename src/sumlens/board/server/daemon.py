"""The dashboard as a background server: what ``sumlens start`` and ``sumlens stop`` do.

``start`` runs ``python -m sumlens serve --port=N --settings-on-stdin`` as a detached
child (a session of its own, so closing the terminal or a Ctrl+C there does not reach it;
stdout and stderr to ``<workspace>/sumlens-<port>.log``) and writes it the settings it
checked, as JSON, on its stdin, then closes it: the child never parses them again.
Everything that can be checked before the child exists is checked in the caller (the
settings, a port already taken, our own server already there), so mistakes fail at once
with one line. The caller then waits, with a bound, until ``GET <prefix>/api/v1/health``
answers with the child's own pid: another server that happens to answer on that port is
not taken for ours, and a child that dies first (a port taken meanwhile, a crash) is
reported with the end of its log. Only then is ``<workspace>/sumlens-<port>.json``
written (atomically), so a pid file always names a server that answered.

A pid file is stale when its process is gone or is no longer ``sumlens serve`` on that
port (pid reuse); whoever finds one removes it and says so. ``stop`` sends SIGTERM (the
server shuts down cleanly, a busy one too: :mod:`sumlens.board.server.serve`), waits,
and sends SIGKILL to the server's process group only when it has not ended in time.
Either way it returns once the process has ended (gone, or a zombie its parent has not
reaped yet), not merely once it stopped looking like the server: a process on its way
out has no command line left but may still hold the port.

POSIX only (sessions, signals, ``/proc`` or ``ps``); ``sumlens serve`` in the foreground
works everywhere and uses only the port check and the URL from here. Imports nothing
heavy (no web framework, no torch): ``start`` and ``stop`` answer without loading the
server.
"""

from __future__ import annotations

import contextlib
import errno
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from sumlens.board.settings import SETTINGS_ON_STDIN, BoardSettings

__all__ = [
    "DaemonError",
    "Outcome",
    "Server",
    "check_port_free",
    "exposure_warning",
    "health",
    "log_path",
    "record_path",
    "start",
    "stop",
]

START_WAIT = 60.0
"""Seconds ``start`` waits for the child to answer (importing the server takes a few)."""
STOP_WAIT = 10.0
"""Seconds ``stop`` waits after SIGTERM before it sends SIGKILL."""
LOG_TAIL_LINES = 20
"""Lines of the child's log shown when it dies or does not answer."""
HEALTH_PATH = "/api/v1/health"
_RECORD_NAME = re.compile(r"sumlens-(\d+)\.json")
_POLL = 0.1
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""Requests to our own server never go through an ``http_proxy`` from the environment."""


class DaemonError(Exception):
    """Starting or stopping failed; the message says what, for the user."""


@dataclass(frozen=True)
class Server:
    """A background server as its pid file records it."""

    pid: int
    port: int
    host: str
    base_dir: str
    url: str
    log: str

    @property
    def record(self) -> Path:
        """The pid file (in the workspace, beside the log)."""
        return record_path(Path(self.log).parent, self.port)


@dataclass(frozen=True)
class Outcome:
    """What ``start``/``stop`` did: the server, pid files found stale (and removed), and
    whether ``stop`` had to use SIGKILL."""

    server: Server
    notes: tuple[str, ...] = ()
    killed: bool = False


def record_path(workspace: Path, port: int) -> Path:
    """The pid file of the server on ``port``."""
    return workspace / f"sumlens-{port}.json"


def log_path(workspace: Path, port: int) -> Path:
    """The log (the child's stdout and stderr) of the server on ``port``."""
    return workspace / f"sumlens-{port}.log"


def exposure_warning(settings: BoardSettings) -> str | None:
    """What binding a non-local address means, or None for a local one."""
    if settings.binds_locally:
        return None
    listed = ", ".join(settings.allowed_hosts) or "none yet"
    return (
        f"--host {settings.host} makes the dashboard reachable from the network; "
        f"{_who_may(settings)}; requests are refused unless their Host header is this "
        f"address or a name listed in --allowed-hosts (listed: {listed})"
    )


def _who_may(settings: BoardSettings) -> str:
    """Who may read and write, by the auth mode (for the exposure warning)."""
    writes = "no one may write (--read-only)" if settings.read_only else ""
    if settings.auth == "token":
        who = f"--auth token: only holders of a token of {settings.token_file} may read"
    elif settings.auth == "proxy":
        proxies = ", ".join(settings.trusted_proxies)
        who = f"--auth proxy: only users the proxy at {proxies} names may read"
    elif settings.allow_anonymous_writes and not settings.read_only:
        who = (
            f"--auth none: anyone who can reach port {settings.port} can read the runs "
            f"under {settings.base_dir} and, with --allow-anonymous-writes, change notes, "
            "colours, saved views and hide or archive runs"
        )
    else:
        who = (
            f"--auth none: anyone who can reach port {settings.port} can read the runs "
            f"under {settings.base_dir}; writes are refused (add --auth token or --auth "
            "proxy, or --allow-anonymous-writes)"
        )
    return f"{who}; {writes}" if writes else who


def health(settings: BoardSettings, timeout: float = 1.0) -> dict[str, Any] | None:
    """The health answer of a sumlens server at these settings' address, or None."""
    try:
        with _NO_PROXY.open(settings.url(HEALTH_PATH), timeout=timeout) as response:
            body = json.loads(response.read())
    except (OSError, ValueError, http.client.HTTPException):
        return None
    return body if isinstance(body, dict) and body.get("status") == "ok" else None


def check_port_free(settings: BoardSettings) -> None:
    """Raise :class:`DaemonError` unless the server could listen on its host and port now.

    Binds every address the host resolves to, as asyncio's server does, with
    ``SO_REUSEADDR`` as uvicorn sets it (so connections still closing do not count).
    """
    host, port = settings.host, settings.port
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as err:
        raise DaemonError(f"--host {host!r} cannot be resolved: {err.strerror}") from None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(address)
            except OSError as err:
                if err.errno == errno.EADDRINUSE:
                    raise DaemonError(_in_use(settings)) from None
                raise DaemonError(
                    f"--host {host!r}: cannot listen on {address[0]} port {port}: {err.strerror}"
                ) from None


def start(settings: BoardSettings, *, wait: float = START_WAIT) -> Outcome:
    """Start a background server for ``settings``; return once it answers.

    Raises :class:`DaemonError` when our server already runs on the port, the port is
    taken, or the child dies or stays silent for ``wait`` seconds (then it is ended).
    """
    workspace = settings.workspace.resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    live, notes = _scan(workspace)
    for server in live:
        if server.port == settings.port:
            raise DaemonError(
                f"a sumlens dashboard already runs on port {server.port} (pid {server.pid}, "
                f"serving {server.base_dir} at {server.url}): stop it with "
                f"`sumlens stop --port {server.port}` or choose another --port"
            )
    check_port_free(settings)
    log = log_path(workspace, settings.port)
    handed = replace(settings, workspace=workspace).to_json().encode()
    with open(log, "wb") as output:
        child = subprocess.Popen(
            _serve_command(settings),
            stdin=subprocess.PIPE,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _hand_over(child, handed)
        _wait_until_answering(child, settings, log, wait)
    except BaseException:
        _end_child(child)
        raise
    server = Server(
        pid=child.pid,
        port=settings.port,
        host=settings.host,
        base_dir=str(settings.base_dir),
        url=settings.url(),
        log=str(log),
    )
    _write_record(server)
    return Outcome(server, notes)


def stop(workspace: Path, port: int | None = None, *, wait: float = STOP_WAIT) -> Outcome:
    """Stop the server on ``port`` (or the only one running) and remove its pid file.

    Raises :class:`DaemonError` when none runs there (stale pid files are removed and
    named in the message) or, without ``port``, when several run.
    """
    workspace = workspace.expanduser().resolve()
    live, notes = _scan(workspace)
    stale = "".join(f"; {note}" for note in notes)
    if port is not None:
        chosen = [server for server in live if server.port == port]
        if not chosen:
            others = f" (running on: {_ports(live)})" if live else ""
            raise DaemonError(f"no sumlens dashboard is running on port {port}{others}{stale}")
        server = chosen[0]
    elif not live:
        raise DaemonError(f"no sumlens dashboard is running (workspace {workspace}){stale}")
    elif len(live) > 1:
        raise DaemonError(
            f"{len(live)} sumlens dashboards are running, on ports {_ports(live)}: "
            "say which with --port"
        )
    else:
        server = live[0]
    killed = _terminate(server, wait)
    server.record.unlink(missing_ok=True)
    return Outcome(server, notes, killed)


def _serve_command(settings: BoardSettings) -> list[str]:
    """The child's command line: ``sumlens serve`` on the port, reading the rest of the
    checked settings from stdin (the port stays in argv: ``ps`` and :func:`_is_server`
    tell the server by it)."""
    return [
        sys.executable,
        "-m",
        "sumlens",
        "serve",
        f"--port={settings.port}",
        SETTINGS_ON_STDIN,
    ]


def _hand_over(child: subprocess.Popen[bytes], settings: bytes) -> None:
    """Write the settings to the child's stdin and close it (the child then reads EOF
    there, as from ``/dev/null``); a child that died first is reported by the wait after."""
    assert child.stdin is not None
    with contextlib.suppress(BrokenPipeError), child.stdin:
        child.stdin.write(settings)


def _wait_until_answering(
    child: subprocess.Popen[bytes], settings: BoardSettings, log: Path, wait: float
) -> None:
    deadline = time.monotonic() + wait
    while True:
        answer = health(settings)
        if answer is not None and answer.get("pid") == child.pid:
            return
        status = child.poll()
        if status is not None:
            check_port_free(settings)  # a port taken meanwhile: say that, not the log
            raise DaemonError(
                f"the server exited with status {status} before answering; {_log_tail(log)}"
            )
        if time.monotonic() > deadline:
            raise DaemonError(
                f"the server did not answer {settings.url(HEALTH_PATH)} within "
                f"{wait:g} s, so it was stopped; {_log_tail(log)}"
            )
        time.sleep(_POLL)


def _in_use(settings: BoardSettings) -> str:
    """Why the port can't be used, naming another sumlens dashboard when one answers."""
    other = health(settings)
    by = (
        f" by another sumlens dashboard (pid {other.get('pid')}, serving {other.get('base_dir')})"
        if other is not None
        else ""
    )
    return (
        f"--port {settings.port}: the port is already in use on {settings.host}{by}; "
        "choose another port"
    )


def _log_tail(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:]
    except OSError as err:
        return f"its log {log} can't be read: {err.strerror}"
    if not lines:
        return f"its log {log} is empty"
    shown = "\n".join(f"    {line}" for line in lines)
    return f"the last lines of its log {log}:\n{shown}"


def _end_child(child: subprocess.Popen[bytes]) -> None:
    """End a child that did not come up (SIGTERM, then SIGKILL to its group)."""
    if child.poll() is not None:
        return
    child.terminate()
    try:
        child.wait(STOP_WAIT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def _write_record(server: Server) -> None:
    """Write the pid file atomically: a reader sees the old file or the whole new one."""
    fd, temp = tempfile.mkstemp(dir=server.record.parent, prefix=".sumlens-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(asdict(server), out, indent=1)
        os.replace(temp, server.record)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _records(workspace: Path) -> list[tuple[int, Path]]:
    """The pid files in ``workspace``, by port."""
    try:
        names = os.listdir(workspace)
    except FileNotFoundError:
        return []
    found = [(int(m[1]), workspace / n) for n in names if (m := _RECORD_NAME.fullmatch(n))]
    return sorted(found)


def _load(path: Path) -> Server:
    """The server a pid file names; ValueError or TypeError when it is not one of ours."""
    server = Server(**json.loads(path.read_text()))
    if not all(isinstance(value, int) for value in (server.pid, server.port)):
        raise ValueError("pid and port are not numbers")
    return server


def _scan(workspace: Path) -> tuple[list[Server], tuple[str, ...]]:
    """The servers that run (by their pid files), removing the stale files; notes on those."""
    live: list[Server] = []
    notes = []
    for port, path in _records(workspace):
        try:
            server = _load(path)
        except FileNotFoundError:  # stopped meanwhile
            continue
        except (OSError, ValueError, TypeError) as err:
            path.unlink(missing_ok=True)
            notes.append(f"removed the unreadable pid file {path} ({err})")
            continue
        if server.port == port and _is_server(server):
            live.append(server)
            continue
        path.unlink(missing_ok=True)
        why = "is gone" if _gone(server.pid) else f"is no longer sumlens serve on port {port}"
        notes.append(f"removed the stale pid file {path} (process {server.pid} {why})")
    return live, tuple(notes)


def _ports(servers: list[Server]) -> str:
    return ", ".join(str(server.port) for server in servers)


def _gone(pid: int) -> bool:
    """Whether no process ``pid`` exists (a child of ours that ended is reaped first)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # someone else's process: not our server
        return False
    return False


def _is_server(server: Server) -> bool:
    """Whether ``server.pid`` is still ``sumlens serve`` on its port (not a reused pid)."""
    if _gone(server.pid):
        return False
    argv = _arguments(server.pid)
    return {"sumlens", "serve", f"--port={server.port}"} <= set(argv)


def _arguments(pid: int) -> list[str]:
    """The command line of process ``pid`` (empty when it is gone or a zombie)."""
    proc = Path(f"/proc/{pid}/cmdline")
    if Path("/proc/self/cmdline").exists():
        try:
            return proc.read_bytes().decode(errors="replace").split("\0")[:-1]
        except OSError:
            return []
    answer = subprocess.run(
        ["ps", "-o", "args=", "-p", str(pid)], capture_output=True, text=True, check=False
    )
    return answer.stdout.split()


def _terminate(server: Server, wait: float) -> bool:
    """SIGTERM, then SIGKILL to its process group after ``wait`` s; True if killed."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(server.pid, signal.SIGTERM)
    if _wait_ended(server, wait):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGKILL)
    if not _wait_ended(server, STOP_WAIT):
        raise DaemonError(f"process {server.pid} (port {server.port}) did not end after SIGKILL")
    return True


def _wait_ended(server: Server, wait: float) -> bool:
    """Wait at most ``wait`` s until the server signalled has ended; whether it has."""
    deadline = time.monotonic() + wait
    while _is_server(server) or _exiting(server.pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(_POLL / 2)
    return True


def _exiting(pid: int) -> bool:
    """Whether ``pid`` is a process on its way out: its memory, and so its command line,
    already released, but not yet a zombie (it may still hold its files and sockets).
    False without ``/proc``, where ``ps`` shows a command line until the end."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        argv = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    state = stat.rsplit(")", 1)[-1].split()[0]  # after the name, which may hold ")"
    return not argv and state not in ("Z", "X")
