"""The module-hierarchy graph: what is written when the operator graph cannot be captured.

It needs no example inputs and runs nothing: one node per module that holds parameters or
buffers of its own or has no submodules, in the scope the operator graph would have given
its operators (``Default/conv1-Conv2d``), with ``op_type`` the module class, its
parameters and buffers as inputs (so their shapes show), and ``extra_repr()`` as an
attribute. No data edges: without a trace, which module feeds which is unknown, and
guessing from the definition order would show edges that may not exist.

The graph is marked as such: its name ends in ``(module hierarchy)`` and every node has
the attribute ``capture = "module_hierarchy"`` (and ``reason``, why capture failed).
"""

from __future__ import annotations

import torch

from sumlens._proto import anf_ir_pb2
from sumlens.graph.common import add_attribute, module_classes, safe, scope_of, tensor_type

HIERARCHY_PATH = "module_hierarchy"


def hierarchy_graph(module: torch.nn.Module, reason: str = "") -> anf_ir_pb2.GraphProto:
    """The module-hierarchy ``GraphProto`` of ``module`` (already unwrapped)."""
    graph = anf_ir_pb2.GraphProto(name=f"{type(module).__name__} (module hierarchy)")
    classes = module_classes(module)
    for path, sub in module.named_modules():
        own = [(name, value) for name, value in sub.named_parameters(recurse=False)]
        own += [
            (name, value) for name, value in sub.named_buffers(recurse=False) if value is not None
        ]
        has_children = next(iter(sub.children()), None) is not None
        if has_children and not own:
            continue
        scope = scope_of(path, classes)
        op_type = safe(type(sub).__name__)
        node = graph.node.add()
        node.name = str(len(graph.node))
        node.op_type = op_type
        node.scope = scope
        node.full_name = f"{scope}/{op_type}-op0"
        node.instance_name = path or type(sub).__name__
        for name, value in own:
            full = f"{path}.{name}" if path else name
            node.input.add(name=full, type=anf_ir_pb2.InputProto.DATA_EDGE)
            param = graph.parameters.add(name=full)
            param.type.CopyFrom(tensor_type(value.dtype, tuple(int(s) for s in value.shape)))
        add_attribute(node, "capture", HIERARCHY_PATH)
        if reason:
            add_attribute(node, "reason", reason)
        extra = sub.extra_repr()
        if extra:
            add_attribute(node, "extra_repr", extra)
    return graph
