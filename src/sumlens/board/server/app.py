"""The dashboard's web application: the API, the pages, and the guards around both.

* Everything lives under ``url_path_prefix`` (for a reverse proxy); ``/`` redirects there.
* Before any route runs, :mod:`sumlens.board.server.guards` refuses a request for another
  host (DNS rebinding), one another origin's page started (``Sec-Fetch-Site: cross-site``
  or ``same-site``: a plain ``<img>`` on any other page) and a body larger than the server
  reads. No CORS headers are ever sent.
* Then :mod:`sumlens.board.server.access` names who is asking (``--auth``), refuses what
  their role may not do and writes from other origins, and records every write in the
  audit log; :mod:`sumlens.board.server.signin` adds the session routes and sign-in page.
* Pages are static ES modules from this package; plotly.js comes from the installed
  ``plotly`` package. Both are served gzip-compressed and revalidated by ETag
  (:mod:`sumlens.board.server.static_assets`). Nothing is fetched from the network, and the
  OpenAPI document is served without the CDN-hosted docs pages FastAPI would add.
* Besides the core routes (runs, tags, scalars, run annotations) and MindInsight's, it
  serves the routes each plugin declares in :mod:`sumlens.board.plugins`.
* The loader runs for the application's lifetime (started and stopped by its lifespan).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import import_module, resources
from pathlib import Path

from fastapi import FastAPI, Request, routing
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response

from sumlens._version import __version__
from sumlens.board.api.annotations import make_annotation_router
from sumlens.board.api.audit import make_audit_router
from sumlens.board.api.groups import make_groups_router
from sumlens.board.api.lifecycle import make_lifecycle_router
from sumlens.board.api.probes import make_probe_router
from sumlens.board.api.runs import make_router
from sumlens.board.api.snapshot import make_snapshot_router
from sumlens.board.api.views import make_views_router
from sumlens.board.data.loader import Loader
from sumlens.board.data.surface import Polling, ReadSurface
from sumlens.board.data.trash import run_trash
from sumlens.board.errors import BoardError
from sumlens.board.mindinsight.routes import make_mindinsight_router
from sumlens.board.plugins import routers
from sumlens.board.server.access import AccessGate
from sumlens.board.server.guards import BodyLimit, HostGuard
from sumlens.board.server.principal import Identify
from sumlens.board.server.signin import add_session_routes
from sumlens.board.server.static_assets import AssetCache, static_file
from sumlens.board.settings import BoardSettings
from sumlens.board.state import open_state

STATIC_DIR = Path(str(resources.files("sumlens.board") / "static"))

RouterFactory = Callable[[ReadSurface], routing.APIRouter]
"""What builds a plugin's declared routes (:data:`sumlens.board.plugins.PLUGINS`)."""


def plugin_router_factories() -> list[RouterFactory]:
    """The route factories the plugins declare, imported by their ``"module:factory"``
    path, each once, in declaration order (the core routes come before, MindInsight's
    after)."""
    found = []
    for path in routers():
        module, _, name = path.partition(":")
        found.append(getattr(import_module(module), name))
    return found


def plotly_js() -> Path:
    """The plotly.js bundle the installed ``plotly`` package ships."""
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise FileNotFoundError(
            f"plotly.js is missing from the installed plotly package ({path}); "
            "reinstall with: pip install 'sumlens[board]'"
        )
    return path


def create_app(settings: BoardSettings, loader: ReadSurface | None = None) -> FastAPI:
    """The application serving ``loader`` (any read surface; by default a
    :class:`Loader` of ``settings.base_dir``), started and stopped with the app when it
    loads in the background."""
    if loader is None:
        loader = Loader(
            settings.base_dir,
            settings.workspace,
            reload_interval=settings.reload_interval,
            caps=dict(settings.samples_per_plugin),
            watch=settings.watch,
            storage_options=dict(settings.storage_options),
        )
    prefix = settings.url_path_prefix
    identify = Identify(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        polling = loader if isinstance(loader, Polling) else None
        if polling is not None:
            polling.start()
        shared.start()
        try:
            yield
        finally:
            shared.close()
            if polling is not None:
                polling.stop()

    app = FastAPI(
        title="sumlens dashboard",
        version=__version__,
        openapi_url=f"{prefix}/api/v1/openapi.json",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.loader = loader
    shared = open_state(
        settings.workspace, loader.status()["base_dir"], settings.state, settings.replica
    )
    app.state.shared = shared
    annotations = shared.annotations
    app.include_router(make_router(loader, settings.port, annotations, shared.runs), prefix=prefix)
    app.include_router(make_annotation_router(loader, annotations), prefix=prefix)
    app.include_router(make_views_router(shared), prefix=prefix)
    app.include_router(make_audit_router(shared), prefix=prefix)
    trash = run_trash(loader, settings.base_dir, dict(settings.storage_options))
    app.include_router(make_lifecycle_router(loader, shared, trash, settings), prefix=prefix)
    app.include_router(make_groups_router(loader, annotations), prefix=prefix)
    app.include_router(make_snapshot_router(loader, annotations, plotly_js), prefix=prefix)
    for make_plugin_routes in plugin_router_factories():
        app.include_router(make_plugin_routes(loader), prefix=prefix)
    app.include_router(make_mindinsight_router(loader), prefix=prefix)
    add_session_routes(app, settings, identify, STATIC_DIR.resolve())
    app.include_router(make_probe_router(loader), prefix=prefix)

    @app.exception_handler(BoardError)
    async def board_error(_: Request, err: BoardError) -> JSONResponse:
        return JSONResponse({"detail": str(err)}, status_code=err.status)

    @app.exception_handler(RequestValidationError)
    async def bad_parameter(_: Request, err: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": _one_line(err)}, status_code=422)

    assets = AssetCache()
    static_root = STATIC_DIR.resolve()
    static_methods = ["GET", "HEAD"]

    @app.api_route(
        f"{prefix}/static/vendor/plotly.min.js", methods=static_methods, include_in_schema=False
    )
    def plotly_bundle(request: Request) -> Response:
        return assets.response(request, plotly_js())

    @app.api_route(
        f"{prefix}/static/{{name:path}}", methods=static_methods, include_in_schema=False
    )
    def static(request: Request, name: str) -> Response:
        path = static_file(static_root, name)
        if path is None:
            return JSONResponse({"detail": f"no static file {name!r}"}, status_code=404)
        return assets.response(request, path)

    @app.api_route(f"{prefix}/", methods=static_methods, include_in_schema=False)
    def index(request: Request) -> Response:
        return assets.response(request, static_root / "index.html")

    if prefix:

        @app.get("/", include_in_schema=False)
        def to_prefix() -> RedirectResponse:
            return RedirectResponse(f"{prefix}/")

        @app.get(prefix, include_in_schema=False)
        def add_slash() -> RedirectResponse:
            return RedirectResponse(f"{prefix}/")

    app.add_middleware(BodyLimit)
    app.add_middleware(AccessGate, settings=settings, identify=identify, audit=shared.audit)
    pages = frozenset({"/", f"{prefix}/", prefix or "/"})
    app.add_middleware(  # outermost
        HostGuard,
        accepted=settings.accepted_hosts(),
        pages=pages,
        frame_ancestors=settings.frame_ancestors,
    )
    return app


def _one_line(err: RequestValidationError) -> str:
    """FastAPI's validation errors as one line: parameter, value given, what is allowed."""
    parts = []
    for item in err.errors():
        name = ".".join(str(p) for p in item.get("loc", ())[1:]) or "request"
        parts.append(f"{name}={item.get('input')!r}: {item.get('msg', 'not allowed')}")
    return "; ".join(parts)
