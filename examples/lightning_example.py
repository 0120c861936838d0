"""PyTorch Lightning with sumlens: a logger in place of ``TensorBoardLogger``, and a
callback adding what ``SummaryCollector`` collects.

A small CNN learns to tell bright 16x16 images from dark ones (random data, CPU, a few
seconds). The run lands in ``<LOGDIR>/lightning_logs/version_<n>``, as
``TensorBoardLogger`` would lay it out, in TensorBoard's format (``--format mindspore``
for MindInsight's): the logged losses and accuracy, the learning rate, weight histograms,
a sample of input images, the graph, the hyper-parameters and lineage.

Run: ``python examples/lightning_example.py [LOGDIR] [--format tensorboard|mindspore]``
(default LOGDIR: a fresh temporary folder), then ``sumlens read <the printed run>`` or
``tensorboard --logdir LOGDIR``. Needs ``pip install 'sumlens[lightning]'``.
"""

from __future__ import annotations

import argparse
import tempfile
from typing import Any

import lightning as L
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

from sumlens.integrations.lightning import SumlensCallback, SumlensLogger
from sumlens.io import describe


class BrightOrDark(L.LightningModule):
    """Two convolutions and a linear layer: is the image brighter than average?"""

    def __init__(self, lr: float = 0.05, channels: int = 4) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.features = nn.Sequential(
            nn.Conv2d(1, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1, stride=2),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.classifier = nn.Linear(channels, 2)
        self.example_input_array = torch.zeros(1, 1, 16, 16)  # for the graph

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(images))

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
        optimizer = torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
        return [optimizer], [torch.optim.lr_scheduler.StepLR(optimizer, 2, gamma=0.5)]


def bright_or_dark(samples: int, seed: int) -> DataLoader:
    """Random images, half of them brightened; the label says which."""
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 2, (samples,), generator=generator)
    images = torch.rand(samples, 1, 16, 16, generator=generator) * 0.5
    images += labels.view(-1, 1, 1, 1) * 0.5
    return DataLoader(TensorDataset(images, labels), batch_size=32, shuffle=seed == 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logdir", nargs="?", default=None)
    parser.add_argument("--format", choices=("tensorboard", "mindspore"), default="tensorboard")
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()
    logdir = args.logdir or tempfile.mkdtemp(prefix="sumlens-lightning-")

    logger = SumlensLogger(logdir, file_format=args.format)
    callback = SumlensCallback(collect_freq=5, histogram_regular=r"features\.0\.|classifier\.")
    trainer = L.Trainer(
        max_epochs=args.epochs,
        logger=logger,
        callbacks=[callback],
        accelerator="cpu",
        log_every_n_steps=5,
        enable_progress_bar=False,
    )
    trainer.fit(BrightOrDark(), bright_or_dark(512, 0), bright_or_dark(128, 1))

    print(f"run: {logger.log_dir}")
    print(describe(logger.log_dir))


if __name__ == "__main__":
    main()
