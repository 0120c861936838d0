"""``add_figure``: a matplotlib figure rendered to pixels with the Agg canvas.

matplotlib is optional (``pip install sumlens[figures]``); it is imported only when a
figure is rendered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

OWNER = "SummaryWriter.add_figure"


def figure_to_image(figure: Any, close: bool = True) -> np.ndarray:
    """The RGB pixels of ``figure`` (uint8 ``[H, W, 3]``), or of a list of figures (``[N, H,
    W, 3]``: they must have one size); ``close`` closes each figure once rendered."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as err:
        raise ImportError(
            f"{OWNER} needs matplotlib to render figures: pip install 'sumlens[figures]' "
            "(or matplotlib)"
        ) from err
    many = isinstance(figure, Sequence) and not isinstance(figure, str)
    figures = list(figure) if many else [figure]
    if not figures or not all(isinstance(one, Figure) for one in figures):
        raise TypeError(
            f"For '{OWNER}', the argument 'figure' must be a matplotlib Figure or a non-empty "
            f"list of them, but got {figure!r:.200}"
        )
    images = [_render(one, FigureCanvasAgg, close) for one in figures]
    if not many:
        return images[0]
    sizes = {image.shape for image in images}
    if len(sizes) > 1:
        raise ValueError(
            f"For '{OWNER}', the figures of a list must render to one size, but got "
            f"{sorted(size[:2] for size in sizes)} (height, width)"
        )
    return np.stack(images)


def _render(figure: Any, canvas_class: type, close: bool) -> np.ndarray:
    canvas = canvas_class(figure)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())[:, :, :3].copy()
    if close:
        import matplotlib.pyplot as plt

        plt.close(figure)
    return pixels
