"""``add_image_with_boxes``: boxes (and their labels) drawn on an image as torch's writer
draws them, so the pixels match: a 2-pixel red outline per box and, for a label, a red
strip above the box's bottom edge with the label in black in Pillow's default font.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from sumlens._log import warn_once
from sumlens.writer.arrays import numeric_array

OWNER = "SummaryWriter.add_image_with_boxes"
BOX_COLOR = "Red"
TEXT_COLOR = "black"
LINE_WIDTH = 2


def draw_boxes(
    image: np.ndarray, box_tensor: object, labels: str | Sequence[str] | None = None
) -> np.ndarray:
    """A copy of ``image`` (uint8 ``[H, W, C]``, C of 1, 3 or 4; one channel is drawn on as
    grey RGB, as torch's writer does) with ``box_tensor``'s boxes (``[N, 4]``: x_min, y_min,
    x_max, y_max in pixels) drawn on it, each with its label (one str per box, or a single
    str for one box)."""
    if (
        not isinstance(image, np.ndarray)
        or image.dtype != np.uint8
        or image.ndim != 3
        or image.shape[2] not in (1, 3, 4)
    ):
        shown = (
            f"{image.dtype} {list(image.shape)}"
            if isinstance(image, np.ndarray)
            else type(image).__name__
        )
        raise ValueError(
            f"For '{OWNER}', the image must be uint8 [H, W, C] with C of 1, 3 or 4, but got {shown}"
        )
    if image.shape[2] == 1:
        image = np.repeat(image, 3, axis=2)
    boxes = numeric_array(box_tensor, "box_tensor", OWNER)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(
            f"For '{OWNER}', the argument 'box_tensor' must have shape [N, 4] (x_min, y_min, "
            f"x_max, y_max), but got {list(boxes.shape)}"
        )
    texts = _labels(labels, len(boxes))
    canvas = Image.fromarray(image)
    draw = ImageDraw.Draw(canvas)
    font = ImageFont.load_default()
    for index, (left, top, right, bottom) in enumerate(boxes):
        corners = [(left, top), (left, bottom), (right, bottom), (right, top), (left, top)]
        draw.line(corners, width=LINE_WIDTH, fill=BOX_COLOR)
        if texts is not None and texts[index]:
            _draw_label(draw, font, texts[index], left, bottom)
    return np.asarray(canvas)


def _draw_label(
    draw: ImageDraw.ImageDraw,
    font: ImageFont.ImageFont | ImageFont.FreeTypeFont,
    text: str,
    left: float,
    bottom: float,
) -> None:
    """The label on a strip whose bottom-left corner is the box's."""
    text_left, text_top, text_right, text_bottom = font.getbbox(text)
    width, height = text_right - text_left, text_bottom - text_top
    margin = np.ceil(0.05 * height)
    draw.rectangle([(left, bottom - height - 2 * margin), (left + width, bottom)], fill=BOX_COLOR)
    draw.text((left + margin, bottom - height - margin), text, fill=TEXT_COLOR, font=font)


def _labels(labels: str | Sequence[str] | None, count: int) -> list[str] | None:
    if labels is None:
        return None
    texts = [labels] if isinstance(labels, str) else labels
    if not isinstance(texts, Sequence) or not all(isinstance(text, str) for text in texts):
        raise TypeError(
            f"For '{OWNER}', the argument 'labels' must be a str or a list of str, "
            f"but got {labels!r:.200}"
        )
    if len(texts) != count:
        warn_once(
            "boxes-labels-count",
            "%s: %d labels for %d boxes; the boxes are drawn without labels, as torch's "
            "writer draws them",
            OWNER,
            len(texts),
            count,
        )
        return None
    return list(texts)
