"""A training script written for ``torch.utils.tensorboard.SummaryWriter``, switched to
sumlens by its import line alone, and the dict-per-step style (``sumlens.log``).

A small MLP learns XOR-like labels on random points (CPU, a second). The first run logs
through ``SummaryWriter`` exactly as torch's writer is called (scalars, a histogram per
layer, an image, text, hyper-parameters); the second logs the same losses with
``sumlens.log``. Both are TensorBoard-format runs (``--format mindspore`` for MindInsight's
format) that ``sumlens start --logdir LOGDIR`` or ``tensorboard --logdir LOGDIR`` shows.

Run: ``python examples/summary_writer_example.py [LOGDIR] [--format tensorboard|mindspore]``
(default LOGDIR: a fresh temporary folder).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable

import torch
from torch import nn

import sumlens
from sumlens import SummaryWriter  # was: from torch.utils.tensorboard import SummaryWriter
from sumlens.io import describe

STEPS = 200


def train(log: Callable[[int, torch.Tensor, torch.Tensor], None], model: nn.Module) -> float:
    """Train ``model`` for :data:`STEPS` steps, calling ``log(step, loss, accuracy)``."""
    torch.manual_seed(0)
    points = torch.rand(512, 2) * 2 - 1
    labels = ((points[:, 0] > 0) ^ (points[:, 1] > 0)).long()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    loss = torch.tensor(0.0)
    for step in range(STEPS):
        logits = model(points)
        loss = nn.functional.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        accuracy = (logits.argmax(1) == labels).float().mean()
        log(step, loss.detach(), accuracy)
    return float(loss)


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logdir", nargs="?", default=None)
    parser.add_argument("--format", default="tensorboard", choices=("tensorboard", "mindspore"))
    args = parser.parse_args()
    logdir = args.logdir or tempfile.mkdtemp(prefix="sumlens-writer-")

    model = mlp()
    with SummaryWriter(os.path.join(logdir, "writer"), file_format=args.format) as writer:

        def log(step: int, loss: torch.Tensor, accuracy: torch.Tensor) -> None:
            writer.add_scalar("loss", loss, step)  # tensors are taken as they are
            writer.add_scalar("accuracy", accuracy, step)
            if step % 50 == 0:
                for name, parameter in model.named_parameters():
                    writer.add_histogram(name, parameter, step)

        final = train(log, model)
        grid = torch.stack(
            torch.meshgrid(torch.linspace(-1, 1, 32), torch.linspace(-1, 1, 32), indexing="ij"), -1
        )
        with torch.no_grad():
            decision = model(grid.reshape(-1, 2)).softmax(1)[:, 1].reshape(1, 32, 32)
        writer.add_image("decision", decision, STEPS)
        writer.add_text("notes", f"final loss **{final:.3f}**", STEPS)
        writer.add_hparams({"lr": 0.05, "hidden": 16}, {"final_loss": final})

    sumlens.init(os.path.join(logdir, "log"), file_format=args.format)
    train(lambda step, loss, accuracy: sumlens.log({"loss": loss, "accuracy": accuracy}), mlp())
    sumlens.finish()

    for run in ("writer", "log"):
        print(describe(os.path.join(logdir, run)))
    print(f"runs written under {logdir}")


if __name__ == "__main__":
    main()
