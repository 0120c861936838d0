"""The layout of a WAV clip (sample rate, channels, frames) read from its RIFF header.

TF2's audio summaries keep only the encoded clips, so a reader learns a clip's sample rate
and length from the file itself. The header comes from a record that may be crafted: every
read is bounds-checked, nothing is allocated, and the walk over the chunks moves forward by
at least 8 bytes a step, so it ends within the clip's length.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

_CHUNK = struct.Struct("<4sI")
_FMT = struct.Struct("<HHIIHH")  # format, channels, sample rate, byte rate, block align, bits


class WavLayout(NamedTuple):
    """What a WAV header says: samples per second, channels, and frames in its data chunk."""

    sample_rate: float
    channels: int
    frames: int


def wav_layout(clip: bytes) -> WavLayout | None:
    """The layout of ``clip``, or None when it does not start as a RIFF WAVE file with a
    ``fmt `` chunk before its ``data`` chunk. A data chunk cut short (or a streaming
    writer's size of 0xFFFFFFFF) counts the frames actually present."""
    if len(clip) < 12 or clip[:4] != b"RIFF" or clip[8:12] != b"WAVE":
        return None
    fmt: tuple[int, int, int] | None = None
    pos = 12
    while pos + _CHUNK.size <= len(clip):
        name, size = _CHUNK.unpack_from(clip, pos)
        body = pos + _CHUNK.size
        if name == b"fmt " and size >= _FMT.size and body + _FMT.size <= len(clip):
            _, channels, rate, _, block_align, _ = _FMT.unpack_from(clip, body)
            fmt = (rate, channels, block_align)
        elif name == b"data":
            if fmt is None:
                return None
            rate, channels, block_align = fmt
            present = min(size, len(clip) - body)
            return WavLayout(float(rate), channels, present // block_align if block_align else 0)
        pos = body + size + (size & 1)  # chunks are padded to an even length
    return None
