"""No training step waits for numba's compiler (see ``sumlens.summary.kernels``).

On a fresh install the writer's kernels take seconds to compile. The first step that
records a histogram must cost what later steps cost while they compile in the
background, and what is written then (by numpy and protobuf) must equal what the
compiled path writes once ready.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.summary import assert_same_buckets, read_events, run_child

from sumlens.summary.histogram import reference_histogram
from sumlens.summary.kernels import HISTOGRAM_DTYPES, WRITER_KERNELS, histogram_ready

FIRST_STEPS_WITH_AN_EMPTY_CACHE = """
import json, sys, time
import numpy as np
from sumlens import SummaryRecord
from sumlens.summary.kernels import WRITER_KERNELS

weights = np.random.default_rng(0).standard_normal(200_000).astype(np.float32)

def step(record, n):
    started = time.perf_counter()
    record.add_value("scalar", "loss", float(n))
    record.add_value("histogram", "weights", weights)
    record.record(n)
    return time.perf_counter() - started

with SummaryRecord(sys.argv[1]) as record:
    first = step(record, 1)
    ready_after_first = WRITER_KERNELS.ready()
    cold = [step(record, n) for n in range(2, 12)]
    ready = WRITER_KERNELS.wait(timeout=240)
    warm = [step(record, n) for n in range(12, 22)]
print(json.dumps({"first": first, "ready_after_first": ready_after_first, "cold": cold,
                  "ready": ready, "warm": warm}))
"""


@pytest.mark.slow
def test_first_step_does_not_wait_for_the_compiler(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = run_child(
        FIRST_STEPS_WITH_AN_EMPTY_CACHE,
        str(run),
        cwd=tmp_path,
        env={"NUMBA_CACHE_DIR": str(tmp_path / "empty-cache")},
    )
    assert done.returncode == 0, done.stderr
    times = json.loads(done.stdout.strip().splitlines()[-1])
    assert not times["ready_after_first"], "the first step ran while the kernels compiled"
    assert times["ready"], "the kernels became ready in the background"
    # The bound, generous on a loaded machine: the compile takes ~5-20 s here.
    assert times["first"] <= 0.05 + sum(times["warm"]), times

    weights = np.random.default_rng(0).standard_normal(200_000).astype(np.float32)
    expected = reference_histogram(weights)
    events = read_events(run)
    steps = [e.step for e in events if e.tag == "weights"]
    assert steps == list(range(1, 22))
    assert [e.value for e in events if e.tag == "loss"] == [float(n) for n in range(1, 22)]
    for event in (e for e in events if e.tag == "weights"):
        assert_same_buckets(event.value, expected)
        assert event.value.sum == expected.sum


def test_rare_dtypes_are_binned_by_numpy_without_compiling() -> None:
    assert WRITER_KERNELS.wait(timeout=240)
    for dtype in HISTOGRAM_DTYPES | {np.dtype(np.bool_)}:
        assert histogram_ready(dtype)
    for dtype in (np.int8, np.int16, np.uint16, np.uint32, np.uint64):
        assert not histogram_ready(np.dtype(dtype))
