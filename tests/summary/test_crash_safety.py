"""What survives when the recording process ends abruptly, is asked to end, forks, or exits
without closing: every complete record stays readable, nothing is written twice."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
from helpers.summary import Child, files_of, mode_of, read_events, run_child, wait_for

KILLED_WRITER = """
import sys
import numpy as np
from sumlens import SummaryRecord

rec = SummaryRecord(sys.argv[1], max_pending_bytes=8 * 2**20)
step = 0
while True:
    rec.add_value("scalar", "loss", float(step))
    rec.add_value("tensor", "t", np.full(250_000, step, dtype=np.float32))  # ~1 MB a record
    rec.record(step)
    if step == 5:
        print("running", flush=True)
    step += 1
"""


def test_sigkill_while_recording_leaves_every_complete_record_readable(tmp_path: Path) -> None:
    run = tmp_path / "run"
    child = Child(KILLED_WRITER, str(run), cwd=tmp_path)
    try:
        assert child.read_line() == "running"

        def written() -> int:
            files = files_of(run, "summary") if run.exists() else []
            return sum(f.stat().st_size for f in files)

        assert wait_for(lambda: written() > 20 * 2**20, timeout=60), "the child wrote too little"
        child.process.send_signal(signal.SIGKILL)
        assert child.wait() == -signal.SIGKILL
    finally:
        child.kill()
    events = read_events(run, allow_torn_tail=True)
    steps = sorted({e.step for e in events})
    assert len(steps) >= 10
    assert steps == list(range(len(steps))), "complete records form an unbroken prefix"
    by_step: dict[int, dict[str, object]] = {}
    for event in events:
        by_step.setdefault(event.step, {})[event.tag] = event.value
    for step, values in by_step.items():
        assert values["loss"] == float(step)
        np.testing.assert_array_equal(values["t"], np.full(250_000, step, dtype=np.float32))


TERMINATED_WRITER = """
import signal, sys, threading, time
import numpy as np
import sumlens.summary.pipeline as pipeline
from sumlens.summary import registry

if sys.argv[2] == "handler":
    def previous_handler(signum, frame):
        print("previous handler called", flush=True)
        sys.exit(3)
    signal.signal(signal.SIGTERM, previous_handler)

from sumlens import SummaryRecord

# Hold the writer until SIGTERM arrives, so the data is provably unwritten when it does.
gate = threading.Event()
real_encode, real_close_all = pipeline.encode_value, registry.close_all

def gated_encode(item):
    gate.wait()
    return real_encode(item)

def close_all(*args, **kwargs):
    print("closing", flush=True)
    gate.set()
    real_close_all(*args, **kwargs)

pipeline.encode_value, registry.close_all = gated_encode, close_all
rec = SummaryRecord(sys.argv[1], owner_only=True)  # 0400 once closed: seen closed
for step in range(40):
    rec.add_value("scalar", "s", float(step))
    rec.add_value("tensor", "t", np.full(1000, step, dtype=np.float32))
    rec.record(step)
pipe = rec._pipeline
print("pending", pipe._enqueued_batches - pipe._written_batches, flush=True)
while True:
    time.sleep(0.05)
"""


def _terminate(tmp_path: Path, mode: str) -> tuple[Child, Path]:
    run = tmp_path / "run"
    child = Child(TERMINATED_WRITER, str(run), mode, cwd=tmp_path)
    try:
        assert child.read_line() == "pending 40"
        assert not run.exists() or files_of(run, "summary") == []  # nothing written yet
        child.process.send_signal(signal.SIGTERM)
        assert child.read_line() == "closing"
    except BaseException:
        child.kill()
        raise
    return child, run


def _assert_all_steps_readable(run: Path) -> None:
    events = read_events(run)
    assert sorted((e.step, e.tag) for e in events) == sorted(
        (step, tag) for step in range(40) for tag in ("s", "t")
    )
    for event in events:
        if event.tag == "t":
            np.testing.assert_array_equal(event.value, np.full(1000, event.step, np.float32))
    [summary] = files_of(run, "summary")
    assert mode_of(summary) == 0o400, "closed by the handler"


def test_sigterm_flushes_then_ends_the_process_by_default(tmp_path: Path) -> None:
    child, run = _terminate(tmp_path, "default")
    try:
        assert child.wait() == -signal.SIGTERM, child.stderr()
    finally:
        child.kill()
    _assert_all_steps_readable(run)


def test_sigterm_flushes_then_calls_the_previous_python_handler(tmp_path: Path) -> None:
    child, run = _terminate(tmp_path, "handler")
    try:
        assert child.read_line() == "previous handler called"
        assert child.wait() == 3, child.stderr()
    finally:
        child.kill()
    _assert_all_steps_readable(run)


FORGETFUL_WRITER = """
import sys
import numpy as np
from sumlens import SummaryRecord

rec = SummaryRecord(sys.argv[1], owner_only=True)  # 0400 once closed: seen closed
for step in range(100):
    rec.add_value("histogram", "h", np.arange(10_000.0) + step)
    rec.record(step)
print("exiting without close", flush=True)
"""


def test_exit_without_close_writes_everything(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = run_child(FORGETFUL_WRITER, str(run), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = read_events(run)
    assert [e.step for e in events] == list(range(100))
    assert [e.value.max for e in events] == [9999.0 + s for s in range(100)]
    [summary] = files_of(run, "summary")
    assert mode_of(summary) == 0o400


FORKING_TRAINER = """
import json, os, sys
import torch
from torch.utils.data import DataLoader, Dataset
from sumlens import SummaryRecord, ops

rec = SummaryRecord(sys.argv[1])


class Data(Dataset):
    def __len__(self):
        return 32

    def __getitem__(self, index):
        # In a worker: the inherited record must neither write nor wait.
        ops.scalar("from_worker_op", torch.tensor(float(index)))
        rec.add_value("scalar", "from_worker", float(index))
        recorded = rec.record(1000 + index)
        rec.flush()
        return torch.tensor([float(index), float(recorded), float(rec.is_open), os.getpid()])


loader = DataLoader(
    Data(), batch_size=4, num_workers=2, multiprocessing_context="fork", timeout=60
)
rows = []
step = 0
for epoch in range(3):
    for batch in loader:
        rows += batch.tolist()
        ops.scalar("op_loss", torch.tensor(float(step)))
        rec.add_value("scalar", "loss", float(step))
        rec.add_value("histogram", "h", torch.randn(200_000))  # keep the writer busy
        rec.record(step)
        step += 1
rec.close()
print(json.dumps({"rows": rows, "steps": step, "pid": os.getpid()}))
"""


def test_dataloader_fork_workers_neither_deadlock_nor_write(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = run_child(FORKING_TRAINER, str(run), cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    rows = result["rows"]
    assert len(rows) == 3 * 32
    assert {int(r[0]) for r in rows} == set(range(32))
    assert all(r[1] == 0.0 for r in rows), "record() in a worker returns False"
    assert all(r[2] == 0.0 for r in rows), "an inherited record is closed in a worker"
    assert all(int(r[3]) != result["pid"] for r in rows), "values came from the workers"
    events = read_events(run)
    assert sorted({e.tag for e in events}) == ["h", "loss", "op_loss"]
    steps = list(range(result["steps"]))
    for tag in ("loss", "op_loss", "h"):
        assert [e.step for e in events if e.tag == tag] == steps
    assert len(files_of(run, "summary")) == 1
    assert sorted(os.listdir(run)) == [p.name for p in files_of(run, "summary")]


INTERRUPTED_REGISTRY = """
import os, signal, sys
from sumlens import SummaryRecord
from sumlens.summary import registry

rec = SummaryRecord(sys.argv[1])
rec.add_value("scalar", "s", 1.0)
rec.record(1)
with registry._lock:  # SIGTERM lands while the main thread holds the registry's lock,
    os.kill(os.getpid(), signal.SIGTERM)  # as it may inside any summary operator call
    for _ in range(1000):
        pass
print("not terminated", flush=True)
"""


def test_sigterm_while_the_registry_is_busy_does_not_deadlock(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = run_child(INTERRUPTED_REGISTRY, str(run), cwd=tmp_path, timeout=60)
    assert done.returncode == -signal.SIGTERM, done.stderr
    assert [(e.step, e.tag, e.value) for e in read_events(run)] == [(1, "s", 1.0)]


THREAD_RECORDER = """
import sys, threading, time
import numpy as np
from sumlens import SummaryRecord

def work():  # the record is made and used on this thread only, never closed
    rec = SummaryRecord(sys.argv[1])
    step = 0
    while True:
        rec.add_value("scalar", "loss", float(step))
        if step % 7 == 0:
            rec.add_value("histogram", "h", np.array([step, 1.0, 2.0]))
        if not rec.record(step):
            return
        print(step, flush=True)
        step += 1

threading.Thread(target=work, daemon=True).start()
while True:
    time.sleep(0.05)
"""


def test_sigterm_flushes_a_record_made_on_another_thread(tmp_path: Path) -> None:
    run = tmp_path / "run"
    child = Child(THREAD_RECORDER, str(run), cwd=tmp_path)
    try:
        printed = [child.read_line() for _ in range(300)]
        child.process.send_signal(signal.SIGTERM)
        printed += child.rest()
        assert child.wait() == -signal.SIGTERM, child.stderr()
    finally:
        child.kill()
    recorded = [int(line) for line in printed]
    steps = [e.step for e in read_events(run) if e.tag == "loss"]
    assert steps[: len(recorded)] == recorded, "every step record() took is on disk, in order"
    assert steps == list(range(len(steps)))
    assert [e.step for e in read_events(run) if e.tag == "h"] == list(range(0, len(steps), 7))
