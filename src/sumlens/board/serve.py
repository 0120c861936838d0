"""Running the dashboard in the foreground until SIGINT or SIGTERM.

uvicorn serves the application of :func:`sumlens.board.app.create_app`; its lifespan
starts the loader and, at shutdown, stops it and saves its state, so the next start over
the same base directory resumes where this one stopped.
"""

from __future__ import annotations

import logging

import uvicorn

from sumlens.board.app import create_app
from sumlens.board.settings import BoardSettings

_log = logging.getLogger("sumlens.board")


def url(settings: BoardSettings, port: int | None = None) -> str:
    """The address a browser opens for these settings."""
    host = settings.host
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{settings.port if port is None else port}{settings.url_path_prefix}/"


def serve(settings: BoardSettings) -> None:
    """Serve until interrupted (blocks); the loader's state is saved on the way out."""
    if not settings.binds_locally:
        _log.warning(
            "the dashboard listens on %s: anyone who can reach this machine can read the "
            "runs; requests must name it in their Host header (--allowed-hosts)",
            settings.host,
        )
    config = uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level="warning",
        access_log=False,
        lifespan="on",
    )
    uvicorn.Server(config).run()
