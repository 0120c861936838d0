"""Runs for :class:`~helpers.memory_surface.MemorySurface` from event records: a run's
file as bytes together with the values it holds, as the loader would list them.

For route tests that need real MindSpore values (the golden runs) or raw records beside
the kept values (the lineage table reads the lineage files, the views their values).
Scalars are left out (give them with ``MemorySurface.add_scalars``): MindSpore writes an
epoch's last step twice, which is the loader's rule to handle, not a route's.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from helpers.memory_surface import MemorySurface
from sumlens.io import ReadStats, RecordFile, encode_record
from sumlens.io.decode import DECODERS, PayloadError
from sumlens.io.naming import event_files, file_kind, file_rank


def add_records(surface: MemorySurface, run_id: str, name: str, payloads: Iterable[bytes]) -> None:
    """Give run ``run_id`` a file ``name`` of these record ``payloads``, and keep every
    non-scalar value they hold (a payload that is no event is in the file, not kept)."""
    payloads = list(payloads)
    surface.add_file(run_id, name, b"".join(encode_record(payload) for payload in payloads))
    kind = file_kind(name)
    assert kind is not None, name
    rank = file_rank(name)
    for payload in payloads:
        try:
            events = DECODERS[kind](payload, name, ReadStats())
        except PayloadError:
            continue
        values = [event for event in events if event.plugin != "scalar"]
        surface.add_events(run_id, values, rank=rank)


def add_directory(surface: MemorySurface, run_id: str, directory: Path) -> None:
    """Every event file of ``directory`` (read once, here) as a file of run ``run_id``."""
    for path in event_files(directory):
        add_records(surface, run_id, path.name, RecordFile(path).read_payloads())
