"""What a reader returns: one :class:`Event` per recorded value, whatever the file format.

MindSpore puts all of a step's values into one protobuf event and lineage into a file
of its own; TensorBoard writes one value per event and marks newer kinds of values with
plugin metadata. Readers flatten both into the same plain records, so that the viewer
and the tests never need to know which format a run was written in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

PLUGINS = (
    "scalar",
    "image",
    "tensor",
    "histogram",
    "graph",
    "train_lineage",
    "eval_lineage",
    "dataset_graph",
    "custom_lineage_data",
    "landscape",
    "text",
    "audio",
    "pr_curve",
    "hparams",
    "run_metadata",
)
"""Every ``Event.plugin`` a reader can return."""


@dataclass(frozen=True, slots=True)
class Event:
    """One recorded value.

    ``value`` is a float for ``scalar``, a numpy array for ``tensor``, an :class:`Image`
    for ``image``, a :class:`Histogram` for ``histogram``, a :class:`Text` for ``text``,
    an :class:`Audio` for ``audio``, a float64 array of shape ``(6, thresholds)`` for
    ``pr_curve`` (rows: true positives, false positives, true negatives, false negatives,
    precision, recall, as TensorBoard's PR-curve plugin lays them out), and the protobuf
    message itself for ``graph`` (MindSpore's GraphProto; a TensorBoard ``GraphDef`` is
    converted to one), ``run_metadata`` (TensorBoard's RunMetadata), ``hparams``
    (TensorBoard's HParamsPluginData: an experiment, a session start or a session end),
    the lineage plugins and ``landscape`` (LossLandscape).
    It is None for the histograms and tensors that an indexing read hands over unconverted
    (:func:`sumlens.io.read_file_scalars` with ``values=False``).
    """

    step: int
    wall_time: float
    plugin: str
    tag: str
    value: Any


@dataclass(frozen=True, slots=True)
class Image:
    """An encoded image (PNG for everything sumlens and MindSpore write) and its size."""

    encoded: bytes
    height: int
    width: int
    colorspace: int = 3


@dataclass(frozen=True, slots=True)
class Text:
    """A text value: TensorBoard's text plugin writes a string tensor of any shape, shown
    as markdown when it holds one string and as a table of markdown cells otherwise.

    ``cells`` are the strings in row-major order (UTF-8 decoded, bad bytes replaced);
    ``shape`` is the tensor's shape (``()`` for a single string).
    """

    cells: tuple[str, ...]
    shape: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Audio:
    """An encoded audio clip (WAV for everything torch's writer and sumlens write).

    ``frames`` is the length in samples per channel (0 when the file did not say);
    ``label`` is the clip's caption, when the writer gave one.
    """

    encoded: bytes
    sample_rate: float
    channels: int
    frames: int
    content_type: str = "audio/wav"
    label: str = ""


@dataclass(frozen=True, slots=True)
class Histogram:
    """Buckets (left edge, width, count) and statistics of the values they summarise.

    ``min``/``max``/``sum`` are over the finite values; ``count`` is every value,
    including the NaN and infinite ones counted apart. A statistic the file did not hold
    (TensorBoard keeps no NaN counts; TF2 histograms no sum) is NaN or 0.
    """

    left: np.ndarray
    width: np.ndarray
    counts: np.ndarray
    min: float
    max: float
    sum: float
    count: int
    nan_count: int = 0
    pos_inf_count: int = 0
    neg_inf_count: int = 0
