"""A WAV header's layout is read from the clip, and a header that lies costs nothing."""

from __future__ import annotations

import io
import struct
import wave

import pytest

from sumlens.io.wav import WavLayout, wav_layout


def clip(frames: int, channels: int = 1, rate: int = 8000, width: int = 2) -> bytes:
    """A clip written by Python's own ``wave`` module."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(width)
        out.setframerate(rate)
        out.writeframes(b"\0" * frames * channels * width)
    return buffer.getvalue()


def test_the_layout_of_a_clip() -> None:
    assert wav_layout(clip(400)) == WavLayout(8000.0, 1, 400)
    assert wav_layout(clip(30, channels=2, rate=44100, width=1)) == WavLayout(44100.0, 2, 30)


def test_a_chunk_before_fmt_is_passed_over() -> None:
    data = clip(10)
    odd = b"LIST" + struct.pack("<I", 3) + b"abc\0"  # padded to an even length
    assert wav_layout(data[:12] + odd + data[12:]) == WavLayout(8000.0, 1, 10)


def test_frames_are_those_present() -> None:
    """A cut clip, or a streaming writer's data size of 0xFFFFFFFF, counts what is there."""
    data = clip(100)
    assert wav_layout(data[:-50]) == WavLayout(8000.0, 1, 75)
    endless = data[:40] + struct.pack("<I", 0xFFFFFFFF) + data[44:]
    assert wav_layout(endless) == WavLayout(8000.0, 1, 100)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"RIFF",
        b"RIFF\0\0\0\0WAVX",
        b"RIFF\0\0\0\0WAVE",
        b"RIFF\0\0\0\0WAVEdata\x10\0\0\0",  # data before fmt
        b"RIFF\0\0\0\0WAVEfmt \xff\xff\xff\xff",  # a chunk larger than the clip
        b"RIFF\0\0\0\0WAVEfmt \x10\0\0\0\x01\0",  # fmt cut short
        b"RIFF\0\0\0\0WAVE" + b"pad \0\0\0\0" * 1000,  # empty chunks, then nothing
    ],
)
def test_no_layout_without_a_header(data: bytes) -> None:
    assert wav_layout(data) is None


def test_a_block_align_of_zero_counts_no_frames() -> None:
    data = bytearray(clip(10))
    data[32:34] = b"\0\0"
    assert wav_layout(bytes(data)) == WavLayout(8000.0, 1, 0)
