"""Running a CPU network on oneDNN's own tensors (``Tensor.to_mkldnn()``).

On an ordinary tensor every convolution converts its input to oneDNN's blocked layout
and its output back, and picks its kernel for the layout it was handed. On oneDNN's
opaque tensors the activations stay blocked from one layer to the next, and a
convolution with few input channels gets oneDNN's direct kernel: for the digits CNN a
pass costs about a third less (its second convolution alone: 0.57 ms instead of 1.6-2.1 ms
per 512 samples on this machine's AVX-512 core). Not every operator accepts such
tensors, so the evaluator tries a probe point, compares its height with the ordinary
run, and keeps whichever way is faster.
"""

from __future__ import annotations

from typing import Any

import torch

BLOCKED_DIMS = (4, 5)
"""Inputs of these dimensions (image and volume batches) are handed over as oneDNN tensors."""


def usable(device: torch.device, inputs: tuple[torch.Tensor, ...]) -> bool:
    """Whether oneDNN tensors are worth trying: a CPU network fed float32 images."""
    return (
        device.type == "cpu"
        and torch.backends.mkldnn.is_available()
        and any(t.dtype == torch.float32 and t.dim() in BLOCKED_DIMS for t in inputs)
    )


def to_onednn(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """A pass's inputs with its float32 image batches as oneDNN tensors (copies)."""
    return tuple(
        t.to_mkldnn()
        if isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.dim() in BLOCKED_DIMS
        else t
        for t in inputs
    )


def dense(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` as an ordinary tensor (a oneDNN one converted, others as they are)."""
    return tensor.to_dense() if tensor.is_mkldnn else tensor
