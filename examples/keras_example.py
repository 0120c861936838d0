"""Keras 3 with sumlens, on the torch backend and without TensorFlow.

Keras' own ``TensorBoard`` callback needs TensorFlow whatever the backend; sumlens'
callback writes the same runs without it. A small dense network learns whether a point
lies inside the unit circle (random data, CPU, a few seconds). ``<LOGDIR>/train`` gets
``epoch_loss``, ``epoch_accuracy``, ``epoch_learning_rate``, ``batch_*`` every 5
batches, a histogram of every weight each epoch and the model's config as lineage;
``<LOGDIR>/validation`` the validation values under the same tags, so TensorBoard draws
training and validation as two lines of one chart.

Run: ``python examples/keras_example.py [LOGDIR] [--format tensorboard|mindspore]``
(default LOGDIR: a fresh temporary folder), then ``sumlens read LOGDIR`` or
``tensorboard --logdir LOGDIR``. Needs ``pip install 'sumlens[keras]'``.
"""

from __future__ import annotations

import argparse
import os
import tempfile

os.environ.setdefault("KERAS_BACKEND", "torch")  # before Keras is imported: it picks one then

import keras
import numpy as np

from sumlens.integrations.keras import SumlensCallback
from sumlens.io import describe


def inside_circle(samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Points of the square [-1.5, 1.5]^2; the label says whether |p| < 1."""
    points = np.random.default_rng(seed).uniform(-1.5, 1.5, (samples, 2)).astype(np.float32)
    return points, (np.linalg.norm(points, axis=1) < 1).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logdir", nargs="?", default=None)
    parser.add_argument("--format", choices=("tensorboard", "mindspore"), default="tensorboard")
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    logdir = args.logdir or tempfile.mkdtemp(prefix="sumlens-keras-")

    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [
            keras.Input((2,)),
            keras.layers.Dense(16, activation="relu"),
            keras.layers.Dense(16, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    optimizer = keras.optimizers.Adam(0.01)
    model.compile(optimizer=optimizer, loss="binary_crossentropy", metrics=["accuracy"])
    callback = SumlensCallback(logdir, update_freq=5, histogram_freq=1, file_format=args.format)
    model.fit(
        *inside_circle(1024, 0),
        batch_size=32,
        epochs=args.epochs,
        validation_data=inside_circle(256, 1),
        callbacks=[callback],
        verbose=0,
    )

    print(f"backend: {keras.backend.backend()}")
    for sub_run in ("train", "validation"):
        print(f"run: {os.path.join(logdir, sub_run)}")
        print(describe(os.path.join(logdir, sub_run)))


if __name__ == "__main__":
    main()
