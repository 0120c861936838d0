"""The audio routes (``board/api/audio.py``, with ``wav.py``) over an in-memory read
surface: clips served as written with a playable content type (never one a browser would
run), the listing's sample rate, channels, length and label (the length read from the WAV
header when the file said 0; crafted headers: tests/io/test_wav.py), values that are gone or
damaged, and bad requests answered with one line naming what is wrong."""

from __future__ import annotations

import io
import wave
from collections.abc import Iterator

import numpy as np
import pytest
from helpers.board import route_client
from helpers.memory_surface import GONE, Damaged, MemorySurface
from starlette.testclient import TestClient

from sumlens.io import Audio

RATE = 8000


def _wav(frames: int, channels: int = 1, rate: int = RATE) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(np.zeros(frames * channels, dtype="<i2").tobytes())
    return buffer.getvalue()


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    surface = MemorySurface()
    for step in (1, 2):
        clip = Audio(_wav(800 * step), RATE, 1, 800 * step, label=f"take {step}")
        surface.add_value("./a", "audio", "voice", step, clip, wall=10.0 + step, rank=0)
    surface.add_value("./a", "audio", "voice", 2, Audio(_wav(400, 2), RATE, 2, 400), rank=1)
    surface.add_value("./a", "audio", "unsaid", 1, Audio(_wav(1600, 2), RATE, 2, 0))
    surface.add_value("./a", "audio", "html", 1, Audio(b"<script>alert(1)</script>", RATE, 1,
                                                        0, content_type="text/html"))  # fmt: skip
    surface.add_value("./a", "audio", "ogg", 1, Audio(b"OggS....", 0.0, 1, 0, content_type=""))
    for step, value in ((1, Audio(_wav(8), RATE, 1, 8)), (2, GONE), (3, Damaged("bad CRC"))):
        surface.add_value("./crafted", "audio", "mixed", step, value)
    surface.add_value("./a", "audio", "gone", 1, GONE)
    surface.add_value("./a", "audio", "damaged", 1, Damaged("a CRC that does not match"))
    surface.add_value("./a", "audio", "not_audio", 1, b"bytes")
    with route_client(surface) as found:
        yield found


def _clips(client: TestClient, run: str, tag: str) -> list[dict]:
    response = client.get("/api/v1/audio/clips", params={"run": run, "tag": tag})
    assert response.status_code == 200, response.text
    return response.json()["series"]


def test_clips_are_listed_per_rank_with_their_length(client: TestClient) -> None:
    ranks = _clips(client, "./a", "voice")
    assert [(s["run"], s["rank"], s["tag"], s["unreadable"]) for s in ranks] == [
        ("./a", 0, "voice", 0), ("./a", 1, "voice", 0)]  # fmt: skip
    first, second = ranks[0]["clips"]
    assert first == {"step": 1, "wall": 11.0, "sample_rate": RATE, "channels": 1, "frames": 800,
                     "seconds": 0.1, "label": "take 1", "content_type": "audio/wav",
                     "bytes": len(_wav(800))}  # fmt: skip
    assert (second["step"], second["seconds"], second["label"]) == (2, 0.2, "take 2")
    assert ranks[1]["clips"][0]["channels"] == 2 and ranks[1]["clips"][0]["seconds"] == 0.05


def test_a_length_the_file_did_not_say_is_read_from_the_wav_header(client: TestClient) -> None:
    (unsaid,) = _clips(client, "./a", "unsaid")[0]["clips"]
    assert (unsaid["frames"], unsaid["seconds"]) == (1600, 0.2)
    (ogg,) = _clips(client, "./a", "ogg")[0]["clips"]  # no rate, no header to read: unknown
    assert (ogg["frames"], ogg["seconds"], ogg["content_type"]) == (0, None, "audio/ogg")


def test_values_that_cannot_be_read_are_counted(client: TestClient) -> None:
    (series,) = _clips(client, "./crafted", "mixed")
    assert [clip["step"] for clip in series["clips"]] == [1] and series["unreadable"] == 2


def test_a_clip_is_served_as_written(client: TestClient) -> None:
    newest = client.get("/api/v1/audio", params={"run": "./a", "tag": "voice"})
    assert newest.status_code == 200 and newest.content == _wav(1600)
    assert newest.headers["content-type"] == "audio/wav"
    older = client.get("/api/v1/audio", params={"run": "./a", "tag": "voice", "step": 1})
    assert older.content == _wav(800)
    other = client.get("/api/v1/audio", params={"run": "./a", "tag": "voice", "rank": 1})
    assert other.content == _wav(400, 2)


def test_a_content_type_a_browser_would_run_is_never_served(client: TestClient) -> None:
    response = client.get("/api/v1/audio", params={"run": "./a", "tag": "html"})
    assert response.headers["content-type"] == "application/octet-stream"
    assert response.headers["x-content-type-options"] == "nosniff"  # the app's, on every answer


@pytest.mark.parametrize(
    ("query", "status", "says"),
    [
        ("audio?run=./a&tag=nope", 404, "no audio tag='nope'"),
        ("audio?run=./b&tag=voice", 404, "run='./b'"),
        ("audio?run=./a&tag=voice&rank=5", 404, "rank=5"),
        ("audio?run=./a&tag=voice&step=7", 404, "kept steps: [1, 2]"),
        ("audio?run=./a&tag=voice&step=1.5", 422, "step"),
        ("audio?run=./a", 422, "tag"),
        ("audio?run=./a&tag=gone", 404, "no longer in its file"),
        ("audio?run=./a&tag=damaged", 422, "a CRC that does not match"),
        ("audio?run=./a&tag=not_audio", 404, "holds no audio value"),
        ("audio/clips?run=./a&tag=nope", 404, "no audio tag='nope'"),
        ("audio/clips?run=./b&tag=voice", 404, "run='./b'"),
        ("audio/clips?tag=voice", 422, "run"),
    ],
)
def test_bad_requests_are_named(client: TestClient, query: str, status: int, says: str) -> None:
    response = client.get(f"/api/v1/{query}")
    detail = response.json()["detail"]
    assert response.status_code == status and says in detail and "\n" not in detail
