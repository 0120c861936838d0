"""``add_audio``: a mono sound clip as 16-bit PCM WAV in a ``Summary.Audio``.

Encoded as torch's writer encodes it, so the WAV bytes are the same: samples outside
[-1, 1] are clipped (with a warning), scaled by 32767 and truncated to little-endian int16.
Torch's writer takes one channel only (``[L]``, ``[1, L]`` or ``[L, 1]``), and so do we.
"""

from __future__ import annotations

import io
import wave

import numpy as np

from sumlens._checks import check_number, check_text
from sumlens._log import warn_once
from sumlens._proto import tensorboard_pb2 as tbpb
from sumlens.writer.arrays import numeric_array

OWNER = "SummaryWriter.add_audio"
_FULL_SCALE = np.iinfo(np.int16).max


def audio_value(tag: str, snd_tensor: object, sample_rate: float = 44100) -> tbpb.Summary.Value:
    """The summary value of the clip ``snd_tensor`` (values in [-1, 1]) at ``sample_rate`` Hz."""
    check_text(tag, "tag", OWNER)
    rate = check_number(sample_rate, "sample_rate", OWNER, above=0.0)
    samples = numeric_array(snd_tensor, "snd_tensor", OWNER)
    if samples.size == 0 or sum(extent > 1 for extent in samples.shape) > 1:
        raise ValueError(
            f"For '{OWNER}', the argument 'snd_tensor' must be one channel of at least one "
            f"sample (shape [L], [1, L] or [L, 1]), but got shape {list(samples.shape)}"
        )
    samples = samples.reshape(-1)
    if np.abs(samples).max() > 1:
        warn_once(
            f"audio-clipped:{tag}",
            "%s: the audio of tag %r has samples outside [-1, 1]; they are clipped",
            OWNER,
            tag,
        )
        samples = samples.clip(-1, 1)
    pcm = (samples * _FULL_SCALE).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm.tobytes())
    return tbpb.Summary.Value(
        tag=tag,
        audio=tbpb.Summary.Audio(
            sample_rate=rate,
            num_channels=1,
            length_frames=pcm.size,
            encoded_audio_string=buffer.getvalue(),
            content_type="audio/wav",
        ),
    )
