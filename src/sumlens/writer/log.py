"""``init`` / ``log`` / ``finish``: one dict of values per step, as wandb and trackio log.

``log({"loss": 0.3, "acc": 0.9})`` writes each entry at the next step (0, 1, 2 ... per
call) or at ``step=``; nested dicts become ``/``-joined tags (``{"train": {"loss": x}}``
is ``train/loss``). Numbers, one-element arrays and tensors are scalars (a CUDA tensor is
not synchronised), strings are text. ``init`` chooses where (and in which format) the
process's writer writes; ``log`` without ``init`` starts one in torch's default
``runs/<date>_<host>``; ``finish`` closes it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from sumlens._checks import check_int
from sumlens.writer.summary_writer import SummaryWriter

_lock = threading.Lock()
_writer: SummaryWriter | None = None
_next_step = 0


def init(
    log_dir: str | os.PathLike[str] | None = None,
    *,
    file_format: str = "tensorboard",
    **writer_options: Any,
) -> SummaryWriter:
    """Start the process's writer (closing one started before) and return it;
    ``writer_options`` are :class:`SummaryWriter`'s."""
    global _writer, _next_step
    writer = SummaryWriter(log_dir, file_format=file_format, **writer_options)
    with _lock:
        previous, _writer, _next_step = _writer, writer, 0
    if previous is not None:
        previous.close()
    return writer


def log(values: Mapping[str, Any], step: int | None = None) -> None:
    """Write ``values`` at ``step`` (default: one past the step of the previous call)."""
    global _next_step
    if not isinstance(values, Mapping):
        raise TypeError(f"log: values must be a dict of name -> value, got {type(values).__name__}")
    with _lock:
        writer = _writer
        step = _next_step if step is None else check_int(step, "step", "log", 0)
        _next_step = step + 1
    if writer is None:
        writer = init()
    for tag, value in _flat(values, ""):
        if isinstance(value, str):
            writer.add_text(tag, value, step)
        else:
            writer.add_scalar(tag, value, step)


def finish() -> None:
    """Close the process's writer (a later ``log`` starts a new one)."""
    global _writer
    with _lock:
        writer, _writer = _writer, None
    if writer is not None:
        writer.close()


def _flat(values: Mapping[str, Any], prefix: str) -> Iterator[tuple[str, Any]]:
    for key, value in values.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"log: keys must be non-empty strings, got {key!r}")
        tag = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _flat(value, f"{tag}/")
        else:
            yield tag, value
