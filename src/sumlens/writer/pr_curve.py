"""``add_pr_curve`` and ``add_pr_curve_raw``: precision-recall curves (plugin ``pr_curves``).

TensorBoard's PR-curve dashboard reads a float tensor of shape ``[6, N]``: true positives,
false positives, true negatives, false negatives, precision and recall at N thresholds
evenly spaced over [0, 1]. ``pr_curve_value`` counts them from predictions as torch's writer
(and TensorBoard's own summary op) does: each prediction falls in the bucket
``floor(p * (N - 1))``, and the counts at a threshold are the weights in the buckets at or
above it. Like torch's writer, at most 127 thresholds are recorded.
"""

from __future__ import annotations

import numpy as np

from sumlens._checks import check_int, check_text
from sumlens._log import warn_once
from sumlens._proto import tensorboard_pb2 as tbpb
from sumlens._proto import tensorboard_plugins_pb2 as plugins
from sumlens.writer.arrays import numeric_array

PLUGIN_NAME = "pr_curves"
MAX_THRESHOLDS = 127
_MINIMUM_COUNT = 1e-7  # the denominators' floor: 0 / 0 reads as 0, not NaN
_RAW_NAMES = (
    "true_positive_counts",
    "false_positive_counts",
    "true_negative_counts",
    "false_negative_counts",
    "precision",
    "recall",
)


def pr_curve_value(
    tag: str,
    labels: object,
    predictions: object,
    num_thresholds: int = MAX_THRESHOLDS,
    weights: object = None,
) -> tbpb.Summary.Value:
    """The curve of ``predictions`` (in [0, 1]) against ``labels`` (0/1 or bool, same shape),
    each example counted with its weight (``weights``: a number or one per example)."""
    owner = "SummaryWriter.add_pr_curve"
    check_text(tag, "tag", owner)
    thresholds = _thresholds(num_thresholds, tag, owner)
    truth = _unit_interval(numeric_array(labels, "labels", owner), "labels", owner)
    scores = _unit_interval(numeric_array(predictions, "predictions", owner), "predictions", owner)
    if truth.shape != scores.shape:
        raise ValueError(
            f"For '{owner}', the arguments 'labels' and 'predictions' must have the same shape, "
            f"but got {list(truth.shape)} and {list(scores.shape)}"
        )
    weight = _weights(weights, scores.shape, owner)
    buckets = np.floor(scores * (thresholds - 1)).astype(np.int64).ravel()
    positive = (truth.astype(np.float64) * weight).ravel()
    negative = ((1.0 - truth.astype(np.float64)) * weight).ravel()
    tp = _at_or_above(np.bincount(buckets, positive, thresholds))
    fp = _at_or_above(np.bincount(buckets, negative, thresholds))
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(_MINIMUM_COUNT, tp + fp)
    recall = tp / np.maximum(_MINIMUM_COUNT, tp + fn)
    return _curve_value(tag, np.stack((tp, fp, tn, fn, precision, recall)), thresholds)


def pr_curve_raw_value(
    tag: str,
    true_positive_counts: object,
    false_positive_counts: object,
    true_negative_counts: object,
    false_negative_counts: object,
    precision: object,
    recall: object,
    num_thresholds: int = MAX_THRESHOLDS,
    weights: object = None,
) -> tbpb.Summary.Value:
    """The curve from counts made elsewhere: six 1-D sequences of one length, one entry per
    threshold. ``weights`` is accepted for torch's signature and, as there, not used."""
    owner = "SummaryWriter.add_pr_curve_raw"
    check_text(tag, "tag", owner)
    thresholds = _thresholds(num_thresholds, tag, owner)
    if weights is not None:
        warn_once(
            "pr-curve-raw-weights",
            "%s: 'weights' has no effect on counts already made (torch's writer ignores it too)",
            owner,
        )
    given = (
        true_positive_counts,
        false_positive_counts,
        true_negative_counts,
        false_negative_counts,
        precision,
        recall,
    )
    rows = []
    for name, value in zip(_RAW_NAMES, given, strict=True):
        array = numeric_array(value, name, owner)
        if array.ndim != 1 or array.size == 0:
            raise ValueError(
                f"For '{owner}', the argument '{name}' must be 1-D with one entry per "
                f"threshold, but got shape {list(array.shape)}"
            )
        rows.append(array)
    lengths = {len(row) for row in rows}
    if len(lengths) > 1:
        shown = ", ".join(f"{name}: {len(row)}" for name, row in zip(_RAW_NAMES, rows, strict=True))
        raise ValueError(f"For '{owner}', the six curves must have one length, but got {shown}")
    return _curve_value(tag, np.stack(rows).astype(np.float64), thresholds)


def _thresholds(num_thresholds: object, tag: str, owner: str) -> int:
    count = check_int(num_thresholds, "num_thresholds", owner, 2)
    if count > MAX_THRESHOLDS:
        warn_once(
            f"pr-curve-thresholds:{tag}",
            "%s: num_thresholds=%d for tag %r is recorded as %d, as torch's writer records it",
            owner,
            count,
            tag,
            MAX_THRESHOLDS,
        )
        return MAX_THRESHOLDS
    return count


def _unit_interval(array: np.ndarray, name: str, owner: str) -> np.ndarray:
    if array.size == 0:
        raise ValueError(f"For '{owner}', the argument '{name}' must not be empty")
    low, high = array.min(), array.max()
    if low < 0 or high > 1:
        raise ValueError(
            f"For '{owner}', the argument '{name}' must lie in [0, 1], "
            f"but its values span [{low}, {high}]"
        )
    return array


def _weights(weights: object, shape: tuple[int, ...], owner: str) -> np.ndarray | float:
    if weights is None:
        return 1.0
    array = numeric_array(weights, "weights", owner)
    if array.shape not in ((), shape):
        raise ValueError(
            f"For '{owner}', the argument 'weights' must be a number or have the shape of "
            f"'predictions' {list(shape)}, but got shape {list(array.shape)}"
        )
    if array.size and array.min() < 0:
        raise ValueError(
            f"For '{owner}', the argument 'weights' must not be negative, but its minimum is "
            f"{array.min()}"
        )
    return array.astype(np.float64)


def _at_or_above(counts: np.ndarray) -> np.ndarray:
    """Per threshold, the sum of the bucket counts at or above it (a reversed cumsum)."""
    return np.cumsum(counts[::-1])[::-1]


def _curve_value(tag: str, data: np.ndarray, num_thresholds: int) -> tbpb.Summary.Value:
    value = tbpb.Summary.Value(tag=tag)
    plugin = value.metadata.plugin_data
    plugin.plugin_name = PLUGIN_NAME
    plugin.content = plugins.PrCurvePluginData(
        version=0, num_thresholds=num_thresholds
    ).SerializeToString()
    tensor = value.tensor
    tensor.dtype = tbpb.DT_FLOAT
    tensor.tensor_shape.dim.add(size=data.shape[0])
    tensor.tensor_shape.dim.add(size=data.shape[1])
    tensor.float_val.extend(data.ravel().tolist())
    return value
