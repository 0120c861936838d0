"""Images as MindSpore writes them: a batch tiled into one RGB picture, PNG-encoded.

A batch of N images (NCHW, C in {1, 3}) becomes one canvas of ``ceil(N / cols)`` rows
and ``cols = min(N, 8)`` columns, left to right then top to bottom, with no gaps; empty
cells stay black and single-channel images are repeated into three channels. Pixel
values: uint8 is kept; otherwise, over the whole canvas, values in [0, 1] are scaled by
255, anything else is mapped by ``(v - min) * 255 / (max - min + 1)``, then truncated to
uint8. ``dataformats`` lets callers hand over NHWC, CHW or HWC instead of NCHW.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image as PILImage

from sumlens.io.events import Image

MAX_COLUMNS = 8
DATAFORMATS = ("NCHW", "NHWC", "CHW", "HWC", "HW")
PNG_COMPRESS_LEVEL = 1
"""zlib level for PNG. Level 1 encodes natural pictures ~3x faster than Pillow's default
(6) for files ~1.17x larger (measured on benchmarks/_anchors' natural images; noise
compresses the same at every level); the pixels are identical either way."""


def nchw_shape(
    shape: tuple[int, ...], dataformats: str = "NCHW", name: str = "value"
) -> tuple[int, int, int, int]:
    """The NCHW shape of an image batch laid out as ``dataformats``; checks rank and channels.

    Raises ``ValueError`` naming ``name`` for a wrong rank, a channel count other than 1
    or 3, or an empty dimension, so bad images fail where the user handed them over.
    """
    layout = dataformats.upper() if isinstance(dataformats, str) else dataformats
    if layout not in DATAFORMATS:
        raise ValueError(f"dataformats={dataformats!r} is not one of {', '.join(DATAFORMATS)}")
    if len(shape) != len(layout):
        raise ValueError(
            f"{name} has shape {tuple(shape)} ({len(shape)}-D), which does not hold a valid "
            f"image batch in layout {layout!r} ({len(layout)}-D expected)"
        )
    sizes = dict(zip(layout, shape, strict=True))
    nchw = (sizes.get("N", 1), sizes.get("C", 1), sizes["H"], sizes["W"])
    if nchw[1] not in (1, 3) or 0 in nchw:
        raise ValueError(
            f"{name} has shape {nchw} as NCHW; images need 1 or 3 channels and no empty dimension"
        )
    return nchw


def to_nchw(array: np.ndarray, dataformats: str = "NCHW", name: str = "value") -> np.ndarray:
    """Rearrange ``array`` laid out as ``dataformats`` into NCHW (checked by :func:`nchw_shape`)."""
    shape = nchw_shape(array.shape, dataformats, name)
    layout = dataformats.upper()
    order = [layout.index(axis) for axis in "NCHW" if axis in layout]
    return np.transpose(array, order).reshape(shape)


def tile(batch: np.ndarray) -> np.ndarray:
    """Tile an NCHW batch into one H x W x 3 canvas (still in the batch's dtype)."""
    n, channels, height, width = batch.shape
    cols = min(n, MAX_COLUMNS)
    rows = -(-n // cols)
    canvas = np.zeros((rows * height, cols * width, 3), dtype=batch.dtype)
    hwc = np.transpose(batch, (0, 2, 3, 1))
    if channels == 1:
        hwc = np.repeat(hwc, 3, axis=3)
    for index in range(n):
        row, col = divmod(index, cols)
        canvas[row * height : (row + 1) * height, col * width : (col + 1) * width] = hwc[index]
    return canvas


def to_uint8(canvas: np.ndarray) -> np.ndarray:
    """Scale a canvas to uint8 pixels by MindSpore's rule (uint8 input is kept)."""
    if canvas.dtype == np.uint8:
        return canvas
    values = canvas.astype(np.float32, copy=False)
    lo, hi = float(values.min()), float(values.max())
    if lo >= 0 and hi <= 1:
        values = values * 255
    elif hi != lo:
        values = (values - lo) * 255 / (hi - lo + 1)
    return values.astype(np.uint8)


def encode_png(pixels: np.ndarray, compress_level: int = PNG_COMPRESS_LEVEL) -> bytes:
    """PNG bytes of an H x W x 3 uint8 array."""
    out = io.BytesIO()
    PILImage.fromarray(pixels, "RGB").save(out, format="PNG", compress_level=compress_level)
    return out.getvalue()


def encode_image(batch: np.ndarray) -> Image:
    """Tile, scale and PNG-encode an NCHW batch (already checked by :func:`to_nchw`)."""
    pixels = to_uint8(tile(batch))
    height, width, _ = pixels.shape
    return Image(encode_png(pixels), height, width, 3)
