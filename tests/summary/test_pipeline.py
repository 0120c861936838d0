"""The writer pipeline: back-pressure bounds memory without losing data; data reaches other
processes after ``flush()`` and, without it, within moments."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import numpy as np
import pytest
from helpers.summary import CHILD_TIMEOUT, Child, read_events, run_child, wait_for

import sumlens.summary.pipeline as pipeline
from sumlens import SummaryRecord
from sumlens.io import read_scalars
from sumlens.io.scalars import Columns
from sumlens.lineage import TrainLineage
from sumlens.summary.eventfile import EventFile
from sumlens.summary.items import Item, StepBatch
from sumlens.summary.kernels import WRITER_KERNELS

MiB = 2**20
TENSOR_ELEMENTS = MiB  # float32: 4 MiB per pending value
STEPS = 40
BOUND = 8 * MiB

SLOW_WRITER = """
import json, resource, sys, threading, time
import numpy as np
import sumlens.summary.pipeline as pipeline
from sumlens import SummaryRecord

real_encode = pipeline.encode_value

def slow_encode(item):
    time.sleep(0.1)  # a deliberately slow writer: the caller outruns it
    return real_encode(item)

pipeline.encode_value = slow_encode
log_dir, elements, steps, bound = sys.argv[1], *map(int, sys.argv[2:])
value = np.random.default_rng(0).normal(size=elements).astype(np.float32)

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()

def high_water():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:"))

samples = []
done = threading.Event()

def sample():  # in case the high-water mark cannot be reset
    while not done.wait(0.005):
        samples.append(rss())

with SummaryRecord(log_dir, max_pending_bytes=bound) as rec:
    base = rss()  # after the constructor, which may import torch to learn the rank
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the high-water mark of the resident size (Linux >= 4.0)
        reset = True
    except OSError:
        reset = False
    sampler = threading.Thread(target=sample)
    sampler.start()
    for step in range(steps):
        value[0] = step
        rec.add_value("tensor", "t", value)
        rec.record(step)
done.set()
sampler.join()
peak = max(samples + [rss()] + ([high_water()] if reset else []))
print(json.dumps({"base": base, "peak": peak, "reset": reset}))
"""


def test_slow_writer_with_big_tensors_loses_nothing_and_bounds_memory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = run_child(
        SLOW_WRITER,
        str(run),
        str(TENSOR_ELEMENTS),
        str(STEPS),
        str(BOUND),
        cwd=tmp_path,
        # A fixed mmap threshold: glibc then returns every freed large buffer to the OS at
        # once, so the resident size measures live values, not what malloc kept for reuse.
        env={"MALLOC_MMAP_THRESHOLD_": str(MiB)},
    )
    assert done.returncode == 0, done.stderr
    memory = json.loads(done.stdout)
    grown = memory["peak"] - memory["base"]
    item = 4 * TENSOR_ELEMENTS
    # The bound, the value being added while the caller waits, and the one being
    # encoded; the margin covers allocator slack. Unbounded, this would be ~160 MiB.
    assert grown < BOUND + 2 * item + 48 * MiB, f"grew by {grown / MiB:.0f} MiB"

    value = np.random.default_rng(0).normal(size=TENSOR_ELEMENTS).astype(np.float32)
    events = read_events(run)
    assert [e.step for e in events] == list(range(STEPS))
    for event in events:
        value[0] = event.step
        np.testing.assert_array_equal(event.value, value)


READER = """
import json, sys
from sumlens.io import iter_events
stream = iter_events(sys.argv[1])
rows = [[e.step, e.plugin, e.tag] for e in stream]
stats = stream.stats
print(json.dumps({"rows": rows, "damage": [stats.corrupt_records, stats.torn_tail_bytes]}))
"""


def test_after_flush_another_process_reads_every_record(tmp_path: Path) -> None:
    run = tmp_path / "run"
    rec = SummaryRecord(run)
    expected = []
    for step in range(1, 31):
        rec.add_value("scalar", "loss", 1.0 / step)
        rec.add_value("tensor", "t", np.full((3, 4), step, dtype=np.int32))
        rec.add_value("histogram", "h", np.arange(step * 10, dtype=np.float64))
        rec.add_value("image", "im", np.full((1, 3, 4, 4), step, dtype=np.uint8))
        expected += [[step, p, n] for p, n in [("scalar", "loss"), ("tensor", "t")]]
        expected += [[step, "histogram", "h"], [step, "image", "im"]]
        if step % 10 == 0:
            rec.add_value("train_lineage", "", TrainLineage(optimizer="SGD", epoch=step))
        rec.record(step)
    rec.flush()
    try:
        done = run_child(READER, str(run), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        assert seen["damage"] == [0, 0]
        summary = [row for row in seen["rows"] if row[1] != "train_lineage"]
        assert sorted(summary) == sorted(expected)
        assert sum(row[1] == "train_lineage" for row in seen["rows"]) == 3
    finally:
        rec.close()


UNFLUSHED_WRITER = """
import sys
from sumlens import SummaryRecord
rec = SummaryRecord(sys.argv[1])
rec.add_value("scalar", "loss", 0.5)
rec.record(7)
print("recorded", flush=True)
sys.stdin.readline()  # no flush, no close until the test says so
print("closing", flush=True)
rec.close()
"""


def test_data_appears_without_flush_while_the_writer_runs(tmp_path: Path) -> None:
    run = tmp_path / "run"
    child = Child(UNFLUSHED_WRITER, str(run), cwd=tmp_path)

    def loss() -> Columns | None:
        if run.exists() and any(run.iterdir()):
            return read_scalars(run, engine="python").get("loss")
        return None

    try:
        assert child.read_line() == "recorded"
        # The writer wakes every pipeline.WAKE_SECONDS; the bound only guards against a hang
        # (the writer never writing before a flush or close), it is not a latency budget.
        found = wait_for(loss, timeout=CHILD_TIMEOUT)
        assert found is not None, f"no data {CHILD_TIMEOUT} s after record() without a flush"
        steps, _, values = found
        assert steps.tolist() == [7]
        assert values.tolist() == [0.5]
        assert child.process.poll() is None, "the writer must still be running (no close)"
        assert child.process.stdin is not None
        child.process.stdin.write("go\n")
        child.process.stdin.flush()
        assert child.read_line() == "closing"
        assert child.wait() == 0, child.stderr()
    finally:
        child.kill()


def test_flush_waits_for_everything_recorded_before(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path, max_pending_bytes=1) as rec:
        for step in range(200):
            rec.add_value("tensor", "t", np.full(100, step, dtype=np.float32))
            rec.record(step)
        rec.flush()
        events = read_events(tmp_path)
        assert [e.step for e in events] == list(range(200))
        for event in events:
            np.testing.assert_array_equal(event.value, np.full(100, event.step, np.float32))


def test_many_tiny_steps_are_all_written_in_order(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as rec:
        for step in range(5000):
            rec.add_value("scalar", "x", float(step))
            rec.record(step)
    steps, _, values = read_scalars(tmp_path, engine="python")["x"]
    assert steps.tolist() == list(range(5000))
    assert values.tolist() == [float(s) for s in range(5000)]


def test_writer_taking_scalar_rows_keeps_recording_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer takes scalar-only rows at every wake-up while the caller cuts rows before
    each histogram step: waking every millisecond, no step is lost, doubled or reordered."""
    monkeypatch.setattr(pipeline, "WAKE_SECONDS", 0.001)
    with SummaryRecord(tmp_path) as rec:
        for step in range(3000):
            rec.add_value("scalar", "x", float(step))
            if step % 7 == 0:
                rec.add_value("histogram", "h", np.arange(5.0) + step)
            rec.record(step)
            if step % 500 == 0:
                time.sleep(0.01)  # let the writer in between
    events = [(e.step, e.plugin) for e in read_events(tmp_path) if e.plugin != "version"]
    assert [step for step, plugin in events if plugin == "scalar"] == list(range(3000))
    assert [step for step, plugin in events if plugin == "histogram"] == list(range(0, 3000, 7))
    assert [step for step, _ in events] == sorted(step for step, _ in events)


def test_several_heavy_values_per_step_are_encoded_in_parallel_and_in_order(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(1)
    values = [rng.normal(size=(2, 3, 16, 16)).astype(np.float32) for _ in range(8)]
    with SummaryRecord(tmp_path, num_process=4) as rec:
        for step, value in enumerate(values):
            for index in range(4):
                rec.add_value("image", f"im{index}", value + index)
                rec.add_value("histogram", f"h{index}", value + index)
            rec.record(step)
    with SummaryRecord(tmp_path / "serial", num_process=1) as rec:
        for step, value in enumerate(values):
            for index in range(4):
                rec.add_value("image", f"im{index}", value + index)
                rec.add_value("histogram", f"h{index}", value + index)
            rec.record(step)
    parallel = read_events(tmp_path)
    serial = read_events(tmp_path / "serial")
    assert [(e.step, e.tag) for e in parallel] == [(e.step, e.tag) for e in serial]
    for a, b in zip(parallel, serial, strict=True):
        if a.plugin == "image":
            assert a.value.encoded == b.value.encoded
        else:
            np.testing.assert_array_equal(a.value.counts, b.value.counts)


HELD_SCALAR_ROWS = """
import json, sys, threading, time, tracemalloc
import sumlens.summary.pipeline as pipeline
from sumlens import SummaryRecord
from sumlens.summary.kernels import WRITER_KERNELS

assert WRITER_KERNELS.wait(timeout=240)  # the writer takes the compiled encoder from the start
gate = threading.Event()
real_encode = pipeline.encode_scalar_block

def held_encode(*args):
    gate.wait()  # the writer is stuck (a slow disk): rows pile up to the bound
    return real_encode(*args)

pipeline.encode_scalar_block = held_encode
log_dir, tags, bound = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
names = [f"metric/{i}" for i in range(tags)]
steps = [0]
rec = SummaryRecord(log_dir, max_pending_bytes=bound)
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]

def produce():
    for step in range(10**7):
        for name in names:
            rec.add_value("scalar", name, step + 0.5)
        rec.record(step)
        steps[0] = step + 1
        if gate.is_set():
            return

producer = threading.Thread(target=produce)
producer.start()
seen, deadline = -1, time.monotonic() + 120
while steps[0] != seen and time.monotonic() < deadline:  # until the producer waits
    seen = steps[0]
    time.sleep(1.0)
held = tracemalloc.get_traced_memory()[0] - base
tracemalloc.stop()
gate.set()
producer.join()
rec.close()
print(json.dumps({"held": held, "steps": steps[0]}))
"""


@pytest.mark.parametrize("tags", [1, 8])
def test_scalar_rows_held_for_a_stuck_writer_stay_near_the_bound(tmp_path: Path, tags: int) -> None:
    bound = 16 * MiB
    run = tmp_path / "run"
    done = run_child(HELD_SCALAR_ROWS, str(run), str(tags), str(bound), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    # The bound, plus the rows not yet handed over and those the stuck writer took
    # (at most BLOCK_STEPS of each).
    assert result["held"] < 1.1 * bound + 2 * 8192 * (200 + 80 * tags), result
    steps = read_scalars(run)["metric/0"][0]
    assert steps.tolist() == list(range(result["steps"]))


@pytest.mark.parametrize("file_format", ["mindspore", "tensorboard"])
def test_scalar_steps_the_compiled_encoder_fails_on_are_written_by_protobuf(
    tmp_path: Path,
    file_format: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("kernel unavailable")

    assert WRITER_KERNELS.wait(timeout=240)  # the compiled encoder is tried from the start
    monkeypatch.setattr(pipeline, "encode_scalar_block", broken)
    with (
        caplog.at_level(logging.ERROR, logger="sumlens"),
        SummaryRecord(tmp_path, file_format=file_format) as rec,
    ):
        for step in range(50):
            rec.add_value("scalar", "loss", step / 2)
            rec.add_value("scalar", "lr", 0.1)
            assert rec.record(step)
    scalars = read_scalars(tmp_path)
    assert scalars["loss"][0].tolist() == list(range(50))
    assert scalars["loss"][2].tolist() == [step / 2 for step in range(50)]
    assert scalars["lr"][0].tolist() == list(range(50))
    [message] = [r.getMessage() for r in caplog.records]
    assert "compiled scalar encoder failed" in message and "kernel unavailable" in message


@pytest.mark.parametrize("file_format", ["mindspore", "tensorboard"])
def test_a_value_that_cannot_be_serialized_costs_only_itself(
    tmp_path: Path, file_format: str, caplog: pytest.LogCaptureFixture
) -> None:
    def events_file(name: str) -> EventFile:
        return EventFile(tmp_path, lambda t: name.format(t), 1)

    summary = "events.out.tfevents.{}.h" if file_format == "tensorboard" else "x.summary.{}.0.h_MS"
    lineage = events_file("x.summary.{}.0.h_lineage")
    writer = pipeline.WriterPipeline(file_format, events_file(summary), lineage, 1)
    items = [Item("scalar", "kept", 1.0), Item("scalar", "bad\ud800", 2.0)]
    with caplog.at_level(logging.ERROR, logger="sumlens"):
        writer.submit(StepBatch(7, 1795300000.0, items))
        writer.submit(StepBatch(8, 1795300001.0, [Item("scalar", "kept", 3.0)]))
        assert writer.close()
    assert [(e.step, e.tag, e.value) for e in read_events(tmp_path)] == [
        (7, "kept", 1.0),
        (8, "kept", 3.0),
    ]
    [message] = [r.getMessage() for r in caplog.records]
    assert "could not write scalar 'bad\\ud800'" in message


def test_submit_hands_the_waiting_scalar_rows_over_before_its_batch(tmp_path: Path) -> None:
    """The one way to the writer keeps recording order: rows appended before a batch (by the
    scalar lane) are written before it, whoever takes them; flush hands them over too."""
    summary = EventFile(tmp_path, lambda t: f"x.summary.{t}.0.h_MS", 1)
    lineage = EventFile(tmp_path, lambda t: f"x.summary.{t}.0.h_lineage", 1)
    writer = pipeline.WriterPipeline("mindspore", summary, lineage, 1)
    wall = 1795300000.0
    for step in range(3):
        writer.scalar_rows.add_step(step, wall, {"s": float(step)})
        writer.submit(StepBatch(step, wall, [Item("tensor", "t", np.full(2, step, np.float32))]))
    writer.scalar_rows.add_step(3, wall, {"s": 3.0})
    assert writer.flush()
    assert [(e.step, e.tag) for e in read_events(tmp_path)] == [
        (step, tag) for step in range(3) for tag in ("s", "t")
    ] + [(3, "s")]
    assert writer.close()
