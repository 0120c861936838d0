"""``MonitorCallback``: the shared base of EarlyStopping and ReduceLROnPlateau.

It holds what both need once: the monitored quantity, the direction (``mode``), the
minimum change that counts as an improvement, an optional baseline, and the lookup of the
value at the end of a training epoch -- ``"loss"`` from the step's ``net_outputs``, any
other name from ``cb_params.eval_results`` (``fit`` with validation), then
``cb_params.metrics``. A missing value is a warning (listing what is available) and the
epoch is skipped; 0 is a value, not "missing" (MindSpore treats it as missing). Under
torch.distributed the value is averaged over the ranks.
"""

from __future__ import annotations

import math
from typing import Any

from sumlens._checks import check_number
from sumlens._log import logger
from sumlens.train.callback import Callback
from sumlens.train.callbacks._common import loss_value, mean_over_ranks, scalar_value

__all__ = ["MIN_MONITORS", "MonitorCallback"]

#: Monitored names that improve downwards when ``mode="auto"``.
MIN_MONITORS = frozenset(
    {
        "hausdorff_distance",
        "mae",
        "mse",
        "loss",
        "perplexity",
        "mean_surface_distance",
        "root_mean_square_distance",
        "eval_loss",
    }
)
_MODES = ("auto", "min", "max")


class MonitorCallback(Callback):
    """Base for callbacks that watch one value per epoch and compare it with the best."""

    def __init__(
        self,
        monitor: str = "eval_loss",
        mode: str = "auto",
        min_delta: float = 0,
        baseline: float | None = None,
    ) -> None:
        if not isinstance(monitor, str) or not monitor:
            raise TypeError(f"monitor must be a non-empty str, got {monitor!r}")
        if not isinstance(mode, str) or mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
        self.monitor = monitor
        self.mode = mode
        owner = type(self).__name__
        self.min_delta = abs(check_number(min_delta, "min_delta", owner, finite=False))
        self.baseline = (
            None if baseline is None else check_number(baseline, "baseline", owner, finite=False)
        )
        self.lower_is_better = mode == "min" or (mode == "auto" and monitor in MIN_MONITORS)
        self.best = self._worst()

    def _worst(self) -> float:
        return math.inf if self.lower_is_better else -math.inf

    def is_improvement(self, current: float, reference: float) -> bool:
        """``current`` beats ``reference`` by more than ``min_delta`` in the right direction."""
        if self.lower_is_better:
            return current < reference - self.min_delta
        return current > reference + self.min_delta

    def get_monitor_value(self, params: dict[str, Any]) -> float | None:
        """The monitored value of this epoch (rank-averaged), or None when unavailable."""
        value: Any = None
        if self.monitor == "loss":
            value = loss_value(params.get("net_outputs"))
            available = ["loss"] if value is not None else []
        else:
            available = []
            for source in ("eval_results", "metrics"):
                found = params.get(source)
                if isinstance(found, dict):
                    available.extend(k for k in found if k not in available)
                    if value is None and found.get(self.monitor) is not None:
                        value = found[self.monitor]
        if value is None:
            logger.warning(
                "%s: monitor %r is not available, skipping this epoch; available: %s",
                type(self).__name__,
                self.monitor,
                available or "nothing (use fit() with validation data for eval metrics)",
            )
            return None
        current = scalar_value(value, f"the monitored value {self.monitor!r}")
        return mean_over_ranks(current) if current is not None else None
