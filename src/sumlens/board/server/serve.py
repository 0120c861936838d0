"""Running the dashboard in the foreground until SIGINT, SIGTERM or a stop event.

uvicorn serves the application of :func:`sumlens.board.server.app.create_app`; its lifespan
starts the loader and, at shutdown, stops it and saves its state, so the next start over
the same base directory resumes where this one stopped. A stop asked for by a signal is
a clean exit (uvicorn itself would raise the signal again once it has shut down).

A stop does not wait for a busy server: requests in flight get :data:`SHUTDOWN_GRACE`
seconds to finish, then they are cancelled and the state is saved. A request computing
in a worker thread (a large selection, a read hung on a network file system) cannot be
interrupted, and Python would wait for it before the process exits. The process that
exists only to serve (``sumlens serve``, and so ``sumlens start``) asks
:func:`serve` with ``exit_when_done`` to wait :data:`ABANDON_WAIT` seconds more for such
threads, then end the process without them (their answers would go nowhere: the
connections are closed). A program that calls :func:`serve` itself keeps its process.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from types import FrameType

import uvicorn

from sumlens.board.server.app import create_app
from sumlens.board.server.daemon import exposure_warning
from sumlens.board.settings import BoardSettings

_log = logging.getLogger("sumlens.board")

SHUTDOWN_GRACE = 3
"""Seconds requests in flight may take to finish once a stop is asked for."""
ABANDON_WAIT = 2.0
"""Seconds the process then waits for worker threads still computing before it ends."""


class _Server(uvicorn.Server):
    """uvicorn's server; SIGINT and SIGTERM end it gracefully and are not raised again."""

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True  # a second Ctrl+C: stop waiting for open connections
        else:
            self.should_exit = True


def serve(
    settings: BoardSettings,
    stop: threading.Event | None = None,
    *,
    exit_when_done: bool = False,
) -> None:
    """Serve until interrupted or until ``stop`` is set (blocks); the state is saved. With
    ``exit_when_done``, requests still computing then end the process (module docstring)."""
    warning = exposure_warning(settings)
    if warning is not None:
        _log.warning("%s", warning)
    server = _Server(
        uvicorn.Config(
            create_app(settings),
            host=settings.host,
            port=settings.port,
            log_level="warning",
            access_log=False,
            lifespan="on",
            # who sent a request is the peer, not a header: the gate believes X-Forwarded-*
            # from --trusted-proxies only (uvicorn would take them from any local peer)
            proxy_headers=False,
            timeout_graceful_shutdown=SHUTDOWN_GRACE,
        )
    )
    if stop is not None:

        def watch() -> None:
            stop.wait()
            server.should_exit = True

        threading.Thread(target=watch, name="sumlens-serve-stop", daemon=True).start()
    server.run()
    if exit_when_done:
        _leave_busy_threads(ABANDON_WAIT)


def _leave_busy_threads(wait: float) -> None:
    """End the process now if threads still compute after ``wait`` seconds (the server
    has shut down and saved its state: only their answers, to closed connections, are
    lost); return at once when none do."""
    deadline = time.monotonic() + wait
    for thread in _busy_threads():
        thread.join(max(0.0, deadline - time.monotonic()))
    busy = _busy_threads()
    if not busy:
        return
    _log.warning(
        "stopped; %d request(s) still computing were left unfinished (%s)",
        len(busy),
        ", ".join(thread.name for thread in busy),
    )
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _busy_threads() -> list[threading.Thread]:
    """Threads other than this one that Python would wait for at exit."""
    current = threading.current_thread()
    return [t for t in threading.enumerate() if t is not current and not t.daemon and t.is_alive()]
