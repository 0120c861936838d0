"""The metric base class and the input conversion every metric shares."""

from __future__ import annotations

import abc
import functools
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

EVAL_TYPES = ("classification", "multilabel")
"""The ``eval_type`` values Accuracy, Precision, Recall and Fbeta accept (as MindSpore)."""


def to_numpy(value: Any, *, name: str = "input") -> np.ndarray:
    """Return ``value`` as a numpy array, detached and on the CPU if it is a torch tensor.

    Accepts torch tensors (any device; bfloat16 and other numpy-less dtypes become float32),
    numpy arrays and scalars, lists, tuples and Python numbers. Anything else is a
    ``TypeError`` naming ``name``.
    """
    if isinstance(value, np.ndarray):
        return value
    if _is_torch_tensor(value):
        tensor = value.detach()
        if tensor.device.type != "cpu":
            tensor = tensor.cpu()
        try:
            return tensor.numpy()
        except TypeError:  # bfloat16, float8, ... have no numpy dtype
            return tensor.float().numpy()
    if isinstance(value, list | tuple | np.generic) or (
        isinstance(value, numbers.Number) and not isinstance(value, bool)
    ):
        try:
            return np.asarray(value)
        except ValueError as exc:  # ragged nested lists
            raise ValueError(f"{name} could not be made into an array: {exc}") from exc
    raise TypeError(
        f"{name} must be a torch.Tensor, numpy.ndarray or list, but got {type(value).__name__}"
    )


def _is_torch_tensor(value: Any) -> bool:
    # Without importing torch: metrics work in a numpy-only environment.
    cls = type(value)
    return (
        cls.__module__.startswith("torch") and hasattr(value, "detach") and hasattr(value, "numpy")
    )


def rearrange_inputs(func: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate ``update`` so that :meth:`Metric.set_indexes` picks and orders its inputs."""

    @functools.wraps(func)
    def wrapper(self: Metric, *inputs: Any) -> Any:
        indexes = self.indexes
        if indexes:
            if max(indexes) >= len(inputs) or min(indexes) < -len(inputs):
                raise ValueError(
                    f"For '{type(self).__name__}.update', indexes {indexes} do not fit "
                    f"the {len(inputs)} inputs given"
                )
            inputs = tuple(inputs[i] for i in indexes)
        return func(self, *inputs)

    return wrapper


class Metric(abc.ABC):
    """Base class of the metrics: ``clear()``, ``update(*inputs)``, ``eval()``, as MindSpore.

    ``update`` accumulates over batches, ``eval`` computes the result so far and ``clear``
    starts again. Calling the metric (``metric(y_pred, y)``) clears, updates once and
    evaluates. Subclasses decorate ``update`` with :func:`rearrange_inputs` so that
    :meth:`set_indexes` works.
    """

    def __init__(self) -> None:
        self._indexes: list[int] | None = None

    @property
    def indexes(self) -> list[int] | None:
        """The input positions ``update`` uses (set with :meth:`set_indexes`), or None."""
        return getattr(self, "_indexes", None)

    def set_indexes(self, indexes: Sequence[int]) -> Metric:
        """Make ``update`` use ``inputs[i] for i in indexes``; returns the metric itself.

        E.g. ``Accuracy().set_indexes([2, 1])`` applied to ``(label0, label1, logits)``
        evaluates ``(logits, label1)``.
        """
        if not isinstance(indexes, list | tuple) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in indexes
        ):
            raise ValueError(
                f"For 'set_indexes', the argument 'indexes' must be a list of int, "
                f"but got {indexes!r}"
            )
        self._indexes = list(indexes)
        return self

    def __call__(self, *inputs: Any) -> Any:
        self.clear()
        self.update(*inputs)
        return self.eval()

    @abc.abstractmethod
    def clear(self) -> None:
        """Forget everything accumulated so far."""

    @abc.abstractmethod
    def update(self, *inputs: Any) -> None:
        """Accumulate one batch."""

    @abc.abstractmethod
    def eval(self) -> Any:
        """Return the result over every batch since the last ``clear()``."""

    # helpers for subclasses -------------------------------------------------------------

    def _name(self) -> str:
        return type(self).__name__

    def _check_num_inputs(self, inputs: tuple[Any, ...], expected: int, what: str) -> None:
        if len(inputs) != expected:
            raise ValueError(
                f"For '{self._name()}.update', it needs {expected} input(s) ({what}), "
                f"but got {len(inputs)}"
            )

    def _prediction_and_label(self, inputs: tuple[Any, ...]) -> tuple[str, np.ndarray, np.ndarray]:
        """Check that ``update`` got two inputs ``(y_pred, y)``; return the owner its
        messages name and both as arrays."""
        owner = f"{self._name()}.update"
        self._check_num_inputs(inputs, 2, "predicted value y_pred, true value y")
        y_pred = to_numpy(inputs[0], name=f"For '{owner}', y_pred")
        return owner, y_pred, to_numpy(inputs[1], name=f"For '{owner}', y")

    def _empty_error(self) -> RuntimeError:
        return calculation_error(
            self._name(),
            "the number of samples is 0; check that the inputs (predicted value, true value) "
            "are not empty and that update() was called before eval()",
        )


def calculation_error(name: str, because: str) -> RuntimeError:
    """The error of a metric ``name`` that cannot give a result yet, saying ``because``."""
    return RuntimeError(f"The '{name}' can not be calculated, because {because}")


class RunningMean(Metric):
    """A metric whose result is a sum over a count, both accumulated by ``update`` (with
    :meth:`_accumulate`); it starts cleared, and ``eval`` before any count is an error."""

    def __init__(self) -> None:
        super().__init__()
        self.clear()

    def clear(self) -> None:
        """Forget all updates."""
        self._sum: float = 0
        self._count = 0

    def _accumulate(self, amount: float, count: int) -> None:
        self._sum += amount
        self._count += count

    def eval(self) -> float:
        """The accumulated sum over the accumulated count, since the last ``clear()``."""
        if self._count == 0:
            raise self._empty_error()
        return self._sum / self._count


def check_eval_type(eval_type: Any, owner: str) -> str:
    """Return ``eval_type`` if it is one of :data:`EVAL_TYPES`, else raise naming it."""
    if not isinstance(eval_type, str):
        raise TypeError(
            f"For '{owner}', the argument 'eval_type' must be a str, one of {list(EVAL_TYPES)}, "
            f"but got {type(eval_type).__name__} {eval_type!r}"
        )
    if eval_type not in EVAL_TYPES:
        raise ValueError(
            f"For '{owner}', the argument 'eval_type' must be one of {list(EVAL_TYPES)}, "
            f"but got {eval_type!r}"
        )
    return eval_type
