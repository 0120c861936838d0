"""Can spawned worker processes find a callable by name? Asked before they start.

A spawned worker gets ``callback_fn`` pickled by reference: its module and qualified
name. A function of the main script is looked up in that script re-run as
``__mp_main__``, where ``if __name__ == "__main__":`` blocks do not run, and a package's
``__main__`` is not imported at all. :func:`pickled_callback` refuses in the caller, with
a ``TypeError`` naming ``callback_fn``, what the workers could not find; it reads the main
script's source (:mod:`ast`, :mod:`symtable`) to tell, and where it cannot tell (no
source, names bound dynamically) it lets the function through: the worker then says so.
"""

from __future__ import annotations

import ast
import pickle
import symtable
import sys
from collections.abc import Callable
from typing import Any

_IMPORTABLE = (
    "define callback_fn at the top level of an importable .py file (not under "
    '`if __name__ == "__main__":`, not a lambda, a nested function or an interactive '
    "session), or run a single in-process worker (device_ids=None / num_workers=None or 1)"
)


def not_importable(name: str, why: str) -> TypeError:
    """The error for a ``callback_fn`` that worker processes cannot find, and why."""
    return TypeError(
        f"callback_fn {name!r} must be importable by worker processes, but {why}; {_IMPORTABLE}"
    )


def _is_main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either way round)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides) and any(
        isinstance(x, ast.Constant) and x.value == "__main__" for x in sides
    )


class _WithoutMainGuards(ast.NodeTransformer):
    """The module as a spawned worker runs it: main-guarded blocks moved to ``removed``."""

    def __init__(self) -> None:
        self.removed: list[ast.stmt] = []

    def visit_If(self, node: ast.If) -> ast.AST:
        if _is_main_guard(node):
            self.removed += node.body
            node.body = [ast.Pass()]
        return self.generic_visit(node)


def _binds(statements: list[ast.stmt], name: str, path: str) -> bool:
    """Whether running ``statements`` as a module binds the global ``name``."""
    source = ast.unparse(ast.Module(body=statements, type_ignores=[]))
    try:
        symbol = symtable.symtable(source, path, "exec").lookup(name)
    except KeyError:
        return False
    return symbol.is_assigned() or symbol.is_imported()


def _binds_dynamically(node: ast.AST) -> bool:
    """A star import, ``exec``/``globals``/``vars``/``setattr`` call or ``__dict__`` use."""
    if isinstance(node, ast.ImportFrom):
        return any(alias.name == "*" for alias in node.names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in ("exec", "globals", "vars", "setattr")
    return isinstance(node, ast.Attribute) and node.attr == "__dict__"


def _missing_from_main(qualname: str) -> str | None:
    """Why workers would not find ``__main__.<qualname>``, or None if they would.

    A spawned worker re-runs the main script as ``__mp_main__`` (a package's
    ``__main__`` not at all) and looks the name up there. The script's source says
    whether its main-guarded blocks are the only place that binds the name
    (:mod:`symtable`); where the source can't be read or binds names dynamically, the
    workers are left to say (see :func:`_init_worker`).
    """
    main = sys.modules.get("__main__")
    spec_name = getattr(getattr(main, "__spec__", None), "name", None)
    if spec_name == "__main__" or (spec_name or "").endswith(".__main__"):
        return f"it lives in {spec_name!r}, which worker processes do not import"
    path = getattr(main, "__file__", None)
    if not path:
        return "it lives in an interactive __main__ that worker processes cannot import"
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None
    worker_view = _WithoutMainGuards()
    tree = worker_view.visit(tree)
    if any(_binds_dynamically(node) for node in ast.walk(tree)):
        return None
    first = qualname.split(".")[0]
    try:
        if _binds(tree.body, first, path) or not _binds(worker_view.removed, first, path):
            return None
    except SyntaxError:  # a construct only valid in its original place: can't tell
        return None
    return (
        f'{path} defines {first!r} only under `if __name__ == "__main__":`, which worker '
        "processes do not run (they re-run the script as __mp_main__)"
    )


def pickled_callback(callback_fn: Callable[[], Any], workers: int) -> bytes:
    """``callback_fn`` pickled for worker processes, which import it by name.

    Refuses (TypeError naming ``callback_fn``) what they could not find: lambdas, nested
    functions, functions of an interactive session, and functions (or, for a callable
    object, its class) of the main script defined under ``if __name__ == "__main__":``.
    """
    name = getattr(callback_fn, "__qualname__", repr(callback_fn))
    try:
        payload = pickle.dumps(callback_fn)
    except (pickle.PicklingError, AttributeError, TypeError) as err:
        raise not_importable(
            name, f"it cannot be sent to {workers} worker processes ({err})"
        ) from None
    named = callback_fn if hasattr(callback_fn, "__qualname__") else type(callback_fn)
    if getattr(named, "__module__", None) == "__main__":
        why = _missing_from_main(named.__qualname__)
        if why is not None:
            raise not_importable(name, why)
    return payload
