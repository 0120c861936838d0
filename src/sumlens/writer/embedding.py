"""``add_embedding``: vectors for TensorBoard's projector, as the files torch's writer writes.

Below the log directory, in ``<step, 5 digits>/<tag with %, / and \\ escaped>/``:
``tensors.tsv`` (one row of tab-separated values per vector), ``metadata.tsv`` (a label per
row, or a header line and tab-separated columns) and ``sprite.png`` (the thumbnails tiled
into a grid of ``ceil(sqrt(N))`` columns, padded to a square); and an entry in the log
directory's ``projector_config.pbtxt``, which the projector reads. The entry is added to
the entries already there (one of the same tensor name is replaced).

Labels are written as torch's writer writes them, ``str()`` of each (of each row of an
array or tensor, of each cell with ``metadata_header``); one holding a tab or a line break,
which would shift every later label, is refused where the user called. Thumbnails of floats
are taken as [0, 1] and scaled by 255 as torch's writer does; uint8 thumbnails are kept as
they are (torch's writer would scale them too, saturating them).

The files get the modes the umask leaves, as the run's event files; with the writer's
``owner_only`` they are only their owner's (directories 0700, files 0600: the config and
the files of a step are rewritten as embeddings are added, so they are never made
read-only).
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from google.protobuf import text_format
from PIL import Image

from sumlens._checks import check_int, check_text
from sumlens._log import logger
from sumlens._proto import tensorboard_plugins_pb2 as plugins
from sumlens.io.storage import dir_mode
from sumlens.writer.arrays import numeric_array

OWNER = "SummaryWriter.add_embedding"
CONFIG_FILE = "projector_config.pbtxt"
TENSORS_FILE = "tensors.tsv"
METADATA_FILE = "metadata.tsv"
SPRITE_FILE = "sprite.png"


def write_embedding(
    log_dir: str | os.PathLike[str],
    mat: object,
    metadata: Any = None,
    label_img: object = None,
    global_step: int | None = None,
    tag: str = "default",
    metadata_header: Any = None,
    *,
    owner_only: bool = False,
) -> str:
    """Write ``mat`` (``[N, D]``) with its ``metadata`` (N labels, or N rows of columns
    named by ``metadata_header``: lists, arrays or tensors) and ``label_img``
    (``[N, C, H, W]``, C of 1 or 3) for the projector; the directory written, relative to
    ``log_dir`` (modes: the module's docstring)."""
    check_text(tag, "tag", OWNER)
    step = check_int(global_step, "global_step", OWNER, allow_none=True) or 0
    vectors = numeric_array(mat, "mat", OWNER)
    if vectors.ndim != 2:
        raise ValueError(
            f"For '{OWNER}', the argument 'mat' must be 2-D [N, D] (a vector per row), "
            f"but got shape {list(vectors.shape)}"
        )
    lines = None if metadata is None else _metadata_lines(metadata, metadata_header, len(vectors))
    thumbnails = None if label_img is None else _thumbnails(label_img, len(vectors))
    subdir = f"{str(step).zfill(5)}/{_escaped(tag)}"
    directory = os.path.join(os.fspath(log_dir), subdir)
    if os.path.isdir(directory):
        logger.warning(
            "%s: %s exists and is overwritten; give each embedding its own global_step",
            OWNER,
            directory,
        )
    for each in (os.path.dirname(directory), directory):  # the step's, then the tag's
        os.makedirs(each, mode=dir_mode(owner_only), exist_ok=True)
    rows = "".join("\t".join(map(str, row)) + "\n" for row in vectors.tolist())
    _write(os.path.join(directory, TENSORS_FILE), rows.encode(), owner_only)
    entry = plugins.EmbeddingInfo(
        tensor_name=f"{tag}:{str(step).zfill(5)}", tensor_path=f"{subdir}/{TENSORS_FILE}"
    )
    if lines is not None:
        text = "\n".join(lines) + "\n"
        _write(os.path.join(directory, METADATA_FILE), text.encode(), owner_only)
        entry.metadata_path = f"{subdir}/{METADATA_FILE}"
    if thumbnails is not None:
        png = io.BytesIO()
        Image.fromarray(_sprite(thumbnails)).save(png, "PNG")
        _write(os.path.join(directory, SPRITE_FILE), png.getvalue(), owner_only)
        entry.sprite.image_path = f"{subdir}/{SPRITE_FILE}"
        entry.sprite.single_image_dim.extend([thumbnails.shape[3], thumbnails.shape[2]])
    _add_to_config(os.fspath(log_dir), entry, owner_only)
    return subdir


def _write(path: str, data: bytes, owner_only: bool) -> None:
    """``data`` as the whole of ``path``: made with the umask's mode, or 0600 with
    ``owner_only`` (a file written before is made so too)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if owner_only else 0o666)
    with os.fdopen(fd, "wb") as out:
        if owner_only:
            os.fchmod(out.fileno(), 0o600)
        out.write(data)


def _escaped(tag: str) -> str:
    """``tag`` as one directory name: ``%``, ``/`` and ``\\`` as %25, %2f and %5c."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def _metadata_lines(metadata: Any, header: Any, count: int) -> list[str]:
    """The lines of ``metadata.tsv`` as torch's writer writes them: ``str()`` of each label
    (each row of an array or tensor: ``labels.cpu().numpy()`` gives ``3``, a tensor
    ``tensor(3)``), or with a header, its cells joined by tabs; each checked to fit in one
    TSV cell or row."""
    labels = _items(metadata, "metadata", count)
    if header is None or (_list_like(header) and len(header) == 0):
        return [_cell(label, f"metadata[{index}]") for index, label in enumerate(labels)]
    names = _items(header, "metadata_header")
    lines = ["\t".join(_cell(name, "metadata_header") for name in names)]
    for index, row in enumerate(labels):
        where = f"metadata[{index}]"
        if not _list_like(row) or len(row) != len(names):
            raise ValueError(
                f"For '{OWNER}', {where} must be a list of {len(names)} columns (one per "
                f"metadata_header entry), but got {row!r:.200}"
            )
        lines.append("\t".join(_cell(cell, where) for cell in row))
    return lines


def _list_like(value: Any) -> bool:
    """A list, tuple or other sequence that is not text, or an array or tensor of one
    dimension or more: what torch's writer iterates over for labels and columns."""
    if isinstance(value, str | bytes):
        return False
    if isinstance(value, Sequence):
        return True
    ndim = getattr(value, "ndim", None)
    return isinstance(ndim, int) and ndim >= 1 and hasattr(value, "__len__")


def _items(value: Any, name: str, count: int | None = None) -> list[Any]:
    """The items of ``value`` (``count`` of them when given), refused when it is not
    :func:`_list_like`."""
    if not _list_like(value) or (count is not None and len(value) != count):
        shown = len(value) if _list_like(value) else type(value).__name__
        wanted = f"one label per row of 'mat' ({count})" if count is not None else "labels"
        raise ValueError(
            f"For '{OWNER}', the argument '{name}' must be a list, array or tensor of "
            f"{wanted}, but got {shown}"
        )
    return list(value)


def _cell(value: Any, where: str) -> str:
    text = str(value)
    if any(mark in text for mark in "\t\n\r"):
        raise ValueError(
            f"For '{OWNER}', {where} must not hold tabs or line breaks (metadata.tsv is "
            f"tab-separated, a line per row), but got {text!r:.200}"
        )
    check_text(text, where, OWNER)
    return text


def _thumbnails(label_img: object, count: int) -> np.ndarray:
    images = numeric_array(label_img, "label_img", OWNER)
    if images.ndim != 4 or images.shape[0] != count or images.shape[1] not in (1, 3):
        raise ValueError(
            f"For '{OWNER}', the argument 'label_img' must have shape [N, C, H, W] with N the "
            f"rows of 'mat' ({count}) and C of 1 or 3, but got {list(images.shape)}"
        )
    return images


def _sprite(images: np.ndarray) -> np.ndarray:
    """The thumbnails tiled row by row, ``ceil(sqrt(N))`` per row, on a black RGB canvas
    as wide as the grid and at least as tall (uint8 ``[H, W, 3]``)."""
    count, _, height, width = images.shape
    cols = math.ceil(count**0.5)
    rows = math.ceil(count / cols)
    grid_width = cols * width
    canvas = np.zeros((max(rows * height, grid_width), grid_width, 3), dtype=np.float64)
    for index, image in enumerate(images):
        row, col = divmod(index, cols)
        hwc = np.moveaxis(image, 0, 2)  # a single channel broadcasts to the three
        canvas[row * height : (row + 1) * height, col * width : (col + 1) * width] = hwc
    if images.dtype == np.uint8:
        return canvas.astype(np.uint8)
    return (canvas * 255).clip(0, 255).astype(np.uint8)


def _add_to_config(log_dir: str, entry: plugins.EmbeddingInfo, owner_only: bool) -> None:
    """Add ``entry`` to the projector's config (replacing one of the same tensor name),
    rewriting the file whole through a temporary file, so a reader never sees half."""
    path = os.path.join(log_dir, CONFIG_FILE)
    config = plugins.ProjectorConfig()
    if os.path.exists(path):
        with open(path, encoding="utf-8") as existing:
            text = existing.read()
        try:
            text_format.Parse(text, config)
        except text_format.ParseError as err:
            logger.warning("%s: %s is unreadable (%s); it is written anew", OWNER, path, err)
            config.Clear()
    kept = [old for old in config.embeddings if old.tensor_name != entry.tensor_name]
    del config.embeddings[:]
    config.embeddings.extend([*kept, entry])
    partial = f"{path}.partial"
    _write(partial, text_format.MessageToString(config).encode(), owner_only)
    os.replace(partial, path)
