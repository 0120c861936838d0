"""Taps: hooks that accumulate THOR's curvature statistics on the layers themselves.

MindSpore replaces each layer by a "Thor" twin that computes the statistics in its own
forward. Here the user's modules stay as they are: one forward hook per layer reads the
layer input and, through a tensor hook on the output, the gradient w.r.t. the output. A
tensor hook (rather than a full backward hook) keeps in-place ops after the layer (an
in-place ReLU) legal and still sees the gradient of the layer's own output.

A tap only works while it is *armed*; the optimizer arms it for curvature steps, so on
the other steps a hook costs one Python call. Statistics are reduced to sums at once
(``xᵀx`` and ``δᵀδ``, in float32 with autocast disabled, on the layer's device), so no
activation is kept alive. Several forward/backward passes before one optimizer step
(gradient accumulation, a layer used twice) add up; :meth:`Tap.take` hands the sums to
the optimizer and starts afresh.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "CONV_STATS",
    "Conv2dTap",
    "EmbeddingTap",
    "LinearTap",
    "Marker",
    "Statistics",
    "Tap",
]

CONV_STATS = ("kfc", "batch_mean")


@dataclass(frozen=True)
class Statistics:
    """Sums collected by a tap over one optimizer step.

    ``a_sum``: sum of input outer products (a vector of token counts for an embedding);
    ``a_count``: what ``a_sum`` is averaged over; ``g_sum``/``g_count`` likewise for the
    output gradients. Both sums are float32 on the layer's device.
    """

    a_sum: torch.Tensor
    a_count: int
    g_sum: torch.Tensor
    g_count: int


def _outer(rows: torch.Tensor) -> torch.Tensor:
    """``rowsᵀ·rows`` for a ``(count, n)`` matrix."""
    return rows.t() @ rows


class Tap(ABC):
    """Base class: arming, accumulation and hand-over; subclasses say what to reduce."""

    kind = ""

    def __init__(self) -> None:
        self.armed = False
        self._a_sum: torch.Tensor | None = None
        self._a_count = 0
        self._g_sum: torch.Tensor | None = None
        self._g_count = 0

    @property
    def pending(self) -> bool:
        """Whether statistics were collected since the last :meth:`take`."""
        return self._a_sum is not None or self._g_sum is not None

    def attach(self, module: nn.Module) -> None:
        """Register the forward hook on ``module``."""
        module.register_forward_hook(self._forward)

    def take(self) -> Statistics | None:
        """The collected sums (None unless both a forward and a backward were seen)."""
        a_sum, g_sum = self._a_sum, self._g_sum
        stats = None
        if a_sum is not None and g_sum is not None:
            stats = Statistics(a_sum, self._a_count, g_sum, self._g_count)
        self._a_sum = self._g_sum = None
        self._a_count = self._g_count = 0
        return stats

    @abstractmethod
    def input_statistic(self, module: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        """``(sum, count)`` of the input statistic of one call (float32 sums)."""

    @abstractmethod
    def output_statistic(self, grad: torch.Tensor) -> tuple[torch.Tensor, int]:
        """``(sum, count)`` of the output-gradient statistic of one call (float32)."""

    def _forward(self, module: nn.Module, inputs: tuple[Any, ...], output: Any) -> None:
        if not (self.armed and module.training and inputs and torch.is_grad_enabled()):
            return
        if not (isinstance(output, torch.Tensor) and output.requires_grad):
            return
        x = inputs[0]
        with torch.no_grad(), torch.autocast(x.device.type, enabled=False):
            total, count = self.input_statistic(module, x.detach())
        self._a_sum = total if self._a_sum is None else self._a_sum + total
        self._a_count += count
        output.register_hook(self._backward)

    def _backward(self, grad: torch.Tensor) -> None:
        with torch.no_grad(), torch.autocast(grad.device.type, enabled=False):
            total, count = self.output_statistic(grad.detach().float())
        self._g_sum = total if self._g_sum is None else self._g_sum + total
        self._g_count += count


class LinearTap(Tap):
    """``nn.Linear``: ``A = xᵀx / rows`` and ``G = δᵀδ / rows`` over all leading dims."""

    kind = "linear"

    def input_statistic(self, module: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        rows = x.float().reshape(-1, x.shape[-1])
        return _outer(rows), rows.shape[0]

    def output_statistic(self, grad: torch.Tensor) -> tuple[torch.Tensor, int]:
        rows = grad.reshape(-1, grad.shape[-1])
        return _outer(rows), rows.shape[0]


class Conv2dTap(Tap):
    """``nn.Conv2d`` (groups 1, any stride/padding/dilation/padding mode).

    ``conv_stats="kfc"``: every (sample, output position) patch is a row, the sums are
    averaged over ``N·L`` rows. ``"batch_mean"`` (MindSpore's GPU path): patches and
    output gradients are first averaged over the batch, then over the ``L`` positions.
    """

    kind = "conv2d"

    def __init__(self) -> None:
        super().__init__()
        self.conv_stats = "kfc"

    def input_statistic(self, module: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        assert isinstance(module, nn.Conv2d)
        x = x.float()
        if x.ndim == 3:
            x = x.unsqueeze(0)
        padding: Any = module.padding
        if isinstance(padding, str) or module.padding_mode != "zeros":
            x = F.pad(x, _explicit_padding(module), mode=_pad_mode(module.padding_mode))
            padding = 0
        patches = F.unfold(
            x, module.kernel_size, dilation=module.dilation, padding=padding, stride=module.stride
        )  # (N, C·kh·kw, L)
        if self.conv_stats == "batch_mean":
            mean = patches.mean(0)
            return mean @ mean.t(), mean.shape[1]
        columns = patches.transpose(0, 1).reshape(patches.shape[1], -1)
        return columns @ columns.t(), columns.shape[1]

    def output_statistic(self, grad: torch.Tensor) -> tuple[torch.Tensor, int]:
        if grad.ndim == 3:
            grad = grad.unsqueeze(0)
        if self.conv_stats == "batch_mean":
            mean = grad.mean(0).flatten(1)
            return mean @ mean.t(), mean.shape[1]
        columns = grad.transpose(0, 1).reshape(grad.shape[1], -1)
        return columns @ columns.t(), columns.shape[1]


def _explicit_padding(conv: nn.Conv2d) -> tuple[int, int, int, int]:
    """``F.pad`` widths (left, right, top, bottom) equivalent to the conv's padding."""
    padding = conv.padding
    if padding == "valid":
        return (0, 0, 0, 0)
    if isinstance(padding, str):  # "same", the other word torch takes
        widths: list[int] = []
        for k, d in zip(reversed(conv.kernel_size), reversed(conv.dilation), strict=True):
            total = d * (k - 1)
            widths += [total // 2, total - total // 2]
        return (widths[0], widths[1], widths[2], widths[3])
    ph, pw = padding
    return (pw, pw, ph, ph)


def _pad_mode(padding_mode: str) -> str:
    return "constant" if padding_mode == "zeros" else padding_mode


class EmbeddingTap(Tap):
    """``nn.Embedding``: ``a_sum`` counts each token id; ``G = δᵀδ / tokens``."""

    kind = "embedding"

    def input_statistic(self, module: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        assert isinstance(module, nn.Embedding)
        ids = x.reshape(-1)
        counts = torch.bincount(ids, minlength=module.num_embeddings).float()
        return counts, ids.numel()

    def output_statistic(self, grad: torch.Tensor) -> tuple[torch.Tensor, int]:
        rows = grad.reshape(-1, grad.shape[-1])
        return _outer(rows), rows.shape[0]


@dataclass(frozen=True)
class Marker:
    """A converted layer without hooks: ``kind`` is ``"layernorm"`` (the diagonal rule
    needs only the gradients) or ``"first_order"`` (a supported type THOR cannot
    precondition; ``reason`` says why). Kept on the module so a second conversion
    recognises the layer and does not warn again."""

    kind: str
    reason: str = ""
