"""The import layers of ``sumlens``, checked on the source with ``ast`` (nothing imported).

Packages import downward only, so each can be read, tested and imported without those
above it::

    integrations           (Lightning, Hugging Face, Keras adapters: built on all below)
    landscape, thor        (loss landscapes, the THOR optimizer: built on training)
    train                  (Model, callbacks, SummaryCollector, checkpoints)
    metrics, writer        (metrics; torch's SummaryWriter API over SummaryRecord)
    summary                (SummaryRecord and its writer)
    graph                  (a model's graph, a DataLoader's lineage: GraphProto, DatasetGraph)
    io, lineage            (reading and framing records; lineage values)

``graph`` and ``lineage`` sit below ``summary`` because the writer uses them: a network
given to ``SummaryRecord`` has its graph captured (:mod:`sumlens.graph`), a plain dict is
custom lineage data (:mod:`sumlens.lineage`). Values from higher packages (a
``LossLandscape``) reach the writer through its value protocol (``plugin`` and
``to_proto()``), never by an import.

Beside the packages: the private top-level modules (``_checks``, ``_log``, ``_proto`` ...)
are below everything and import only each other; the dashboard (``board``) reads files
through ``io`` alone; the public top-level modules are entry points that no package
imports. Across packages nobody imports an underscore name (a private module or a
private name of another package's module), nor calls another package's private methods.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest
from helpers.source_imports import SRC, Import, imports_of, parsed_sources, where

LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"io", "lineage"}),
    frozenset({"graph"}),
    frozenset({"summary"}),
    frozenset({"metrics", "writer"}),
    frozenset({"train"}),
    frozenset({"landscape", "thor"}),
    frozenset({"integrations"}),
)
"""Rows from the bottom: a package may import the packages of the rows below its own."""

BOARD_MAY_IMPORT = frozenset({"io"})
"""The dashboard reads what training wrote through the readers, and nothing else."""

ENTRY_POINTS: dict[str, frozenset[str]] = {
    "__init__": frozenset({"summary", "train", "landscape", "writer", "notebook"}),
    "__main__": frozenset({"cli"}),
    "cli": frozenset({"board", "io"}),
    "notebook": frozenset({"board", "io"}),
    "ops": frozenset({"graph", "summary"}),
}
"""Public top-level modules and what each may import (besides private top-level modules)."""


def _owner(module: str) -> str:
    """The package (or top-level module) a ``sumlens.`` module belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(package: str) -> int | None:
    for row, packages in enumerate(LAYERS):
        if package in packages:
            return row
    return None


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _layer_problem(importer: str, target: str) -> str | None:
    """Why ``importer`` (a package or top-level module) may not import ``target``
    (another one), or None when it may."""
    if target == importer or _is_private(target):
        return None
    if target == "__init__":
        return "imports the sumlens package itself (its lazy names are for users)"
    if _is_private(importer):
        return f"a private top-level module imports {target!r}"
    if importer in ENTRY_POINTS:
        allowed = ENTRY_POINTS[importer]
        return None if target in allowed else f"{importer!r} may import only {sorted(allowed)}"
    if target in ENTRY_POINTS:
        return f"imports the entry point {target!r}"
    if importer == "board":
        return None if target in BOARD_MAY_IMPORT else "board may import only io"
    if target == "board":
        return "imports the dashboard"
    mine, theirs = _layer(importer), _layer(target)
    if mine is None or theirs is None:
        return f"{importer!r} or {target!r} has no place in LAYERS (add it there)"
    if theirs >= mine:
        return f"{importer!r} (row {mine}) imports {target!r} (row {theirs}), not below it"
    return None


def _private_problem(importer: str, imp: Import) -> str | None:
    """An underscore name of another package (or private top-level module) imported."""
    owner = _owner(imp.target)
    if owner == importer:
        return None
    inner = imp.target.split(".")[2:]  # the modules inside the owner
    hidden = [part for part in inner if _is_private(part)]
    if hidden:
        return f"imports the private module {imp.target}"
    names = [name for name in imp.names if _is_private(name)]
    if names:
        return f"imports the private names {names} of {imp.target}"
    return None


SOURCES = parsed_sources()


def test_every_package_has_a_place() -> None:
    packages = {path.parent.name for path in SRC.glob("*/__init__.py")}
    placed = set().union(*LAYERS) | {"board"} | {p for p in packages if _is_private(p)}
    assert packages <= placed, f"packages without a layer: {sorted(packages - placed)}"
    assert placed - {"board"} - {p for p in packages if _is_private(p)} <= packages


def test_packages_import_downward_only() -> None:
    problems = []
    for module, path, tree in SOURCES:
        importer = _owner(module)
        for imp in imports_of(module, path, tree):
            problem = _layer_problem(importer, _owner(imp.target))
            if problem:
                problems.append(f"{imp.where}: {imp.target}: {problem}")
    assert not problems, "\n".join(problems)


def test_no_underscore_names_across_packages() -> None:
    problems = []
    for module, path, tree in SOURCES:
        importer = _owner(module)
        for imp in imports_of(module, path, tree):
            problem = _private_problem(importer, imp)
            if problem:
                problems.append(f"{imp.where}: {problem}")
    assert not problems, "\n".join(problems)


def _private_methods() -> dict[str, set[str]]:
    """Package -> the private method names its classes define."""
    found: dict[str, set[str]] = {}
    for module, _, tree in SOURCES:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _is_private(
                        item.name
                    ):
                        found.setdefault(_owner(module), set()).add(item.name)
    return found


def test_no_private_methods_called_across_packages() -> None:
    """``x._method`` where ``_method`` is private to a class of another package.

    A name also defined in the caller's own package is its own business (``self._put`` and
    a helper of the same name elsewhere are not told apart on the source).
    """
    methods = _private_methods()
    problems = []
    for module, path, tree in SOURCES:
        importer = _owner(module)
        own = methods.get(importer, set())
        others = {
            name: package
            for package, names in methods.items()
            if package != importer
            for name in names - own
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or node.attr not in others:
                continue
            receiver = node.value
            if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
                continue
            problems.append(f"{where(path, node)}: .{node.attr} (private to {others[node.attr]!r})")
    assert not problems, "\n".join(problems)


def test_no_context_protocol_called_by_hand() -> None:
    """``x.__enter__()`` / ``x.__exit__()`` called on another object: enter with ``with`` or
    an ``ExitStack`` instead. Passing one's own ``__exit__`` on to what it holds (inside
    ``__exit__``), or to ``super()``, is the protocol itself and allowed."""
    problems = []
    for _, path, tree in SOURCES:
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if not (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("__enter__", "__exit__")
                ):
                    continue
                receiver = node.func.value
                delegated = function.name == node.func.attr
                parent = (
                    isinstance(receiver, ast.Call) and getattr(receiver.func, "id", "") == "super"
                )
                if not (delegated or parent):
                    problems.append(f"{where(path, node)}: .{node.func.attr}() called by hand")
    assert not problems, "\n".join(sorted(set(problems)))


def test_rules_catch_what_they_should() -> None:
    """The checks themselves: a few imports that must be refused, and some that must not."""
    assert _layer_problem("summary", "landscape")
    assert _layer_problem("summary", "train")
    assert _layer_problem("io", "summary")
    assert _layer_problem("graph", "summary")
    assert _layer_problem("board", "summary")
    assert _layer_problem("train", "ops")
    assert _layer_problem("_checks", "io")
    assert _layer_problem("io", "__init__")
    assert _layer_problem("landscape", "train") is None
    assert _layer_problem("summary", "graph") is None
    assert _layer_problem("board", "io") is None
    assert _layer_problem("board", "_proto") is None
    assert _layer_problem("ops", "summary") is None
    tree = ast.parse("from sumlens.io import _fastscan\nfrom sumlens.summary.record import _x\n")
    found = [
        _private_problem("board", imp) for imp in imports_of("sumlens.board.x", SRC / "x.py", tree)
    ]
    assert all(found) and len(found) == 2
    own = ast.parse("from sumlens.io._fastscan import scan\n")
    assert not any(
        _private_problem("io", imp) for imp in imports_of("sumlens.io.y", SRC / "io" / "y.py", own)
    )


def _importable() -> list[str]:
    packages = sorted(path.parent.name for path in SRC.glob("*/__init__.py"))
    modules = sorted(
        path.stem for path in SRC.glob("*.py") if path.stem not in ("__init__", "__main__")
    )
    return ["sumlens", *(f"sumlens.{name}" for name in packages + modules)]


@pytest.mark.parametrize("name", _importable())
def test_each_package_imports_alone(name: str) -> None:
    """``python -c "import sumlens.<package>"`` in a fresh interpreter: no import order
    of another module is needed, and no cycle bites when this one comes first."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC.parent), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", f"import {name}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
