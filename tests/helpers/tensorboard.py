"""Reading runs with the real TensorBoard reader (``EventAccumulator``), keeping everything."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image


def accumulator(run: Path | str) -> Any:
    """A loaded ``EventAccumulator`` of ``run`` that keeps every event of every kind."""
    from tensorboard.backend.event_processing import event_accumulator as ea

    keep_all = {kind: 0 for kind in (ea.SCALARS, ea.HISTOGRAMS, ea.IMAGES, ea.TENSORS, ea.AUDIO)}
    acc = ea.EventAccumulator(str(run), size_guidance=keep_all)
    acc.Reload()
    return acc


def decoded(encoded: bytes) -> np.ndarray:
    """The pixels of an encoded (PNG, GIF's first frame) image."""
    return np.asarray(Image.open(io.BytesIO(encoded)).convert("RGB"))
