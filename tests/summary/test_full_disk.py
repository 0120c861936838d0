"""A real disk that fills up: a 2 MiB tmpfs mounted for the test (root only).

Every step that fitted must be readable, the failure must reach the caller as the seed
says (``raise_exception=True``: raised at the next call; otherwise ``record()`` returns
False from then on, and the error is logged once), and nothing that fits is refused.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers.summary import read_events

from sumlens import SummaryRecord

DISK_BYTES = 2 * 2**20
IMAGE = np.random.default_rng(0).integers(0, 256, (1, 3, 90, 90), dtype=np.uint8)
"""Noise: its PNG does not compress, about 25 KB a step."""
STEPS = 400


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A freshly mounted 2 MiB tmpfs (skipped where the test cannot mount one)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _record_until_full(rec: SummaryRecord) -> list[bool]:
    answers = []
    for step in range(STEPS):
        rec.add_value("scalar", "loss", float(step))
        rec.add_value("image", "input", IMAGE)
        answers.append(rec.record(step))
        if step % 10 == 9:
            rec.flush()
    return answers


def _assert_full_and_readable(disk: Path) -> list[int]:
    events = read_events(disk / "run")
    steps = sorted({e.step for e in events})
    assert steps == list(range(len(steps))), "the steps that fitted form an unbroken prefix"
    for event in events:
        if event.plugin == "scalar":
            assert event.value == float(event.step)
    assert sorted(e.step for e in events if e.plugin == "image") == steps
    step_bytes = os.path.getsize(next((disk / "run").iterdir())) / len(steps)
    assert shutil.disk_usage(disk).free < 2 * step_bytes, "the disk was really filled"
    assert len(steps) >= DISK_BYTES // step_bytes - 2
    return steps


def test_a_full_disk_keeps_every_step_that_fitted_and_record_says_false(
    small_disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="sumlens"):
        rec = SummaryRecord(small_disk / "run")
        answers = _record_until_full(rec)
        rec.close()
    steps = _assert_full_and_readable(small_disk)
    first_false = answers.index(False)
    assert all(answers[:first_false]) and not any(answers[first_false:])
    assert first_false >= len(steps), "record() said True for every step written"
    errors = [r.getMessage() for r in caplog.records]
    assert len(errors) == 1, errors
    assert "No space left on device" in errors[0] or "no space left" in errors[0]


def test_a_full_disk_is_raised_at_the_next_call(small_disk: Path) -> None:
    rec = SummaryRecord(small_disk / "run", raise_exception=True)
    with pytest.raises(OSError) as raised:
        _record_until_full(rec)
    assert raised.value.errno == errno.ENOSPC
    rec.close()
    _assert_full_and_readable(small_disk)
