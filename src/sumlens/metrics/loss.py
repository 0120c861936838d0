"""The Loss metric: the mean of the losses passed to ``update``."""

from __future__ import annotations

from typing import Any

import numpy as np

from sumlens.metrics._base import RunningMean, calculation_error, rearrange_inputs, to_numpy

__all__ = ["Loss"]


class Loss(RunningMean):
    """Average of the losses of the updates, as ``mindspore.train.Loss``.

    ``update(loss)`` takes a scalar (0-d tensor, float) or a 1-d batch of losses, whose
    mean counts as one update; ``eval()`` is the mean over updates.
    """

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        """Accumulate one loss (scalar or 1-d)."""
        owner = f"{self._name()}.update"
        self._check_num_inputs(inputs, 1, "loss")
        loss = to_numpy(inputs[0], name=f"For '{owner}', loss")
        if not (np.issubdtype(loss.dtype, np.number) and not np.iscomplexobj(loss)):
            raise TypeError(f"For '{owner}', loss must be real numbers, but got dtype {loss.dtype}")
        if loss.ndim > 1:
            raise ValueError(
                f"For '{owner}', loss must be a scalar or 1-d, but got shape {loss.shape}"
            )
        if loss.size == 0:
            raise ValueError(f"For '{owner}', loss must not be empty, but got shape {loss.shape}")
        self._accumulate(float(loss.astype(np.float64).mean()), 1)

    def _empty_error(self) -> RuntimeError:
        return calculation_error(
            self._name(), "the number of samples is 0; call update() before eval()"
        )
