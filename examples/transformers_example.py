"""Hugging Face ``Trainer`` with sumlens: one callback in place of ``report_to="tensorboard"``.

A 2-layer GPT-2 built from a config (nothing downloaded) learns to continue counting
sequences (0 1 2 3 ... modulo a 64-token vocabulary) on the CPU in a few seconds. The
run gets what ``transformers``' TensorBoard callback writes, under the same names
(``train/loss``, ``train/learning_rate``, ``eval/loss`` ..., the ``args`` and
``model_config`` texts), plus the arguments and model config as lineage, each
evaluation as evaluation lineage, and gradient histograms every 10 steps.

Run: ``python examples/transformers_example.py [LOGDIR] [--format tensorboard|mindspore]``
(default LOGDIR: a fresh temporary folder), then ``sumlens read LOGDIR`` or
``tensorboard --logdir LOGDIR``. Needs ``pip install 'sumlens[transformers]'``.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

from sumlens.integrations.transformers import SumlensCallback
from sumlens.io import describe

VOCABULARY, LENGTH = 64, 16


def counting(samples: int, seed: int) -> list[dict[str, torch.Tensor]]:
    """Sequences ``s, s+1, s+2 ...`` (modulo the vocabulary) from random starts."""
    generator = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, VOCABULARY, (samples, 1), generator=generator)
    ids = (starts + torch.arange(LENGTH)) % VOCABULARY
    return [{"input_ids": row, "labels": row} for row in ids]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logdir", nargs="?", default=None)
    parser.add_argument("--format", choices=("tensorboard", "mindspore"), default="tensorboard")
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    logdir = args.logdir or tempfile.mkdtemp(prefix="sumlens-transformers-")

    torch.manual_seed(0)
    config = GPT2Config(
        n_layer=2,
        n_embd=32,
        n_head=2,
        vocab_size=VOCABULARY,
        n_positions=LENGTH,
        bos_token_id=0,
        eos_token_id=0,
    )
    training = TrainingArguments(
        output_dir=os.path.join(logdir, "checkpoints"),
        max_steps=args.steps,
        per_device_train_batch_size=16,
        learning_rate=3e-3,
        logging_steps=5,
        eval_strategy="steps",
        eval_steps=10,
        save_strategy="no",
        report_to=[],  # sumlens records instead of the built-in trackers
        use_cpu=True,
        disable_tqdm=True,
    )
    run = os.path.join(logdir, "gpt2")
    callback = SumlensCallback(run, file_format=args.format, histogram_freq=10)
    trainer = Trainer(
        model=GPT2LMHeadModel(config),
        args=training,
        train_dataset=counting(512, 0),
        eval_dataset=counting(64, 1),
        callbacks=[callback],
    )
    trainer.train()

    print(f"run: {run}")
    print(describe(run))


if __name__ == "__main__":
    main()
