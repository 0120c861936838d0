"""Starting and stopping what a benchmark measures or talks to: servers, workers, commands.

Every process starts here (:func:`launch`), in a session of its own unless asked not to,
so that :func:`stop_server` ends whatever it started too (TensorBoard's data server,
sumlens' kernel compiler).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import httpx

from benchmarks.harness.clock import now
from benchmarks.harness.http import connect, local

STOP_GRACE_S = 30.0
"""Seconds a server gets to exit after SIGTERM (sumlens saves its state then)."""

Process = subprocess.Popen[Any]
"""A process started by :func:`launch`."""
Output = int | IO[Any] | None
"""Where a process's stream goes: ``subprocess.DEVNULL``, ``PIPE``, ``STDOUT`` or a file."""


# ---- command lines ---------------------------------------------------------------------


def serve_args(base_dir: Path, port: int, workspace: Path) -> list[str]:
    """``python -m sumlens serve ...`` over ``base_dir``: the command a user runs, in a fresh
    interpreter (whatever ``sumlens`` the ``PYTHONPATH`` selects, so another checkout's can
    be timed)."""
    where = ["--summary-base-dir", str(base_dir), "--workspace", str(workspace)]
    return [sys.executable, "-m", "sumlens", "serve", *where, "--port", str(port)]


def tensorboard_args(logdir: Path | str, port: int) -> list[str]:
    """``tensorboard --logdir LOGDIR`` on 127.0.0.1:``port``, from this interpreter's
    environment (a path or a URL such as ``s3://bucket/logs``)."""
    exe = str(Path(sys.executable).with_name("tensorboard"))
    return [exe, "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port)]


# ---- processes -------------------------------------------------------------------------


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def launch(
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    stdin: Output = subprocess.DEVNULL,
    stdout: Output = subprocess.DEVNULL,
    stderr: Output = subprocess.STDOUT,
    text: bool = False,
    new_session: bool = True,
) -> Process:
    """Start ``args``; its streams go where asked (``text``: line-buffered text pipes)."""
    return subprocess.Popen(
        list(args),
        env=env,
        cwd=cwd,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        text=text,
        bufsize=1 if text else -1,
        start_new_session=new_session,
    )


def stop_server(proc: Process) -> None:
    """SIGTERM, up to :data:`STOP_GRACE_S` to exit, then whatever is left of the server's
    process group (a child such as TensorBoard's data server) is killed."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(STOP_GRACE_S)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


class Waiter:
    """Paces a polling loop over a launched process: fails as soon as it exited (with the end
    of its ``output``), or once ``timeout_s`` from ``started`` (:func:`now`) are up."""

    def __init__(
        self,
        proc: Process,
        name: str,
        started: float,
        timeout_s: float,
        output: Callable[[], str] = str,
    ) -> None:
        self.proc, self.name, self.output = proc, name, output
        self.started, self.timeout_s = started, timeout_s

    def pause(self, seconds: float) -> None:
        """Sleep ``seconds``, unless the process exited or the deadline passed (then raise)."""
        if self.proc.poll() is not None:
            raise RuntimeError(
                f"{self.name} exited with status {self.proc.returncode}; its output ends:\n"
                + self.output()
            )
        if now() - self.started > self.timeout_s:
            raise TimeoutError(f"{self.name}: not done after {self.timeout_s:.0f} s")
        time.sleep(seconds)


def tail(log: IO[bytes], chars: int = 2000) -> str:
    """The last ``chars`` characters written to the (read-write) file ``log``."""
    log.seek(0)
    return log.read().decode(errors="replace")[-chars:]


@contextlib.contextmanager
def server_until(
    name: str,
    args: list[str],
    env: dict[str, str],
    port: int,
    done: Callable[[Any], bool],
    poll_s: float,
    timeout_s: float,
) -> Iterator[tuple[Process, float]]:
    """Launch the server ``args`` (listening on ``port``) and wait until ``done(client)``
    holds, asked every ``poll_s``; yield the process and the seconds from the launch until
    then. The server is stopped on leaving (:func:`stop_server`); one that exits early says
    why (the tail of its output), one not done in ``timeout_s`` is a ``TimeoutError``."""
    with tempfile.TemporaryFile() as log:
        started = now()
        proc = launch(args, env=env, stdout=log)
        try:
            waiter = Waiter(proc, name, started, timeout_s, lambda: tail(log))
            with connect(local(port)) as http:
                while not done(http):
                    waiter.pause(poll_s)
            yield proc, now() - started
        finally:
            stop_server(proc)


def wait_answering(url: str, proc: Process, timeout_s: float) -> None:
    """Wait until ``url`` answers at all (asked every 0.1 s); ``proc`` exiting first or no
    answer within ``timeout_s`` is an error."""
    waiter = Waiter(proc, repr(proc.args), now(), timeout_s)
    with httpx.Client(trust_env=False, timeout=5) as http:
        while True:
            with contextlib.suppress(httpx.TransportError):
                http.get(url)
                return
            waiter.pause(0.1)


class Processes:
    """Every server a run starts: fresh ports, one log each, and an end for all of them.

    Each process leads a session of its own, so whatever it starts is ended with it;
    :meth:`close` ends what is left, and stops the daemons registered with
    :meth:`add_daemon` (servers that outlive the command that started them), even when
    the benchmark fails.
    """

    def __init__(self, prefix: str) -> None:
        self.log_dir = Path(tempfile.mkdtemp(prefix=prefix))
        self._daemons: dict[int, Callable[[], object]] = {}
        self._live: list[Process] = []
        self._logs: dict[int, Path] = {}
        self._ports: set[int] = set()

    def port(self) -> int:
        """A free port on 127.0.0.1, never handed out before in this run."""
        while True:
            port = free_port()
            if port not in self._ports:
                self._ports.add(port)
                return port

    def start(self, name: str, args: Sequence[str], env: dict[str, str] | None = None) -> Process:
        """Start ``args`` with its output in a log file of its own."""
        log = self.log_dir / f"{len(self._logs):03d}-{name}.log"
        with open(log, "wb") as handle:
            proc = launch(args, env=env, stdout=handle)
        self._logs[proc.pid] = log
        self._live.append(proc)
        return proc

    def log_tail(self, proc: Process, lines: int = 20) -> str:
        """The last lines ``proc`` printed."""
        text = self._logs[proc.pid].read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def waiter(self, proc: Process, name: str, started: float, timeout_s: float) -> Waiter:
        """A :class:`Waiter` over ``proc`` that shows the end of its log when it exits."""
        return Waiter(proc, name, started, timeout_s, lambda: self.log_tail(proc))

    def end(self, proc: Process, group: bool = False, grace: float = STOP_GRACE_S) -> float:
        """SIGTERM ``proc`` (its whole group if ``group``), SIGKILL what is left after ``grace``.

        Returns the seconds ``proc`` took to exit. sumlens gets SIGTERM alone (it saves its
        state then); the rest of its group (a kernel compiler) is killed afterwards.
        """
        started = now()
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                if group:
                    os.killpg(proc.pid, signal.SIGTERM)
                else:
                    proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace)
        took = now() - started
        with contextlib.suppress(ProcessLookupError):  # the group is gone once all exited
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if proc in self._live:
            self._live.remove(proc)
        return took

    def add_daemon(self, port: int, stop: Callable[[], object]) -> None:
        """A server on ``port`` that :meth:`close` stops with ``stop()`` unless removed."""
        self._daemons[port] = stop

    def remove_daemon(self, port: int) -> None:
        """The server on ``port`` was stopped already."""
        self._daemons.pop(port, None)

    def close(self) -> None:
        """End every process still running and remove the logs."""
        for port in sorted(self._daemons):
            self._daemons[port]()
        for proc in list(self._live):
            self.end(proc, group=True, grace=5.0)
        shutil.rmtree(self.log_dir, ignore_errors=True)


# ---- warming up and MindInsight --------------------------------------------------------


def prime_numba(source: Path | None = None) -> float:
    """Fill numba's cache with the reader's kernels in a process of its own, so no timed
    server compiles them (those of the checkout whose ``src`` folder is ``source``, when
    given); the seconds that took."""
    started = now()
    code = (
        "import sys\n"
        "from sumlens.io.kernels import READER_KERNELS\n"
        "sys.exit(not READER_KERNELS.wait(900))\n"
    )
    env = {**os.environ, **({"PYTHONPATH": str(source)} if source else {})}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return now() - started


def mindinsight_env(binary: Path) -> dict[str, str]:
    """MindInsight's commands need its venv's ``gunicorn`` on PATH."""
    return {**os.environ, "PATH": f"{binary.parent}{os.pathsep}{os.environ['PATH']}"}


def start_mindinsight(
    binary: Path, base_dir: Path, port: int, workspace: Path, timeout_s: float
) -> None:
    """``mindinsight start`` over ``base_dir``: returns once its command did (the server
    keeps running: stop it with :func:`stop_mindinsight`)."""
    args = [str(binary), "start", "--summary-base-dir", str(base_dir)]
    args += ["--port", str(port), "--workspace", str(workspace)]
    env = mindinsight_env(binary)
    launched = subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    if launched.returncode != 0:
        raise RuntimeError(f"mindinsight start failed: {launched.stdout[-500:]}")


def stop_mindinsight(binary: Path, port: int) -> str | None:
    """``mindinsight stop --port PORT``; None when it stopped, else what went wrong."""
    try:
        done = subprocess.run(
            [str(binary), "stop", "--port", str(port)],
            env=mindinsight_env(binary),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"mindinsight stop --port {port} took over 60 s"
    if done.returncode != 0:
        return f"mindinsight stop --port {port}: {(done.stdout + done.stderr)[-300:]}"
    return None
