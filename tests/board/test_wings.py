"""The dashboard's wings, checked on the source with ``ast`` (nothing imported).

``sumlens.board`` is built from wings that each hold one concern::

    server         the web application, its pages, the ``sumlens start`` daemon
    api            our own /api/v1 routes          mindinsight   MindInsight's routes
    snapshot       the offline page of some runs (``sumlens snapshot``, its route)
    query          what both faces ask of the runs: series, groups, lineage, graphs
    data           discovery, reading, the column store, the read surface
    state          what users give the runs and the server (annotations, views, audit, run
                   states), in SQLite or PostgreSQL: beside data, never reading run files
    (low)          errors, responses, proto_text, slicing, settings, csv_cells

Rules: a wing imports only the wings below it in :data:`BOARD_LAYERS` (and itself); every
module of ``api`` is a router, and route modules never import one another; only the data
wing reads run files or lists directories, and it does so through the storage seam of
:mod:`sumlens.io` (the column store's own workspace files aside); the query layer, both
faces and the snapshot read through the data wing's read surface only.
"""

from __future__ import annotations

import ast
from pathlib import Path

from helpers.source_imports import SRC, imports_of, parsed_sources, where

BOARD = "sumlens.board"
BOARD_LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"low"}),
    frozenset({"data", "state"}),
    frozenset({"query"}),
    frozenset({"snapshot"}),
    frozenset({"api", "mindinsight"}),
    frozenset({"server"}),
)
"""Rows from the bottom: a wing may import the wings of the rows below its own."""
WINGS = ("server", "api", "mindinsight", "snapshot", "query", "data", "state")
FILE_ACCESS_ALLOWED = {
    "sumlens.board.data.store": "the column store's files in the workspace, not run files",
    "sumlens.board.server.daemon": "the daemon's own log, pid and state files",
    "sumlens.board.server.static_assets": "the package's static pages",
    "sumlens.board.query.export": "the export file the user names",
    "sumlens.board.snapshot.page": "the package's page files it inlines (template, style.css)",
    "sumlens.board.data.watch": "the system's mount table (/proc/self/mountinfo)",
    "sumlens.board.settings": "the token and roles files the user names (--token-file, ...)",
}
"""Modules that open or list files that are not run files, and which files those are."""
OPENING_NAMES = frozenset({"open"})
OS_LISTING = frozenset({"scandir", "listdir", "walk", "open"})
"""Functions of ``os`` (and ``io.open``) that list directories or open files."""
PATH_METHODS = frozenset(
    {"iterdir", "glob", "rglob", "read_bytes", "read_text", "write_bytes", "write_text"}
)
RUN_FILE_READERS = frozenset({"RecordFile", "read_file_scalars", "read_events_at", "read_scalars"})
"""Readers of :mod:`sumlens.io` that open run files: in the data wing, given its storage."""
SURFACE_MODULES = frozenset({"sumlens.board.data.surface"})
"""What the routes may import from the data wing: the read surface (the runs' annotations
and the rest users give are the state wing's, which the routes may import)."""

SOURCES = [source for source in parsed_sources() if source[0].startswith(BOARD + ".")]


def _wing(module: str) -> str:
    """``api`` for ``sumlens.board.api.runs``; ``low`` for the modules beside the wings."""
    part = module.split(".")[2]
    return part if part in WINGS else "low"


def _is_route_module(tree: ast.Module) -> bool:
    """Whether the module builds routes (it takes ``APIRouter`` from FastAPI)."""
    return any(
        isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith("fastapi")
        and any(alias.name == "APIRouter" for alias in node.names)
        for node in ast.walk(tree)
    )


ROUTE_MODULES = frozenset(module for module, _, tree in SOURCES if _is_route_module(tree))


def _names_storage(call: ast.Call) -> bool:
    """Whether a reader call is handed a storage (an argument naming one)."""
    values = [*call.args, *(keyword.value for keyword in call.keywords)]
    return any(keyword.arg == "storage" for keyword in call.keywords) or any(
        "storage" in ast.unparse(value) for value in values
    )


def _file_access(tree: ast.Module, path: Path, data_wing: bool) -> list[str]:
    """Calls that open or list files by themselves (``open``, ``os.scandir``, ``Path.glob``
    ...), and readers of run files outside the data wing or not given its storage."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else None
        attr = func.attr if isinstance(func, ast.Attribute) else None
        receiver = func.value.id if isinstance(func, ast.Attribute) and isinstance(
            func.value, ast.Name
        ) else None  # fmt: skip
        if name in OPENING_NAMES:
            found.append(f"{where(path, node)}: {name}(...)")
        elif receiver in ("os", "io") and attr in OS_LISTING:
            found.append(f"{where(path, node)}: {receiver}.{attr}(...)")
        elif attr in PATH_METHODS:
            found.append(f"{where(path, node)}: .{attr}(...)")
        elif (name or attr) in RUN_FILE_READERS and not (data_wing and _names_storage(node)):
            found.append(
                f"{where(path, node)}: {name or attr}(...) without the data wing's storage"
            )
    return found


def test_route_modules_are_found() -> None:
    """The rules below are about something: both faces have route modules."""
    assert {_wing(module) for module in ROUTE_MODULES} == {"api", "mindinsight"}, ROUTE_MODULES


def test_only_the_data_wing_reads_run_files() -> None:
    problems = []
    for module, path, tree in SOURCES:
        if module in FILE_ACCESS_ALLOWED:
            continue
        problems += _file_access(tree, path, _wing(module) == "data")
    assert not problems, "read run files through the data wing's storage:\n" + "\n".join(problems)


def test_routes_read_through_the_surface() -> None:
    problems = []
    for module, path, tree in SOURCES:
        if _wing(module) not in ("api", "mindinsight", "snapshot", "query"):
            continue
        for imp in imports_of(module, path, tree):
            if _wing_of_target(imp.target) == "data" and imp.target not in SURFACE_MODULES:
                problems.append(f"{imp.where}: {imp.target}")
    assert not problems, "routes import the data wing past its surface:\n" + "\n".join(problems)


def _wing_of_target(target: str) -> str | None:
    if not target.startswith(BOARD + ".") or target.count(".") < 2:
        return None
    return _wing(target)


def _row(wing: str) -> int:
    return next(row for row, wings in enumerate(BOARD_LAYERS) if wing in wings)


def _crosses(mine: str, target: str) -> bool:
    """Whether a module of wing ``mine`` may not import ``target`` (a board module): a
    route module (only the server mounts them), or a wing not below its own."""
    theirs = _wing(target)
    if target in ROUTE_MODULES:
        return mine != "server"
    return theirs != mine and _row(theirs) >= _row(mine)


def test_every_api_module_is_a_router() -> None:
    """``api`` holds routes only; what they compute lives in the query layer."""
    helpers = [
        module
        for module, path, _ in SOURCES
        if _wing(module) == "api" and path.name != "__init__.py" and module not in ROUTE_MODULES
    ]
    assert not helpers, f"move these into sumlens.board.query: {helpers}"


def test_wings_import_downward_only() -> None:
    """No wing imports one above it or beside it; only the server imports route modules:
    the snapshot and MindInsight's face import nothing of ``api``."""
    problems = []
    for module, path, tree in SOURCES:
        for imp in imports_of(module, path, tree):
            if _wing_of_target(imp.target) is None or imp.target == module:
                continue
            if _crosses(_wing(module), imp.target):
                problems.append(f"{imp.where}: {imp.target}")
    assert not problems, "wings importing across:\n" + "\n".join(problems)


def test_rules_catch_what_they_should() -> None:
    """The checks themselves, on made-up code."""
    made_up = ast.parse(
        "import os\nfrom pathlib import Path\n"
        "open('x')\nos.scandir('.')\nPath('.').rglob('*')\nRecordFile(p)\nos.open('x', 0)\n"
        "storage.open_read('x')\nRecordFile(p, 0, self.storage)\nos.walk('.')\n"
    )
    found = _file_access(made_up, SRC / "board" / "x.py", data_wing=False)
    assert len(found) == 7, found
    assert len(_file_access(made_up, SRC / "board" / "x.py", data_wing=True)) == 6
    assert _wing("sumlens.board.errors") == "low"
    assert _wing("sumlens.board.api.runs") == "api"
    assert _wing("sumlens.board.query.selection") == "query"
    assert not _crosses("mindinsight", "sumlens.board.query.selection")
    assert _crosses("mindinsight", "sumlens.board.api.graph")
    assert _crosses("api", "sumlens.board.mindinsight.jobs")
    assert _crosses("low", "sumlens.board.data.loader")
    assert _crosses("data", "sumlens.board.server.app")
    assert _crosses("data", "sumlens.board.query.selection")
    assert _wing("sumlens.board.state.annotations") == "state"
    assert _crosses("state", "sumlens.board.data.loader")
    assert _crosses("data", "sumlens.board.state.annotations")
    assert not _crosses("api", "sumlens.board.state.annotations")
    assert not _crosses("query", "sumlens.board.state.annotation_checks")
    assert _crosses("query", "sumlens.board.snapshot.content")
    assert not _crosses("api", "sumlens.board.query.selection")
    assert not _crosses("server", "sumlens.board.api.runs")
    assert _crosses("api", "sumlens.board.api.runs")
    assert _crosses("snapshot", "sumlens.board.api.runs")
    assert not _crosses("snapshot", "sumlens.board.query.scalar_series")
