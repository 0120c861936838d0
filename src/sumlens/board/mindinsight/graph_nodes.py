"""A network graph as MindInsight's graph routes show it: a hierarchy of named nodes.

The anf_ir ``GraphProto`` of a summary file lists operators (with a scope such as
``Default/fc1-Dense``), parameters and constants, and edges by node id. MindInsight
turns that into a tree the page can open level by level, and :class:`NodeGraph` builds
the same tree, node for node and edge for edge, so ``/v1/mindinsight/datavisual/graphs/*``
answers as MindInsight 2.3.1 does:

1. operators become ``<scope>/<op_type>-op<id>`` (or their full name), parameters and
   constants keep their names; edges are re-keyed from ids to names;
2. a parameter used inside a scope is copied into that scope (one copy per scope);
3. five or more nodes of one type in one scope (ten in the optimized graph) are folded
   into an *aggregation scope* ``<type>[<count>]_<i>``; an aggregation of parameters is
   laid out apart (*independent layout*), with proxy edges to what it feeds;
4. every prefix of a name becomes a *name scope* that carries the edges leaving it
   (a node whose name is also a prefix is renamed ``(<name>)``): the scopes of the tree
   ``/api/v1`` draws too (:mod:`sumlens.board.query.graph_scopes`), numbered in
   :attr:`NodeGraph.scopes`;
5. constants are copied into each scope that uses them, like parameters;
6. each scope counts its direct children.

(``stack_info`` is always empty: our GraphProto, like MindInsight's, has no source
addresses.)

The *optimized* graph first drops gradient and optimizer operators, bypasses the
pass-through operators (Load, TupleGetItem, MakeTuple, UpdateState), removes operators
left without edges, and lifts the nodes of a scope that holds only one type of operator
named in the scope (``.../relu-ReLU/ReLU-op0``) up one level.

Attribute values are shown in protobuf's text format as MindInsight prints them
(:func:`sumlens.board.proto_text.text_format`). Nothing here is imported from
MindInsight: the rules above were read from its source and written anew; the tests compare
the answers with the real MindInsight (tests/compat/test_mindinsight_routes.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sumlens._proto import anf_ir_pb2
from sumlens.board.plugins import MINDINSIGHT_PLUGINS
from sumlens.board.proto_text import data_type_name, known_data_type, text_format, type_name
from sumlens.board.query.graph_scopes import ScopeTree, enclosing, holds, join, operator_name

NAME_SCOPE = "name_scope"
AGGREGATION_SCOPE = "aggregation_scope"
PARAMETER = "Parameter"
CONST = "Const"
PASS_THROUGH = frozenset({"Load", "TupleGetItem", "MakeTuple", "UpdateState"})
"""Operators the optimized graph bypasses: their inputs feed their consumers directly."""
LINKS = ("inputs", "outputs", "proxy_inputs", "proxy_outputs")
MAX_ATTRIBUTE_BYTES = 1024
"""Attribute values larger than this (serialized) are left out (constants: their dtype only)."""
PLUGIN_SUFFIXES = tuple(f"[:{plugin}]" for plugin in MINDINSIGHT_PLUGINS)
"""Full names of summary operators end with one of these; such nodes keep their proto name."""
_FORBIDDEN = frozenset('<>"')
_DT_TENSOR = anf_ir_pb2.DataType.Value("DT_TENSOR")
_DT_TUPLE = anf_ir_pb2.DataType.Value("DT_TUPLE")


class GraphError(ValueError):
    """The graph cannot be shown (a node name MindInsight refuses, an edge to nothing)."""


@dataclass(eq=False)
class GraphNode:
    """One node of the hierarchy; ``links`` maps each of :data:`LINKS` to {name: attributes}."""

    name: str
    node_id: str
    type: str = ""
    scope: str = ""
    order: int = -1
    output_i: int = 0
    subnode_count: int = 0
    independent_layout: bool = False
    dynamic_shape: bool = False
    attr: dict[str, str] = field(default_factory=dict)
    links: dict[str, dict[str, dict[str, Any]]] = field(
        default_factory=lambda: {kind: {} for kind in LINKS}
    )
    output_shape: list[list[int]] = field(default_factory=list)
    output_data_type: str = ""

    def link(self, kind: str, name: str, attrs: dict[str, Any]) -> None:
        """Add an edge; a shape with an unknown dim (-1, -2) marks the node dynamic."""
        if kind in ("inputs", "outputs") and not self.dynamic_shape:
            self.dynamic_shape = any(-1 in dims or -2 in dims for dims in attrs.get("shape", []))
        self.links[kind][name] = attrs

    def to_json(self) -> dict[str, Any]:
        """The node as MindInsight's graph routes return it."""
        return {
            "name": self.name,
            "type": self.type,
            "is_dynamic_shape_node": self.dynamic_shape,
            "attr": self.attr,
            "input": self.links["inputs"],
            "output": self.links["outputs"],
            "output_i": self.output_i,
            "proxy_input": self.links["proxy_inputs"],
            "proxy_output": self.links["proxy_outputs"],
            "subnode_count": self.subnode_count,
            "independent_layout": self.independent_layout,
            "stack_info": [],
        }


class NodeGraph:
    """The node hierarchy of one ``GraphProto`` (see the module docstring)."""

    def __init__(self, optimized: bool = False) -> None:
        self.optimized = optimized
        self.nodes: dict[str, GraphNode] = {}
        self.scopes = ScopeTree()
        """The name scopes, numbered by the scope tree ``/api/v1`` numbers its scopes with."""
        self._by_id: dict[str, str] = {}
        self._kept: dict[str, dict[str, GraphNode]] = {PARAMETER: {}, CONST: {}}

    @classmethod
    def build(cls, proto: anf_ir_pb2.GraphProto, optimized: bool = False) -> NodeGraph:
        """The hierarchy of ``proto``; raises :class:`GraphError` for a graph MindInsight
        would refuse."""
        graph = cls(optimized)
        graph._read_operators(proto.node)
        graph._read_parameters(proto.parameters)
        graph._read_constants(proto.const_vals)
        graph._resolve_inputs()
        graph._fill_outputs()
        if optimized:
            graph._simplify()
        graph._scope_variables(PARAMETER)
        graph._aggregate()
        graph._lay_out_parameters()
        graph._add_name_scopes()
        graph._scope_variables(CONST)
        graph._count_children()
        return graph

    # ------------------------------------------------------------------ queries

    @property
    def empty(self) -> bool:
        """True when no node shows at the root (MindInsight then lists no graph)."""
        return not any(node.scope == "" for node in self.nodes.values())

    def has(self, name: str) -> bool:
        """Whether a node of that name exists."""
        return name in self.nodes

    def list_scope(self, scope: str = "") -> list[dict[str, Any]]:
        """The nodes directly inside ``scope`` ("" for the root)."""
        return [node.to_json() for node in self.nodes.values() if node.scope == scope]

    def search(self, pattern: str | None) -> list[GraphNode]:
        """Nodes whose last name segment(s) contain ``pattern`` (case-insensitive): the
        match must leave no ``/`` after it. Nothing for an empty pattern or ``/``."""
        if not pattern or pattern == "/":
            return []
        wanted = pattern.lower()
        found = []
        for name, node in self.nodes.items():
            lowered = name.lower()
            at = lowered.rfind(wanted)
            if at >= 0 and lowered.find("/", at + len(wanted)) == -1:
                found.append(node)
        return found

    def tree(self, nodes: list[GraphNode]) -> list[dict[str, Any]]:
        """``nodes`` nested under their scopes: [{name, type, is_dynamic_shape_node, nodes}].

        A node listed after nodes inside it replaces the subtree they made (as MindInsight).
        """
        root: dict[str, Any] = {"children": {}}
        for node in nodes:
            parts = node.name.split("/")
            level, path = root, ""
            for part in parts[:-1]:
                path = join(path, part)
                child = level["children"].get(part)
                if child is None:
                    scope = self.nodes.get(path)
                    child = _tree_node(path, scope.type if scope else None, node.dynamic_shape)
                    level["children"][part] = child
                level = child
            level["children"][parts[-1]] = _tree_node(node.name, node.type, node.dynamic_shape)
        return _tree_json(root)

    def path_to(self, name: str) -> dict[str, Any]:
        """The root's nodes, then each enclosing scope's nodes down to ``name``."""
        answer: dict[str, Any] = {"nodes": self.list_scope(), "scope_name": "", "children": {}}
        level = answer["children"]
        for scope in enclosing(name):
            level.update({"nodes": self.list_scope(scope), "scope_name": scope, "children": {}})
            level = level["children"]
        return answer

    # ------------------------------------------------------------------ the maps

    def _get(self, name: str) -> GraphNode | None:
        return self.nodes.get(name)

    def _store(self, node: GraphNode) -> None:
        if node.type in self._kept:
            self._kept[node.type][node.name] = node
        self.nodes[node.name] = node
        self._by_id[node.node_id] = node.name

    def _drop(self, names: list[str] | set[str]) -> None:
        for name in names:
            for kept in self._kept.values():
                kept.pop(name, None)
            node = self.nodes.pop(name)
            self._by_id.pop(node.node_id, None)

    def _rename(self, node: GraphNode, new_name: str, with_scopes: bool = False) -> None:
        """Give ``node`` a new name, and re-point the edges of the nodes it links to
        (``with_scopes``: of their enclosing scopes too)."""
        old = node.name
        node.name = new_name
        node.scope = new_name.rsplit("/", 1)[0]
        touched: dict[str, GraphNode] = {}
        for kind in LINKS:
            for target in node.links[kind]:
                other = self._get(target)
                if other is None:
                    continue
                touched[target] = other
                if not with_scopes:
                    continue
                for scope in enclosing(target):
                    if scope not in touched and (holder := self._get(scope)) is not None:
                        touched[scope] = holder
        for other in touched.values():
            for kind in LINKS:
                attrs = other.links[kind].pop(old, None)
                if attrs is not None:
                    other.link(kind, new_name, attrs)
        self._drop([old])
        self._store(node)

    def _operators(self) -> list[GraphNode]:
        """Every node but parameters and constants, in the proto's order."""
        found = [node for node in self.nodes.values() if node.type not in (PARAMETER, CONST)]
        return sorted(found, key=lambda node: node.order)

    # ------------------------------------------------------------------ reading the proto

    def _read_operators(self, protos: Any) -> None:
        for order, proto in enumerate(protos):
            if not proto.name:
                continue
            if self.optimized and (
                proto.full_name.startswith("Gradients")
                or "optimizer" in proto.full_name
                or "opt" in proto.instance_name
            ):
                continue
            node_id = proto.name.split("/")[-1].split("op")[-1]
            if proto.full_name.lower().endswith(PLUGIN_SUFFIXES):  # named by its proto name
                name = operator_name(proto.scope, proto.op_type, proto.name)
            else:
                name = operator_name(proto.scope, proto.op_type, node_id, proto.full_name)
            node = GraphNode(_checked(name), node_id, type=proto.op_type, order=order)
            for attribute in proto.attribute:
                if attribute.value.ByteSize() > MAX_ATTRIBUTE_BYTES:
                    continue
                if attribute.name in ("input_is_dynamic_shape", "output_is_dynamic_shape"):
                    node.dynamic_shape = node.dynamic_shape or attribute.value.bool_val
                node.attr[attribute.name] = text_format(attribute.value)
            for edge in proto.input:
                if not edge.name:
                    continue
                source = edge.name.split("op")[-1] if "/" in edge.name else edge.name
                kind = "control" if edge.type else "data"
                attrs = {
                    "shape": [],
                    "edge_type": kind,
                    "independent_layout": False,
                    "data_type": "",
                }
                node.link("inputs", source, attrs)
            node.output_i = proto.output_i
            node.scope = proto.scope
            node.output_shape = _shapes(proto.output_type)
            node.output_data_type = type_name(proto.output_type, listed=True)
            self._store(node)

    def _read_parameters(self, protos: Any) -> None:
        for proto, node in _named_nodes(protos, "name", PARAMETER):
            node.output_shape = _shapes(proto.type)
            node.output_data_type = type_name(proto.type, listed=True)
            node.attr = {"type": node.output_data_type, "shape": str(node.output_shape)}
            self._store(node)

    def _read_constants(self, protos: Any) -> None:
        for proto, node in _named_nodes(protos, "key", CONST):
            if proto.value.ByteSize() > MAX_ATTRIBUTE_BYTES:
                node.attr = {proto.key: "dtype: " + data_type_name(proto.value.dtype)}
            else:
                node.attr = {proto.key: text_format(proto.value)}
            tensor = proto.value.dtype == _DT_TENSOR
            node.output_shape = [list(proto.value.tensor_val.dims) if tensor else []]
            self._store(node)

    def _resolve_inputs(self) -> None:
        """Inputs name node ids in the proto: key them by the node names instead."""
        for node in list(self.nodes.values()):
            for source_id, attrs in list(node.links["inputs"].items()):
                del node.links["inputs"][source_id]
                source = self._get(self._by_id.get(source_id, ""))
                if source is None:
                    continue
                attrs["shape"], attrs["data_type"] = source.output_shape, source.output_data_type
                node.link("inputs", source.name, attrs)
        if self.optimized:
            for node in self._operators():
                self._bypass(node, "inputs")

    def _fill_outputs(self) -> None:
        for node in self.nodes.values():
            for source_name, attrs in node.links["inputs"].items():
                source = self._get(source_name)
                if source is not None and source.type not in (CONST, PARAMETER):
                    source.link("outputs", node.name, attrs)
        if self.optimized:
            for node in self._operators():
                self._bypass(node, "outputs")

    def _bypass(self, node: GraphNode, kind: str) -> None:
        """Link ``node`` past the pass-through operators it is linked to (``kind`` side)."""
        for name in list(node.links[kind]):
            middle = self._get(name)
            if middle is None or middle.type not in PASS_THROUGH:
                continue
            del node.links[kind][name]
            for far_name, attrs in list(middle.links[kind].items()):
                far = self._get(far_name)
                if far is None:
                    continue
                attrs["shape"], attrs["data_type"] = far.output_shape, far.output_data_type
                node.link(kind, far.name, attrs)

    # ------------------------------------------------------------------ the optimized graph

    def _simplify(self) -> None:
        self._drop([name for name, node in self.nodes.items() if node.type in PASS_THROUGH])
        self._drop(
            [
                node.name
                for node in self._operators()
                if not node.links["inputs"] and not node.links["outputs"]
            ]
        )
        self._lift_single_type_scopes()

    def _lift_single_type_scopes(self) -> None:
        """A scope of one operator type, more than one node, whose name contains that type
        and which holds no deeper scope: its nodes move up one level."""
        operators = self._operators()
        types: dict[str, set[str]] = defaultdict(set)
        counts: dict[str, int] = defaultdict(int)
        for node in operators:
            if node.scope and "/" in node.scope:
                types[node.scope].add(node.type)
                counts[node.scope] += 1
        lifted = {
            scope
            for scope, kinds in types.items()
            if len(kinds) == 1 and counts[scope] > 1 and next(iter(kinds)) in scope
        }
        lifted = {s for s in lifted if not any(other.startswith(f"{s}/") for other in types)}
        for node in operators:
            if node.scope in lifted:
                parent = node.scope.rsplit("/", 1)[0]
                self._rename(node, f"{parent}/{node.name.rsplit('/', 1)[1]}")

    # ------------------------------------------------------------------ the hierarchy

    def _scope_variables(self, kind: str) -> None:
        """Copy each parameter (or constant) into every scope where a node uses it."""
        kept = self._kept[kind]
        copies: dict[str, GraphNode] = {}
        for node in list(self.nodes.values()):
            for source, attrs in list(node.links["inputs"].items()):
                if source not in kept:
                    continue
                name = join(node.scope, source)
                copy = copies.get(name)
                if copy is None:
                    origin = self.nodes[source]
                    copy = GraphNode(
                        name,
                        name,
                        type=origin.type,
                        scope=node.scope,
                        output_i=origin.output_i,
                        subnode_count=origin.subnode_count,
                        independent_layout=origin.independent_layout,
                        attr=dict(origin.attr),
                        output_shape=origin.output_shape,
                        output_data_type=origin.output_data_type,
                    )
                copy.link("outputs", node.name, dict(attrs))
                copies[name] = copy
                del node.links["inputs"][source]
                node.link("inputs", name, dict(attrs))
        for copy in copies.values():
            self._store(copy)
        self._drop(set(kept) - set(copies))

    def _aggregate(self) -> None:
        """Fold the nodes of one type in one scope into an aggregation scope when many."""
        least = 10 if self.optimized else 5
        groups: dict[str, list[GraphNode]] = defaultdict(list)
        for node in self.nodes.values():
            if node.type not in (CONST, NAME_SCOPE):
                groups[join(node.scope, node.type)].append(node)
        chosen = [group for group, members in groups.items() if len(members) >= least]
        made = []
        for index, group in enumerate(chosen):
            scope, _, op_type = group.rpartition("/")
            members = groups[group]
            name = join(scope, f"{op_type}[{len(members)}]_{index}")
            fold = GraphNode(name, name, type=AGGREGATION_SCOPE, scope=scope)
            fold.subnode_count = len(members)
            for member in members:
                member.scope = name
                self._rename(member, f"{name}/{member.name.split('/')[-1]}")
            self._store(fold)
            made.append((fold, members))
        for fold, members in made:
            self._inherit(fold, members)

    def _inherit(self, parent: GraphNode, children: list[GraphNode]) -> None:
        """Give ``parent`` the edges of ``children`` that leave it (not those to constants)."""
        for kind in LINKS:
            for child in children:
                for target, attrs in child.links[kind].items():
                    other = self._get(target)
                    if other is None or holds(parent.name, target) or other.type == CONST:
                        continue
                    parent.link(kind, target, attrs)

    def _lay_out_parameters(self) -> None:
        """Aggregated parameters are drawn apart: proxy edges stand for their outputs."""
        folds = {
            node.name: node
            for node in self.nodes.values()
            if node.type == AGGREGATION_SCOPE and PARAMETER in node.name.split("/")[-1]
        }
        members: dict[str, list[GraphNode]] = defaultdict(list)
        for node in self.nodes.values():
            if node.scope in folds:
                members[node.scope].append(node)
        for fold in folds.values():
            fold.independent_layout = True
            for target, attrs in list(fold.links["outputs"].items()):
                proxy = {"edge_type": attrs["edge_type"]}
                other = self._required(target)
                other.link("proxy_inputs", fold.name, proxy)
                if other.scope == fold.scope:
                    fold.link("proxy_outputs", target, proxy)
                else:
                    fold.link("proxy_outputs", other.scope, proxy)
                    self._required(other.scope).link("proxy_inputs", fold.name, proxy)
            for member in members[fold.name]:
                member.independent_layout = True
                for target, attrs in list(member.links["outputs"].items()):
                    other = self._required(target)
                    proxy = {"edge_type": attrs["edge_type"]}
                    where = target if other.scope == fold.scope else other.scope
                    member.link("proxy_outputs", where, proxy)
                    edge = other.links["inputs"][member.name]
                    edge["independent_layout"] = True
                    other.link("inputs", member.name, edge)

    def _required(self, name: str) -> GraphNode:
        node = self._get(name)
        if node is None:
            raise GraphError(f"an edge leads to {name!r}, which is not a node of the graph")
        return node

    def _add_name_scopes(self) -> None:
        """Every scope of the nodes' names becomes a name scope holding the edges that leave
        it, unless an aggregation scope has its name. A name starting with ``/`` is in no name
        scope (as MindInsight)."""
        made: dict[str, GraphNode] = {}
        order = list(self.nodes)
        for name in order:  # grows: a node that gives way is taken again under its new name
            node = self._get(name)
            if node is None:
                continue
            for scope in enclosing(name):
                if not scope:
                    break
                holder = made.get(scope)
                if holder is None:
                    holder = self._name_scope(scope, order)
                    if holder is None:
                        continue
                    made[scope] = holder
                self._inherit(holder, [node])
        for holder in made.values():
            self._store(holder)

    def _name_scope(self, scope: str, order: list[str]) -> GraphNode | None:
        """A new name scope ``scope``, numbered in :attr:`scopes`; None where an aggregation
        scope has that name. A node of that name gives way: it is renamed ``(name)`` and its
        new name is added to ``order``."""
        clash = self._get(scope)
        if clash is not None and clash.type == AGGREGATION_SCOPE:
            return None
        if clash is not None:
            new_name = join(clash.scope, f"({scope.split('/')[-1]})")
            self._rename(clash, new_name, with_scopes=True)
            order.append(new_name)
        number = self.scopes.add(scope)
        return GraphNode(scope, scope, type=NAME_SCOPE, scope=self.scopes.parent_name(number))

    def _count_children(self) -> None:
        counts: dict[str, int] = defaultdict(int)
        for node in self.nodes.values():
            if node.scope and node.scope in self.nodes:
                counts[node.scope] += 1
        for name, count in counts.items():
            self.nodes[name].subnode_count = count


def _tree_node(name: str, kind: str | None, dynamic: bool) -> dict[str, Any]:
    return {"name": name, "type": kind, "dynamic": dynamic, "children": {}}


def _tree_json(level: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": child["name"],
            "type": child["type"],
            "is_dynamic_shape_node": child["dynamic"],
            "nodes": _tree_json(child),
        }
        for child in level["children"].values()
    ]


def _checked(name: str) -> str:
    if _FORBIDDEN & set(name):
        raise GraphError(f'node name {name!r} holds one of < > " (MindInsight refuses them)')
    return name


def _named_nodes(protos: Any, key: str, node_type: str) -> Iterator[tuple[Any, GraphNode]]:
    """Each of ``protos`` that has a name (its field ``key``), with a new ``node_type`` node
    of that name and id."""
    for proto in protos:
        name = getattr(proto, key)
        if name:
            yield proto, GraphNode(_checked(name), name, type=node_type)


def _shapes(proto: anf_ir_pb2.TypeProto) -> list[list[int]]:
    """The output shapes a TypeProto declares (one per tensor, [] for a scalar)."""
    known = proto.HasField("data_type") and proto.data_type == known_data_type(proto.data_type)
    if known and proto.data_type not in (_DT_TENSOR, _DT_TUPLE):
        return [[]]
    shapes = []
    if proto.HasField("tensor_type"):
        shapes.append([dim.size for dim in proto.tensor_type.shape.dim])
    if proto.HasField("sequence_type"):
        for element in proto.sequence_type.elem_types:
            shapes.extend(_shapes(element))
    return shapes
