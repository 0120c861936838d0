"""The histogram's helper thread runs its half away from the caller's CPU, and simply runs
where the scheduler puts it when it may not be moved."""

from __future__ import annotations

import os

import pytest

from sumlens.writer.split_helper import SplitHelper, _current_cpu_reader

CPUS = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
pytestmark = pytest.mark.skipif(
    len(CPUS) < 2 or _current_cpu_reader() is None,
    reason="needs Linux's CPU affinity calls and two CPUs",
)


def test_each_job_runs_off_the_callers_cpu() -> None:
    helper = SplitHelper(CPUS)
    current = _current_cpu_reader()
    assert current is not None
    checked = 0
    for _ in range(50):
        before = current()
        job = helper.submit(sum, [before, 1])
        if current() == before:  # the caller did not move during the call
            assert os.sched_getaffinity(helper._native_id) == CPUS - {before}
            checked += 1
        assert job.result(timeout=30) == before + 1
    assert checked


def test_a_refused_move_leaves_the_helper_working_where_it_is() -> None:
    """CPUs the process may no longer use (a cpuset that shrank): the move is refused
    once, not tried again, and the helper goes on running its jobs where it is."""
    current = _current_cpu_reader()
    assert current is not None
    helper = SplitHelper({current(), 4000})  # the one CPU it could be moved to does not exist
    results = [helper.submit(sum, [k, 1]).result(timeout=30) for k in range(50)]
    assert results == [k + 1 for k in range(50)]
    assert helper._current_cpu is None
    assert os.sched_getaffinity(helper._native_id) == CPUS
