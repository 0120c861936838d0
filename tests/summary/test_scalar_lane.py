"""The scalar lane: ``put`` joins a float to its step's open row first, with no check, and
takes every other scalar through the checked path; ``put_step`` keeps ``max_file_size``."""

from __future__ import annotations

import logging
import re
import sys
import threading
import time
from typing import Any

import numpy as np
import pytest

from sumlens.summary.eventfile import RecordTooLargeError
from sumlens.summary.file_size import smallest_file
from sumlens.summary.intake import Intake
from sumlens.summary.items import StepBatch
from sumlens.summary.record_state import RecordState
from sumlens.summary.scalar_block import BLOCK_STEPS, ScalarBlock, ScalarCollector
from sumlens.summary.scalar_lane import ScalarLane
from sumlens.summary.size_bound import SizeBound

STEPS_RACED = 10_000


class Pipeline:
    """What the lane asks of a pipeline: the rows, the failed flag, ``submit``; what it
    submits is kept, rows first (as ``WriterPipeline.submit`` queues them)."""

    def __init__(self) -> None:
        self.scalar_rows = ScalarCollector()
        self.failed = False
        self.error: BaseException | None = None
        self.submitted: list[ScalarBlock | StepBatch] = []

    def submit(self, batch: StepBatch | None = None) -> None:
        with self.scalar_rows.lock:
            block = self.scalar_rows.take()
        self.submitted += [entry for entry in (block, batch) if entry is not None]

    def take_error(self) -> BaseException | None:
        error, self.error = self.error, None
        return error

    def rows(self) -> list[tuple[int, dict[str, float]]]:
        """Every row submitted or waiting, in order, as (step, scalars)."""
        self.submit()
        blocks = [entry for entry in self.submitted if isinstance(entry, ScalarBlock)]
        return [(step, scalars) for block in blocks for step, _, scalars in block.rows]


def lane_of(
    pipeline: Pipeline, *, raise_exception: bool = False, bound: SizeBound | None = None
) -> tuple[ScalarLane, RecordState]:
    state = RecordState(pipeline, raise_exception, lambda: "run/events")  # type: ignore[arg-type]
    return ScalarLane(pipeline, state, Intake("mindspore", {}), bound), state  # type: ignore[arg-type]


def checked_tags(state: RecordState) -> list[Any]:
    """The tags of the values that will take the lane's checked path (the fast join checks
    nothing, not even whether the record is open)."""
    tags: list[Any] = []
    real = state.writable

    def counted(call: str, *args: Any) -> bool:
        tags.extend(args)
        return real(call, *args)

    state.writable = counted  # type: ignore[method-assign]
    return tags


def test_only_a_float_of_the_open_rows_step_under_a_checked_tag_joins_it_unchecked() -> None:
    pipeline = Pipeline()
    lane, state = lane_of(pipeline)
    checked = checked_tags(state)
    assert lane.put(1, None, "a", 1.0)  # no row yet: checked, opens one
    assert lane.put(1, None, "b", 2.0)  # a tag never checked: checked, joins by add_value
    assert lane.put(1, None, "b", 3.0)  # in the row already: checked, a row of its own
    assert lane.put(1, None, "a", 4.0)  # joins the newest row, unchecked
    assert checked == ["a", "b", "b"]
    assert lane.put(2, None, "a", 5.0)  # another step: checked
    assert lane.put(2, None, "b", np.float32(6.0))  # not a float: checked, converted, joins
    assert lane.put(2, 10.0, "c", 7.0)  # a wall time given: checked, a row of its own
    assert lane.put(2, None, "a", 8.0)  # the newest row has a given time: checked
    assert checked == ["a", "b", "b", "a", "b", "c", "a"]
    assert pipeline.rows() == [
        (1, {"a": 1.0, "b": 2.0}),
        (1, {"b": 3.0, "a": 4.0}),
        (2, {"a": 5.0, "b": 6.0}),
        (2, {"c": 7.0}),
        (2, {"a": 8.0}),
    ]


@pytest.mark.parametrize("step", [True, 1.0, np.array([1, 1])])
def test_a_step_equal_to_the_open_rows_but_not_an_int_is_refused(step: object) -> None:
    lane, _ = lane_of(Pipeline())
    lane.put(1, None, "a", 1.0)
    with pytest.raises(
        TypeError, match=re.escape("For 'SummaryRecord.record_value', the argument 'step'")
    ):
        lane.put(step, None, "b", 2.0)  # type: ignore[arg-type]


def test_an_unhashable_tag_is_refused_in_the_intakes_words() -> None:
    lane, _ = lane_of(Pipeline())
    lane.put(1, None, "a", 1.0)
    with pytest.raises(TypeError, match="the argument 'name' must be a non-empty str"):
        lane.put(1, None, ["b"], 2.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("tag", "value", "error", "message"),
    [
        ("", 1.0, ValueError, "the argument 'name' must be a non-empty str, but got ''"),
        ("s", np.zeros(2), ValueError, "scalar 's' must hold exactly one value, got shape (2,)"),
        ("s", "text", TypeError, "s must be a tensor or array (numpy, Python number, torch"),
        ("bad\ud800", 1.0, ValueError, "is not valid Unicode text"),
    ],
)
def test_the_checked_path_refuses_what_the_intake_refuses(
    tag: str, value: object, error: type[Exception], message: str
) -> None:
    pipeline = Pipeline()
    lane, _ = lane_of(pipeline)
    with pytest.raises(error, match=re.escape(message)):
        lane.put(1, None, tag, value)
    assert pipeline.rows() == []


def test_a_write_error_stops_the_fast_join_until_it_is_raised() -> None:
    pipeline = Pipeline()
    lane, _ = lane_of(pipeline, raise_exception=True)
    lane.put(1, None, "a", 1.0)
    pipeline.failed, pipeline.error = True, OSError("disk full")
    with pytest.raises(OSError, match="disk full"):
        lane.put(1, None, "b", 2.0)  # would join: raised first, as record_value raises it
    assert lane.put(1, None, "b", 2.0) is False  # raised once; the record still answers False
    assert pipeline.rows() == [(1, {"a": 1.0, "b": 2.0})]


def test_a_closed_record_takes_nothing_and_says_so_once(caplog: pytest.LogCaptureFixture) -> None:
    pipeline = Pipeline()
    lane, state = lane_of(pipeline)
    lane.put(1, None, "a", 1.0)
    pipeline.submit()  # what closing does: the open row is sealed and handed over
    state.close()
    with caplog.at_level(logging.ERROR, logger="sumlens"):
        assert lane.put(1, None, "b", 2.0) is False
        assert lane.put(2, None, "b", 2.0) is False
    assert [r.getMessage() for r in caplog.records] == [
        "SummaryRecord('run/events', closed) is closed; record_value('scalar', 'b') wrote "
        "nothing, and later calls to it write nothing either (not logged again)"
    ]
    assert pipeline.rows() == [(1, {"a": 1.0})]


def test_values_join_without_the_lock() -> None:
    """The lock held (by the writer taking rows, or by this very thread interrupted by a
    signal handler that logs a scalar): putting neither waits nor needs it."""
    pipeline = Pipeline()
    lane, _ = lane_of(pipeline)
    lane.put(3, None, "a", 1.0)
    lane.put(3, None, "b", 1.0)
    with pipeline.scalar_rows.lock:
        assert lane.put(3, None, "a", 2.0)  # in the row already: a row of its own
        assert lane.put(3, None, "b", 2.0)  # joins it
        assert lane.put(4, None, "a", 3.0)
    assert pipeline.rows() == [
        (3, {"a": 1.0, "b": 1.0}),
        (3, {"a": 2.0, "b": 2.0}),
        (4, {"a": 3.0}),
    ]


def test_a_value_put_after_its_row_was_taken_starts_a_row_of_its_own() -> None:
    pipeline = Pipeline()
    lane, _ = lane_of(pipeline)
    lane.put(1, None, "a", 1.0)
    lane.put(1, None, "b", 2.0)
    pipeline.submit()  # the row is sealed and taken
    lane.put(1, None, "c", 3.0)
    lane.put(1, None, "a", 4.0)
    assert pipeline.rows() == [(1, {"a": 1.0, "b": 2.0}), (1, {"c": 3.0, "a": 4.0})]


def test_the_lane_hands_its_rows_over_once_a_block_waits() -> None:
    pipeline = Pipeline()
    lane, _ = lane_of(pipeline)
    for step in range(BLOCK_STEPS + 1):
        lane.put(step, None, "a", float(step))
    [block] = pipeline.submitted
    assert isinstance(block, ScalarBlock) and len(block) == BLOCK_STEPS
    assert [step for step, _ in pipeline.rows()] == list(range(BLOCK_STEPS + 1))


@pytest.mark.parametrize("raise_exception", [False, True])
def test_scalars_no_file_can_hold_are_dropped_and_said(
    raise_exception: bool, caplog: pytest.LogCaptureFixture
) -> None:
    pipeline = Pipeline()
    bound = SizeBound(smallest_file("tensorboard"), "tensorboard", raise_exception)
    lane, _ = lane_of(pipeline, bound=bound)
    long = "x" * 300
    with caplog.at_level(logging.ERROR, logger="sumlens"):
        if raise_exception:
            with pytest.raises(RecordTooLargeError, match=f"step 1: the record of {long}/scalar"):
                lane.put_step(1, 10.0, {"a": 1.0, long: 2.0})
        else:
            assert lane.put_step(1, 10.0, {"a": 1.0, long: 2.0}) is False
            assert lane.put(2, None, long, 3.0) is False  # one value: checked alike
            assert lane.put(2, None, "a", 4.0)
    assert pipeline.rows() == [(1, {"a": 1.0})] + ([] if raise_exception else [(2, {"a": 4.0})])
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == (0 if raise_exception else 1)


def test_values_put_while_the_writer_takes_rows_are_each_kept_once() -> None:
    """Two callers put scalars (torch's ``add_scalar``) while another thread takes rows (as
    the writer thread does), switching threads as often as Python can: every value lands
    in exactly one taken row, each tag's in order."""
    pipeline = Pipeline()
    lane, _ = lane_of(pipeline)
    collector = pipeline.scalar_rows
    blocks = []
    done = threading.Event()

    def writer() -> None:
        while not done.is_set():
            with collector.lock:
                block = collector.take()
            if block is not None:
                blocks.append(block)
            time.sleep(0)

    def caller(prefix: str) -> None:
        for step in range(STEPS_RACED):
            for k in range(5):
                lane.put(step, None, f"{prefix}{k}", float(step))

    thread = threading.Thread(target=writer)
    callers = [threading.Thread(target=caller, args=(prefix,)) for prefix in "tu"]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread.start()
    try:
        for each in callers:
            each.start()
        for each in callers:
            each.join()
    finally:
        done.set()
        thread.join()
        sys.setswitchinterval(interval)
    with collector.lock:
        last = collector.take()
    seen = [
        (tag, step, value)
        for block in [*blocks, last, *pipeline.submitted]
        if isinstance(block, ScalarBlock)
        for step, _, scalars in block.rows
        for tag, value in scalars.items()
    ]
    assert sorted(seen) == sorted(
        (f"{prefix}{k}", step, float(step))
        for prefix in "tu"
        for k in range(5)
        for step in range(STEPS_RACED)
    )
    for tag in {tag for tag, _, _ in seen}:
        steps = [step for each, step, _ in seen if each == tag]
        assert steps == sorted(steps)


def test_a_scalar_read_only_on_the_writer_thread_is_a_batch_of_its_own() -> None:
    """A value the intake only snapshots (a CUDA tensor, whose copy reaches the host on the
    writer thread; here a Python bool) is queued as a batch, after the waiting rows."""
    pipeline = Pipeline()
    lane, _ = lane_of(pipeline)
    lane.put(1, None, "a", 1.0)
    assert lane.put(1, None, "flag", True)
    row, batch = pipeline.submitted
    assert isinstance(row, ScalarBlock) and isinstance(batch, StepBatch)
    [item] = batch.items
    assert (batch.step, item.plugin, item.tag, item.value.tolist()) == (1, "scalar", "flag", True)
    bound = SizeBound(smallest_file("mindspore"), "mindspore", False)
    lane, _ = lane_of(pipeline, bound=bound)
    assert lane.put(2, None, "x" * 300, True) is False  # no file can hold it: not queued
    assert len(pipeline.submitted) == 2
