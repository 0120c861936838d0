"""Running the dashboard in the foreground until SIGINT, SIGTERM or a stop event.

uvicorn serves the application of :func:`sumlens.board.server.app.create_app`; its lifespan
starts the loader and, at shutdown, stops it and saves its state, so the next start over
the same base directory resumes where this one stopped. A stop asked for by a signal is
a clean exit (uvicorn itself would raise the signal again once it has shut down).
"""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType

import uvicorn

from sumlens.board.server.app import create_app
from sumlens.board.settings import BoardSettings

_log = logging.getLogger("sumlens.board")


class _Server(uvicorn.Server):
    """uvicorn's server; SIGINT and SIGTERM end it gracefully and are not raised again."""

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True  # a second Ctrl+C: stop waiting for open connections
        else:
            self.should_exit = True


def serve(settings: BoardSettings, stop: threading.Event | None = None) -> None:
    """Serve until interrupted or until ``stop`` is set (blocks); the state is saved."""
    if not settings.binds_locally:
        _log.warning(
            "the dashboard listens on %s: anyone who can reach this machine can read the "
            "runs; requests must name it in their Host header (--allowed-hosts)",
            settings.host,
        )
    server = _Server(
        uvicorn.Config(
            create_app(settings),
            host=settings.host,
            port=settings.port,
            log_level="warning",
            access_log=False,
            lifespan="on",
        )
    )
    if stop is not None:

        def watch() -> None:
            stop.wait()
            server.should_exit = True

        threading.Thread(target=watch, name="sumlens-serve-stop", daemon=True).start()
    server.run()
