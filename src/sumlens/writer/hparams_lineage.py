"""Hyper-parameters and their results as MindSpore lineage, for the lineage view and
MindInsight: what ``SummaryWriter.add_hparams`` writes beside TensorBoard's hparams records.

Names MindSpore's train lineage knows (learning rate, optimizer, loss function, epochs,
batch size, devices, network; under the names PyTorch code usually gives them) fill its
fields; every hyper-parameter is also custom lineage data (dotted keys for nested
values), and the metrics become the evaluation lineage's metrics, except Lightning's
placeholder ``hp_metric = -1`` (written before any result exists, it is none). MindInsight
refuses a lineage file holding custom data alone, so a train lineage is always written.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from sumlens._hparam_names import TRAIN_FIELDS
from sumlens.lineage import EvaluationLineage, LineageBuilder, TrainLineage, from_config
from sumlens.writer.arrays import host_array

PLACEHOLDER = ("hp_metric", -1)
"""What Lightning's loggers log as the metric of hyper-parameters given without one."""

_KINDS = {
    "learning_rate": float,
    "epoch": int,
    "batch_size": int,
    "device_num": int,
    "optimizer": str,
    "loss_function": str,
    "network": str,
}


def hparams_lineage(hparams: Mapping[str, Any], metrics: Mapping[str, Any]) -> list[LineageBuilder]:
    """The train lineage, custom lineage data and (with metrics) evaluation lineage of
    ``hparams`` and ``metrics``."""
    lowered = {str(key).lower(): value for key, value in hparams.items()}
    fields: dict[str, Any] = {}
    for field, names in TRAIN_FIELDS.items():
        for name in names:
            value = _as(lowered.get(name), _KINDS[field])
            if value is not None:
                fields[field] = value
                break
    values: list[LineageBuilder] = [TrainLineage(**fields), from_config(dict(hparams))]
    numeric = {
        str(key): number
        for key, value in metrics.items()
        if (number := _metric(value)) is not None and (key, number) != PLACEHOLDER
    }
    if numeric:
        values.append(EvaluationLineage(metrics=numeric))
    return values


def _metric(value: Any) -> float | None:
    """A metric's value as a float: a number, or a one-element array or tensor (any device)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    try:
        array = host_array(value, "metric_dict", "SummaryWriter.add_hparams")
    except (TypeError, ValueError):
        return None
    return float(array.reshape(-1)[0]) if array.size == 1 and array.dtype.kind in "iuf" else None


def _as(value: Any, kind: type) -> Any:
    """``value`` as ``kind`` when it plainly is one (no bools as numbers); else None."""
    if value is None or isinstance(value, bool):
        return None
    if kind is str:
        return value if isinstance(value, str) else None
    if kind is int:
        return int(value) if isinstance(value, numbers.Integral) else None
    return _metric(value)  # a number, or a one-element tensor
