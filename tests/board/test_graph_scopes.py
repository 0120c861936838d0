"""A graph's scope tree (``board/query/graph_scopes.py``), and both faces built on it: the
same graph gives the same scopes, the same operators in each scope and the same edges in
``/api/v1``'s answer (:mod:`sumlens.board.query.graph_model`) and in MindInsight's
(:mod:`sumlens.board.mindinsight.graph_nodes`)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
import torch
from helpers.graph_data import Net
from helpers.graph_zoo import LeNet

from sumlens._proto import anf_ir_pb2
from sumlens.board.mindinsight.graph_nodes import NodeGraph
from sumlens.board.query.graph_model import network_view
from sumlens.board.query.graph_scopes import (
    ScopeTree,
    enclosing,
    holds,
    join,
    operator_name,
    scope_of,
)
from sumlens.graph import from_module

SCOPES = frozenset({"name_scope", "aggregation_scope"})
NOT_OPERATORS = SCOPES | {"Parameter", "Const"}
"""MindInsight's node types that are not the graph's operators."""


def test_names_split_into_scopes() -> None:
    assert (join("", "x"), join("a/b", "x")) == ("x", "a/b/x")
    assert (scope_of("x"), scope_of("a/b/x"), scope_of("a//x")) == ("", "a/b", "a/")
    assert list(enclosing("a/b/c")) == ["a", "a/b"]
    assert list(enclosing("x")) == []
    assert list(enclosing("/a/b")) == ["", "/a"]  # MindInsight stops at the empty one
    assert list(enclosing("a//b")) == ["a", "a/"]
    assert holds("a", "a/b/c") and holds("", "a") and not holds("a", "ab/c")
    assert not holds("a/b", "a/b")
    assert operator_name("Default/fc", "MatMul", "3") == "Default/fc/MatMul-op3"
    assert operator_name("", "Add", "1") == "Add-op1"
    assert operator_name("Default", "Add", "1", "Default/x/Add-op0") == "Default/x/Add-op0"


def test_a_scope_comes_with_its_ancestors_outermost_first() -> None:
    tree = ScopeTree()
    assert tree.add("a/b/c") == 3
    assert (tree.names, tree.parents) == (["", "a", "a/b", "a/b/c"], [-1, 0, 1, 2])
    assert tree.add("a/d") == 4 and tree.add("a/b") == 2 and tree.add("") == 0
    assert "a/d" in tree and "a/e" not in tree
    assert [tree.parent_name(n) for n in range(5)] == ["", "", "a", "a/b", "a"]
    assert tree.common(3, 4) == 1 and tree.common(3, 2) == 2 and tree.common(0, 3) == 0


def test_a_deep_name_is_no_recursion() -> None:
    tree = ScopeTree()
    path = "/".join(["s"] * 5000)
    assert tree.add(path) == 5000
    assert len(list(enclosing(path + "/leaf"))) == 5000


def test_counts_are_direct_and_total() -> None:
    tree = ScopeTree()
    inner, other = tree.add("a/b"), tree.add("c")
    direct, total = tree.counts([inner, inner, other, 0, tree.add("a")])
    assert tree.names == ["", "a", "a/b", "c"]
    assert direct == [1, 1, 2, 1]
    assert total == [5, 3, 2, 1]


# ---------------------------------------------------------------------- both faces


def _graph(model: str) -> anf_ir_pb2.GraphProto:
    torch.manual_seed(0)
    if model == "net":
        return from_module(Net(), (torch.zeros(2, 3, 8, 8),))
    return from_module(LeNet(), (torch.zeros(2, 1, 28, 28),))


def _mindinsight_scopes(graph: NodeGraph) -> dict[str, list[dict[str, Any]]]:
    """Every scope as MindInsight's ``graphs/nodes`` route lists it, opened from the root
    down: scope name -> its nodes."""
    listed: dict[str, list[dict[str, Any]]] = {}
    waiting = [""]
    while waiting:
        scope = waiting.pop()
        listed[scope] = graph.list_scope(scope)
        waiting += [node["name"] for node in listed[scope] if node["type"] in SCOPES]
    return listed


@pytest.mark.parametrize("model", ["net", "lenet"])
def test_both_faces_show_one_scope_tree(model: str) -> None:
    proto = _graph(model)
    view = network_view(proto)
    graph = NodeGraph.build(proto)
    ours = view["scopes"]
    listed = _mindinsight_scopes(graph)
    every = {node["name"]: node for found in listed.values() for node in found}
    # the scopes, each under its parent
    assert graph.scopes.names == [scope["name"] for scope in ours]
    assert graph.scopes.parents == [scope["parent"] for scope in ours]
    name_scopes = {name for name, node in every.items() if node["type"] == "name_scope"}
    assert {"", *name_scopes} == {scope["name"] for scope in ours}
    for scope in ours[1:]:
        parent = ours[scope["parent"]]["name"]
        assert scope["name"] in {node["name"] for node in listed[parent]}, scope["name"]
    # the operators of each scope
    nodes = view["nodes"]
    operators: dict[str, set[str]] = defaultdict(set)
    for node in nodes:
        if node["kind"] == "operator":
            operators[ours[node["scope"]]["name"]].add(node["name"])
    shown = {
        scope: {node["name"] for node in found if node["type"] not in NOT_OPERATORS}
        for scope, found in listed.items()
        if scope in name_scopes or not scope
    }
    assert {scope: names for scope, names in shown.items() if names} == operators
    # the edges between operators, and those that leave or enter each scope
    kinds = ("data", "control")
    edges = {
        (nodes[source]["name"], node["name"], kinds[kind])
        for node in nodes
        if node["kind"] == "operator"
        for source, kind in node["inputs"]
        if nodes[source]["kind"] == "operator"
    }
    assert edges and edges == {
        (source, name, attrs["edge_type"])
        for name, node in every.items()
        if node["type"] not in NOT_OPERATORS
        for source, attrs in node["input"].items()
        if every[source]["type"] not in NOT_OPERATORS
    }
    for scope in ours[1:]:
        name = scope["name"]
        entering = {s for s, t, _ in edges if holds(name, t) and not holds(name, s)}
        leaving = {t for s, t, _ in edges if holds(name, s) and not holds(name, t)}
        node = every[name]
        assert {s for s in node["input"] if every[s]["type"] not in NOT_OPERATORS} == entering
        assert {t for t in node["output"] if every[t]["type"] not in NOT_OPERATORS} == leaving


def test_both_faces_build_their_tree_with_the_one_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each face makes its scopes with :class:`ScopeTree`: a tree is made while ``/api/v1``
    answers and one while MindInsight's hierarchy is built, and the two are the same."""
    made: list[ScopeTree] = []
    made_before = ScopeTree.__init__

    def recorded(tree: ScopeTree) -> None:
        made_before(tree)
        made.append(tree)

    monkeypatch.setattr(ScopeTree, "__init__", recorded)
    proto = _graph("net")
    network_view(proto)
    (ours,) = made
    graph = NodeGraph.build(proto)
    assert made == [ours, graph.scopes]
    assert (ours.names, ours.parents) == (graph.scopes.names, graph.scopes.parents)
    assert len(ours.names) > 5
