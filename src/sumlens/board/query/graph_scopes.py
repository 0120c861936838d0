"""A graph's scope tree: the rule both faces of the dashboard group a graph's nodes by.

A node of a network graph is named by a ``/``-separated path
(``Default/fc1-Dense/MatMul-op0``): the part before the last ``/`` is its scope, and every
prefix of a scope is a scope too, up to the root (``""``). An operator without a full name
is named ``<scope>/<op_type>-op<id>`` (:func:`operator_name`). :class:`ScopeTree` numbers
the scopes (the root 0, each scope after its parent) and answers what both faces ask of
them: a scope's parent, the innermost scope holding two others, how many nodes each holds.

Both faces build their tree here and only shape it: ``/api/v1`` (:mod:`.graph_model`) sends
the tree with each node's scope number and counts; MindInsight's face
(:mod:`sumlens.board.mindinsight.graph_nodes`) makes each scope a ``name_scope`` node that
carries the edges leaving it (:func:`holds` says which edges those are), after folding and
renaming nodes by MindInsight's rules. Names are split on ``/`` only, with loops rather than
recursion (a name from a file may hold thousands of ``/``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator


def join(scope: str, name: str) -> str:
    """``scope/name``, or ``name`` at the root."""
    return f"{scope}/{name}" if scope else name


def scope_of(name: str) -> str:
    """The scope of a node named ``name``: its path before the last ``/`` (the root: "")."""
    return name.rsplit("/", 1)[0] if "/" in name else ""


def enclosing(name: str) -> Iterator[str]:
    """Every path before a ``/`` of ``name``, outermost first: ``a`` then ``a/b`` for
    ``a/b/c``; ``""`` first for a name that starts with ``/``."""
    at = name.find("/")
    while at != -1:
        yield name[:at]
        at = name.find("/", at + 1)


def holds(scope: str, name: str) -> bool:
    """Whether the scope ``scope`` holds the node (or scope) ``name``, at any depth."""
    return not scope or name.startswith(f"{scope}/")


def operator_name(scope: str, op_type: str, node_id: str, full_name: str = "") -> str:
    """An operator's name: its full name, else ``<scope>/<op_type>-op<node_id>``."""
    return full_name or join(scope, f"{op_type}-op{node_id}")


class ScopeTree:
    """Scope paths numbered from 0 (the root, ""), each with its parent's number."""

    def __init__(self) -> None:
        self.names: list[str] = [""]
        self.parents: list[int] = [-1]
        self._index: dict[str, int] = {"": 0}

    def __contains__(self, path: str) -> bool:
        return path in self._index

    def add(self, path: str) -> int:
        """The number of ``path``, adding it and its missing ancestors (outermost first)."""
        missing = []
        while path not in self._index:  # a loop, not recursion: a name may hold many "/"
            missing.append(path)
            path = scope_of(path)
        number = self._index[path]
        for name in reversed(missing):
            self.parents.append(number)
            number = self._index[name] = len(self.names)
            self.names.append(name)
        return number

    def parent_name(self, number: int) -> str:
        """The path of the scope holding scope ``number`` (the root: "", as its children)."""
        return self.names[self.parents[number]] if number else ""

    def common(self, first: int, second: int) -> int:
        """The innermost scope holding both."""
        above = set()
        while first >= 0:
            above.add(first)
            first = self.parents[first]
        while second not in above:
            second = self.parents[second]
        return second

    def counts(self, node_scopes: Iterable[int]) -> tuple[list[int], list[int]]:
        """For nodes in the scopes numbered ``node_scopes``: each scope's direct node count,
        and its total with the nodes of the scopes below it."""
        direct = [0] * len(self.names)
        for scope in node_scopes:
            direct[scope] += 1
        total = list(direct)
        for index in range(len(self.names) - 1, 0, -1):  # children are numbered after parents
            total[self.parents[index]] += total[index]
        return direct, total
