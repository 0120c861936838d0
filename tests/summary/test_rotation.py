"""``max_file_size`` rotation and file naming: no file over the limit, each file complete on
its own, names in MindSpore's pattern with the next free second, no clash between records."""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path

import numpy as np
import pytest
from helpers.summary import files_of, first_event, mode_of, payloads, read_events

from sumlens import SummaryRecord
from sumlens._proto import lineage_pb2, tensorboard_pb2
from sumlens.io import read_scalars
from sumlens.io.naming import hostname
from sumlens.lineage import TrainLineage
from sumlens.summary.eventfile import RecordTooLargeError

LIMIT = 1000


def seconds_of(path: Path) -> int:
    match = re.search(r"summary\.(\d+)\.", path.name) or re.search(r"tfevents\.(\d+)\.", path.name)
    assert match, path.name
    return int(match.group(1))


def test_rotation_keeps_every_file_under_the_limit_and_complete(tmp_path: Path) -> None:
    before = int(time.time())
    with SummaryRecord(tmp_path, max_file_size=LIMIT) as rec:
        for step in range(300):
            rec.add_value("scalar", "loss", float(step))
            rec.add_value("tensor", "t", np.full(20, step, dtype=np.float32))
            rec.record(step)
    files = files_of(tmp_path, "summary")
    assert len(files) > 10
    pattern = re.compile(rf"^events\.out\.events\.summary\.(\d+)\.0\.{re.escape(hostname())}_MS$")
    for path in files:
        assert pattern.match(path.name), path.name
        assert path.stat().st_size <= LIMIT
        assert first_event(path).version == "MindSpore.Event:1"
    seconds = sorted(seconds_of(p) for p in files)
    assert seconds[0] >= before
    assert seconds == list(range(seconds[0], seconds[0] + len(files))), "next free second"
    # every step exactly once, in order, across the files (read in MindInsight's order)
    events = read_events(tmp_path)
    assert [(e.step, e.tag) for e in events] == [
        (step, tag) for step in range(300) for tag in ("loss", "t")
    ]
    steps, _, values = read_scalars(tmp_path)["loss"]
    assert steps.tolist() == list(range(300))
    assert values.tolist() == [float(s) for s in range(300)]


def test_rotation_skips_seconds_that_are_taken(tmp_path: Path) -> None:
    rec = SummaryRecord(tmp_path, max_file_size=300)
    first = Path(rec.log_dir)
    t0 = seconds_of(first)
    taken = tmp_path / first.name.replace(f".{t0}.", f".{t0 + 1}.")
    taken.write_bytes(b"")  # someone else's file, one second later
    for step in range(3):
        rec.add_value("tensor", "t", np.zeros(30, dtype=np.float32))  # ~190 bytes each
        rec.record(step)
    rec.close()
    mine = [p for p in files_of(tmp_path, "summary") if p != taken]
    assert [seconds_of(p) for p in mine] == [t0, t0 + 2, t0 + 3]
    assert taken.read_bytes() == b""


def test_lineage_is_never_split(tmp_path: Path) -> None:
    # MindInsight needs a run's few lineage records together (it rejects a lineage file
    # that holds custom lineage data alone), so only summary files rotate.
    with SummaryRecord(tmp_path, max_file_size=400) as rec:
        for epoch in range(20):
            rec.add_value("train_lineage", "", TrainLineage(optimizer="Momentum", epoch=epoch))
            rec.add_value("scalar", "s", 1.0)
            rec.record(epoch)
    assert len(files_of(tmp_path, "summary")) > 1
    [lineage] = files_of(tmp_path, "lineage")
    assert lineage.stat().st_size > 400
    epochs = []
    for payload in payloads(lineage):
        event = lineage_pb2.LineageEvent()
        event.ParseFromString(payload)
        epochs.append(event.train_lineage.hyper_parameters.epoch)
    assert epochs == list(range(20))


def test_tensorboard_files_rotate_with_their_version_event(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path, max_file_size=500, file_format="tensorboard") as rec:
        for step in range(100):
            rec.add_value("scalar", "loss", float(step))
            rec.record(step)
    files = files_of(tmp_path, "tensorboard")
    assert len(files) > 3
    for path in files:
        assert path.stat().st_size <= 500
        event = tensorboard_pb2.Event()
        event.ParseFromString(payloads(path)[0])
        assert event.file_version == "brain.Event:2"
    steps, _, _ = read_scalars(tmp_path)["loss"]
    assert steps.tolist() == list(range(100))


def test_a_record_larger_than_the_limit_is_an_error(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path, max_file_size=LIMIT, raise_exception=True) as rec:
        rec.add_value("scalar", "s", 0.0)
        rec.record(0)
        rec.add_value("tensor", "big", np.zeros(1000, dtype=np.float32))  # ~4 kB
        with pytest.raises(RecordTooLargeError, match="max_file_size=1000") as info:
            rec.record(1)  # a tensor's size is known at once: said where it is recorded
        assert isinstance(info.value, ValueError)
        assert "step 1" in str(info.value) and "big/tensor" in str(info.value)
        rec.add_value("scalar", "s", 2.0)
        assert rec.record(2)
    assert [(e.step, e.tag) for e in read_events(tmp_path)] == [(0, "s"), (2, "s")]
    assert all(p.stat().st_size <= LIMIT for p in files_of(tmp_path, "summary"))


@pytest.mark.parametrize("file_format", ["mindspore", "tensorboard"])
def test_a_step_no_file_can_hold_makes_record_say_false_at_once(
    tmp_path: Path, file_format: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 25 item 4: max_file_size=100 holds a step of one short scalar, not the
    # collector's loss and learning rate; record() returned True and nothing was written.
    long_tag = "learning_rate/auto" * 4
    with (
        caplog.at_level(logging.ERROR, logger="sumlens"),
        SummaryRecord(tmp_path, max_file_size=100, file_format=file_format) as rec,
    ):
        for step in range(1, 51):
            rec.add_value("scalar", "loss/auto", 0.5)
            rec.add_value("scalar", long_tag, 0.01)
            assert rec.record(step) is False
        rec.add_value("scalar", "x", 1.0)
        assert rec.record(51) is True
    said = [r.getMessage() for r in caplog.records if "max_file_size=100" in r.getMessage()]
    assert len(said) == 1, said
    assert "step 1" in said[0] and "not written" in said[0]
    written = [(e.step, e.tag) for e in read_events(tmp_path)]
    if file_format == "tensorboard":  # each value is a record of its own: the short ones fit
        assert written == [(s, "loss/auto") for s in range(1, 51)] + [(51, "x")]
    else:
        assert written == [(51, "x")]


def test_a_step_no_file_can_hold_raises_at_record_with_raise_exception(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path, max_file_size=100, raise_exception=True) as rec:
        rec.add_value("scalar", "loss/auto", 0.5)
        rec.add_value("scalar", "learning_rate/auto", 0.01)
        with pytest.raises(RecordTooLargeError, match=r"step 7: .*max_file_size=100"):
            rec.record(7)
        rec.add_value("histogram", "w", np.arange(1000))  # 90 buckets: ~2 kB
        with pytest.raises(RecordTooLargeError, match="w/histogram"):
            rec.record(8)
        rec.add_value("scalar", "x", 1.0)
        assert rec.record(9)
    assert [(e.step, e.tag) for e in read_events(tmp_path)] == [(9, "x")]


def test_a_record_found_too_large_by_the_writer_costs_only_itself(tmp_path: Path) -> None:
    # A PNG's size is known only once the writer has encoded it: record() cannot tell,
    # the error comes at the next call, and the records written after it are kept.
    noise = np.random.default_rng(0).integers(0, 256, (1, 3, 32, 32), dtype=np.uint8)
    with SummaryRecord(tmp_path, max_file_size=LIMIT, raise_exception=True) as rec:
        rec.add_value("scalar", "s", 0.0)
        rec.record(0)
        rec.add_value("image", "noise", noise)  # ~3 kB as PNG
        assert rec.record(1)
        rec.add_value("scalar", "s", 2.0)
        rec.record(2)
        with pytest.raises(RecordTooLargeError, match="max_file_size"):
            rec.flush()
    assert [(e.step, e.tag) for e in read_events(tmp_path)] == [(0, "s"), (2, "s")]


def test_a_record_larger_than_the_limit_is_logged_without_raise_exception(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.ERROR, logger="sumlens"),
        SummaryRecord(tmp_path, max_file_size=LIMIT) as rec,
    ):
        for step in range(3):
            rec.add_value("tensor", "big", np.zeros(1000, dtype=np.float32))
            rec.add_value("scalar", "s", float(step))
            rec.record(step)
            rec.flush()
        rec.add_value("scalar", "s", 3.0)
        rec.record(3)
    assert len([r for r in caplog.records if "max_file_size" in r.getMessage()]) == 1
    assert [(e.step, e.tag) for e in read_events(tmp_path)] == [(3, "s")]


def test_a_file_may_be_filled_exactly_to_the_limit(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path / "probe") as rec:
        rec.add_value("scalar", "s", 1.0)
        rec.record(1)
    [probe] = files_of(tmp_path / "probe", "summary")
    exact = probe.stat().st_size  # version record + one step
    with SummaryRecord(tmp_path / "run", max_file_size=exact) as rec:
        for step in range(1, 4):
            rec.add_value("scalar", "s", 1.0)
            rec.record(step)
    files = files_of(tmp_path / "run", "summary")
    assert [p.stat().st_size for p in files] == [exact] * 3


def test_two_records_in_one_directory_and_second_get_different_names(tmp_path: Path) -> None:
    first = SummaryRecord(tmp_path)
    second = SummaryRecord(tmp_path)
    try:
        for step in range(5):
            for index, rec in enumerate((first, second)):
                rec.add_value("scalar", "who", float(index))
                rec.add_value("train_lineage", "", TrainLineage(epoch=index))
                rec.record(step)
        first.flush()
        second.flush()
        assert first.log_dir != second.log_dir
    finally:
        first.close()
        second.close()
    summaries = files_of(tmp_path, "summary")
    assert sorted(map(str, summaries)) == sorted([first.log_dir, second.log_dir])
    assert len(files_of(tmp_path, "lineage")) == 2
    for path, who in ((Path(first.log_dir), 0.0), (Path(second.log_dir), 1.0)):
        assert first_event(path).version == "MindSpore.Event:1"
        assert [e.value for e in read_events(path)] == [who] * 5


def test_files_are_created_lazily(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as rec:
        assert list(tmp_path.iterdir()) == []
        rec.add_value("scalar", "s", 1.0)
        rec.record(1)
        rec.flush()
        assert [p.name for p in tmp_path.iterdir()] == [Path(rec.log_dir).name]
    assert files_of(tmp_path, "lineage") == []
    with SummaryRecord(tmp_path / "empty"):
        pass
    assert list((tmp_path / "empty").iterdir()) == []


def test_owner_only_files_are_0600_while_open_and_0400_after_close(tmp_path: Path) -> None:
    rec = SummaryRecord(tmp_path, max_file_size=400, owner_only=True)
    rec.add_value("scalar", "s", 1.0)
    rec.add_value("train_lineage", "", TrainLineage(optimizer="SGD"))
    rec.record(1)
    rec.flush()
    [summary] = files_of(tmp_path, "summary")
    [lineage] = files_of(tmp_path, "lineage")
    assert (mode_of(summary), mode_of(lineage)) == (0o600, 0o600)
    for step in range(2, 12):  # rotate: the full files are closed, so read-only
        rec.add_value("tensor", "t", np.zeros(20, dtype=np.float32))
        rec.record(step)
    rec.flush()
    files = files_of(tmp_path, "summary")
    assert [mode_of(p) for p in files] == [0o400] * (len(files) - 1) + [0o600]
    rec.close()
    assert {mode_of(p) for p in tmp_path.iterdir()} == {0o400}


def test_log_dir_is_the_summary_file_path(tmp_path: Path) -> None:
    with SummaryRecord(str(tmp_path), file_prefix="pre", file_suffix="_suf") as rec:
        expected = Path(rec.log_dir)
        assert expected.parent == tmp_path
        rec.add_value("scalar", "s", 1.0)
        rec.record(1)
        rec.flush()
        assert Path(rec.log_dir) == expected
    assert expected.name.startswith("pre.out.events.summary.")
    assert expected.name.endswith(f".0.{hostname()}_suf")
    assert expected.exists()
