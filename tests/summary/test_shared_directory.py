"""Two writers of one rank recording into one directory at once are told, once (issue 25
item 5): MindInsight shows a directory as one run, so their values would be mixed.

In one process the open records say it; across processes each writer's lock on its own
open summary file does (no file is added to the directory). Real child processes; one
is killed with SIGKILL to show that a dead writer's lock goes with it.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path

import pytest
from helpers.summary import Child, files_of, read_events, wait_for

import sumlens._log
from sumlens import SummaryRecord

SAID = "records into"

WRITER = """
import sys
import sumlens._log
from sumlens import SummaryRecord
record = SummaryRecord(sys.argv[1])
record.add_value("scalar", "child", 1.0)
record.record(1)
record.flush()
print("written", flush=True)
sys.stdin.readline()  # until the test lets it go (or kills it)
record.close()
print("closed", flush=True)
"""


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if SAID in r.getMessage()]


def test_two_records_of_one_process_on_one_directory_are_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        first = SummaryRecord(tmp_path)
        assert said(caplog) == []
        second = SummaryRecord(tmp_path)
        third = SummaryRecord(tmp_path)
        for step, record in enumerate((first, second, third)):
            record.add_value("scalar", "x", float(step))
            record.record(step)
        for record in (first, second, third):
            record.close()
    [message] = said(caplog)
    assert str(tmp_path) in message and "rank 0" in message and "this process" in message
    assert caplog.records[0].levelno == logging.WARNING


def test_records_one_after_another_or_apart_are_not_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        for step in range(3):  # one after another: a resumed run, as MindSpore's
            with SummaryRecord(tmp_path / "run") as record:
                record.add_value("scalar", "x", 1.0)
                record.record(step)
        with SummaryRecord(tmp_path / "a"), SummaryRecord(tmp_path / "b"):
            pass
        with SummaryRecord(tmp_path / "ranks"):  # ranks share a directory by design
            monkeypatch.setenv("RANK", "1")
            with SummaryRecord(tmp_path / "ranks") as rank_one:
                rank_one.add_value("scalar", "x", 1.0)
                rank_one.record(1)
    assert said(caplog) == []


@pytest.mark.skipif(sys.platform == "win32", reason="file locks of other processes: POSIX")
def test_a_live_writer_of_another_process_is_said_and_a_dead_one_is_not(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    child = Child(WRITER, str(tmp_path), cwd=tmp_path)
    try:
        assert child.read_line() == "written"
        with caplog.at_level(logging.WARNING, logger="sumlens"):
            with SummaryRecord(tmp_path) as record:  # said at once: its file is open
                record.add_value("scalar", "parent", 2.0)
                record.record(1)
            [message] = said(caplog)
            assert "another process" in message and str(tmp_path) in message
            os.kill(child.process.pid, signal.SIGKILL)  # its lock goes with it
            child.wait()
            caplog.clear()
            monkeypatch.setattr(sumlens._log, "_warned", set())  # it could be said anew
            with SummaryRecord(tmp_path) as record:
                record.add_value("scalar", "parent", 3.0)
                record.record(2)
            assert said(caplog) == []
    finally:
        child.kill()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(p.name for p in files_of(tmp_path, "summary")), names  # no others
    assert {(e.tag, e.step) for e in read_events(tmp_path)} == {
        ("child", 1),
        ("parent", 1),
        ("parent", 2),
    }


@pytest.mark.skipif(sys.platform == "win32", reason="file locks of other processes: POSIX")
def test_a_writer_that_starts_writing_after_this_record_opened_is_said_too(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        record = SummaryRecord(tmp_path)  # nothing written yet anywhere: nothing to say
        assert said(caplog) == []
        child = Child(WRITER, str(tmp_path), cwd=tmp_path)
        try:
            assert child.read_line() == "written"
            record.add_value("scalar", "parent", 1.0)
            record.record(1)
            record.flush()  # its first file: the child's is open beside it
            assert wait_for(lambda: said(caplog), timeout=30)
            assert child.process.stdin is not None
            child.process.stdin.write("\n")
            child.process.stdin.flush()
            assert child.read_line() == "closed"
            assert child.wait() == 0
        finally:
            child.kill()
            record.close()
    [message] = said(caplog)
    assert "another process" in message
