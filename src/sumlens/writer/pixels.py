"""Image pixels as torch's ``SummaryWriter`` makes them, so images match after switching.

uint8 values are kept; any other dtype is read as float32, multiplied by 255, clipped to
0..255 and truncated to uint8 (an image of floats in [0, 1] is the expected input). A torch
tensor is converted where it lives: on a GPU without waiting for it (the writer copies the
result to the host in the background).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from sumlens.writer.arrays import host_array


def to_uint8_pixels(value: Any, name: str = "img_tensor") -> Any:
    """``value`` (array-like or torch tensor) as uint8 pixels by torch's writer's rule."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        tensor = value.detach()
        if tensor.dtype == torch.uint8:
            return tensor
        return (tensor.float() * 255).clamp_(0, 255).to(torch.uint8)
    array = host_array(value, name, "SummaryWriter.add_image")
    if array.dtype == np.uint8:
        return array
    if array.dtype.kind not in "biuf":
        raise TypeError(f"SummaryWriter: {name} has dtype {array.dtype}; pixels must be numbers")
    with np.errstate(invalid="ignore"):
        return (array.astype(np.float32) * 255).clip(0, 255).astype(np.uint8)
