"""The network's first layer, evaluated three times instead of once per point.

A landscape point moves every weight to ``base + a*v + b*w``. The first layer of most
networks (a convolution or a linear map reading the input itself) is linear in its
weight and bias together, so on the same samples

    layer(x; base + a*v + b*w) = layer(x; base) + a * layer(x; v) + b * layer(x; w)

(the bias taking its share in each term). Its three outputs are computed once per
plane for every pass; a point then costs two scaled additions instead of the layer
(on oneDNN tensors when the pass is one, see ``onednn``: kept in that form, they spare
a conversion per point).
For the digits CNN the first convolution is a tenth of the arithmetic but, reading a
single channel, a sixth of the time. Only PyTorch's own layers of those types count,
without hooks; the outputs are kept only when they fit in ``STEM_CACHE_BYTES``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.func import functional_call

from sumlens.landscape import onednn

LINEAR_LAYERS = (
    torch.nn.Linear,
    torch.nn.Conv1d,
    torch.nn.Conv2d,
    torch.nn.Conv3d,
)
"""Layers whose output is linear in (weight, bias) jointly."""
STEM_CACHE_BYTES = 256 * 2**20
"""At most this many bytes of first-layer outputs (three per sample) are kept."""


def find_stem(network: torch.nn.Module, inputs: tuple[Any, ...]) -> tuple[str, int] | None:
    """``(name, i)`` of the first linear layer ``network`` applies to its input ``i``
    itself (the very tensor object), found by running it once on ``inputs``; else None."""
    calls: list[tuple[str, Any]] = []

    def watch(name: str) -> Any:
        def pre_hook(_module: torch.nn.Module, args: tuple[Any, ...]) -> None:
            calls.append((name, args[0] if args else None))

        return pre_hook

    handles = [
        module.register_forward_pre_hook(watch(name))
        for name, module in network.named_modules()
        if type(module) in LINEAR_LAYERS
        and not module._forward_hooks
        and not module._forward_pre_hooks
        and "forward" not in vars(module)
    ]
    try:
        with torch.inference_mode():
            network(*inputs)
    finally:
        for handle in handles:
            handle.remove()
    for name, arg in calls:
        for i, tensor in enumerate(inputs):
            if arg is tensor:
                return name, i
    return None


class StemOutputs:
    """The first layer's outputs at the plane's base and along its two directions, per
    pass input, and the forward that combines them for the point being evaluated."""

    def __init__(self, name: str, index: int) -> None:
        self.name = name
        self.index = index
        self._outputs: dict[int, tuple[torch.Tensor, ...]] = {}

    @staticmethod
    def _weights(
        layer: torch.nn.Module, prefix: str, source: dict[str, torch.Tensor], zero: bool
    ) -> dict[str, torch.Tensor]:
        out = {}
        for name, param in layer.named_parameters():
            value = source.get(prefix + name)
            if value is None:  # not moved by the plane: a constant of the base
                value = torch.zeros_like(param) if zero else param.detach()
            out[name] = value
        return out

    def compute(
        self,
        network: torch.nn.Module,
        passes: list[tuple[Any, ...]],
        base: dict[str, torch.Tensor],
        v: dict[str, torch.Tensor],
        w: dict[str, torch.Tensor],
    ) -> bool:
        """Fill the outputs for every pass; False (nothing kept) when they would not fit."""
        layer = network.get_submodule(self.name)
        prefix = self.name + "."
        inputs = [p[self.index] for p in passes]
        with torch.inference_mode():
            probe = layer(onednn.dense(inputs[0])[:1])
            per_sample = probe.numel() * probe.element_size()
            if 3 * per_sample * sum(len(x) for x in inputs) > STEM_CACHE_BYTES:
                return False
            weights = [
                self._weights(layer, prefix, base, zero=False),
                self._weights(layer, prefix, v, zero=True),
                self._weights(layer, prefix, w, zero=True),
            ]
            for x in inputs:
                outputs = [functional_call(layer, p, (onednn.dense(x),)) for p in weights]
                if x.is_mkldnn:  # kept in the pass's form: a point combines them as it is
                    outputs = [out.to_mkldnn() for out in outputs]
                self._outputs[id(x)] = (x, *outputs)
        return True

    def install(self, network: torch.nn.Module, coords: list[float]) -> torch.nn.Module:
        """Make ``network``'s first layer answer from the outputs at ``coords`` (a, b,
        updated by the caller per point); returns the layer, for :meth:`uninstall`."""
        layer = network.get_submodule(self.name)
        original = type(layer).forward
        outputs = self._outputs

        def forward(x: torch.Tensor) -> torch.Tensor:
            known = outputs.get(id(x))
            if known is None or known[0] is not x:
                return original(layer, x)  # another tensor: the weights are the point's
            out = torch.add(known[1], known[2], alpha=coords[0])
            return out.add_(known[3], alpha=coords[1])

        layer.forward = forward
        return layer

    @staticmethod
    def uninstall(layer: torch.nn.Module) -> None:
        del layer.forward
