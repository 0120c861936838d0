"""MindSpore's metric names (``Model(metrics={"acc"})``) and the torchmetrics adapter."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from sumlens.metrics._base import Metric, _is_torch_tensor, calculation_error, to_numpy
from sumlens.metrics.classification import (
    F1,
    Accuracy,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
    TopKCategoricalAccuracy,
)
from sumlens.metrics.loss import Loss
from sumlens.metrics.regression import MAE, MSE

__all__ = ["UnknownMetricError", "get_metric_fn", "get_metrics", "names"]  # the names
__all__ += ["TorchMetricAdapter", "is_torchmetrics_like"]  # torchmetrics objects

_FACTORY: dict[str, Callable[..., Metric]] = {
    "accuracy": Accuracy,
    "acc": Accuracy,
    "precision": Precision,
    "recall": Recall,
    "F1": F1,
    "f1": F1,
    "topk": TopKCategoricalAccuracy,
    "top_1_accuracy": Top1CategoricalAccuracy,
    "top_5_accuracy": Top5CategoricalAccuracy,
    "mae": MAE,
    "mse": MSE,
    "loss": Loss,
}
"""MindSpore's registry names (``mindspore.train.names()``) for the metrics sumlens has;
``'f1'`` is an alias of MindSpore's ``'F1'``."""


class UnknownMetricError(ValueError, KeyError):
    """An unknown metric name: a ValueError, and a KeyError as MindSpore raises."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def names() -> list[str]:
    """The metric names :func:`get_metric_fn` knows, sorted (as ``mindspore.train.names``)."""
    return sorted(_FACTORY)


def get_metric_fn(name: str, *args: Any, **kwargs: Any) -> Metric:
    """A new metric for a MindSpore name: ``get_metric_fn('precision', eval_type='multilabel')``.

    Names are matched exactly, then case-insensitively (``'Accuracy'`` works). An unknown
    name raises :class:`UnknownMetricError` (a ValueError) listing the allowed names.
    """
    if not isinstance(name, str):
        raise TypeError(
            f"For 'get_metric_fn', the argument 'name' must be a str, one of {names()}, "
            f"but got {type(name).__name__} {name!r}"
        )
    factory = _FACTORY.get(name)
    if factory is None:
        lowered = {key.lower(): value for key, value in _FACTORY.items()}
        factory = lowered.get(name.lower())
    if factory is None:
        raise UnknownMetricError(
            f"For 'get_metric_fn', unknown metric name {name!r}; allowed names are {names()}"
        )
    return factory(*args, **kwargs)


def is_torchmetrics_like(obj: Any) -> bool:
    """True for an object with callable ``update``, ``compute`` and ``reset`` (a torchmetrics
    ``Metric``) that is not already a sumlens :class:`Metric`."""
    if isinstance(obj, Metric | type):
        return False
    return all(callable(getattr(obj, attr, None)) for attr in ("update", "compute", "reset"))


def _is_mindspore_like(obj: Any) -> bool:
    if isinstance(obj, type):
        return False
    return all(callable(getattr(obj, attr, None)) for attr in ("clear", "update", "eval"))


def _to_result(value: Any) -> Any:
    """A torchmetrics result as a float, numpy array, or dict/list/tuple of them."""
    if isinstance(value, Mapping):
        return {key: _to_result(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_to_result(item) for item in value)
    if _is_torch_tensor(value) or isinstance(value, np.ndarray | np.generic):
        array = to_numpy(value)
        return array.item() if array.ndim == 0 else array
    return value


class TorchMetricAdapter(Metric):
    """A torchmetrics ``Metric`` (duck-typed: ``update``/``compute``/``reset``) as a
    MindSpore-style metric: ``clear()`` resets it, ``update(*inputs)`` forwards the inputs
    (numpy arrays and lists become torch tensors when torch is installed), ``eval()``
    returns ``compute()`` with 0-d tensors as floats and other tensors as numpy arrays.
    """

    def __init__(self, metric: Any) -> None:
        super().__init__()
        if not is_torchmetrics_like(metric):
            raise TypeError(
                "TorchMetricAdapter needs an object with update(), compute() and reset() "
                f"(a torchmetrics Metric), but got {type(metric).__name__}"
            )
        self.metric = metric
        self._updates = 0

    def clear(self) -> None:
        """Reset the wrapped metric."""
        self.metric.reset()
        self._updates = 0

    def update(self, *inputs: Any) -> None:
        """Pass the (rearranged, see ``set_indexes``) inputs to the wrapped ``update``."""
        if self.indexes:
            inputs = tuple(inputs[i] for i in self.indexes)
        self.metric.update(*(_as_torch(value) for value in inputs))
        self._updates += 1

    def eval(self) -> Any:
        """The wrapped ``compute()``; a RuntimeError before any update."""
        if self._updates == 0:
            raise calculation_error(
                type(self.metric).__name__, "update() was not called before eval()"
            )
        return _to_result(self.metric.compute())

    def __repr__(self) -> str:
        return f"TorchMetricAdapter({self.metric!r})"


def _as_torch(value: Any) -> Any:
    if isinstance(value, np.ndarray | list):
        try:
            import torch
        except ImportError:  # pragma: no cover - torch is an optional dependency
            return value
        return torch.as_tensor(np.asarray(value))
    return value


def _resolve(name: Any, metric: Any) -> Any:
    if isinstance(metric, Metric):
        return metric
    if is_torchmetrics_like(metric):
        return TorchMetricAdapter(metric)
    if _is_mindspore_like(metric):
        return metric
    if isinstance(metric, str):
        return get_metric_fn(metric)
    raise TypeError(
        f"For 'get_metrics', the value for {name!r} must be a sumlens Metric, an object with "
        "clear()/update()/eval(), a torchmetrics Metric or a metric name, "
        f"but got {type(metric).__name__}"
    )


def get_metrics(metrics: Any) -> dict[str, Any] | None:
    """Resolve ``Model(metrics=...)``: None, a set/list/tuple of names, or a dict.

    ``{"acc", "loss"}`` -> ``{"acc": Accuracy(), "loss": Loss()}``. A dict maps str keys to
    metrics (returned as given), torchmetrics metrics (wrapped in
    :class:`TorchMetricAdapter`), other objects with ``clear``/``update``/``eval``, or names.
    """
    if metrics is None:
        return None
    if isinstance(metrics, Mapping):
        out: dict[str, Any] = {}
        for name, metric in metrics.items():
            if not isinstance(name, str):
                raise TypeError(
                    "For 'get_metrics', the keys of 'metrics' must be str, "
                    f"but got {type(name).__name__} {name!r}"
                )
            out[name] = _resolve(name, metric)
        return out
    if isinstance(metrics, set | frozenset | list | tuple):
        out = {}
        for name in metrics:
            if not isinstance(name, str):
                raise TypeError(
                    "For 'get_metrics', a set of metrics must hold names (str), one of "
                    f"{names()}, but got {type(name).__name__} {name!r}; "
                    "use a dict {name: metric} for metric objects"
                )
            out[name] = get_metric_fn(name)
        return out
    hint = f" (did you mean {{{metrics!r}}}?)" if isinstance(metrics, str) else ""
    raise TypeError(
        "For 'get_metrics', the argument 'metrics' must be None, a dict or a set of names, "
        f"but got {type(metrics).__name__}{hint}"
    )
