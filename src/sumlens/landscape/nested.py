"""Tensors inside a network's nested outputs (tuples, lists and dicts of them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


def tree_map(fn: Callable[[torch.Tensor], Any], obj: Any) -> Any:
    """``fn`` applied to every tensor in nested tuples, lists and dicts."""
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, tuple | list):
        return type(obj)(tree_map(fn, item) for item in obj)
    if isinstance(obj, dict):
        return {key: tree_map(fn, value) for key, value in obj.items()}
    return obj


def tensor_leaves(obj: Any) -> list[torch.Tensor]:
    """Every tensor in nested tuples, lists and dicts, in order."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, tuple | list):
        return [t for item in obj for t in tensor_leaves(item)]
    if isinstance(obj, dict):
        return [t for item in obj.values() for t in tensor_leaves(item)]
    return []
