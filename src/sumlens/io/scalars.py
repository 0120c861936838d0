"""``read_scalars``: every scalar of a file or run, as columns, fast.

The dashboard needs all points of all scalar tags at once, and a run can hold millions.
Decoding each record with protobuf in a Python loop costs about 5 us per record, so the
default engine is a numba-compiled scan (:mod:`sumlens.io._fastscan`) that frames,
checks both CRCs and walks the protobuf fields of scalar values by hand, handing any
record it does not understand back to the protobuf decoders. The ``"python"`` engine is
the plain protobuf path: the reference the tests hold the fast one to.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from sumlens.io.decode import INDEXERS
from sumlens.io.events import Event
from sumlens.io.framing import ReadStats
from sumlens.io.reader import (
    DECODERS,
    NotAnEventFileError,
    PayloadError,
    RecordFile,
    is_directory,
    note_unreadable,
    resolve_files,
    sniff_kind,
)
from sumlens.io.remote import locate
from sumlens.io.storage import LOCAL_STORAGE, Storage

Engine = Literal["auto", "numba", "python"]
ENGINES = ("auto", "numba", "python")

Columns = tuple[np.ndarray, np.ndarray, np.ndarray]
OtherEvents = Callable[[Event, int, int], None]
"""Receives each non-scalar event with its record's payload offset and length."""


class Scalars(dict[str, Columns]):
    """``{tag: (steps int64, wall_times float64, values float64)}`` in file order.

    ``stats`` holds the counts of what reading skipped (see
    :class:`~sumlens.io.framing.ReadStats`).
    """

    def __init__(self, columns: dict[str, Columns], stats: ReadStats) -> None:
        super().__init__(columns)
        self.stats = stats


def read_scalars(
    path: str | os.PathLike[str],
    engine: Engine = "auto",
    storage: Storage = LOCAL_STORAGE,
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> Scalars:
    """Every scalar in an event file or run directory, as numpy columns per tag.

    Values of the same tag from several files are concatenated in file order; repeated
    steps are kept as written. ``engine="python"`` forces the protobuf reference path;
    ``"numba"`` requires numba; ``"auto"`` uses numba when it is importable. Files are
    listed and read through ``storage``; a URL ``path`` (``s3://bucket/run``) through the
    storage :func:`sumlens.io.remote.open_storage` opens with ``storage_options``.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r} is not one of {', '.join(map(repr, ENGINES))}")
    storage, path = locate(path, storage, storage_options)
    files = resolve_files(path, storage)
    stats = ReadStats()
    use_numba = engine == "numba" or (engine == "auto" and _numba_available())
    parts: dict[str, list[Columns]] = {}
    in_directory = is_directory(path, storage)
    for file in files:
        kind = sniff_kind(file, storage)
        try:
            if use_numba:
                from sumlens.io._fastscan import scan_file_scalars

                found = scan_file_scalars(file, kind, stats, storage)
            else:
                found = _python_file_scalars(file, kind, stats, storage)
        except NotAnEventFileError as err:
            if not in_directory:
                raise
            note_unreadable(err, stats)
            continue
        for tag, columns in found.items():
            parts.setdefault(tag, []).append(columns)
    return Scalars({tag: _concat(chunks) for tag, chunks in parts.items()}, stats)


def read_file_scalars(
    path: str | os.PathLike[str],
    kind: str | None = None,
    *,
    start: int = 0,
    engine: Engine = "auto",
    stats: ReadStats | None = None,
    other: OtherEvents | None = None,
    limit: int | None = None,
    values: bool = True,
    storage: Storage = LOCAL_STORAGE,
    storage_options: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Columns], int]:
    """The scalars of one event file from byte ``start`` on, and the offset reading stopped at.

    For readers that follow a growing file: returns ``(columns, end)`` where ``end`` is
    just past the last complete record, so calling again with ``start=end`` later reads
    only what was appended (a torn last record is read once complete). ``kind`` is
    ``"summary"``, ``"lineage"`` or ``"tensorboard"`` (sniffed when None); events that
    are not scalars go to ``other(event, offset, length)`` when given, with where their
    record's payload lies in the file (:func:`~sumlens.io.reader.read_events_at` reads it
    again; with ``values=False`` their histograms and tensors are not converted and come
    with value None, for readers that only index them); damage is counted in ``stats``. With
    ``limit``, about that many bytes are read (whole chunks of up to 16 MiB): memory stays
    bounded on huge files, and ``end < size`` says there is more. The file is opened through
    ``storage``; a URL ``path`` through the storage that ``storage_options`` open.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r} is not one of {', '.join(map(repr, ENGINES))}")
    if start < 0:
        raise ValueError(f"start={start!r} must be a byte offset >= 0")
    storage, path = locate(path, storage, storage_options)
    kind = sniff_kind(Path(path), storage) if kind is None else kind
    if kind not in DECODERS:
        raise ValueError(f"kind={kind!r} is not one of {', '.join(map(repr, DECODERS))}")
    stats = ReadStats() if stats is None else stats
    if engine == "numba" or (engine == "auto" and _numba_available()):
        from sumlens.io._fastscan import scan_file_scalars_from

        return scan_file_scalars_from(path, kind, stats, start, other, limit, values, storage)
    return _python_file_scalars_from(path, kind, stats, start, other, limit, values, storage)


def fast_engine_ready(wait: float = 0.0) -> bool:
    """Whether the numba engine's kernels are loaded in this process (waiting ``wait`` s).

    The first call starts getting them ready in the background (loading from numba's
    cache takes about a second; compiling on an empty cache about 20 s, in a low-priority
    child process). Until then a caller that must not wait reads with ``engine="python"``.
    """
    from sumlens.io.kernels import READER_KERNELS

    if wait > 0:
        return READER_KERNELS.wait(wait)
    return READER_KERNELS.ready()


def fast_engine_cached() -> bool:
    """Whether the numba engine's kernels are in numba's cache (loading them is quick)."""
    from sumlens.io.kernels import READER_KERNELS

    return READER_KERNELS.stamp().exists()


def _concat(chunks: list[Columns]) -> Columns:
    if len(chunks) == 1:
        return chunks[0]
    steps, walls, values = (np.concatenate(column) for column in zip(*chunks, strict=True))
    return steps, walls, values


def _numba_available() -> bool:
    return importlib.util.find_spec("numba") is not None


def scalar_columns(events: Iterable[Event]) -> dict[str, Columns]:
    """Collect the scalar events among ``events`` into per-tag columns."""
    rows: dict[str, tuple[list[int], list[float], list[float]]] = {}
    for event in events:
        if event.plugin == "scalar":
            steps, walls, values = rows.setdefault(event.tag, ([], [], []))
            steps.append(event.step)
            walls.append(event.wall_time)
            values.append(event.value)
    return {
        tag: (
            np.asarray(steps, dtype=np.int64),
            np.asarray(walls, dtype=np.float64),
            np.asarray(values, dtype=np.float64),
        )
        for tag, (steps, walls, values) in rows.items()
    }


def _python_file_scalars(
    path: os.PathLike[str], kind: str, stats: ReadStats, storage: Storage = LOCAL_STORAGE
) -> dict[str, Columns]:
    """Reference path: frame with :class:`RecordFile`, decode every record with protobuf."""
    return _python_file_scalars_from(path, kind, stats, storage=storage)[0]


def _python_file_scalars_from(
    path: str | os.PathLike[str],
    kind: str,
    stats: ReadStats,
    start: int = 0,
    other: OtherEvents | None = None,
    limit: int | None = None,
    values: bool = True,
    storage: Storage = LOCAL_STORAGE,
) -> tuple[dict[str, Columns], int]:
    decode = (DECODERS if values else INDEXERS)[kind]
    name = os.path.basename(path)
    records = RecordFile(path, start, storage)

    def events() -> Iterable[Event]:
        for offset, payload in records.read_located(stats, limit):
            try:
                decoded = decode(payload, name, stats)
            except PayloadError:
                stats.reject_record()
                continue
            for event in decoded:
                if event.plugin == "scalar":
                    yield event
                elif other is not None:
                    other(event, offset, len(payload))

    columns = scalar_columns(events())
    return columns, records.offset
