"""Lineage written again is not a restart (``board/data/reader.py``, ``board/plugins.py``).

Our adapters write a run's lineage again, at step 0, at every evaluation; the run list
called that "replaced points" (a restart from a checkpoint): 4 on a Hugging Face run, 9 on
a Lightning one. Real runs of the ``Trainer`` callback and of ``SumlensLogger`` read by the
real loader show none, while a run that truly goes back in step still counts what it
replaced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sumlens import SummaryWriter
from sumlens.board.data.loader import Loader

EVALUATIONS = 3


def _hf_run(directory: Path, work: Path) -> None:
    """A 2-layer GPT-2 from a config (no download), 6 steps, evaluated every 2."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

    from sumlens.integrations.transformers import SumlensCallback

    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_embd=16, n_head=2, vocab_size=50, n_positions=8,
                        bos_token_id=0, eos_token_id=0)  # fmt: skip
    data = [{"input_ids": ids, "labels": ids} for ids in torch.randint(0, 50, (16, 8))]
    args = TrainingArguments(
        output_dir=str(work), max_steps=2 * EVALUATIONS, per_device_train_batch_size=4,
        logging_steps=1, eval_strategy="steps", eval_steps=2, save_strategy="no",
        report_to=[], use_cpu=True, disable_tqdm=True,
    )  # fmt: skip
    trainer = Trainer(model=GPT2LMHeadModel(config), args=args, train_dataset=data,
                      eval_dataset=data[:4], callbacks=[SumlensCallback(directory)])  # fmt: skip
    trainer.train()


def _lightning_run(directory: Path) -> None:
    """The tiny Lightning fit of ``helpers.lightning_run``: 2 epochs, validated each."""
    from helpers.lightning_run import fit

    from sumlens.integrations.lightning import SumlensCallback, SumlensLogger

    fit(SumlensLogger(directory, name="", version=""), [SumlensCallback(collect_freq=2)])


def _restarted_run(directory: Path) -> None:
    """Steps 0-5, then a resumed training from step 3: 3 points replaced."""
    with SummaryWriter(str(directory)) as writer:
        for step in range(6):
            writer.add_scalar("loss", 1.0 / (step + 1), step)
    with SummaryWriter(str(directory)) as writer:
        for step in range(3, 8):
            writer.add_scalar("loss", 0.5 / (step + 1), step)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    pytest.importorskip("transformers")
    pytest.importorskip("lightning")
    base = tmp_path_factory.mktemp("adapters")
    _hf_run(base / "hf", tmp_path_factory.mktemp("hf-work"))
    _lightning_run(base / "lightning")
    _restarted_run(base / "restarted")
    loader = Loader(base, tmp_path_factory.mktemp("ws"))
    try:
        loader.poll()
        return {run["id"]: run for run in loader.runs()}
    finally:
        loader.stop()


@pytest.mark.parametrize("run", ["./hf", "./lightning"])
def test_our_adapters_runs_have_no_replaced_points(
    runs: dict[str, dict[str, Any]], run: str
) -> None:
    found = runs[run]
    assert {"train_lineage", "eval_lineage"} <= set(found["tags"]), found["tags"]
    assert (found["stale_points_dropped"], found["restarts"]) == (0, 0)


def test_a_run_going_back_in_step_still_counts_what_it_replaced(
    runs: dict[str, dict[str, Any]],
) -> None:
    found = runs["./restarted"]
    assert found["stale_points_dropped"] == 3 and found["restarts"] == 1
    assert found["points"] == 8  # steps 0-2 of the first training, 3-7 of the second
