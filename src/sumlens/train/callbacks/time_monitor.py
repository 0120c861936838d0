"""``TimeMonitor``: print how long each epoch took, per epoch and per step.

It is the one built-in callback that ``fit``'s evaluation calls (it times it). MindSpore
keeps one start time, so inside ``fit`` the evaluation's ``epoch_begin`` overwrites the
training epoch's start and "Train epoch time" only covers the evaluation. Here training
and evaluation epochs (``on_train_epoch_*`` / ``on_eval_epoch_*``) have a timer each, so
both lines are right; the print order stays MindSpore's (``Eval epoch time`` before
``Train epoch time``).
The clock is injectable (``clock=``, default :func:`time.perf_counter`) for tests.
Under torch.distributed only rank 0 prints.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sumlens._checks import check_bool, check_int
from sumlens.train.callback import Callback, RunContext
from sumlens.train.callbacks._common import is_rank_zero

__all__ = ["TimeMonitor"]


class TimeMonitor(Callback):
    """Print ``{Mode} epoch time: X ms, per step time: Y ms`` at the end of every epoch.

    ``data_size`` (positive int or None) is the number of steps per epoch used when the
    driver gives no ``batch_num``. With ``data_time=True`` the mean time spent waiting
    for each batch (between one step's end and the next step's begin) is appended as
    ``(data time: Z ms)``.
    """

    def __init__(
        self,
        data_size: int | None = None,
        data_time: bool = False,
        *,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.data_size = check_int(data_size, "data_size", "TimeMonitor", 1, allow_none=True)
        self.data_time = check_bool(data_time, "data_time", "TimeMonitor")
        if not callable(clock):
            raise TypeError(f"clock must be a callable returning seconds, got {clock!r}")
        self.clock = clock
        self._epoch_start: dict[str, float] = {}
        self._data_sum = 0.0
        self._data_start: float | None = None

    runs_in_fit_eval = True

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        now = self.clock()
        self._epoch_start["train"] = now
        if self.data_time:
            self._data_sum = 0.0
            self._data_start = now

    def on_eval_epoch_begin(self, run_context: RunContext) -> None:
        self._epoch_start["eval"] = self.clock()

    def on_train_step_begin(self, run_context: RunContext) -> None:
        if self.data_time and self._data_start is not None:
            self._data_sum += self.clock() - self._data_start

    def on_train_step_end(self, run_context: RunContext) -> None:
        if self.data_time:
            self._data_start = self.clock()

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        self._epoch_end(run_context, "train")

    def on_eval_epoch_end(self, run_context: RunContext) -> None:
        self._epoch_end(run_context, "eval")

    def _epoch_end(self, run_context: RunContext, mode: str) -> None:
        now = self.clock()
        params = run_context.original_args()
        start = self._epoch_start.pop(mode, None)
        if start is None:
            return  # an epoch end without its begin: nothing measured
        epoch_ms = (now - start) * 1000.0
        steps = params.get("batch_num")
        if isinstance(steps, bool) or not isinstance(steps, int) or steps <= 0:
            steps = self.data_size
        if steps is None:
            raise ValueError(
                "TimeMonitor needs the number of steps per epoch: cb_params.batch_num is "
                f"{params.get('batch_num')!r} and data_size is None; pass data_size=<positive int>"
            )
        per_step = epoch_ms / steps
        line = f"{mode.title()} epoch time: {epoch_ms:5.3f} ms, per step time: {per_step:5.3f} ms"
        sink = bool(params.get("dataset_sink_mode", False))
        if self.data_time and mode == "train" and not sink:
            line += f" (data time: {self._data_sum * 1000.0 / steps:5.3f} ms)"
            self._data_start = None
        if is_rank_zero():
            print(line, flush=True)
