"""Small helpers shared by the built-in callbacks: run parameters, loss values, ranks.

Kept apart from the callbacks so each callback module holds one public class. Argument
checks are :mod:`sumlens._checks`' (one message style for every package).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

__all__ = [
    "get_param",
    "is_rank_zero",
    "loss_value",
    "mean_over_ranks",
    "rank_and_world",
    "scalar_value",
]


def get_param(params: Mapping[str, Any], name: str, default: Any = None) -> Any:
    """``params[name]``, or ``default`` when the driver did not set it (or set it to None)."""
    value = params.get(name, default)
    return default if value is None else value


def step_in_epoch(params: Mapping[str, Any]) -> int:
    """The 1-based position of ``cur_step_num`` within its epoch.

    In sink mode ``batch_num`` counts sinks, not steps; the steps of an epoch then come
    from ``dataset_helper.steps_per_epoch`` (the sink contract of ``sumlens.Model``).
    """
    step = int(get_param(params, "cur_step_num", 0))
    per_epoch = get_param(params, "batch_num", 0)
    if get_param(params, "dataset_sink_mode", False):
        per_epoch = getattr(get_param(params, "dataset_helper"), "steps_per_epoch", per_epoch)
    if isinstance(per_epoch, int) and not isinstance(per_epoch, bool) and per_epoch > 0:
        return (step - 1) % per_epoch + 1
    return step


def loss_value(net_outputs: object) -> Any:
    """The loss of one step's ``net_outputs`` as a Python float where possible.

    A tuple/list counts by its first element; a tensor or numpy array becomes the float
    mean of its values; a numpy scalar becomes a float; anything else is returned as is.
    """
    value = net_outputs
    if isinstance(value, tuple | list) and value:
        value = value[0]
    if isinstance(value, torch.Tensor):
        value = value.detach()
        if value.numel() == 0:
            return math.nan
        return float(value.float().mean().item()) if not value.is_complex() else value
    if isinstance(value, np.ndarray):
        return float(np.mean(value)) if value.size else math.nan
    if isinstance(value, np.generic) and isinstance(value.item(), int | float):
        return float(value.item())
    return value


def scalar_value(value: object, argname: str) -> float | None:
    """A monitored value as a float; None for None; ValueError for a non-scalar array."""
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise ValueError(
                f"{argname} must be a scalar, got a tensor of shape {tuple(value.shape)}"
            )
        return float(value.detach().item())
    if isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        if array.size != 1:
            raise ValueError(f"{argname} must be a scalar, got an array of shape {array.shape}")
        return float(array.reshape(()))
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{argname} must be a number, got {value!r} ({type(value).__name__})")
    return float(value)


def rank_and_world() -> tuple[int, int]:
    """``(rank, world_size)`` of the default torch.distributed group; ``(0, 1)`` without one."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def is_rank_zero() -> bool:
    """True unless this process is a non-zero rank of an initialised process group."""
    return rank_and_world()[0] == 0


def mean_over_ranks(value: float) -> float:
    """The mean of ``value`` over all ranks (all-reduce); ``value`` itself in one process."""
    _, world = rank_and_world()
    if world <= 1:
        return value
    tensor = torch.tensor([value], dtype=torch.float64)
    if torch.distributed.get_backend() == "nccl":  # pragma: no cover - needs GPUs
        tensor = tensor.cuda()
    torch.distributed.all_reduce(tensor)
    return float(tensor.item()) / world
