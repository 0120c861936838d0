"""Many batch losses from one loss call, for PyTorch's own losses.

A landscape point needs the mean loss of every batch (MindSpore's ``Loss`` metric).
Called once per batch, a loss costs a dozen small operators each time: at batch 32
that is 32 calls per point, a tenth of the point's time for a small network. For the
built-in losses whose ``"mean"`` is the plain mean of their ``"none"`` output, one call
with ``reduction="none"`` over a whole pass and one segmented mean give every batch's
loss at once. Weighted means (class weights, ignored targets) are not plain means:
those losses keep the call per batch.

Cross-entropy over class indices is taken as ``-log_softmax(x)[y]`` with the softmax
run down the columns of the transposed logits: over rows of a few classes PyTorch's
kernel cannot vectorise (1,024 x 10 logits: 0.21 ms, transposed 0.05 ms, same values).
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

PLAIN_MEAN_LOSSES = (
    nn.L1Loss,
    nn.MSELoss,
    nn.SmoothL1Loss,
    nn.HuberLoss,
    nn.BCELoss,
    nn.BCEWithLogitsLoss,
    nn.SoftMarginLoss,
    nn.MultiLabelSoftMarginLoss,
    nn.CrossEntropyLoss,
    nn.NLLLoss,
)
"""Losses whose "mean" reduction averages their "none" output over all its elements
(CrossEntropyLoss and NLLLoss only without class weights and ignored targets)."""


class BatchLosses:
    """Per-batch mean losses of ``count`` equal batches from one call of ``loss_fn``."""

    def __init__(self, loss_fn: nn.Module) -> None:
        self.per_element = copy.copy(loss_fn)
        # torch types Module.__setattr__ for tensors and modules only
        self.per_element.reduction = "none"  # type: ignore[assignment]
        self.ignore_index: int | None = getattr(loss_fn, "ignore_index", None)
        self.by_columns = type(loss_fn) is nn.CrossEntropyLoss and loss_fn.label_smoothing == 0

    @classmethod
    def of(cls, loss_fn: Any) -> BatchLosses | None:
        """The fast way for ``loss_fn``, or None when its mean is not a plain mean."""
        if type(loss_fn) not in PLAIN_MEAN_LOSSES or loss_fn.reduction != "mean":
            return None
        if getattr(loss_fn, "weight", None) is not None:
            return None
        if loss_fn._forward_hooks or loss_fn._forward_pre_hooks:
            return None  # the user watches or changes the calls: keep them as they are
        return cls(loss_fn)

    def accepts(self, labels: Any) -> bool:
        """False when some class label is the ignored index (the mean then skips it)."""
        if self.ignore_index is None or not isinstance(labels, torch.Tensor):
            return True
        if labels.is_floating_point():
            return True  # class probabilities: nothing is ignored
        return not bool((labels == self.ignore_index).any())

    def __call__(self, outputs: torch.Tensor, labels: Any, count: int) -> torch.Tensor | None:
        """``(count,)`` batch means of ``outputs`` (``count`` batches one after the other),
        or None when the per-element losses do not split into ``count`` equal batches."""
        if (
            self.by_columns
            and outputs.dim() == 2
            and isinstance(labels, torch.Tensor)
            and labels.dim() == 1
            and not labels.is_floating_point()
        ):
            columns = torch.log_softmax(outputs.t(), dim=0)
            try:
                losses = columns.gather(0, labels.unsqueeze(0)).squeeze(0).neg_()
            except RuntimeError:  # a label out of range: the loss itself says which
                losses = self.per_element(outputs, labels)
        else:
            losses = self.per_element(outputs, labels)
        if losses.dim() == 0 or losses.shape[0] % count or losses.shape[0] != len(outputs):
            return None
        return losses.reshape(count, -1).mean(dim=1)
