"""``amp_level`` for :class:`sumlens.Model`: MindSpore's O0/O1/O2/O3/auto on torch autocast.

The low-precision type is bfloat16 on CPU (and any non-CUDA device) and float16 on CUDA.

=========  =====================================================================================
level      what ``Model`` does
=========  =====================================================================================
``O0``     nothing: float32 (the default)
``O1``     forward and loss run under ``torch.autocast`` (torch's op lists play the role of
           MindSpore's white list); weights stay float32; no loss scaling unless a
           ``loss_scale_manager`` is given
``O2``     as O1, and on CUDA a ``DynamicLossScaleManager()`` when none is given
           (float16 gradients need it; bfloat16 does not). Weights stay float32 -- the
           float32 master copy MindSpore's O2 keeps for the optimizer is simply the
           parameter itself. BatchNorm runs in float32 under autocast.
``O3``     the network itself is cast to the low type (BatchNorm too, unless
           ``keep_batchnorm_fp32=True``); floating inputs are cast to it, outputs are
           cast back to float32 before the loss; no loss scaling unless given
``auto``   ``O2`` on CUDA, ``O0`` elsewhere (MindSpore: O0 on CPU)
=========  =====================================================================================

``keep_batchnorm_fp32=None`` means the level's default (True for O2, False for O3); it
only changes anything for O3.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["AMP_LEVELS", "AmpPlan", "resolve_amp"]

AMP_LEVELS = ("O0", "O1", "O2", "O3", "auto")
_BATCHNORM = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.GroupNorm, torch.nn.LayerNorm)


@dataclass(frozen=True)
class AmpPlan:
    """What a resolved ``amp_level`` asks of the training and evaluation steps."""

    level: str
    device_type: str
    dtype: torch.dtype | None  # None: no autocast (O0)
    cast_network: bool  # O3
    keep_batchnorm_fp32: bool
    default_loss_scale: bool  # O2 on CUDA

    @property
    def enabled(self) -> bool:
        return self.dtype is not None

    def autocast(self) -> torch.autocast:
        """A fresh autocast context for this plan (only call when ``enabled``)."""
        return torch.autocast(device_type=self.device_type, dtype=self.dtype)


def network_device(network: torch.nn.Module) -> torch.device:
    """The device of the network's first parameter (or buffer); CPU when it has none."""
    for parameter in network.parameters():
        return parameter.device
    for buffer in network.buffers():
        return buffer.device
    return torch.device("cpu")


def resolve_amp(amp_level: object, keep_batchnorm_fp32: object, device: torch.device) -> AmpPlan:
    """Validate ``amp_level``/``keep_batchnorm_fp32`` and resolve them for ``device``."""
    if not isinstance(amp_level, str) or amp_level not in AMP_LEVELS:
        raise ValueError(
            f"For 'Model', the argument 'amp_level' must be one of {list(AMP_LEVELS)}, "
            f"but got {amp_level!r}"
        )
    if keep_batchnorm_fp32 is not None and not isinstance(keep_batchnorm_fp32, bool):
        raise TypeError(
            "For 'Model', the argument 'keep_batchnorm_fp32' must be a bool or None, "
            f"but got {type(keep_batchnorm_fp32).__name__} {keep_batchnorm_fp32!r}"
        )
    is_cuda = device.type == "cuda"
    level = amp_level
    if level == "auto":
        level = "O2" if is_cuda else "O0"
    keep_bn = keep_batchnorm_fp32 if keep_batchnorm_fp32 is not None else level == "O2"
    if level == "O0":
        return AmpPlan(amp_level, device.type, None, False, keep_bn, False)
    dtype = torch.float16 if is_cuda else torch.bfloat16
    return AmpPlan(
        level=amp_level,
        device_type=device.type,
        dtype=dtype,
        cast_network=level == "O3",
        keep_batchnorm_fp32=keep_bn,
        default_loss_scale=level == "O2" and is_cuda,
    )


def cast_network(network: torch.nn.Module, dtype: torch.dtype, keep_batchnorm_fp32: bool) -> None:
    """Cast the floating parameters and buffers of ``network`` to ``dtype`` in place
    (parameter objects are kept, so an optimizer built on them still works); normalisation
    layers stay float32 when ``keep_batchnorm_fp32``."""
    for module in network.modules():
        if keep_batchnorm_fp32 and isinstance(module, _BATCHNORM):
            continue
        for tensor in list(module.parameters(recurse=False)) + list(module.buffers(recurse=False)):
            if tensor.is_floating_point():
                tensor.data = tensor.data.to(dtype)
