"""``/api/v1/embedding``: one embedding of a run as the embeddings view draws it.

The projector's files lie beside the event files (:mod:`sumlens.board.projector_config`
says which); they are read through the read surface (``beside_file``), bounded, and
turned into points by :mod:`sumlens.board.query.projector`: the vectors sampled to at most
:data:`~sumlens.board.query.projector.MAX_POINTS`, projected on their first three principal
components, with the metadata columns of those rows. Coordinates travel as base64 float32
(x, y, z per point): a third of the bytes of JSON numbers, decoded by the page without
parsing. What a file holds that cannot be shown is counted in the answer, or, when nothing
can be shown, a 422 naming the file and why.

An embedding written with thumbnails (``add_embedding(label_img=...)``: a sprite image
tiling one thumbnail per row of the tensors file, left to right and top to bottom) has a
``sprite`` in its answer: the thumbnail's width and height and the tensors row of each
point shown (base64 uint32), and ``/api/v1/embedding/sprite`` serves the image itself,
checked first: a PNG, JPEG or GIF of at most :data:`SPRITE_SIDE` pixels a side (the
projector's own bound), its size read from its header alone.

Reading and projecting 100,000 vectors takes most of a second (parsing the text is the
floor), so the last few answers are kept by the bytes they were made from, and once the
first loading pass is done the newest runs' embeddings are projected ahead: opening the
view then waits for reading the files, not for the work.
"""

from __future__ import annotations

import base64
import hashlib
import io
import threading
from collections import OrderedDict
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Query
from fastapi.responses import Response
from PIL import Image

from sumlens.board.data.surface import BesideFileTooLarge, Polling, ReadSurface
from sumlens.board.errors import BoardError, NotFound, ValueUnreadable
from sumlens.board.projector_config import (
    CONFIG_FILE,
    CONFIG_LIMIT,
    EmbeddingInfo,
    embedding_tag,
    parse_config,
)
from sumlens.board.query.projector import (
    MAX_POINTS,
    column_json,
    parse_metadata,
    parse_vectors,
    principal_components,
    sample_rows,
)
from sumlens.board.responses import image_media_type, json_response

TENSORS_LIMIT = 256 << 20
"""Bytes of a ``tensors.tsv`` read at most."""
METADATA_LIMIT = 64 << 20
"""Bytes of a ``metadata.tsv`` read at most."""
SPRITE_LIMIT = 64 << 20
"""Bytes of a sprite image read at most."""
SPRITE_SIDE = 8192
"""Pixels a side of a sprite image served at most (TensorBoard's projector's bound)."""
CACHED_ANSWERS = 4
"""Encoded answers kept (each up to a few MB at 100,000 points)."""
WARMED = 4
"""Embeddings projected ahead once the first loading pass is done (the newest runs')."""


def _read(surface: ReadSurface, run: str, path: str, limit: int, what: str) -> bytes | None:
    """The file ``path`` of ``run`` (None when it is not there); a 422 saying why it
    cannot be read (a path leaving the run's directory, too large, an I/O error)."""
    try:
        return surface.beside_file(run, path, limit)
    except BesideFileTooLarge:
        raise ValueUnreadable(
            f"the {what} {path!r} of run {run!r} is larger than {limit:,} bytes, the most "
            "the embeddings view reads"
        ) from None
    except ValueError as err:
        raise ValueUnreadable(f"the {what} of run {run!r} cannot be read: {err}") from None
    except OSError as err:
        reason = err.strerror or str(err)
        raise ValueUnreadable(
            f"the {what} {path!r} of run {run!r} cannot be read: {reason}"
        ) from None


class _Answers:
    """The last few encoded answers, by the bytes they were made from: a page opening an
    embedding again (or after :func:`make_embedding_router`'s warm-up) is answered without
    parsing and projecting the vectors again, and a rewritten file is never served stale."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: OrderedDict[bytes, bytes] = OrderedDict()

    def get(self, key: bytes) -> bytes | None:
        with self._lock:
            answer = self._answers.get(key)
            if answer is not None:
                self._answers.move_to_end(key)
            return answer

    def put(self, key: bytes, answer: bytes) -> None:
        with self._lock:
            self._answers[key] = answer
            while len(self._answers) > CACHED_ANSWERS:
                self._answers.popitem(last=False)


def _info(surface: ReadSurface, run: str, tag: str) -> tuple[bytes, EmbeddingInfo]:
    """The projector config of ``run`` and its entry for ``tag``; a 404 or 422 saying why
    there is none."""
    config = _read(surface, run, CONFIG_FILE, CONFIG_LIMIT, "projector config")
    if config is None:
        if not surface.has_run(run):
            raise NotFound(f"run={run!r} is not a run being served")
        raise NotFound(f"run={run!r} has no {CONFIG_FILE}: it holds no embeddings")
    try:
        infos = parse_config(config).embeddings
    except ValueError as err:
        raise ValueUnreadable(f"run {run!r}: {err}") from None
    info = next((i for i in infos if i.tensor_path and embedding_tag(i) == tag), None)
    if info is None:
        listed = [embedding_tag(i) for i in infos if i.tensor_path][:20]
        raise NotFound(f"run={run!r} has no embedding tag={tag!r}; embeddings: {listed}")
    return config, info


def _answer(surface: ReadSurface, answers: _Answers, run: str, tag: str, points: int) -> bytes:
    """The encoded ``/embedding`` answer of ``tag`` in ``run`` (see the module docstring)."""
    config, info = _info(surface, run, tag)
    tensors = _read(surface, run, info.tensor_path, TENSORS_LIMIT, "tensors file")
    if tensors is None:
        raise NotFound(f"the tensors file {info.tensor_path!r} of run {run!r} is not there")
    metadata = (
        _read(surface, run, info.metadata_path, METADATA_LIMIT, "metadata file")
        if info.metadata_path
        else None
    )
    digest = hashlib.blake2b(f"{run}\0{tag}\0{points}\0".encode(), digest_size=16)
    for part in (config, tensors, metadata or b""):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    key = digest.digest()
    cached = answers.get(key)
    if cached is not None:
        return cached
    try:
        vectors = parse_vectors(tensors)
    except ValueError as err:
        raise ValueUnreadable(
            f"the tensors file {info.tensor_path!r} of run {run!r} cannot be shown: {err}"
        ) from None
    shown = sample_rows(len(vectors.rows), points)
    coords, shares = principal_components(vectors.values[shown])
    body: dict[str, Any] = {
        "run": run,
        "tag": tag,
        "rows": len(vectors.rows),
        "dimension": int(vectors.values.shape[1]),
        "skipped_rows": vectors.skipped,
        "skipped_reason": vectors.reason,
        "shown": int(shown.size),
        "variance": shares,
        "coords": base64.b64encode(coords.tobytes()).decode("ascii"),
        **_metadata(info.metadata_path, metadata, vectors.rows[shown]),
        **_sprite(info, vectors.rows[shown]),
    }
    answer = bytes(json_response(body).body)
    answers.put(key, answer)
    return answer


def make_embedding_router(surface: ReadSurface) -> APIRouter:
    """The embeddings view's routes over ``surface``."""
    router = APIRouter(prefix="/api/v1")
    answers = _Answers()

    def warm(loading: Polling) -> None:
        """Once the first loading pass is done, project the embeddings of the most recently
        updated runs (:data:`WARMED`), so that opening the view does not wait for them."""
        while not loading.stopped:
            if loading.wait_for_pass(1, timeout=5.0):
                break
        runs = sorted(surface.runs(), key=lambda r: r["updated"] or 0.0, reverse=True)
        wanted = [(r["id"], t) for r in runs for t in r["tags"].get("embedding", [])][:WARMED]
        for run, tag in wanted:
            if loading.stopped:
                return
            try:
                _answer(surface, answers, run, tag, MAX_POINTS)
            except BoardError:
                continue  # said when the view asks for it

    if isinstance(surface, Polling):  # a surface held in memory has nothing to wait for
        threading.Thread(
            target=warm, args=(surface,), name="sumlens-embedding-warm", daemon=True
        ).start()

    @router.get("/embedding", summary="An embedding's points on its first principal components")
    def embedding(
        run: Annotated[str, Query(description="run id, e.g. ./ or ./a/b")],
        tag: Annotated[str, Query(description="the embedding's tensor name, e.g. default:00000")],
        points: Annotated[
            int, Query(ge=1, le=MAX_POINTS, description="points shown at most (sampled)")
        ] = MAX_POINTS,
    ) -> Response:
        return Response(_answer(surface, answers, run, tag, points), media_type="application/json")

    @router.get("/embedding/sprite", summary="The thumbnails of an embedding's points, tiled")
    def sprite(
        run: Annotated[str, Query(description="run id, e.g. ./ or ./a/b")],
        tag: Annotated[str, Query(description="the embedding's tensor name, e.g. default:00000")],
    ) -> Response:
        _, info = _info(surface, run, tag)
        path = info.sprite.image_path
        if not path:
            raise NotFound(f"the embedding {tag!r} of run {run!r} has no sprite image")
        data = _read(surface, run, path, SPRITE_LIMIT, "sprite image")
        if data is None:
            raise NotFound(f"the sprite image {path!r} of run {run!r} is not there")
        return Response(data, media_type=_checked_sprite(data, f"{path!r} of run {run!r}"))

    return router


def _sprite(info: EmbeddingInfo, rows: Any) -> dict[str, Any]:
    """The ``sprite`` of an answer (see the module docstring): none without a sprite
    image, a ``sprite_note`` when its thumbnail size is not two positive numbers."""
    if not info.sprite.image_path:
        return {}
    dims = list(info.sprite.single_image_dim)
    if len(dims) != 2 or not all(0 < d <= SPRITE_SIDE for d in dims):
        return {"sprite_note": f"its sprite's thumbnail size {dims} is not a width and height"}
    rows = np.ascontiguousarray(rows, dtype="<u4")
    return {
        "sprite": {
            "width": dims[0],
            "height": dims[1],
            "rows": base64.b64encode(rows.tobytes()).decode("ascii"),
        }
    }


def _checked_sprite(data: bytes, where: str) -> str:
    """The media type of the sprite image ``data``; a 422 naming ``where`` when it is not
    an image a browser shows or is larger than :data:`SPRITE_SIDE` a side (read from its
    header: nothing is decoded)."""
    media = image_media_type(data)
    if media is None:
        raise ValueUnreadable(f"the sprite image {where} is not a PNG, JPEG or GIF image")
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
    except (OSError, ValueError, Image.DecompressionBombError) as err:
        raise ValueUnreadable(f"the sprite image {where} cannot be read: {err}") from None
    if max(width, height) > SPRITE_SIDE:
        raise ValueUnreadable(
            f"the sprite image {where} is {width}x{height} pixels, more than the "
            f"{SPRITE_SIDE} a side the embeddings view draws"
        )
    return media


def _metadata(path: str, data: bytes | None, rows: Any) -> dict[str, Any]:
    """The metadata columns of ``rows`` (tensors rows) from the metadata file ``path`` (its
    ``data``, None when it is not there), and a note on what did not fit."""
    if not path:
        return {"columns": [], "metadata_note": ""}
    if data is None:
        return {"columns": [], "metadata_note": f"its metadata file {path!r} is not there"}
    try:
        metadata = parse_metadata(data)
    except ValueError as err:
        return {"columns": [], "metadata_note": f"its metadata file cannot be shown: {err}"}
    count = len(metadata.cells[0])
    notes = []
    if metadata.ragged:
        notes.append(f"{metadata.ragged:,} metadata rows had missing or extra cells")
    if rows.size and int(rows[-1]) >= count:
        notes.append(f"the metadata file has {count:,} rows, fewer than the tensors file")
    columns = [
        column_json(name, [cells[i] if i < count else "" for i in rows.tolist()])
        for name, cells in zip(metadata.names, metadata.cells, strict=True)
    ]
    return {"columns": columns, "metadata_note": "; ".join(notes)}
