"""``LearningRateScheduler``: set the learning rate from a function of (lr, step) every step.

MindSpore needs one scalar learning rate; a torch optimizer has one per param group. By
default the function sees the first group's rate and its result is written to every
group; ``per_group=True`` calls it once per group with that group's rate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from sumlens._checks import check_bool, check_number
from sumlens._log import logger
from sumlens.train.callback import Callback, RunContext, RunParams
from sumlens.train.callbacks._common import get_param

__all__ = ["LearningRateScheduler", "get_lr", "set_lr"]


def get_lr(group: dict[str, Any]) -> float:
    """A param group's learning rate as a float (tensor rates included)."""
    lr = group["lr"]
    return float(lr.item()) if isinstance(lr, torch.Tensor) else float(lr)


def set_lr(group: dict[str, Any], value: float) -> None:
    """Write ``value`` into a param group, in place when the rate is a tensor."""
    if isinstance(group["lr"], torch.Tensor):
        group["lr"].fill_(value)
    else:
        group["lr"] = value


_OWNER = "LearningRateScheduler"


def _checked_rate(value: object) -> float:
    """The function's new rate as a float (any real number: the function owns its values)."""
    return check_number(value, "learning_rate_function's result", _OWNER, finite=False)


class LearningRateScheduler(Callback):
    """After each step, ``new_lr = learning_rate_function(lr, cur_step_num)``.

    The optimizer is ``cb_params.optimizer`` (steps without one, e.g. evaluation steps,
    are skipped). The rate is written only when it changed (``math.isclose``, rel 1e-10).
    The function's result must be a real number (a TypeError otherwise).
    """

    runs_in_fit_eval = False

    def __init__(
        self, learning_rate_function: Callable[[float, int], float], *, per_group: bool = False
    ) -> None:
        if not callable(learning_rate_function):
            raise TypeError(
                "learning_rate_function must be a callable (lr: float, step: int) -> float, "
                f"got {learning_rate_function!r} ({type(learning_rate_function).__name__})"
            )
        self.learning_rate_function = learning_rate_function
        self.per_group = check_bool(per_group, "per_group", _OWNER)

    def on_train_step_end(self, run_context: RunContext) -> None:
        self._step_end(run_context.original_args())

    def on_eval_step_end(self, run_context: RunContext) -> None:
        self._step_end(run_context.original_args())

    def _step_end(self, params: RunParams) -> None:
        optimizer = params.get("optimizer")
        if not isinstance(optimizer, torch.optim.Optimizer) or not optimizer.param_groups:
            return
        step = get_param(params, "cur_step_num", 0)
        groups = optimizer.param_groups
        if self.per_group:
            for index, group in enumerate(groups):
                lr = get_lr(group)
                new = _checked_rate(self.learning_rate_function(lr, step))
                if not math.isclose(lr, new, rel_tol=1e-10):
                    set_lr(group, new)
                    logger.info("At step %s, param group %d: learning rate %s", step, index, new)
            return
        lr = get_lr(groups[0])
        new = _checked_rate(self.learning_rate_function(lr, step))
        if not math.isclose(lr, new, rel_tol=1e-10):
            for group in groups:
                set_lr(group, new)
            logger.info("At step %s, learning rate change to %s", step, new)
