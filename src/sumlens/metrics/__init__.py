"""MindSpore's metrics for PyTorch users.

``clear()``, ``update(*inputs)`` and ``eval()`` as in ``mindspore.train``; inputs may be
torch tensors (any device, detached here), numpy arrays or lists::

    from sumlens.metrics import Accuracy

    acc = Accuracy()
    for x, y in loader:
        acc.update(model(x), y)
    print(acc.eval())

:func:`get_metrics` resolves ``Model(metrics={"acc", "loss"})``-style names and wraps
torchmetrics objects so they can sit in the same dict.
"""

from __future__ import annotations

from sumlens.metrics._base import EVAL_TYPES, Metric, rearrange_inputs
from sumlens.metrics.classification import (
    F1,
    Accuracy,
    Fbeta,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
    TopKCategoricalAccuracy,
)
from sumlens.metrics.loss import Loss
from sumlens.metrics.registry import (
    TorchMetricAdapter,
    UnknownMetricError,
    get_metric_fn,
    get_metrics,
    is_torchmetrics_like,
    names,
)
from sumlens.metrics.regression import MAE, MSE

__all__ = [
    "EVAL_TYPES",
    "F1",
    "MAE",
    "MSE",
    "Accuracy",
    "Fbeta",
    "Loss",
    "Metric",
    "Precision",
    "Recall",
    "Top1CategoricalAccuracy",
    "Top5CategoricalAccuracy",
    "TopKCategoricalAccuracy",
    "TorchMetricAdapter",
    "UnknownMetricError",
    "get_metric_fn",
    "get_metrics",
    "is_torchmetrics_like",
    "names",
    "rearrange_inputs",
]
