"""Regression metrics: MAE and MSE, averaged over every element of every update."""

from __future__ import annotations

from typing import Any

import numpy as np

from sumlens.metrics._base import RunningMean, rearrange_inputs

__all__ = ["MAE", "MSE"]


class _ElementwiseError(RunningMean):
    """Sum of a per-element error over all elements seen, divided by their count."""

    @staticmethod
    def _error(diff: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        """Accumulate one batch ``(y_pred, y)``; ``y`` must have ``y_pred``'s number of elements."""
        owner, y_pred, y = self._prediction_and_label(inputs)
        for arg, value in (("y_pred", y_pred), ("y", y)):
            if not (np.issubdtype(value.dtype, np.number) or value.dtype == np.bool_):
                raise TypeError(
                    f"For '{owner}', {arg} must be numeric, but got dtype {value.dtype}"
                )
        if y.shape != y_pred.shape:
            if y.size != y_pred.size:
                raise ValueError(
                    f"For '{owner}', y must have the shape of y_pred {y_pred.shape} (or the same "
                    f"number of elements, {y_pred.size}), but got shape {y.shape}"
                )
            y = y.reshape(y_pred.shape)  # e.g. (N,) against (N, 1), as MindSpore
        diff = y_pred.astype(np.float64) - y.astype(np.float64)
        self._accumulate(float(self._error(diff).sum()), int(diff.size))


class MAE(_ElementwiseError):
    """Mean absolute error ``mean(|y_pred - y|)`` over all elements of all updates."""

    @staticmethod
    def _error(diff: np.ndarray) -> np.ndarray:
        return np.abs(diff)


class MSE(_ElementwiseError):
    """Mean squared error ``mean((y_pred - y) ** 2)`` over all elements of all updates."""

    @staticmethod
    def _error(diff: np.ndarray) -> np.ndarray:
        return np.square(diff)
