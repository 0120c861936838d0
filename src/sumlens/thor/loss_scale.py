"""Where THOR learns the loss scale: a static number, or a live scaler.

Two things depend on it: the gradients that reach ``step()`` and the output
gradients the hooks saw during backward. Who unscales decides the rule:

* a number ``S`` (MindSpore's ``loss_scale``): the loss was multiplied by ``S`` and
  nobody unscaled, so the optimizer divides the gradients by ``S`` and ``G`` by ``S²``;
* a live scaler -- a :class:`sumlens.train.LossScaleManager` (``Model`` unscales the
  gradients itself before ``step()``) or a ``torch.amp.GradScaler`` (``scaler.step``
  unscales them) -- the gradients arrive unscaled and only ``G`` is divided by the
  square of the scaler's current scale, read at every refresh (a dynamic scale changes
  only after the step, so this is the scale the backward used).
"""

from __future__ import annotations

import math

import torch

from sumlens.train.loss_scale import LossScaleManager

__all__ = ["LossScale"]


class LossScale:
    """A validated ``loss_scale`` argument; see the module docstring."""

    def __init__(self, value: object, owner: str) -> None:
        if isinstance(value, LossScaleManager | torch.amp.GradScaler):
            self._source: LossScaleManager | torch.amp.GradScaler | None = value
            self._static = 1.0
            return
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(
                f"For '{owner}', the argument 'loss_scale' must be a number > 0, a "
                "LossScaleManager or a torch.amp.GradScaler, "
                f"but got {type(value).__name__} {value!r}"
            )
        if not (math.isfinite(value) and value > 0):
            raise ValueError(
                f"For '{owner}', the argument 'loss_scale' must be finite and > 0, "
                f"but got {value!r}"
            )
        self._source = None
        self._static = float(value)

    def grad_divisor(self) -> float:
        """What the gradients reaching ``step()`` must be divided by."""
        return self._static

    def backward_scale(self) -> float:
        """The scale the output gradients of the last backward carried."""
        if self._source is None:
            return self._static
        if isinstance(self._source, LossScaleManager):
            return float(self._source.get_loss_scale())
        return float(self._source.get_scale()) if self._source.is_enabled() else 1.0
