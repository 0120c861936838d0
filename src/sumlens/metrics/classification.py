"""Classification metrics: Accuracy, top-k accuracy, Precision, Recall, Fbeta and F1.

Shapes follow MindSpore: ``y_pred`` is ``(N, C)`` (or ``(N, C, d1, ...)``, the class axis
being axis 1) of scores, probabilities or logits; ``y`` is ``(N,)`` (``(N, d1, ...)``) class
indices or the same shape as ``y_pred`` one-hot. For ``eval_type='multilabel'`` both are
``(N, C, ...)`` arrays of 0 and 1 only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sumlens._checks import check_bool, check_int, check_number
from sumlens.metrics._base import Metric, RunningMean, check_eval_type, rearrange_inputs

__all__ = [
    "F1",
    "Accuracy",
    "Fbeta",
    "Precision",
    "Recall",
    "Top1CategoricalAccuracy",
    "Top5CategoricalAccuracy",
    "TopKCategoricalAccuracy",
]


def _is_onehot(y: np.ndarray) -> bool:
    """True if ``y`` (ndim > 1) holds only 0 and 1 and exactly one 1 along axis 1."""
    if y.ndim < 2 or y.size == 0:
        return False
    if y.dtype != np.bool_ and not np.isin(y, (0, 1)).all():
        return False
    return bool((y.sum(axis=1) == 1).all())


def _class_axis_last(a: np.ndarray) -> np.ndarray:
    """``(N, C, d1, ...)`` -> ``(N * d1 * ..., C)``."""
    return np.moveaxis(a, 1, -1).reshape(-1, a.shape[1])


def _class_indices(y_pred: np.ndarray, y: np.ndarray, owner: str) -> np.ndarray:
    n_classes = y_pred.shape[1]
    if y.ndim == y_pred.ndim:
        if y.shape != y_pred.shape or not _is_onehot(y):
            raise ValueError(
                f"For '{owner}', y with the same number of dimensions as y_pred must be "
                f"one-hot of shape {y_pred.shape}, but got shape {y.shape}"
                + ("" if y.shape != y_pred.shape else " that is not one-hot")
            )
        y = y.argmax(axis=1)
    expected = (y_pred.shape[0], *y_pred.shape[2:])
    if y.shape != expected:
        raise ValueError(
            f"For '{owner}', y (class indices) must have shape {expected} for y_pred of "
            f"shape {y_pred.shape} (or be one-hot of y_pred's shape), but got shape {y.shape}"
        )
    if y.dtype == np.bool_ or not np.issubdtype(y.dtype, np.number):
        raise TypeError(
            f"For '{owner}', y must hold integer class indices, but got dtype {y.dtype}"
        )
    if not np.issubdtype(y.dtype, np.integer):
        if y.size and not (np.isfinite(y).all() and (y == np.round(y)).all()):
            raise ValueError(
                f"For '{owner}', y must hold integer class indices, but got non-integral "
                f"values such as {y[y != np.round(y)][:5].tolist()}"
            )
        y = y.astype(np.int64)
    y = y.astype(np.int64, copy=False)
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(
            f"For '{owner}', y must hold class indices in [0, {n_classes}) as y_pred has "
            f"{n_classes} classes, but got values from {y.min()} to {y.max()}"
        )
    return y


class _ClassificationBase(Metric):
    """Input checks and the class count kept across updates."""

    def __init__(self, eval_type: str = "classification") -> None:
        self._type = check_eval_type(eval_type, type(self).__name__)
        self._class_num = 0
        super().__init__()  # last: Accuracy clears here (RunningMean), with all of it set

    @property
    def eval_type(self) -> str:
        """'classification' or 'multilabel'."""
        return self._type

    def _prepare(self, inputs: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Check ``(y_pred, y)``; return them as arrays (``y`` as int64 indices or 0/1)."""
        owner, y_pred, y = self._prediction_and_label(inputs)
        if y_pred.ndim < 2:
            raise ValueError(
                f"For '{owner}', y_pred must have shape (N, C) or (N, C, ...), the class axis "
                f"being axis 1, but got shape {y_pred.shape}"
            )
        if not np.issubdtype(y_pred.dtype, np.number) and y_pred.dtype != np.bool_:
            raise TypeError(f"For '{owner}', y_pred must be numeric, but got dtype {y_pred.dtype}")
        n_classes = y_pred.shape[1]
        if n_classes == 0:
            raise ValueError(
                f"For '{owner}', y_pred must have at least one class (shape[1] > 0), "
                f"but got shape {y_pred.shape}"
            )
        if self._type == "classification":
            y = _class_indices(y_pred, y, owner)
        else:
            if y.shape != y_pred.shape:
                raise ValueError(
                    f"For '{owner}' with eval_type 'multilabel', y must have the shape of y_pred "
                    f"{y_pred.shape}, but got shape {y.shape}"
                )
            for arg, value in (("y_pred", y_pred), ("y", y)):
                if value.size and not np.isin(value, (0, 1)).all():
                    raise ValueError(
                        f"For '{owner}' with eval_type 'multilabel', every element of {arg} "
                        "must be 0 or 1 (threshold probabilities first), but got values "
                        f"{np.unique(value)[:10].tolist()}"
                    )
            y_pred = y_pred.astype(np.int64)
            y = y.astype(np.int64)
        if self._class_num == 0:
            self._class_num = n_classes
        elif n_classes != self._class_num:
            raise ValueError(
                f"For '{owner}', y_pred has {n_classes} classes (shape[1]) but earlier updates "
                f"had {self._class_num}; call clear() before changing the number of classes"
            )
        return y_pred, y


class Accuracy(_ClassificationBase, RunningMean):
    """Fraction of samples predicted right, as ``mindspore.train.Accuracy``.

    With ``eval_type='classification'`` a sample is right when the argmax of ``y_pred``
    over the class axis (axis 1; the last axis of an ``(N, C)`` input) is its label.
    With ``'multilabel'`` a sample is right when all its 0/1 labels match.

    >>> metric = Accuracy()
    >>> metric.update([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]], [1, 0, 1])
    >>> round(metric.eval(), 4)
    0.6667
    """

    def clear(self) -> None:
        """Forget all updates (the number of classes too)."""
        super().clear()
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        """Accumulate one batch ``(y_pred, y)``."""
        y_pred, y = self._prepare(inputs)
        if self._type == "classification":
            correct = y_pred.argmax(axis=1) == y
        else:
            correct = (_class_axis_last(y_pred) == _class_axis_last(y)).all(axis=1)
        self._accumulate(int(correct.sum()), int(correct.size))


class TopKCategoricalAccuracy(RunningMean):
    """Fraction of samples whose label is among the ``k`` highest scores of ``y_pred``.

    ``y_pred`` is ``(N, C)``; ``y`` is ``(N,)`` class indices or ``(N, C)`` one-hot. Ties
    go to the lower class index.
    """

    def __init__(self, k: int) -> None:
        self.k = check_int(k, "k", type(self).__name__, 1)
        super().__init__()

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        """Accumulate one batch ``(y_pred, y)``."""
        owner, y_pred, y = self._prediction_and_label(inputs)
        if y_pred.ndim != 2:
            raise ValueError(
                f"For '{owner}', y_pred must have shape (N, C), but got {y_pred.shape}"
            )
        labels = _class_indices(y_pred, y, owner)
        top = np.argsort(-y_pred, axis=1, kind="stable")[:, : self.k]
        self._accumulate(int((top == labels[:, None]).any(axis=1).sum()), int(labels.shape[0]))


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    """:class:`TopKCategoricalAccuracy` with ``k=1``."""

    def __init__(self) -> None:
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    """:class:`TopKCategoricalAccuracy` with ``k=5``."""

    def __init__(self) -> None:
        super().__init__(5)


def _safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with 0 where ``den`` is 0 (MindSpore adds the smallest float instead)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.zeros_like(num), where=den != 0)


class _PerClassCounts(_ClassificationBase):
    """Per-class true positives, predicted positives and actual positives."""

    def __init__(self, eval_type: str = "classification") -> None:
        super().__init__(eval_type)
        self.clear()

    def clear(self) -> None:
        """Forget all updates."""
        self._class_num = 0
        self._samples_num = 0
        self._true_positives = np.zeros(0, dtype=np.int64)
        self._positives = np.zeros(0, dtype=np.int64)
        self._actual_positives = np.zeros(0, dtype=np.int64)

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        """Accumulate one batch ``(y_pred, y)``."""
        y_pred, y = self._prepare(inputs)
        c = self._class_num
        if self._type == "classification":
            pred = y_pred.argmax(axis=1).reshape(-1)
            labels = y.reshape(-1)
            tp = np.bincount(labels[pred == labels], minlength=c)
            positives = np.bincount(pred, minlength=c)
            actual = np.bincount(labels, minlength=c)
            samples = labels.size
        else:
            p = _class_axis_last(y_pred)
            t = _class_axis_last(y)
            tp = (p & t).sum(axis=0)
            positives = p.sum(axis=0)
            actual = t.sum(axis=0)
            samples = p.shape[0]
        if self._true_positives.size == 0:
            self._true_positives = np.zeros(c, dtype=np.int64)
            self._positives = np.zeros(c, dtype=np.int64)
            self._actual_positives = np.zeros(c, dtype=np.int64)
        self._true_positives += tp
        self._positives += positives
        self._actual_positives += actual
        self._samples_num += int(samples)

    def _check_ready(self, average: Any) -> bool:
        average = check_bool(average, "average", f"{self._name()}.eval")
        if self._samples_num == 0:
            raise self._empty_error()
        return average

    @staticmethod
    def _finish(per_class: np.ndarray, average: bool) -> np.ndarray | float:
        return float(per_class.mean()) if average else per_class


class Precision(_PerClassCounts):
    """Per-class precision ``TP / (TP + FP)``, as ``mindspore.train.Precision``.

    ``eval()`` returns a float64 array with one value per class (0 for a class never
    predicted); ``eval(average=True)`` returns their mean as a float.
    """

    def eval(self, average: bool = False) -> np.ndarray | float:
        """Precision per class, or their mean with ``average=True``."""
        average = self._check_ready(average)
        return self._finish(_safe_divide(self._true_positives, self._positives), average)


class Recall(_PerClassCounts):
    """Per-class recall ``TP / (TP + FN)``, as ``mindspore.train.Recall``.

    ``eval()`` returns a float64 array with one value per class (0 for a class absent from
    ``y``); ``eval(average=True)`` returns their mean as a float.
    """

    def eval(self, average: bool = False) -> np.ndarray | float:
        """Recall per class, or their mean with ``average=True``."""
        average = self._check_ready(average)
        return self._finish(_safe_divide(self._true_positives, self._actual_positives), average)


class Fbeta(_PerClassCounts):
    """Per-class F-beta score, as ``mindspore.train.Fbeta``.

    ``(1 + beta^2) TP / ((1 + beta^2) TP + beta^2 FN + FP)`` per class (0 where undefined);
    ``eval(average=True)`` gives the mean over classes.
    """

    def __init__(self, beta: float, eval_type: str = "classification") -> None:
        owner = type(self).__name__
        self.beta = check_number(beta, "beta", owner, finite=False)
        if not self.beta > 0:
            raise ValueError(
                f"For '{owner}', the argument 'beta' must be greater than 0, but got {beta}"
            )
        super().__init__(eval_type)

    def eval(self, average: bool = False) -> np.ndarray | float:
        """F-beta per class, or their mean with ``average=True``."""
        average = self._check_ready(average)
        b2 = self.beta**2
        num = (1.0 + b2) * self._true_positives
        den = b2 * self._actual_positives + self._positives
        return self._finish(_safe_divide(num, den), average)


class F1(Fbeta):
    """:class:`Fbeta` with ``beta=1``: ``2 TP / (2 TP + FN + FP)`` per class."""

    def __init__(self, eval_type: str = "classification") -> None:
        super().__init__(1.0, eval_type)
