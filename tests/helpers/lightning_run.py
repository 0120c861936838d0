"""A tiny LightningModule on random 8x8 images, and a script that fits it.

The tests of :mod:`sumlens.integrations.lightning` import :func:`fit`; the DDP test runs
this file as a script (Lightning's ``ddp`` launcher starts the other rank by running the
same command line again)::

    python tests/helpers/lightning_run.py SAVE_DIR DEVICES
"""

from __future__ import annotations

import sys
from typing import Any

import lightning as L
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

from sumlens.integrations.lightning import SumlensCallback, SumlensLogger

SAMPLES = 32
BATCH = 8
EPOCHS = 2
CLASSES = 3


class TinyImageModule(L.LightningModule):
    """A convolution and a linear layer classifying 1x8x8 images."""

    def __init__(self, lr: float = 0.1, optim: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.features = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.Flatten())
        self.head = nn.Linear(2 * 8 * 8, CLASSES)
        self.example_input_array = torch.zeros(1, 1, 8, 8)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(images))

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        images, labels = batch
        loss = F.cross_entropy(self(images), labels)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        images, labels = batch
        logits = self(images)
        self.log("val_loss", F.cross_entropy(logits, labels))
        self.log("val_acc", (logits.argmax(1) == labels).float().mean())

    def configure_optimizers(self) -> Any:
        optimizer = torch.optim.SGD(self.parameters(), lr=self.hparams.lr)
        return [optimizer], [torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5)]


def loader(seed: int) -> DataLoader:
    generator = torch.Generator().manual_seed(seed)
    images = torch.rand(SAMPLES, 1, 8, 8, generator=generator)
    labels = torch.randint(0, CLASSES, (SAMPLES,), generator=generator)
    return DataLoader(TensorDataset(images, labels), batch_size=BATCH)


def trainer(logger: L.pytorch.loggers.Logger, callbacks: list, **options: Any) -> L.Trainer:
    """A quiet CPU trainer for :data:`EPOCHS` epochs logging every step."""
    return L.Trainer(
        max_epochs=EPOCHS,
        logger=logger,
        callbacks=callbacks,
        accelerator="cpu",
        enable_progress_bar=False,
        enable_model_summary=False,
        log_every_n_steps=1,
        **options,
    )


def fit(logger: L.pytorch.loggers.Logger, callbacks: list, **options: Any) -> TinyImageModule:
    torch.manual_seed(0)
    module = TinyImageModule(optim={"name": "sgd", "momentum": 0.0})
    trainer(logger, callbacks, **options).fit(module, loader(1), loader(2))
    return module


def main(save_dir: str, devices: int) -> None:
    """Fit with our logger and callback on ``devices`` CPU processes (``ddp`` on gloo)."""
    options: dict[str, Any] = {"devices": devices}
    if devices > 1:
        options["strategy"] = "ddp"
    fit(
        SumlensLogger(save_dir),
        [SumlensCallback(collect_freq=2, histogram_regular=r"head\.")],
        **options,
    )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
