"""Write failures (file too large, disk full) and the free-disk guard: no earlier record is
lost, the error is logged once or raised on the caller's thread, and recording goes on."""

from __future__ import annotations

import errno
import json
import logging
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from helpers.summary import files_of, first_event, payloads, read_events, run_child

import sumlens.io.storage as storage
from sumlens import SummaryRecord
from sumlens.io import read_scalars
from sumlens.io.framing import encode_record
from sumlens.summary.eventfile import EventFile

FILE_SIZE_LIMIT = """
import errno, json, logging, resource, sys
import numpy as np
from sumlens import SummaryRecord

class Count(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages = []
    def emit(self, record):
        self.messages.append(record.getMessage())

errors = Count()
logging.getLogger("sumlens").addHandler(errors)
limit = 200_000
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # Python ignores SIGXFSZ
raised = []

def call(action):
    try:
        action()
    except OSError as err:
        raised.append([err.errno, action.__name__])

rec = SummaryRecord(sys.argv[1], raise_exception=sys.argv[2] == "raise")
for step in range(30):
    if step in (10, 20):  # 400 kB: more than the file may hold
        rec.add_value("tensor", "big", np.ones(100_000, dtype=np.float32))
    rec.add_value("scalar", "s", float(step))
    call(lambda: rec.record(step))
    call(rec.flush)
call(rec.close)
print(json.dumps({"raised": raised, "errors": errors.messages}))
"""


@pytest.mark.parametrize("mode", ["log", "raise"])
def test_file_too_large_loses_no_earlier_record(tmp_path: Path, mode: str) -> None:
    run = tmp_path / "run"
    done = run_child(FILE_SIZE_LIMIT, str(run), mode, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    write_errors = [m for m in result["errors"] if "write failed" in m]
    assert len(write_errors) == 1, result["errors"]  # logged once, however often it happens
    assert "File too large" in write_errors[0]
    if mode == "raise":
        # raised on the caller's thread at the next call after each failure
        assert result["raised"] == [[errno.EFBIG, "flush"], [errno.EFBIG, "flush"]]
    else:
        assert result["raised"] == []
    events = read_events(run)  # no damage, no torn tail: the failed write was cut back
    steps = [step for step in range(30) if step not in (10, 20)]
    assert [(e.step, e.tag) for e in events] == [(s, "s") for s in steps]
    assert [e.value for e in events] == [float(s) for s in steps]


# ---- a full disk, simulated --------------------------------------------------------------


class FullDisk:
    """Stands in for ``os`` in the storage module: ``write`` fails once ``room`` is used."""

    def __init__(self) -> None:
        self.room: int | None = None

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        if self.room is None:
            return os.write(fd, data)
        if self.room == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        count = os.write(fd, bytes(data[: self.room]))
        self.room -= count
        return count


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> FullDisk:
    disk = FullDisk()
    monkeypatch.setattr(storage, "os", disk)
    return disk


@pytest.mark.parametrize("raise_exception", [False, True])
def test_disk_full_midway_through_a_record_cuts_it_back(
    tmp_path: Path, full_disk: FullDisk, raise_exception: bool, caplog: pytest.LogCaptureFixture
) -> None:
    with SummaryRecord(tmp_path, raise_exception=raise_exception) as rec:
        for step in range(5):
            rec.add_value("tensor", "t", np.full(100, step, dtype=np.float32))
            rec.record(step)
        rec.flush()
        full_disk.room = 150  # the next record gets 150 of its ~450 bytes down
        with caplog.at_level(logging.ERROR, logger="sumlens"):
            for step in (5, 6):  # the disk stays full: two failures, one log
                rec.add_value("tensor", "t", np.full(100, step, dtype=np.float32))
                rec.record(step)
                if raise_exception:
                    with pytest.raises(OSError) as info:
                        rec.flush()
                    assert info.value.errno == errno.ENOSPC
                else:
                    rec.flush()
        full_disk.room = None
        for step in (7, 8):
            rec.add_value("tensor", "t", np.full(100, step, dtype=np.float32))
            rec.record(step)
    assert len([r for r in caplog.records if "No space left" in r.getMessage()]) == 1
    events = read_events(tmp_path)
    assert [e.step for e in events] == [0, 1, 2, 3, 4, 7, 8]
    for event in events:
        np.testing.assert_array_equal(event.value, np.full(100, event.step, dtype=np.float32))


# ---- the free-disk guard -----------------------------------------------------------------


@pytest.fixture
def free_bytes(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """Set ``free_bytes.value`` to what the guard should believe is free on the disk."""
    state = SimpleNamespace(value=10**15, asked=[])

    def fake(directory: Path) -> int:
        state.asked.append(Path(directory))
        return state.value

    monkeypatch.setattr(storage, "free_disk_bytes", fake)
    return state


def test_guard_writes_the_whole_records_that_fit(
    tmp_path: Path, free_bytes: SimpleNamespace
) -> None:
    payload = b"x" * 100
    size = len(encode_record(payload))
    file = EventFile(tmp_path, lambda t: f"events.out.events.summary.{t}.0.h_MS", 1)
    free_bytes.value = size  # exactly one record's room
    file.append([payload])
    free_bytes.value = 2 * size + size // 2  # room for two of the three records
    with pytest.raises(OSError, match="no space left") as raised:
        file.append([b"a" * 100, b"b" * 100, b"c" * 100])
    assert raised.value.errno == errno.ENOSPC
    file.close()
    assert free_bytes.asked and all(p == tmp_path for p in free_bytes.asked)
    assert payloads(file.paths[0]) == [payload, b"a" * 100, b"b" * 100]


def test_guard_refuses_writes_without_losing_earlier_ones(
    tmp_path: Path, free_bytes: SimpleNamespace
) -> None:
    with SummaryRecord(tmp_path, raise_exception=True) as rec:
        for step in range(3):
            rec.add_value("scalar", "s", float(step))
            rec.record(step)
        rec.flush()
        free_bytes.value = 0
        rec.add_value("scalar", "s", 3.0)
        rec.record(3)
        with pytest.raises(OSError, match="no space left"):
            rec.flush()
        free_bytes.value = 10**15
        rec.add_value("scalar", "s", 4.0)
        rec.record(4)
    steps, _, values = read_scalars(tmp_path, engine="python")["s"]
    assert steps.tolist() == [0, 1, 2, 4]
    assert values.tolist() == [0.0, 1.0, 2.0, 4.0]


def test_guard_logs_once_and_recording_continues(
    tmp_path: Path, free_bytes: SimpleNamespace, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="sumlens"), SummaryRecord(tmp_path) as rec:
        rec.add_value("scalar", "s", 0.0)
        rec.record(0)
        rec.flush()
        free_bytes.value = 0
        for step in range(1, 4):
            rec.add_value("scalar", "s", float(step))
            rec.record(step)
            rec.flush()
        free_bytes.value = 10**15
        rec.add_value("scalar", "s", 4.0)
        rec.record(4)
    messages = [r.getMessage() for r in caplog.records if "no space left" in r.getMessage()]
    assert len(messages) == 1
    steps, _, _ = read_scalars(tmp_path, engine="python")["s"]
    assert steps.tolist() == [0, 4]


def test_guard_refusing_the_first_write_still_starts_the_file_with_its_version(
    tmp_path: Path, free_bytes: SimpleNamespace
) -> None:
    free_bytes.value = 0
    with SummaryRecord(tmp_path) as rec:
        rec.add_value("scalar", "s", 1.0)
        rec.record(1)
        rec.flush()
        free_bytes.value = 10**15
        rec.add_value("scalar", "s", 2.0)
        rec.record(2)
    for path in files_of(tmp_path, "summary"):
        if path.stat().st_size:
            assert first_event(path).version == "MindSpore.Event:1", path.name
    assert [e.step for e in read_events(tmp_path)] == [2]


def test_guard_applies_to_npy_export(tmp_path: Path, free_bytes: SimpleNamespace) -> None:
    with SummaryRecord(
        tmp_path, export_options={"tensor_format": "npy"}, raise_exception=True
    ) as rec:
        rec.add_value("tensor", "t", np.zeros(10))
        rec.record(1)
        rec.flush()
        free_bytes.value = 0
        rec.add_value("tensor", "t", np.zeros(10))
        rec.record(2)
        with pytest.raises(OSError, match="no space left"):
            rec.flush()
        free_bytes.value = 10**15
    [export_dir] = tmp_path.glob("export_*")
    assert sorted(p.name for p in (export_dir / "tensor").iterdir()) == ["t_1.npy"]
