"""``sumlens start``/``stop``/``serve``: real processes and a real server on free loopback ports.

Every test works in its own base directory and workspace (and HOME), so nothing touches
``~/.sumlens``; the ``board`` fixture kills whatever server a test left running, even when
the test failed. Waits are bounded polls on conditions, never sleeps or time budgets.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers.board import free_port, get_json, wait_until

from sumlens.board.server import daemon
from sumlens.board.settings import SETTINGS_ON_STDIN, BoardSettings

pytestmark = pytest.mark.skipif(os.name != "posix", reason="start/stop are POSIX only")


def _two_ports() -> tuple[int, int]:
    """Two different free ports (both held while chosen)."""
    with socket.socket() as first, socket.socket() as second:
        first.bind(("127.0.0.1", 0))
        second.bind(("127.0.0.1", 0))
        return first.getsockname()[1], second.getsockname()[1]


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is neither a zombie nor dead (not yet reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


@dataclass
class Board:
    """A base directory, a workspace and a HOME of one test; runs ``sumlens`` in them."""

    root: Path
    base: Path
    workspace: Path
    env: dict[str, str]
    workspaces: set[Path] = field(default_factory=set)

    def run(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sumlens", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
            **kwargs,
        )

    def start(
        self, port: int, *extra: str, workspace: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``sumlens start`` over ``base`` on ``port`` (``--summary-base-dir`` unless given)."""
        workspace = workspace or self.workspace
        self.workspaces.add(workspace)
        where = (
            () if {"--logdir", "--summary-base-dir"} & set(extra) else ("--logdir", str(self.base))
        )
        return self.run("start", *where, f"--port={port}", f"--workspace={workspace}", *extra)

    def stop(self, *extra: str) -> subprocess.CompletedProcess[str]:
        return self.run("stop", f"--workspace={self.workspace}", *extra)

    def record(self, port: int) -> dict[str, Any]:
        return json.loads(daemon.record_path(self.workspace, port).read_text())

    def kill_all(self) -> None:
        """SIGKILL every server a pid file of this test names (it is still ``serve``)."""
        for workspace in self.workspaces:
            for path in workspace.glob("sumlens-*.json"):
                pid = json.loads(path.read_text())["pid"]
                argv = Path(f"/proc/{pid}/cmdline").read_bytes() if _alive(pid) else b""
                if b"serve" in argv.split(b"\0"):
                    os.killpg(pid, signal.SIGKILL)


@pytest.fixture
def board(tmp_path: Path) -> Iterator[Board]:
    base = tmp_path / "runs"
    base.mkdir()
    (tmp_path / "home").mkdir()
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    env.pop("SUMLENS_LOG_LEVEL", None)
    board = Board(tmp_path, base, tmp_path / "ws", env)
    try:
        yield board
    finally:
        board.kill_all()


def _one_line_error(out: subprocess.CompletedProcess[str], command: str, *words: str) -> str:
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(f"sumlens {command}: error: "), lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def test_start_answers_and_stop_stops(board: Board) -> None:
    port = free_port()
    out = board.start(port)
    assert out.returncode == 0, out.stderr
    assert f"http://127.0.0.1:{port}/" in out.stdout
    record = board.record(port)
    assert record["port"] == port and record["host"] == "127.0.0.1"
    assert record["base_dir"] == str(board.base.resolve())
    assert record["log"] == str(daemon.log_path(board.workspace.resolve(), port))
    health = get_json(f"http://127.0.0.1:{port}/api/v1/health")
    assert health is not None and health["pid"] == record["pid"] and health["port"] == port
    assert health["base_dir"] == str(board.base.resolve())

    out = board.stop("--port", str(port))
    assert out.returncode == 0, out.stderr
    assert f"stopped the sumlens dashboard on port {port} (pid {record['pid']})" in out.stdout
    assert not daemon.record_path(board.workspace, port).exists()
    wait_until(lambda: not _alive(record["pid"]))
    assert get_json(f"http://127.0.0.1:{port}/api/v1/health") is None


def test_start_hands_its_checked_settings_to_the_server(board: Board) -> None:
    """The child gets the settings as ``start`` checked them, on its stdin: its command
    line holds only the port (which names it), and every setting reaches the server."""
    port = free_port()
    out = board.start(
        port,
        "--reload-interval=0.7",
        "--allowed-hosts=box.lan",
        "--samples-per-plugin=images=20",
        "--no-watch",
    )
    assert out.returncode == 0, out.stderr
    pid = board.record(port)["pid"]
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    assert argv == [sys.executable, "-m", "sumlens", "serve", f"--port={port}", SETTINGS_ON_STDIN]
    runs = get_json(f"http://127.0.0.1:{port}/api/v1/runs")
    assert runs is not None and runs["reload_interval"] == 0.7
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/api/v1/health", headers={"Host": "box.lan"})
        response = connection.getresponse()
        assert response.status == 200
        health = json.loads(response.read())
        assert not health["watching"] and "--no-watch" in health["polling_reason"]
    finally:
        connection.close()


def _serve_handed(board: Board, settings: str, *args: str) -> subprocess.CompletedProcess[str]:
    return board.run("serve", SETTINGS_ON_STDIN, *args, input=settings)


def test_serve_takes_handed_settings_alone(board: Board) -> None:
    """``--settings-on-stdin`` (what ``start`` runs) takes no other setting than the same
    port; settings that are not BoardSettings' JSON are refused in one line."""
    port = free_port()
    handed = BoardSettings.create(board.base, port=port, workspace=board.workspace).to_json()
    out = _serve_handed(board, handed, f"--port={port}", f"--logdir={board.base}")
    assert out.returncode == 2 and "takes no other setting than --port" in out.stderr
    out = _serve_handed(board, handed, f"--port={port + 1}")
    assert out.returncode == 2 and f"--port '{port + 1}' is not the port" in out.stderr
    out = _serve_handed(board, '{"port": 1}', f"--port={port}")
    _one_line_error(out, "serve", "not dashboard settings")
    out = board.run("serve", f"--port={port}")
    _one_line_error(out, "serve", "(or --logdir, or $SUMLENS_LOGDIR) is required")


def test_second_start_on_the_same_port_is_refused(board: Board) -> None:
    port = free_port()
    assert board.start(port).returncode == 0
    pid = board.record(port)["pid"]
    line = _one_line_error(board.start(port), "start", f"already runs on port {port}")
    assert f"pid {pid}" in line and f"sumlens stop --port {port}" in line
    # from another workspace, our pid file is not seen: the server answering is named
    other = board.start(port, workspace=board.root / "ws2")
    _one_line_error(other, "start", f"--port {port}", "in use", f"sumlens dashboard (pid {pid}")
    assert board.record(port)["pid"] == pid
    assert get_json(f"http://127.0.0.1:{port}/api/v1/health")["pid"] == pid


def test_a_port_taken_by_another_socket_is_refused(board: Board) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        _one_line_error(board.start(port), "start", f"--port {port}", "already in use")
    assert not daemon.record_path(board.workspace, port).exists()


def test_a_child_that_cannot_bind_is_reported_as_a_taken_port(
    board: Board, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The port is taken between the check and the child's bind: the child's death says so."""
    real_check = daemon.check_port_free
    calls = []

    def check_later(settings: BoardSettings) -> None:
        calls.append(settings.port)
        if len(calls) > 1:
            real_check(settings)

    monkeypatch.setattr(daemon, "check_port_free", check_later)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = BoardSettings.create(board.base, port=port, workspace=board.workspace)
        with pytest.raises(daemon.DaemonError, match=rf"--port {port}: the port is already in use"):
            daemon.start(settings)
    assert len(calls) == 2
    assert not daemon.record_path(board.workspace, port).exists()


def test_a_child_that_dies_shows_the_end_of_its_log(
    board: Board, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUMLENS_LOG_LEVEL", "NO-SUCH-LEVEL")  # the child fails importing sumlens
    settings = BoardSettings.create(board.base, port=free_port(), workspace=board.workspace)
    with pytest.raises(daemon.DaemonError) as raised:
        daemon.start(settings)
    message = str(raised.value)
    assert message.startswith("the server exited with status 1 before answering")
    assert "the last lines of its log" in message and "NO-SUCH-LEVEL" in message
    assert not daemon.record_path(board.workspace, settings.port).exists()


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_base_directory_that_is_not_one_is_refused(board: Board, kind: str) -> None:
    path = board.root / kind
    if kind == "file":
        path.write_text("not a directory")
    what = "does not exist" if kind == "missing" else "is not a directory"
    out = board.start(free_port(), "--summary-base-dir", str(path))
    _one_line_error(out, "start", "--summary-base-dir", repr(str(path)), what)
    assert not list(board.workspace.glob("sumlens-*.json"))


@pytest.mark.parametrize(
    ("option", "value", "allowed"),
    [
        ("--port", "abc", "65535"),
        ("--port", "70000", "65535"),
        ("--port", "0", "1 to 65535"),
        ("--reload-interval", "soon", "0.05 to 86400"),
        ("--reload-interval", "0", "0.05 to 86400"),
        ("--reload-interval", "nan", "0.05 to 86400"),
        ("--url-path-prefix", "/a b", "path segments"),
        ("--url-path-prefix", "/../up", "path segments"),
    ],
)
def test_bad_values_are_refused_in_one_line(
    board: Board, option: str, value: str, allowed: str
) -> None:
    port = free_port()
    args = [f"{option}={value}"] + ([] if option == "--port" else [f"--port={port}"])
    out = board.run("start", "--logdir", str(board.base), f"--workspace={board.workspace}", *args)
    _one_line_error(out, "start", option, value, allowed)
    assert not list(board.workspace.glob("sumlens-*"))


def test_stop_with_a_bad_port_is_refused(board: Board) -> None:
    _one_line_error(board.stop("--port", "eighty"), "stop", "--port 'eighty'", "1 to 65535")


def test_stop_with_nothing_running(board: Board) -> None:
    _one_line_error(board.stop(), "stop", "no sumlens dashboard is running")
    _one_line_error(board.stop("--port", "8080"), "stop", "running on port 8080")


def _write_record(board: Board, port: int, pid: int) -> Path:
    """A pid file, as ``start`` writes it, for process ``pid`` on ``port``."""
    board.workspace.mkdir(exist_ok=True)
    path = daemon.record_path(board.workspace, port)
    log = daemon.log_path(board.workspace, port)
    record = {"pid": pid, "port": port, "host": "127.0.0.1", "base_dir": str(board.base)}
    path.write_text(json.dumps({**record, "url": "http://127.0.0.1/", "log": str(log)}))
    return path


def _finished_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stop_removes_a_stale_pid_file_and_says_so(board: Board) -> None:
    gone, port = _finished_pid(), free_port()
    path = _write_record(board, port, gone)
    line = _one_line_error(board.stop(), "stop", "no sumlens dashboard is running")
    assert f"removed the stale pid file {path} (process {gone} is gone)" in line
    assert not path.exists()
    _write_record(board, port, gone)
    _one_line_error(board.stop("--port", str(port)), "stop", f"port {port}", "stale pid file")
    assert not path.exists()


def test_a_reused_pid_is_not_stopped(board: Board) -> None:
    """A pid file whose pid now belongs to another process: that process is left alone."""
    port = free_port()
    path = _write_record(board, port, os.getpid())
    line = _one_line_error(board.stop("--port", str(port)), "stop", "stale pid file")
    assert f"(process {os.getpid()} is no longer sumlens serve on port {port})" in line
    assert not path.exists()


def test_start_over_a_stale_pid_file(board: Board) -> None:
    port = free_port()
    path = _write_record(board, port, _finished_pid())
    out = board.start(port)
    assert out.returncode == 0, out.stderr
    assert f"sumlens start: note: removed the stale pid file {path}" in out.stderr
    assert board.record(port)["pid"] == get_json(f"http://127.0.0.1:{port}/api/v1/health")["pid"]


def test_stop_needs_a_port_when_several_run(board: Board) -> None:
    first, second = sorted(_two_ports())
    assert board.start(first).returncode == 0
    assert board.start(second).returncode == 0
    _one_line_error(board.stop(), "stop", f"on ports {first}, {second}", "--port")
    assert board.stop("--port", str(second)).returncode == 0
    out = board.stop()  # the only one left
    assert out.returncode == 0 and f"on port {first}" in out.stdout
    assert not list(board.workspace.glob("sumlens-*.json"))


def test_stop_kills_a_server_that_ignores_sigterm(board: Board) -> None:
    """``stop`` returns once the process has ended, not once its command line is gone: a
    process whose exit takes a while (freeing 128 MB) showed no command line but was not
    yet a zombie, and ``stop`` returned while it still ran (still holding its port)."""
    for round in range(5):  # each exit is a fresh chance for the race
        port = free_port()
        stubborn = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "held = bytearray(128 << 20); print('ready', flush=True); time.sleep(600)",
                "sumlens",
                "serve",
                f"--port={port}",
            ],
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            assert stubborn.stdout is not None and stubborn.stdout.readline() == b"ready\n"
            _write_record(board, port, stubborn.pid)
            outcome = daemon.stop(board.workspace, port, wait=0.2)
            assert outcome.killed and outcome.server.pid == stubborn.pid
            assert not _alive(stubborn.pid), f"round {round}: stop returned before the end"
            assert not daemon.record_path(board.workspace, port).exists()
        finally:
            if stubborn.poll() is None:
                stubborn.kill()
            stubborn.wait()


BUSY_SERVER = """
import sys
from fastapi import APIRouter
from sumlens.board.server import serve
from sumlens.board.server.app import create_app
from sumlens.board.settings import BoardSettings

port, base, workspace = int(sys.argv[3].split("=")[1]), sys.argv[4], sys.argv[5]

def with_busy_route(settings):
    app = create_app(settings)
    router = APIRouter()

    @router.get("/api/v1/busy")
    def busy() -> None:  # a request that computes for as long as the server lives
        print("busy", flush=True)
        while True:
            sum(range(1000))

    app.include_router(router)
    return app

serve.create_app = with_busy_route
serve.serve(BoardSettings.create(base, port=port, workspace=workspace), exit_when_done=True)
print("served", flush=True)
"""
"""The real server (``serve``) with one more route, which computes until the process ends;
its argv names it ``sumlens serve --port=N`` as ``start``'s child."""


@contextlib.contextmanager
def _busy_server(board: Board) -> Iterator[tuple[subprocess.Popen[str], int, Path]]:
    """A real server busy computing a request, with its pid file; yields it, its port and
    the file of its output."""
    port = free_port()
    output = board.root / f"busy-{port}.log"
    where = (str(board.base), str(board.workspace))
    with open(output, "w") as out:
        server = subprocess.Popen(
            [sys.executable, "-c", BUSY_SERVER, "sumlens", "serve", f"--port={port}", *where],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            env=board.env,
            start_new_session=True,
        )
    try:
        health = wait_until(lambda: get_json(f"http://127.0.0.1:{port}/api/v1/health"), 60)
        assert health["pid"] == server.pid
        threading.Thread(target=_ask_busy, args=(port,), daemon=True).start()
        wait_until(lambda: "busy" in output.read_text().split(), timeout=60)
        _write_record(board, port, server.pid)
        yield server, port, output
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def _ask_busy(port: int) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    with contextlib.suppress(OSError, http.client.HTTPException):
        connection.request("GET", "/api/v1/busy")
        connection.getresponse().read()
    connection.close()


def test_sigterm_ends_a_server_busy_with_a_request(board: Board) -> None:
    """A request still computing holds neither uvicorn's shutdown nor the process's exit
    (before: uvicorn waited for it, then Python for its thread)."""
    with _busy_server(board) as (server, _, output):
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
        assert server.returncode == 0
        said = output.read_text()
        assert "1 request(s) still computing were left unfinished" in said, said
        assert "served" not in said.split()  # it ended without waiting for the request


def test_stop_stops_a_busy_server_without_sigkill(board: Board) -> None:
    """``sumlens stop`` ends a busy server with SIGTERM alone (before: after 10 s it sent
    SIGKILL and said the server "ignored SIGTERM")."""
    with _busy_server(board) as (server, port, output):
        out = board.stop("--port", str(port))
        assert out.returncode == 0, out.stderr
        assert (
            out.stdout.strip() == f"stopped the sumlens dashboard on port {port} (pid {server.pid})"
        )
        assert not _alive(server.pid)
        assert "left unfinished" in output.read_text()
        assert not daemon.record_path(board.workspace, port).exists()


def test_url_path_prefix(board: Board) -> None:
    port = free_port()
    out = board.start(port, "--url-path-prefix=team/a/")
    assert out.returncode == 0, out.stderr
    assert f"http://127.0.0.1:{port}/team/a/" in out.stdout
    assert board.record(port)["url"] == f"http://127.0.0.1:{port}/team/a/"
    assert get_json(f"http://127.0.0.1:{port}/team/a/api/v1/health")["status"] == "ok"
    assert get_json(f"http://127.0.0.1:{port}/api/v1/health") is None


def test_summary_base_dir_and_logdir_name_the_same_thing(board: Board) -> None:
    other = board.root / "other runs"
    other.mkdir()
    first, second = _two_ports()
    assert board.start(first, "--summary-base-dir", str(board.base)).returncode == 0
    assert board.start(second, "--logdir", str(other)).returncode == 0
    assert get_json(f"http://127.0.0.1:{first}/api/v1/health")["base_dir"] == str(board.base)
    assert get_json(f"http://127.0.0.1:{second}/api/v1/health")["base_dir"] == str(other)
    both = board.run("start", "--logdir", str(other), "--summary-base-dir", str(other))
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_a_network_host_is_warned_about() -> None:
    settings = BoardSettings.create(".", host="0.0.0.0", allowed_hosts="box.lan")
    warning = daemon.exposure_warning(settings)
    assert warning is not None
    assert "reachable from the network" in warning and "--allowed-hosts" in warning
    assert "box.lan" in warning
    for local in ("127.0.0.1", "localhost", "::1"):
        assert daemon.exposure_warning(BoardSettings.create(".", host=local)) is None


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_serve_runs_in_the_foreground_until_a_signal(board: Board, stop_signal: int) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "sumlens", "serve", "--logdir", str(board.base), f"--port={port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=board.env,
    )
    try:
        health = wait_until(lambda: get_json(f"http://127.0.0.1:{port}/api/v1/health"), timeout=60)
        assert health["pid"] == server.pid
        server.send_signal(stop_signal)
        stdout, stderr = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == 0, stderr
    assert f"http://127.0.0.1:{port}/" in stdout
    assert "Traceback" not in stderr


def test_serve_on_a_taken_port_is_refused(board: Board) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = board.run("serve", "--logdir", str(board.base), f"--port={port}")
    _one_line_error(out, "serve", f"--port {port}", "already in use")


def test_the_command_line_imports_no_dashboard_module() -> None:
    code = (
        "import sys, sumlens.cli; "
        "print(sorted(m for m in sys.modules if m.startswith(('sumlens.board', 'fastapi', "
        "'uvicorn', 'torch'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_start_and_stop_import_no_server_module() -> None:
    code = (
        "import sys, sumlens.board.server.daemon; "
        "print(sorted(m for m in sys.modules if m.startswith(('fastapi', 'uvicorn', 'torch'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
