"""A network's convolutions and the ReLUs after them as one oneDNN call (oneDNN passes).

On oneDNN's own tensors (see ``onednn``) a ReLU is a separate pass over the whole
activation, into a fresh tensor: for the digits CNN a fifth of a point's time. oneDNN can
apply the ReLU as the convolution writes its output (a "post-op"), at no extra cost; torch
reaches that through ``torch.ops.mkldnn._convolution_pointwise``, the operator its own
compiler emits for the same pattern. :func:`fuse_relus` traces the network with
``torch.fx`` and rewrites, where a ReLU is the only consumer of a layer's output:

* ``Conv2d -> ReLU`` into one fused call (on oneDNN tensors; otherwise the two as before);
* ``layer -> ReLU`` into the layer and a ReLU in place, for the layers kept as they are
  (``keep``: the first layer, which answers from precomputed outputs, see ``stem``):
  their output is a fresh tensor nobody else reads.

The traced copy shares the network's modules and parameters, so the weights the
evaluator writes in place for each point are the ones it runs with. Only PyTorch's own
layer types without hooks are touched; a network that cannot be traced, or whose fused
copy does not give the network's own outputs on a probe, is not fused (None).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import fx

from sumlens._log import logger
from sumlens.landscape import onednn
from sumlens.landscape.nested import tensor_leaves

FRESH_OUTPUT_LAYERS = (
    torch.nn.Linear,
    torch.nn.Conv1d,
    torch.nn.Conv2d,
    torch.nn.Conv3d,
)
"""Layers whose output is always a new tensor (so a ReLU after them may work in place)."""
RELU_FUNCTIONS = (torch.relu, torch.nn.functional.relu)
AGREEMENT = 1e-5
"""The fused copy's outputs on the probe must be this close (relative) to the network's."""


class ConvReLU(torch.nn.Module):
    """``relu(conv(x))`` in one oneDNN call for oneDNN tensors, the two calls otherwise."""

    def __init__(self, conv: torch.nn.Conv2d) -> None:
        super().__init__()
        self.conv = conv  # the network's own module: its weights move with every point

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        if not x.is_mkldnn:
            return torch.relu_(conv(x))
        return torch.ops.mkldnn._convolution_pointwise(
            x,
            conv.weight,
            conv.bias,
            list(conv.padding),
            list(conv.stride),
            list(conv.dilation),
            conv.groups,
            "relu",
            [],
            "",
        )


def _plain(module: torch.nn.Module) -> bool:
    """A module without hooks or a ``forward`` replaced on the instance."""
    return (
        not module._forward_hooks
        and not module._forward_pre_hooks
        and "forward" not in vars(module)
    )


def _is_relu(node: fx.Node, modules: dict[str, torch.nn.Module]) -> bool:
    """Whether ``node`` is an out-of-place ReLU of its first argument and nothing else."""
    if node.op == "call_module":
        module = modules[str(node.target)]
        return type(module) is torch.nn.ReLU and not module.inplace and _plain(module)
    if node.op == "call_function" and node.target in RELU_FUNCTIONS:
        return len(node.args) == 1 and not node.kwargs.get("inplace", False)
    return node.op == "call_method" and node.target == "relu" and len(node.args) == 1


def _fusable(conv: torch.nn.Module) -> bool:
    return (
        type(conv) is torch.nn.Conv2d
        and conv.padding_mode == "zeros"
        and not isinstance(conv.padding, str)
        and _plain(conv)
    )


def _rewrite(graph_module: fx.GraphModule, keep: set[str]) -> int:
    """Rewrite the graph as the module docstring says; the number of ReLUs rewritten."""
    modules = dict(graph_module.named_modules())
    graph = graph_module.graph
    rewritten = 0
    for node in list(graph.nodes):
        if node.op != "call_module" or len(node.users) != 1:
            continue
        (relu,) = node.users
        target, layer = str(node.target), modules[str(node.target)]
        if type(layer) not in FRESH_OUTPUT_LAYERS or not _is_relu(relu, modules):
            continue
        if target not in keep and _fusable(layer):
            name = f"_fused_relu_{rewritten}"
            graph_module.add_submodule(name, ConvReLU(layer))
            with graph.inserting_after(relu):
                replacement = graph.call_module(name, node.args, node.kwargs)
        elif target in keep or _plain(layer):
            with graph.inserting_after(relu):
                replacement = graph.call_function(torch.relu_, (node,))
        else:
            continue
        relu.replace_all_uses_with(replacement)
        graph.erase_node(relu)
        if not node.users:
            graph.erase_node(node)
        rewritten += 1
    graph.lint()
    graph_module.recompile()
    return rewritten


def _agree(fused: Any, plain: Any) -> bool:
    """The same number of output tensors, each within ``AGREEMENT`` of the network's
    (relative to its largest value)."""
    ours, theirs = tensor_leaves(fused), tensor_leaves(plain)
    if len(ours) != len(theirs):
        return False
    for mine, reference in zip(ours, theirs, strict=True):
        if mine.shape != reference.shape:
            return False
        if not reference.numel():
            continue
        mine, reference = onednn.dense(mine).double(), onednn.dense(reference).double()
        scale = max(reference.abs().max().item(), 1e-30)
        if (mine - reference).abs().max().item() > AGREEMENT * scale:
            return False
    return True


def fuse_relus(
    network: torch.nn.Module, probe: tuple[Any, ...], keep: set[str]
) -> torch.nn.Module | None:
    """A traced copy of ``network`` with its ReLUs fused as the module docstring says, or
    None: nothing to fuse, no tracing, global hooks, or outputs that differ on ``probe``
    (inputs of a pass, oneDNN tensors where the pass has them)."""
    if torch.nn.modules.module._global_forward_hooks or (
        torch.nn.modules.module._global_forward_pre_hooks
    ):
        return None
    try:
        graph_module = fx.symbolic_trace(network)
        if not _rewrite(graph_module, keep):
            return None
        with torch.inference_mode():
            agrees = _agree(graph_module(*probe), network(*probe))
    except Exception as err:  # whatever tracing or the fused operator cannot do
        logger.info("landscape: ReLUs not fused (%s: %s)", type(err).__name__, err)
        return None
    if not agrees:
        logger.info("landscape: ReLUs not fused (outputs differ on the probe)")
        return None
    return graph_module
