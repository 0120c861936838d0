"""TensorBoard logs written by the real libraries: torch's ``SummaryWriter`` calling every
method, Lightning's ``TensorBoardLogger`` and Hugging Face's ``Trainer``.

Each writer takes a directory, writes a small deterministic run into it in a few seconds and
returns the directory the event files are in. Tests call them from module-scoped fixtures.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from helpers.graph_zoo import ResNet18

TORCH_SKIPPED = {"mesh", "custom_scalars"}
"""The plugins :func:`torch_every_method` writes that sumlens counts and skips."""
TEXT = "# Notes\n\n| lr | acc |\n|----|-----|\n| 0.1 | 0.5 |\n\n**bold** and `code`"
"""The markdown :func:`torch_every_method` writes with ``add_text``."""
HPARAMS = {"lr": 0.1, "layers": 3, "opt": "sgd", "dropout": False}
HPARAMS_METRICS = {"hp/acc": 0.5, "hp/loss": 0.25}


def torch_every_method(log_dir: Path) -> Path:
    """A run of torch's ``SummaryWriter`` calling every method (figure with matplotlib,
    video with moviepy only); returns ``log_dir``. ``add_hparams`` writes into a
    sub-directory of it named by the time, as torch's writer does."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    with SummaryWriter(str(log_dir)) as writer:
        for step in range(3):
            writer.add_scalar("loss", 1.0 / (step + 1), step)
            writer.add_scalars("lr", {"a": 0.1 * step, "b": 0.2 * step}, step)
            writer.add_histogram("weights", rng.normal(size=200), step)
            writer.add_image("image", rng.uniform(size=(3, 6, 7)), step)
            writer.add_text("notes", f"{TEXT}\n\nstep {step}", step)
            clip = torch.sin(torch.arange(400.0) * (step + 1) / 10)
            writer.add_audio("audio", clip, step, sample_rate=8000)
            labels, predictions = rng.integers(0, 2, 40), rng.uniform(size=40)
            writer.add_pr_curve("pr", labels, predictions, step, num_thresholds=11)
        writer.add_images("images", torch.rand(2, 3, 4, 4), 1)
        writer.add_graph(ResNet18(num_classes=10).eval(), torch.rand(1, 3, 32, 32))
        writer.add_embedding(
            torch.rand(6, 4),
            metadata=list("abcdef"),
            label_img=torch.rand(6, 3, 4, 4),
            global_step=1,
            tag="emb",
        )
        vertices = torch.rand(1, 4, 3)
        faces = torch.tensor([[[0, 1, 2], [1, 2, 3]]])
        writer.add_mesh("mesh", vertices, faces=faces, global_step=1)
        writer.add_custom_scalars({"train": {"loss": ["Multiline", ["loss"]]}})
        if importlib.util.find_spec("matplotlib") is not None:
            _add_figure(writer)
        if importlib.util.find_spec("moviepy") is not None:
            writer.add_video("video", torch.rand(1, 4, 3, 8, 8), 1, fps=4)
        writer.add_hparams(HPARAMS, HPARAMS_METRICS)
    return log_dir


def _add_figure(writer: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(1, 1), dpi=40)
    plt.plot([0, 1], [1, 0])
    writer.add_figure("figure", figure, 1)


LIGHTNING_HPARAMS_METRICS = {"hp/val_acc": 0.0}


def lightning_tensorboard_run(save_dir: Path) -> Path:
    """A 2-epoch CPU fit logged by Lightning's ``TensorBoardLogger`` with ``log_graph``
    and its hyper-parameters; returns the run directory (``save_dir/tb/version_0``)."""
    from lightning.pytorch.loggers import TensorBoardLogger

    from helpers.lightning_run import fit

    logger = TensorBoardLogger(str(save_dir), name="tb", log_graph=True)
    fit(logger, [], enable_checkpointing=False)
    logger.log_hyperparams({"batch": 8, "seed": 0}, metrics=LIGHTNING_HPARAMS_METRICS)
    logger.finalize("success")
    return Path(logger.log_dir)


def hf_tensorboard_run(output_dir: Path) -> Path:
    """A few steps of Hugging Face's ``Trainer`` on a tiny BERT built from a config (no
    download), with an evaluation, reporting to TensorBoard; returns its logging dir."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments
    from transformers.integrations import TensorBoardCallback

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=50,
        hidden_size=8,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=16,
        num_labels=2,
    )
    model = BertForSequenceClassification(config)
    generator = torch.Generator().manual_seed(0)
    data = [
        {
            "input_ids": torch.randint(0, 50, (8,), generator=generator),
            "labels": torch.tensor(i % 2),
        }
        for i in range(16)
    ]
    args = TrainingArguments(
        output_dir=str(output_dir),
        report_to="tensorboard",
        max_steps=4,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=8,
        logging_steps=1,
        eval_strategy="steps",
        eval_steps=2,
        save_strategy="no",
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
    )
    trainer = Trainer(model=model, args=args, train_dataset=data, eval_dataset=data[:8])
    trainer.train()
    (callback,) = [
        c for c in trainer.callback_handler.callbacks if isinstance(c, TensorBoardCallback)
    ]
    return Path(callback.logging_dir)
