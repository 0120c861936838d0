"""``ConvertNetUtils``: prepare a network for THOR by attaching taps to its layers.

MindSpore swaps each layer for a Thor twin (and silently drops the dilation and groups
of convolutions on the way). Here no module is replaced: each supported layer gets a
tap (:mod:`sumlens.thor.factors`) stored on the module under :data:`TAP_ATTRIBUTE`, so
the forward code, the parameters and the outputs stay exactly as they were, and
converting twice changes nothing.

========================  ==========================================================
layer                     treatment
========================  ==========================================================
``nn.Linear``             Kronecker factors (hooks)
``nn.Conv2d``, groups 1   Kronecker factors with the conv normalisers (hooks)
``nn.Conv2d``, groups>1   first order, with one warning at conversion
``nn.Embedding``          token counts x ``G`` (hooks); ``sparse=True``: first order
``nn.LayerNorm`` (affine) element-wise diagonal rule (no hooks)
anything else             first order
========================  ==========================================================

Layers whose weight is frozen are left alone, as in MindSpore.
"""

from __future__ import annotations

from collections.abc import Iterator

from torch import nn

from sumlens._log import logger
from sumlens.thor.factors import Conv2dTap, EmbeddingTap, LinearTap, Marker, Tap

__all__ = ["TAP_ATTRIBUTE", "ConvertNetUtils", "converted_layers"]

TAP_ATTRIBUTE = "_sumlens_thor_tap"


def _tap_for(name: str, module: nn.Module) -> Tap | Marker | None:
    weight = getattr(module, "weight", None)
    if not isinstance(weight, nn.Parameter) or not weight.requires_grad:
        return None
    if isinstance(module, nn.Linear):
        return LinearTap()
    if isinstance(module, nn.Conv2d):
        if module.groups != 1:
            logger.warning(
                "thor: conv layer '%s' has groups=%d; THOR supports groups=1 only, so it is "
                "updated first-order",
                name,
                module.groups,
            )
            return Marker("first_order", f"groups={module.groups}")
        return Conv2dTap()
    if isinstance(module, nn.Embedding):
        if module.sparse:
            logger.warning(
                "thor: embedding '%s' has sparse gradients; it is updated first-order", name
            )
            return Marker("first_order", "sparse gradients")
        return EmbeddingTap()
    if isinstance(module, nn.LayerNorm):
        return Marker("layernorm")
    return None


class ConvertNetUtils:
    """Prepares a network so THOR can compute and store its second-order information."""

    def convert_to_thor_net(self, net: nn.Module) -> nn.Module:
        """Attach taps to ``net``'s supported layers in place (idempotent); returns ``net``.

        Called by :func:`sumlens.thor.thor`; calling it yourself first is harmless.
        """
        if not isinstance(net, nn.Module):
            raise TypeError(
                "For 'convert_to_thor_net', the argument 'net' must be a torch.nn.Module, "
                f"but got {type(net).__name__}"
            )
        for name, module in net.named_modules():
            if hasattr(module, TAP_ATTRIBUTE):
                continue
            tap = _tap_for(name or type(module).__name__, module)
            if tap is None:
                continue
            if isinstance(tap, Tap):
                tap.attach(module)
            setattr(module, TAP_ATTRIBUTE, tap)
        return net


def converted_layers(net: nn.Module) -> Iterator[tuple[str, nn.Module, Tap | Marker]]:
    """``(name, module, tap)`` for every converted layer of ``net``, in module order."""
    for name, module in net.named_modules():
        tap = getattr(module, TAP_ATTRIBUTE, None)
        if tap is not None:
            yield name, module, tap
