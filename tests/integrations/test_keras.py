"""The Keras 3 adapter: a real ``fit`` on the torch backend, without TensorFlow, records
epoch and batch scalars (train and validation sub-runs, as Keras' TensorBoard callback
lays them out), weight histograms and lineage, read back by TensorBoard's
``EventAccumulator`` and sumlens' readers.

Keras picks its backend once, at import; the training runs in a child interpreter
started with ``KERAS_BACKEND=torch``, whatever this process has imported.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("keras") is None:  # not imported here: that would pick a backend
    pytest.skip("keras is not installed (the keras extra)", allow_module_level=True)

from helpers.s3 import bucket_server, s3_options
from helpers.summary import custom_lineage, read_events, run_child
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from sumlens.io import iter_events

EPOCHS, BATCHES_PER_EPOCH, UPDATE_FREQ = 2, 4, 2
BUCKET = "keras-runs"
REMOTE_RUN = f"s3://{BUCKET}/fit"

FIT = """
    import json, os, sys
    import keras
    import numpy as np
    from sumlens.integrations.keras import SumlensCallback

    class KeepWeights(keras.callbacks.Callback):
        \"\"\"Each weight's min, max and size after each epoch, as its histogram should hold.\"\"\"

        def __init__(self):
            super().__init__()
            self.seen = {}

        def on_epoch_end(self, epoch, logs=None):
            for layer in self.model.layers:
                for w in layer.weights:
                    values = keras.ops.convert_to_numpy(w)
                    self.seen[f"{w.path}/histogram:{epoch}"] = [
                        float(values.min()), float(values.max()), int(values.size)
                    ]

    def fit(log_dir, file_format, **writer_kwargs):
        keras.utils.set_random_seed(0)
        model = keras.Sequential(
            [keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)]
        )
        model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse", metrics=["mae"])
        x = np.random.default_rng(0).random((64, 4), dtype=np.float32)
        y = x.sum(axis=1, keepdims=True)
        weights = KeepWeights()
        callback = SumlensCallback(
            log_dir, update_freq=2, histogram_freq=1, file_format=file_format, **writer_kwargs
        )
        history = model.fit(
            x, y, batch_size=16, epochs=2, validation_data=(x[:16], y[:16]),
            callbacks=[weights, callback], verbose=0,
        )
        return {"history": history.history, "weights": weights.seen}

    root, url, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    report = {f: fit(os.path.join(root, f), f) for f in ("tensorboard", "mindspore")}
    spool = os.path.join(root, "spool")
    report["s3"] = fit(url, "tensorboard", storage_options=options, spool_dir=spool)
    report["spool_left"] = [n for _, _, names in os.walk(spool) for n in names if "tfevents" in n]
    errors = []
    for kwargs in ({"update_freq": "step"}, {"update_freq": 0}, {"histogram_freq": -1},
                   {"file_format": "hdf5"}, {"spool": root}):
        try:
            SumlensCallback(root, **kwargs)
        except (TypeError, ValueError) as err:
            errors.append(str(err))
    report["errors"] = errors
    report["backend"] = keras.backend.backend()
    report["tensorflow_imported"] = "tensorflow" in sys.modules
    print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 with the bucket :data:`BUCKET`."""
    with bucket_server(BUCKET) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def fitted(
    tmp_path_factory: pytest.TempPathFactory, s3_endpoint: str
) -> tuple[Path, dict[str, Any]]:
    """The tiny model trained with our callback, once per file format and once more into
    the bucket (at :data:`REMOTE_RUN`), in a child on the torch backend: the runs' root and
    what the child saw."""
    root = tmp_path_factory.mktemp("keras")
    options = json.dumps(s3_options(s3_endpoint))
    done = run_child(FIT, str(root), REMOTE_RUN, options, cwd=root, env={"KERAS_BACKEND": "torch"})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["backend"] == "torch"
    return root, report


@pytest.fixture
def trained(fitted: tuple[Path, dict[str, Any]]) -> tuple[Path, dict[str, Any]]:
    """The TensorBoard-format run and what the child saw of it."""
    root, report = fitted
    return root / "tensorboard", {**report, **report["tensorboard"]}


def accumulator(directory: Path) -> EventAccumulator:
    acc = EventAccumulator(str(directory), size_guidance={"scalars": 0, "histograms": 0})
    acc.Reload()
    return acc


def scalars(acc: EventAccumulator) -> dict[str, dict[int, float]]:
    return {tag: {e.step: e.value for e in acc.Scalars(tag)} for tag in acc.Tags()["scalars"]}


def test_tensorflow_is_neither_imported_nor_installed(
    trained: tuple[Path, dict[str, Any]],
) -> None:
    assert not trained[1]["tensorflow_imported"]
    if importlib.util.find_spec("tensorflow") is not None:
        pytest.skip("tensorflow is installed here; the fit above ran without importing it")


def test_epoch_scalars_in_train_and_validation_sub_runs(
    trained: tuple[Path, dict[str, Any]],
) -> None:
    run, report = trained
    history = report["history"]
    train = scalars(accumulator(run / "train"))
    validation = scalars(accumulator(run / "validation"))
    epochs = range(EPOCHS)
    for name in ("loss", "mae"):
        assert train[f"epoch_{name}"] == pytest.approx(
            dict(zip(epochs, history[name], strict=True))
        )
        assert validation[f"epoch_{name}"] == pytest.approx(
            dict(zip(epochs, history[f"val_{name}"], strict=True))
        )
    assert train["epoch_learning_rate"] == pytest.approx(dict.fromkeys(epochs, 0.01))
    # after each validation, at the optimizer's step count, as Keras' callback writes it
    after = [BATCHES_PER_EPOCH * (epoch + 1) for epoch in epochs]
    assert validation["evaluation_loss_vs_iterations"] == pytest.approx(
        dict(zip(after, history["val_loss"], strict=True))
    )


def test_batch_scalars_every_update_freq_batches(trained: tuple[Path, dict[str, Any]]) -> None:
    run, report = trained
    train = scalars(accumulator(run / "train"))
    total = EPOCHS * BATCHES_PER_EPOCH
    assert set(train["batch_loss"]) == set(range(UPDATE_FREQ, total + 1, UPDATE_FREQ))
    # an epoch's last batch log is the epoch's running mean: its epoch value
    for epoch, loss in enumerate(report["history"]["loss"]):
        assert train["batch_loss"][BATCHES_PER_EPOCH * (epoch + 1)] == pytest.approx(loss)


def test_weight_histograms_every_epoch(trained: tuple[Path, dict[str, Any]]) -> None:
    run, report = trained
    acc = accumulator(run / "train")
    seen = {}
    for tag in acc.Tags()["histograms"]:
        for event in acc.Histograms(tag):
            h = event.histogram_value
            seen[f"{tag}:{event.step}"] = [h.min, h.max, int(h.num)]
    assert seen.keys() == report["weights"].keys()
    for key, (low, high, size) in report["weights"].items():
        assert seen[key] == pytest.approx([low, high, size]), key


def test_lineage_holds_model_config_and_results(trained: tuple[Path, dict[str, Any]]) -> None:
    run, report = trained
    events = read_events(run / "train")
    custom = custom_lineage(events)
    assert custom["model_config.layers.1.class_name"] == "Dense"
    assert custom["model_config.layers.1.config.units"] == 8
    assert custom["model_config.layers.2.config.units"] == 1
    train = [e.value for e in events if e.plugin == "train_lineage"]
    assert train[0].hyper_parameters.optimizer == "Adam"
    assert train[0].hyper_parameters.learning_rate == pytest.approx(0.01)
    assert train[0].hyper_parameters.loss_function == "mse"
    assert train[0].hyper_parameters.epoch == EPOCHS
    assert train[-1].algorithm.loss == pytest.approx(report["history"]["loss"][-1])
    (evaluation,) = [e.value for e in events if e.plugin == "eval_lineage"]
    assert json.loads(evaluation.metric) == pytest.approx(
        {"loss": report["history"]["val_loss"][-1], "mae": report["history"]["val_mae"][-1]}
    )


def test_mindspore_format(fitted: tuple[Path, dict[str, Any]]) -> None:
    root, report = fitted
    run, report = root / "mindspore", report["mindspore"]
    events = read_events(run / "train")
    losses = {e.step: e.value for e in events if e.tag == "epoch_loss"}
    assert losses == pytest.approx(dict(enumerate(report["history"]["loss"])))
    histograms = [e for e in events if e.plugin == "histogram"]
    assert {e.step for e in histograms} == set(range(EPOCHS))
    for event in histograms:
        low, high, size = report["weights"][f"{event.tag}:{event.step}"]
        assert (event.value.min, event.value.max, event.value.count) == pytest.approx(
            (low, high, size)
        )
    validation = {e.step: e.value for e in read_events(run / "validation") if e.tag == "epoch_loss"}
    assert validation == pytest.approx(dict(enumerate(report["history"]["val_loss"])))


def test_a_run_on_object_storage_reads_back(
    s3_endpoint: str, fitted: tuple[Path, dict[str, Any]]
) -> None:
    """``log_dir`` an ``s3://`` URL with the writer's options passed through: the train and
    validation sub-runs read back from the bucket, and nothing is left in the spool."""
    _, report = fitted
    options = s3_options(s3_endpoint)
    history = report["s3"]["history"]
    train = list(iter_events(f"{REMOTE_RUN}/train", storage_options=options))
    losses = {e.step: e.value for e in train if e.tag == "epoch_loss"}
    assert losses == pytest.approx(dict(enumerate(history["loss"])))
    histograms = {f"{e.tag}:{e.step}" for e in train if e.plugin == "histogram"}
    assert histograms == report["s3"]["weights"].keys()
    assert custom_lineage(train)["model_config.layers.1.config.units"] == 8
    validation = list(iter_events(f"{REMOTE_RUN}/validation", storage_options=options))
    val_losses = {e.step: e.value for e in validation if e.tag == "epoch_loss"}
    assert val_losses == pytest.approx(dict(enumerate(history["val_loss"])))
    assert report["spool_left"] == []


def test_bad_arguments_are_named(trained: tuple[Path, dict[str, Any]]) -> None:
    _, report = trained
    update_step, update_zero, histogram, file_format, option = report["errors"]
    assert "'update_freq' must be one of 'epoch', 'batch', but got 'step'" in update_step
    assert "'update_freq' must be >= 1, but got 0" in update_zero
    assert "'histogram_freq' must be >= 0" in histogram
    assert "'file_format' must be one of 'tensorboard', 'mindspore'" in file_format
    assert "'spool' is not an option of the summary writer" in option
