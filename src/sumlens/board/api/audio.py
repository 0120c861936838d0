"""``/api/v1/audio``, ``/api/v1/audio/clips`` and ``/api/v1/audio/clips/at``: the audio
view's clips and what they are.

A clip (:class:`~sumlens.io.Audio`) is served as the bytes written. Its content type is
the one the file names only when that is an audio type the page can play; otherwise it is
told from the clip's first bytes, and never anything a browser would run (a file naming
``text/html`` must not make the dashboard's origin serve a page). The listing gives each
kept clip's sample rate, channels, length and label; the length is ``frames /
sample_rate``, the frames read from the WAV header (:func:`sumlens.io.wav.wav_layout`)
when the file said 0; it also gives every recorded step (``recorded``), and
``/audio/clips/at`` says what the clip of any one of them is.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from sumlens.board.data.surface import ReadSurface
from sumlens.board.errors import NotFound, ValueUnreadable
from sumlens.board.query.kept import at_step, kept_value, recorded_json, value_at_step
from sumlens.board.query.lookup import pick_series
from sumlens.board.responses import json_response
from sumlens.io import Audio
from sumlens.io.wav import wav_layout

RunParam = Annotated[str, Query(description="run id, e.g. ./ or ./a/b")]
TagParam = Annotated[str, Query(description="the clip's tag")]
RankParam = Annotated[int | None, Query(description="the rank (files without one: omit)")]
StepParam = Annotated[
    int | None, Query(description="any recorded step, kept or not (default: the newest kept)")
]
AUDIO_TYPES = frozenset({"audio/wav", "audio/wave", "audio/x-wav", "audio/mpeg", "audio/ogg",
                         "audio/flac", "audio/webm", "audio/mp4", "audio/aac"})  # fmt: skip
MAGIC = ((b"RIFF", "audio/wav"), (b"OggS", "audio/ogg"), (b"fLaC", "audio/flac"),
         (b"ID3", "audio/mpeg"), (b"\xff\xfb", "audio/mpeg"))  # fmt: skip


def media_type(clip: Audio) -> str:
    """What the clip is served as: its own type when it is a playable audio type, else
    the type its first bytes say, else ``application/octet-stream``."""
    named = clip.content_type.split(";")[0].strip().lower()
    if named in AUDIO_TYPES:
        return named
    found = (media for magic, media in MAGIC if clip.encoded.startswith(magic))
    return next(found, "application/octet-stream")


def clip_json(step: int, wall: float, clip: Audio) -> dict[str, Any]:
    """One clip as the page lists it (``seconds`` null when its length is not known)."""
    layout = None if clip.frames else wav_layout(clip.encoded)
    frames = layout.frames if layout else clip.frames
    rate = clip.sample_rate
    return {
        "step": step,
        "wall": wall,
        "sample_rate": rate,
        "channels": clip.channels,
        "frames": frames,
        "seconds": frames / rate if frames and rate > 0 else None,
        "label": clip.label,
        "content_type": media_type(clip),
        "bytes": len(clip.encoded),
    }


def make_audio_router(surface: ReadSurface) -> APIRouter:
    """The audio view's routes over ``surface``."""
    router = APIRouter(prefix="/api/v1")

    @router.get(
        "/audio", summary="One audio clip at any recorded step, as written (WAV for torch's writer)"
    )
    def audio(
        run: RunParam, tag: TagParam, step: StepParam = None, rank: RankParam = None
    ) -> Response:
        chosen, index = at_step(pick_series(surface, run, "audio", tag, rank), step)
        clip = kept_value(surface, chosen, index, Audio)
        return Response(
            clip.encoded,
            media_type=media_type(clip),
            headers={"Cache-Control": "no-cache"},  # a resumed run may rewrite a step
        )

    @router.get(
        "/audio/clips",
        summary="Every kept clip of a tag, per rank, with its length, and every recorded step",
    )
    def clips(run: RunParam, tag: TagParam) -> Response:
        found = surface.samples(run, "audio", tag)
        if not found:
            pick_series(surface, run, "audio", tag, None)  # says which name is not there
        series = []
        for chosen in found:
            listed = []
            unreadable = 0  # damaged, gone, or not a clip: counted and said
            for index, item in enumerate(chosen.items):
                try:
                    clip = kept_value(surface, chosen, index, Audio)
                except (NotFound, ValueUnreadable):
                    unreadable += 1
                    continue
                listed.append(clip_json(int(item["step"]), float(item["wall"]), clip))
            series.append({"run": run, "rank": chosen.rank, "tag": tag, "clips": listed,
                           "unreadable": unreadable, **recorded_json(chosen)})  # fmt: skip
        return json_response({"series": series})

    @router.get("/audio/clips/at", summary="What the clip of a tag at any recorded step is")
    def clip_at(
        run: RunParam, tag: TagParam, step: StepParam = None, rank: RankParam = None
    ) -> Response:
        samples = pick_series(surface, run, "audio", tag, rank)
        found = clip_json(*value_at_step(surface, samples, step, Audio))
        return json_response({"run": run, "rank": samples.rank, "tag": tag, **found})

    return router
