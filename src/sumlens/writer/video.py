"""``add_video``: a batch of clips as one animated GIF in a ``Summary.Image``.

Torch's writer needs moviepy for this; we encode the GIF with Pillow. The frames are made
as torch's writer makes them: ``[B, T, C, H, W]`` clips are tiled into one grid per time
step (the batch padded with blank clips to a power of two, ``2 ** ((B.bit_length() - 1)
// 2)`` rows), uint8 values kept and other values taken as [0, 1] and scaled by 255.
GIF holds at most 256 colours per frame (Pillow picks them per frame) and one level of
transparency; consecutive identical frames are stored once, shown for their total time.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from sumlens._checks import check_number, check_text
from sumlens._log import warn_once
from sumlens._proto import tensorboard_pb2 as tbpb
from sumlens.writer.arrays import numeric_array

OWNER = "SummaryWriter.add_video"
_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


def video_value(tag: str, vid_tensor: object, fps: float = 4) -> tbpb.Summary.Value:
    """The summary value of ``vid_tensor`` (``[B, T, C, H, W]``, C of 1, 3 or 4) played
    at ``fps`` frames per second."""
    check_text(tag, "tag", OWNER)
    rate = check_number(fps, "fps", OWNER, above=0.0)
    frames = video_frames(vid_tensor)
    _, height, width, channels = frames.shape
    if channels == 4:
        warn_once(
            f"video-alpha:{tag}",
            "%s: GIF keeps pixels either opaque or fully transparent; the partial "
            "transparency of tag %r's frames is lost",
            OWNER,
            tag,
        )
    images = [Image.fromarray(frame.squeeze(2) if channels == 1 else frame, _MODES[channels])
              for frame in frames]  # fmt: skip
    buffer = io.BytesIO()
    images[0].save(
        buffer,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=1000.0 / rate,
        loop=0,
    )
    return tbpb.Summary.Value(
        tag=tag,
        image=tbpb.Summary.Image(
            height=height, width=width, colorspace=channels, encoded_image_string=buffer.getvalue()
        ),
    )


def video_frames(vid_tensor: object) -> np.ndarray:
    """The uint8 frames ``[T, rows * H, cols * W, C]`` of a batch of clips, tiled."""
    clips = numeric_array(vid_tensor, "vid_tensor", OWNER)
    if clips.ndim != 5 or clips.shape[2] not in _MODES or 0 in clips.shape:
        raise ValueError(
            f"For '{OWNER}', the argument 'vid_tensor' must have shape [B, T, C, H, W] with "
            f"C of 1, 3 or 4 and no empty dimension, but got {list(clips.shape)}"
        )
    if clips.dtype != np.uint8:
        clips = (clips.astype(np.float32) * 255).clip(0, 255).astype(np.uint8)
    batch, time_steps, channels, height, width = clips.shape
    padded = 1 << (batch - 1).bit_length()  # the next power of two
    if padded != batch:
        blank = np.zeros((padded - batch, *clips.shape[1:]), dtype=np.uint8)
        clips = np.concatenate((clips, blank))
    rows = 2 ** ((batch.bit_length() - 1) // 2)
    cols = padded // rows
    grid = clips.reshape(rows, cols, time_steps, channels, height, width)
    grid = grid.transpose(2, 0, 4, 1, 5, 3)  # T, rows, H, cols, W, C
    return np.ascontiguousarray(grid.reshape(time_steps, rows * height, cols * width, channels))
