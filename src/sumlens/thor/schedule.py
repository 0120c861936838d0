"""Per-step hyperparameters (learning rate, damping) for :class:`sumlens.thor.Thor`.

MindSpore's ``thor`` takes both as tensors: a scalar, or a 1-D array with one value per
optimizer step (the model zoo precomputes them). A run longer than the array reads out
of range there; here the last value is kept and a single warning says so. Three kinds
are accepted:

* a number -- the same value at every step;
* a 1-D sequence or tensor -- ``values[step]``, clamped to the last value;
* a callable ``f(step) -> float`` -- called once per step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

from sumlens._log import logger

__all__ = ["Schedule"]


def _finite_at_least(value: float, minimum: float) -> bool:
    return math.isfinite(value) and value >= minimum


class Schedule:
    """A value per optimizer step; ``schedule(step)`` returns it as a float.

    Build one with :meth:`build`, which validates the argument for its owner.
    """

    def __init__(
        self,
        name: str,
        *,
        constant: float | None = None,
        values: Sequence[float] | None = None,
        function: Callable[[int], float] | None = None,
    ) -> None:
        self.name = name
        self._constant = constant
        self._values = values
        self._function = function
        self._warned = False

    @property
    def is_constant(self) -> bool:
        """True for a plain number (an external scheduler may then own the value)."""
        return self._constant is not None

    @classmethod
    def build(cls, value: object, name: str, owner: str, minimum: float = 0.0) -> Schedule:
        """Validate ``value`` (a number, 1-D sequence/tensor or callable) for ``owner``."""
        if callable(value):
            return cls(name, function=value)
        if isinstance(value, torch.Tensor):
            if value.ndim > 1:
                raise ValueError(
                    f"For '{owner}', the argument '{name}' must be a scalar or a 1-D tensor "
                    f"(one value per step), but got a tensor of shape {tuple(value.shape)}"
                )
            items: list[float] = [float(v) for v in value.detach().reshape(-1).tolist()]
        elif isinstance(value, bool):
            raise TypeError(
                f"For '{owner}', the argument '{name}' must be a number, a 1-D sequence or "
                f"tensor of per-step values, or a callable(step), but got bool {value!r}"
            )
        elif isinstance(value, int | float):
            items = [float(value)]
        elif isinstance(value, Sequence) and not isinstance(value, str | bytes):
            if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
                raise TypeError(
                    f"For '{owner}', the argument '{name}' must contain only numbers, "
                    f"but got {list(value)!r}"
                )
            items = [float(v) for v in value]
        else:
            raise TypeError(
                f"For '{owner}', the argument '{name}' must be a number, a 1-D sequence or "
                f"tensor of per-step values, or a callable(step), "
                f"but got {type(value).__name__} {value!r}"
            )
        if not items:
            raise ValueError(
                f"For '{owner}', the argument '{name}' must hold at least one value, but got "
                "an empty sequence"
            )
        bad = [v for v in items if not _finite_at_least(v, minimum)]
        if bad:
            raise ValueError(
                f"For '{owner}', the argument '{name}' must be finite and >= {minimum:g} "
                f"(each value, for a schedule), but got {bad[0]!r}"
            )
        is_scalar = len(items) == 1 and (
            isinstance(value, int | float) or (isinstance(value, torch.Tensor) and value.ndim == 0)
        )
        if is_scalar:
            return cls(name, constant=items[0])
        return cls(name, values=items)

    def __call__(self, step: int) -> float:
        if self._constant is not None:
            return self._constant
        if self._function is not None:
            return float(self._function(step))
        assert self._values is not None
        if step < len(self._values):
            return self._values[step]
        if not self._warned:
            self._warned = True
            logger.warning(
                "'%s' has %d per-step values but step %d was reached; the last value (%s) "
                "is used from now on",
                self.name,
                len(self._values),
                step,
                self._values[-1],
            )
        return self._values[-1]
