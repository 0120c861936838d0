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
from collections.abc import Iterable
from typing import Literal

import numpy as np

from sumlens.io.events import Event
from sumlens.io.framing import ReadStats
from sumlens.io.reader import (
    DECODERS,
    NotAnEventFileError,
    PayloadError,
    RecordFile,
    note_unreadable,
    resolve_files,
    sniff_kind,
)

Engine = Literal["auto", "numba", "python"]
ENGINES = ("auto", "numba", "python")

Columns = tuple[np.ndarray, np.ndarray, np.ndarray]


class Scalars(dict[str, Columns]):
    """``{tag: (steps int64, wall_times float64, values float64)}`` in file order.

    ``stats`` holds the counts of what reading skipped (see
    :class:`~sumlens.io.framing.ReadStats`).
    """

    def __init__(self, columns: dict[str, Columns], stats: ReadStats) -> None:
        super().__init__(columns)
        self.stats = stats


def read_scalars(path: str | os.PathLike[str], engine: Engine = "auto") -> Scalars:
    """Every scalar in an event file or run directory, as numpy columns per tag.

    Values of the same tag from several files are concatenated in file order; repeated
    steps are kept as written. ``engine="python"`` forces the protobuf reference path;
    ``"numba"`` requires numba; ``"auto"`` uses numba when it is importable.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r} is not one of {', '.join(map(repr, ENGINES))}")
    files = resolve_files(path)
    stats = ReadStats()
    use_numba = engine == "numba" or (engine == "auto" and _numba_available())
    parts: dict[str, list[Columns]] = {}
    in_directory = os.path.isdir(path)
    for file in files:
        kind = sniff_kind(file)
        try:
            if use_numba:
                from sumlens.io._fastscan import scan_file_scalars

                found = scan_file_scalars(file, kind, stats)
            else:
                found = _python_file_scalars(file, kind, stats)
        except NotAnEventFileError as err:
            if not in_directory:
                raise
            note_unreadable(err, stats)
            continue
        for tag, columns in found.items():
            parts.setdefault(tag, []).append(columns)
    return Scalars({tag: _concat(chunks) for tag, chunks in parts.items()}, stats)


def _concat(chunks: list[Columns]) -> Columns:
    if len(chunks) == 1:
        return chunks[0]
    return tuple(np.concatenate(column) for column in zip(*chunks, strict=True))  # type: ignore[return-value]


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


def _python_file_scalars(path: os.PathLike[str], kind: str, stats: ReadStats) -> dict[str, Columns]:
    """Reference path: frame with :class:`RecordFile`, decode every record with protobuf."""
    decode = DECODERS[kind]
    name = os.path.basename(path)

    def events() -> Iterable[Event]:
        for payload in RecordFile(path).read_payloads(stats):
            try:
                yield from decode(payload, name, stats)
            except PayloadError:
                stats.reject_record()

    return scalar_columns(events())
