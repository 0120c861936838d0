"""The Hugging Face adapter: a real ``Trainer`` on a tiny GPT-2 built from a config (no
download) records what ``transformers``' own TensorBoard callback records, read back by
TensorBoard's ``EventAccumulator``, plus lineage and gradient histograms read back by
sumlens' readers."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

import torch
from helpers.s3 import bucket_server, s3_options
from helpers.summary import custom_lineage, read_events
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from torch.utils.tensorboard import SummaryWriter as TorchSummaryWriter
from transformers import (
    GPT2Config,
    GPT2LMHeadModel,
    Trainer,
    TrainerControl,
    TrainerState,
    TrainingArguments,
)
from transformers.integrations import TensorBoardCallback

from sumlens.integrations.transformers import SumlensCallback, tag_of
from sumlens.io import iter_events

STEPS, LOG_EVERY, EVAL_EVERY, HISTOGRAM_EVERY = 6, 2, 3, 3


def tiny_trainer(tmp_path: Path, callbacks: list[Any]) -> Trainer:
    """A 2-layer GPT-2 (hidden 32, vocabulary 100) on 32 random sequences of 16 tokens."""
    torch.manual_seed(0)
    config = GPT2Config(
        n_layer=2,
        n_embd=32,
        n_head=2,
        vocab_size=100,
        n_positions=16,
        bos_token_id=0,
        eos_token_id=0,
    )
    data = [{"input_ids": ids, "labels": ids} for ids in torch.randint(0, 100, (32, 16))]
    args = TrainingArguments(
        output_dir=str(tmp_path / "out"),
        max_steps=STEPS,
        per_device_train_batch_size=4,
        learning_rate=1e-3,
        logging_steps=LOG_EVERY,
        eval_strategy="steps",
        eval_steps=EVAL_EVERY,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
    )
    return Trainer(
        model=GPT2LMHeadModel(config),
        args=args,
        train_dataset=data,
        eval_dataset=data[:8],
        callbacks=callbacks,
    )


def scalars(directory: Path) -> dict[str, dict[int, float]]:
    """``{tag: {step: value}}`` of a run, as TensorBoard reads it."""
    acc = EventAccumulator(str(directory), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    return {tag: {e.step: e.value for e in acc.Scalars(tag)} for tag in acc.Tags()["scalars"]}


def texts(directory: Path) -> dict[str, list[str]]:
    """``{tag: [text, ...]}`` of a run's text summaries, as TensorBoard reads them."""
    acc = EventAccumulator(str(directory), size_guidance={"tensors": 0})
    acc.Reload()
    found = {}
    for tag in acc.Tags()["tensors"]:
        events = acc.Tensors(tag)
        if events and events[0].tensor_proto.string_val:
            found[tag] = [e.tensor_proto.string_val[0].decode() for e in events]
    return found


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Trainer]:
    """One training run recorded by our callback and by transformers' TensorBoard callback
    over torch's SummaryWriter, side by side."""
    tmp_path = tmp_path_factory.mktemp("hf")
    ours, reference = tmp_path / "ours", tmp_path / "reference"
    callbacks = [
        SumlensCallback(ours, histogram_freq=HISTOGRAM_EVERY),
        TensorBoardCallback(TorchSummaryWriter(str(reference))),
    ]
    trainer = tiny_trainer(tmp_path, callbacks)
    trainer.train()
    return ours, reference, trainer


def test_scalars_and_texts_match_transformers_tensorboard_callback(
    trained: tuple[Path, Path, Trainer],
) -> None:
    ours, reference, trainer = trained
    mine, theirs = scalars(ours), scalars(reference)
    assert mine.keys() == theirs.keys()
    for tag, points in theirs.items():
        assert mine[tag] == pytest.approx(points), tag
    assert set(mine[tag_of("loss")]) == {2, 4, 6}
    assert set(mine[tag_of("eval_loss")]) == {3, 6}
    logged = [entry for entry in trainer.state.log_history if "loss" in entry]
    for entry in logged:
        step = entry["step"]
        assert mine["train/loss"][step] == pytest.approx(entry["loss"])
        assert mine["train/learning_rate"][step] == pytest.approx(entry["learning_rate"])
    mine_text = texts(ours)
    assert mine_text == texts(reference)
    assert json.loads(mine_text["args/text_summary"][0])["learning_rate"] == 1e-3
    assert json.loads(mine_text["model_config/text_summary"][0])["n_layer"] == 2


def test_lineage_holds_arguments_config_and_evaluations(
    trained: tuple[Path, Path, Trainer],
) -> None:
    ours, _, trainer = trained
    events = read_events(ours)
    custom = custom_lineage(events)
    assert custom["args.learning_rate"] == 1e-3
    assert custom["args.per_device_train_batch_size"] == 4
    assert custom["model_config.n_layer"] == 2
    assert custom["model_config.n_embd"] == 32

    train = [e.value for e in events if e.plugin == "train_lineage"]
    assert train[0].hyper_parameters.learning_rate == pytest.approx(1e-3)
    assert train[0].hyper_parameters.batch_size == 4
    assert train[0].algorithm.network == "GPT2LMHeadModel"
    assert train[0].train_dataset.train_dataset_size == 32
    final_loss = trainer.state.log_history[-1]["train_loss"]
    assert train[-1].algorithm.loss == pytest.approx(final_loss)

    evaluations = [e for e in events if e.plugin == "eval_lineage"]  # lineage has no step
    history = [entry for entry in trainer.state.log_history if "eval_loss" in entry]
    for event, entry in zip(evaluations, history, strict=True):
        metrics = json.loads(event.value.metric)
        assert metrics["eval_loss"] == pytest.approx(entry["eval_loss"])
        assert event.value.valid_dataset.valid_dataset_size == 8


def test_gradient_histograms_on_their_schedule(trained: tuple[Path, Path, Trainer]) -> None:
    ours, _, trainer = trained
    acc = EventAccumulator(str(ours), size_guidance={"histograms": 0})
    acc.Reload()
    tags = acc.Tags()["histograms"]
    names = {name for name, p in trainer.model.named_parameters() if p.requires_grad}
    assert tags and {tag.removeprefix("gradients/") for tag in tags} <= names
    for tag in tags:
        assert [e.step for e in acc.Histograms(tag)] == [3, 6]
        assert all(e.histogram_value.num > 0 for e in acc.Histograms(tag))


def test_mindspore_format_holds_scalars_and_lineage(tmp_path: Path) -> None:
    run = tmp_path / "run"
    tiny_trainer(tmp_path, [SumlensCallback(run, file_format="mindspore")]).train()
    events = read_events(run)
    losses = {e.step: e.value for e in events if e.plugin == "scalar" and e.tag == "train/loss"}
    assert set(losses) == {2, 4, 6}
    plugins = {e.plugin for e in events}
    assert {"train_lineage", "eval_lineage", "custom_lineage_data"} <= plugins
    assert any(name.endswith("_MS") for name in (p.name for p in run.iterdir()))


def test_a_run_on_object_storage_reads_back(tmp_path: Path) -> None:
    """``log_dir`` an ``s3://`` URL, with the writer's options passed through: the scalars
    and lineage read back from the bucket, and nothing is left in the spool."""
    with bucket_server("hf-runs") as endpoint:
        options = s3_options(endpoint)
        run = f"s3://hf-runs/{uuid.uuid4().hex}"
        spool = tmp_path / "spool"
        callback = SumlensCallback(run, storage_options=options, spool_dir=spool, flush_secs=1)
        trainer = tiny_trainer(tmp_path, [callback])
        trainer.train()
        events = list(iter_events(run, storage_options=options))
    losses = {e.step: e.value for e in events if e.plugin == "scalar" and e.tag == "train/loss"}
    logged = {
        entry["step"]: entry["loss"] for entry in trainer.state.log_history if "loss" in entry
    }
    assert losses == pytest.approx(logged) and set(losses) == {2, 4, 6}
    assert custom_lineage(events)["model_config.n_layer"] == 2
    assert len([e for e in events if e.plugin == "eval_lineage"]) == 2
    assert not list(spool.rglob("*tfevents*"))


def test_only_world_process_zero_writes(tmp_path: Path) -> None:
    run = tmp_path / "rank1"
    callback = SumlensCallback(run, histogram_freq=1)
    args = TrainingArguments(output_dir=str(tmp_path / "out"), report_to=[], use_cpu=True)
    state = TrainerState(is_world_process_zero=False)
    control = TrainerControl()
    callback.on_train_begin(args, state, control)
    callback.on_log(args, state, control, logs={"loss": 1.0})
    callback.on_evaluate(args, state, control, metrics={"eval_loss": 1.0})
    callback.on_pre_optimizer_step(args, state, control)
    callback.on_train_end(args, state, control)
    assert not run.exists()


def test_default_directory_is_where_transformers_writes(tmp_path: Path) -> None:
    trainer = tiny_trainer(tmp_path, [SumlensCallback()])
    trainer.args.max_steps = 1
    trainer.args.eval_strategy = "no"
    trainer.train()
    runs = list((tmp_path / "out" / "runs").iterdir())
    assert len(runs) == 1 and any(runs[0].iterdir())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"histogram_freq": -1}, "'histogram_freq' must be >= 0"),
        ({"histogram_freq": 1.5}, "'histogram_freq' must be an int"),
        ({"file_format": "parquet"}, "'file_format' must be one of 'tensorboard', 'mindspore'"),
        ({"log_dir": 3}, "'log_dir' must be a str or os.PathLike"),
        ({"storage_option": {}}, "'storage_option' is not an option of the summary writer"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        SumlensCallback(**kwargs)
