"""One kernel compile per cache at a time, and none outliving the process it serves.

Every process that started with an empty kernel cache used to spawn a compiling child of
its own, and a child outlived a parent that was killed: recorders started and killed over
and over piled up children (issue 25, item 2). These tests start recorders in fresh
processes on one empty cache (``NUMBA_CACHE_DIR``) and watch their compiling children in
``/proc`` (found by the warm-up target on their command line and that cache in their
environment, so other tests' children do not count).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from filelock import lock_descriptor
from helpers.summary import Child, assert_same_buckets, child_code, read_events

from sumlens.summary.histogram import reference_histogram

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="scans /proc"),
]

WARM_TARGET = "sumlens.summary.kernel_warmup:warm"
"""The writer kernels' warm-up, named on a compiling child's command line (not a recorder's)."""
BOUND = 240.0
"""Seconds any wait in these tests may take before it fails (a deadlock guard; a recorder
gives up waiting for its kernels after 180 s and says so)."""
GONE_WITHIN = 5.0
"""Seconds a compiling child may outlive its killed parent."""

FORKING_RECORDER = """
import os, sys, time
from sumlens import SummaryRecord

record = SummaryRecord(sys.argv[1])
record.add_value("scalar", "loss", 1.0)
record.record(1)
sys.stdin.readline()  # the test says when: the compile is under way
pid = os.fork()  # as a DataLoader starting its workers
if pid == 0:
    time.sleep(600)
    os._exit(0)
print(pid, flush=True)
time.sleep(600)
"""

RECORDER = """
import json, sys, time
import numpy as np
from sumlens import SummaryRecord
from sumlens.summary.kernels import WRITER_KERNELS

weights = np.random.default_rng(0).standard_normal(10_000).astype(np.float32)

def step(record, n):
    record.add_value("scalar", "loss", float(n))
    record.add_value("histogram", "weights", weights)
    record.record(n)

with SummaryRecord(sys.argv[1]) as record:
    n, deadline = 1, time.monotonic() + 180  # then it says it never got ready
    step(record, n)
    while not WRITER_KERNELS.wait(timeout=0.1) and time.monotonic() < deadline:
        n += 1  # the plain path, while the kernels get ready
        step(record, n)
    ready = WRITER_KERNELS.ready()
    for n in range(n + 1, n + 4):  # the compiled path
        step(record, n)
print(json.dumps({"steps": n, "ready": ready}))
"""


def compiling_children(cache: Path) -> set[int]:
    """The live processes compiling the writer's kernels into ``cache``."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if WARM_TARGET.encode() not in Path(f"/proc/{entry}/cmdline").read_bytes():
                continue
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:  # ended meanwhile
            continue
        if f"NUMBA_CACHE_DIR={cache}".encode() in environ and is_running(int(entry)):
            found.add(int(entry))
    return found


def is_running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def parent_of(pid: int) -> int:
    """The parent process id of ``pid``."""
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


def lock_is_free(cache: Path) -> bool:
    """Whether no process holds the compile lock of ``cache`` (takes it for an instant)."""
    from sumlens._numba import LOCK_NAME

    fd = os.open(cache / LOCK_NAME, os.O_RDWR)
    try:
        return lock_descriptor(fd, blocking=False)
    finally:
        os.close(fd)


@dataclass
class Watch:
    """Recorders on one cache, and every compiling child seen while they run."""

    cache: Path
    recorders: list[subprocess.Popen[bytes]]
    seen: set[int] = field(default_factory=set)
    most_at_once: int = 0

    def look(self) -> set[int]:
        """Note the compiling children now; returns them."""
        now = compiling_children(self.cache)
        self.seen |= now
        self.most_at_once = max(self.most_at_once, len(now))
        return now

    def until(self, condition: Callable[[set[int]], bool], bound: float, what: str) -> set[int]:
        """Look every few milliseconds until ``condition(children)``; fails after ``bound`` s."""
        deadline = time.monotonic() + bound
        while not condition(now := self.look()):
            assert time.monotonic() < deadline, f"{what}: not within {bound} s ({now})"
            time.sleep(0.02)
        return now


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[[int], Watch]]:
    """Start ``n`` recorders together on one kernel cache, empty at first (killed at teardown)."""
    cache = tmp_path / "kernels"
    cache.mkdir()
    started: list[subprocess.Popen[bytes]] = []

    def go(n: int) -> Watch:
        env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
        for i in range(len(started), len(started) + n):
            out = (tmp_path / f"out{i}").open("wb")
            err = (tmp_path / f"err{i}").open("wb")
            started.append(
                subprocess.Popen(
                    [sys.executable, "-c", child_code(RECORDER), str(tmp_path / f"run{i}")],
                    cwd=tmp_path,
                    env=env,
                    stdout=out,
                    stderr=err,
                )
            )
            out.close()
            err.close()
        return Watch(cache, started[len(started) - n :])

    yield go
    for process in started:
        process.kill()
        process.wait(30)


def finished(watch: Watch, process: subprocess.Popen[bytes], run: Path) -> None:
    """Wait for ``process`` (watching), then check it got ready and wrote the reference."""
    watch.until(lambda _: process.poll() is not None, BOUND, f"recorder {run.name} to end")
    index = run.name.removeprefix("run")
    stderr = (run.parent / f"err{index}").read_text()
    assert process.returncode == 0, stderr
    assert "kernels" not in stderr, stderr  # no compile failed, none fell back in-process
    result = json.loads((run.parent / f"out{index}").read_text().splitlines()[-1])
    assert result["ready"], f"{run.name}: the kernels never got ready\n{stderr}"

    weights = np.random.default_rng(0).standard_normal(10_000).astype(np.float32)
    expected = reference_histogram(weights)
    events = read_events(run)
    steps = list(range(1, result["steps"] + 1))
    assert [(e.step, e.value) for e in events if e.tag == "loss"] == [(n, float(n)) for n in steps]
    hists = [e for e in events if e.tag == "weights"]
    assert [e.step for e in hists] == steps
    for event in hists:
        assert_same_buckets(event.value, expected)
        assert event.value.sum == expected.sum


def test_recorders_started_together_compile_once(
    start: Callable[[int], Watch], tmp_path: Path
) -> None:
    watch = start(4)
    for i, process in enumerate(watch.recorders):
        finished(watch, process, tmp_path / f"run{i}")
    assert watch.most_at_once <= 1, f"{watch.most_at_once} compiling children at once"
    assert len(watch.seen) == 1, f"{len(watch.seen)} compiles for one cache: {watch.seen}"


def test_a_killed_recorder_leaves_no_compile_and_another_takes_over(
    start: Callable[[int], Watch], tmp_path: Path
) -> None:
    watch = start(2)
    first = min(watch.until(bool, BOUND, "a compiling child"))
    victim = next(p for p in watch.recorders if p.pid == parent_of(first))
    victim.send_signal(signal.SIGKILL)
    victim.wait(30)
    watch.until(lambda _: not is_running(first), GONE_WITHIN, "the killed recorder's child ends")

    (survivor,) = (p for p in watch.recorders if p is not victim)
    finished(watch, survivor, tmp_path / f"run{watch.recorders.index(survivor)}")
    assert watch.most_at_once <= 1, f"{watch.most_at_once} compiling children at once"
    assert len(watch.seen) == 2, f"the survivor took over: {watch.seen}"


def test_a_process_forked_during_the_compile_holds_nothing_of_it(
    start: Callable[[int], Watch], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watch = start(0)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(watch.cache))
    forking = Child(FORKING_RECORDER, str(tmp_path / "forking"), cwd=tmp_path)
    try:
        first = min(watch.until(bool, BOUND, "a compiling child"))
        assert forking.process.stdin is not None
        forking.process.stdin.write("fork\n")
        forking.process.stdin.flush()
        forked = int(forking.read_line())
        try:
            forking.process.send_signal(signal.SIGKILL)
            forking.wait()
            watch.until(lambda _: not is_running(first), GONE_WITHIN, "the killed one's child ends")
            assert is_running(forked), "the forked process lives on"
            assert lock_is_free(watch.cache), "the forked process holds the cache's lock"
            (later,) = start(1).recorders  # it takes the lock the forked process must not hold
            finished(watch, later, tmp_path / "run0")
        finally:
            os.kill(forked, signal.SIGKILL)
    finally:
        forking.process.kill()
        forking.wait()
    assert watch.most_at_once <= 1, f"{watch.most_at_once} compiling children at once"
