"""``MemorySurface`` keeps the rules of the read surface (``board/data/surface.py``) that the
route tests rely on: unknown names are empty, arrays are snapshots, the version moves on
every change, damaged values raise and are counted once, and raw records read back from
the bytes a file was given."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.memory_surface import GONE, Damaged, MemorySurface

from sumlens.board.data.surface import Polling, ReadSurface
from sumlens.board.errors import ValueUnreadable
from sumlens.io import ReadStats, encode_record

NAME = "events.out.events.summary.1700000000.3.host_lineage"


def test_it_is_a_read_surface_that_does_not_poll() -> None:
    surface = MemorySurface()
    assert isinstance(surface, ReadSurface) and not isinstance(surface, Polling)
    assert surface.status() == {"base_dir": "/memory", "loading": False, "reload_interval": 3.0,
                                "truncated": False, "engine": None, "watching": False,
                                "polling_reason": "runs held in memory"}  # fmt: skip


def test_unknown_names_are_empty() -> None:
    surface = MemorySurface()
    surface.add_scalars("./a", "loss", [1], [1.0])
    assert surface.runs()[0]["id"] == "./a" and surface.has_run("./a")
    assert not surface.has_run("./b") and surface.series("./b") == []
    assert surface.samples("./a", "image", "img") == [] and surface.files("./b") == []
    assert surface.record_file("./a", NAME) is None and surface.payload("./a", NAME, 0, 1) is None
    (ref,) = surface.series("./a")
    other = type(ref)("./a", 5, "loss", 1, 0.0)
    assert surface.points(other).size == 0


def test_points_are_snapshots_and_the_version_moves() -> None:
    surface = MemorySurface()
    surface.add_scalars("./a", "loss", [1, 2], [0.5, 0.25], walls=[10.0, 11.0], rank=2)
    (ref,) = surface.series("./a")
    assert (ref.rank, ref.tag, ref.count, ref.first_wall) == (2, "loss", 2, 10.0)
    points = surface.points(ref)
    points["value"][:] = 7.0
    assert surface.points(ref)["value"].tolist() == [0.5, 0.25]
    before = surface.version
    surface.add_scalars("./a", "loss", [3], [0.125], rank=2)
    assert surface.version > before and surface.points(ref)["step"].tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match=r"steps of 'loss' \(rank 2\) in run './a' must go up"):
        surface.add_scalars("./a", "loss", [3], [0.0], rank=2)
    with pytest.raises(ValueError, match="give as many of each"):
        surface.add_scalars("./a", "acc", [1, 2], [0.0])


def test_values_by_rank_a_step_going_back_replaces_and_damage_counts_once() -> None:
    surface = MemorySurface()
    for step in (1, 2, 3):
        surface.add_value("./a", "tensor", "t", step, np.full(2, step), rank=1)
    surface.add_value("./a", "tensor", "t", 2, np.zeros(2), rank=1)  # resumed at step 2
    surface.add_value("./a", "tensor", "t", 1, np.ones(2), rank=0)
    first, second = surface.samples("./a", "tensor", "t")
    assert (first.rank, second.rank) == (0, 1)
    assert second.items["step"].tolist() == [1, 2]
    event = surface.value(second, 1)
    assert event is not None and (event.step, event.plugin, event.tag) == (2, "tensor", "t")
    assert event.value.tolist() == [0, 0]
    surface.add_value("./a", "image", "gone", 1, GONE)
    surface.add_value("./a", "image", "bad", 1, Damaged("bits flipped"))
    (gone,) = surface.samples("./a", "image", "gone")
    assert surface.value(gone, 0) is None
    (bad,) = surface.samples("./a", "image", "bad")
    for _ in range(2):
        with pytest.raises(ValueUnreadable, match=r"'bad' at step 1 of run '\./a' is damaged"):
            surface.value(bad, 0)
    assert surface.runs()[0]["damage"]["damaged_values"] == 1
    assert surface.runs()[0]["ranks"] == [0, 1]


def test_raw_records_read_back_from_the_given_bytes() -> None:
    surface = MemorySurface()
    payloads = [b"first", b"second record", b"3"]
    data = b"".join(encode_record(payload) for payload in payloads)
    surface.add_file("./a", NAME, data, mtime_ns=5)
    (listed,) = surface.files("./a")
    assert (listed.name, listed.kind, listed.rank, listed.size, listed.mtime_ns) == (
        NAME,
        "lineage",
        3,
        len(data),
        5,
    )
    records = surface.record_file("./a", NAME)
    assert records is not None
    stats = ReadStats()
    located = list(records.read_located(stats))
    assert [payload for _, payload in located] == payloads and stats.records == 3
    offset = located[1][0]
    assert surface.payload("./a", NAME, offset, len(payloads[1])) == payloads[1]
    assert surface.payload("./a", NAME, offset, 3) is None  # not a record there: its CRC fails
    later = surface.record_file("./a", NAME, offset - 12)  # from the second record's header
    assert later is not None and list(later.read_payloads()) == payloads[1:]
    with pytest.raises(ValueError, match="does not say its kind"):
        surface.add_file("./a", "notes.txt", b"")
