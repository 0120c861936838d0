"""The ``sumlens`` source read as text with ``ast``: its modules and their imports.

The layer tests (tests/test_layers.py, tests/board/test_wings.py) check rules on the code
itself, so nothing is imported to check it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "sumlens"
TOP_LEVEL = frozenset(
    [path.stem for path in SRC.glob("*.py")]
    + [path.parent.name for path in SRC.glob("*/__init__.py")]
)
"""The packages and modules directly inside ``sumlens``."""


@dataclass(frozen=True)
class Import:
    """One ``sumlens`` import: where it is and what it names."""

    where: str
    """``path:line`` relative to the repository."""
    target: str
    """The imported module, e.g. ``sumlens.summary.record``."""
    names: tuple[str, ...]
    """The names taken from it by ``from ... import`` (empty for ``import``)."""


def source_modules() -> Iterator[tuple[str, Path]]:
    """Every module of the package as (dotted name, path); ``sumlens.__init__`` for the root."""
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        name = ".".join(parts)
        yield (name if name != "sumlens" else "sumlens.__init__"), path


def where(path: Path, node: ast.AST) -> str:
    """``path:line`` of ``node``, relative to the repository."""
    return f"{path.relative_to(SRC.parents[1])}:{node.lineno}"


def imports_of(module: str, path: Path, tree: ast.Module) -> Iterator[Import]:
    """Every import of a ``sumlens`` module in ``tree``, at any depth (functions included)."""
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "sumlens" or alias.name.startswith("sumlens."):
                    yield Import(where(path, node), alias.name, ())
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            names = tuple(alias.name for alias in node.names)
            if target == "sumlens":  # ``from sumlens import io`` names a module
                for name in names:
                    full = f"sumlens.{name}" if name in TOP_LEVEL else "sumlens"
                    yield Import(where(path, node), full, () if name in TOP_LEVEL else (name,))
            elif target.startswith("sumlens."):
                yield Import(where(path, node), target, names)


def parsed_sources() -> list[tuple[str, Path, ast.Module]]:
    """Every module's name, path and syntax tree."""
    return [(name, path, ast.parse(path.read_text(), str(path))) for name, path in source_modules()]
