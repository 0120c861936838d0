"""The Lightning rows of ``bench_collector``: the same MLP and data as its other rows,
trained by ``lightning.Trainer`` with each logger.

* ``lightning_none``: no logger (the baseline of the group; ``self.log`` is still called, so
  the rows differ by the logger alone);
* ``lightning_tb``: Lightning's ``TensorBoardLogger`` (torch's writer underneath);
* ``lightning_sumlens``: ``SumlensLogger`` (sumlens' ``SummaryWriter`` underneath);
* ``lightning_sumlens_cb``: ``SumlensLogger`` with ``SumlensCallback(collect_freq=10)``
  (adds learning rates and what the collector adds; informative).

Each logging row logs the loss every step (``log_every_n_steps=1``) and the first
parameters' histograms every ``HISTOGRAM_EVERY`` steps through ``logger.experiment``
(a callback that works with either logger), the workload of the other rows. The step
timer and turn-taking are the harness's (:class:`benchmarks.harness.turns.StepTimer`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from benchmarks.harness.clock import now
from benchmarks.harness.turns import StepTimer

LOGGERS = ("none", "tb", "sumlens", "sumlens_cb")


def lightning_run(
    net: nn.Module,
    data: Any,
    timer: StepTimer,
    logdir: Path,
    logger_kind: str,
    every: int,
    params: int,
) -> Any:
    """Train ``net`` on ``data`` for ``timer.total`` steps with ``logger_kind``; the run's
    times as ``bench_collector``'s ``RunTimes`` fields (setup, steps, close)."""
    import lightning as L
    from lightning.pytorch.loggers import TensorBoardLogger

    from sumlens.integrations.lightning import SumlensCallback, SumlensLogger

    class Module(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = net
            self.loss_fn = nn.CrossEntropyLoss()

        def training_step(self, batch: Any, _: int) -> torch.Tensor:
            x, y = batch
            loss = self.loss_fn(self.net(x), y)
            self.log("loss", loss)  # Lightning's bookkeeping in every row, logger or not
            return loss

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.01, momentum=0.9)

    class Clock(L.Callback):
        """Logs the histograms on schedule, then reports the step to the timer."""

        def on_train_batch_end(self, trainer: Any, module: Any, *_: Any) -> None:
            step = trainer.global_step
            if logger_kind != "none" and step % every == 0:
                experiment = trainer.logger.experiment
                for name, param in list(module.named_parameters())[:params]:
                    experiment.add_histogram(name, param.detach(), step)
            timer.step_done()

    timer.start()
    t0 = now()
    logger: Any = False
    callbacks: list[Any] = []
    if logger_kind == "tb":
        logger = TensorBoardLogger(str(logdir), name="", version=0)
    elif logger_kind in ("sumlens", "sumlens_cb"):
        logger = SumlensLogger(str(logdir), name="", version=0)
        if logger_kind == "sumlens_cb":
            callbacks.append(SumlensCallback(collect_freq=every))
    if logger:
        timer.flush = lambda: logger.experiment.flush()
    callbacks.append(Clock())
    trainer = L.Trainer(
        max_steps=timer.total,
        logger=logger,
        callbacks=callbacks,
        log_every_n_steps=1,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        accelerator="cpu",
        devices=1,
    )
    setup = now() - t0
    timer.mark = now()
    trainer.fit(Module(), train_dataloaders=data)
    t_last = now()
    if logger:
        logger.finalize("success")
    return setup, timer.steps, now() - t_last
