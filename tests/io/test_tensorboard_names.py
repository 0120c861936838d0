"""TensorBoard-format event files are named as torch's writer names them:
``events.out.tfevents.<seconds, 10 digits>.<host>.<pid>.<n><filename_suffix>`` (issue 40,
item 3), where sumlens puts the rank as ``<n>``. MindSpore-format names keep MindSpore's
pattern. Two writers of one process in one second still never share a name (the second
takes the next free second), and readers and the dashboard's discovery order old names
(no process id) and new ones alike.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

import pytest
from torch.utils.tensorboard import SummaryWriter as TorchSummaryWriter

from sumlens import SummaryRecord, SummaryWriter
from sumlens.board.data.discover import discover
from sumlens.io import RecordWriter, iter_events
from sumlens.io.naming import (
    claim_free_name,
    event_files,
    file_kind,
    hostname,
    tensorboard_file_name,
    tensorboard_file_rank,
)
from sumlens.summary.encoders import version_payload

TORCH_NAME = re.compile(r"events\.out\.tfevents\.(\d{10})\.(.+)\.(\d+)\.(\d+)(.*)")
"""torch's: seconds (10 digits), host, pid, its writer count, then ``filename_suffix``."""


def only_file(directory: Path) -> str:
    (path,) = [p for p in directory.iterdir() if file_kind(p.name) == "tensorboard"]
    return path.name


@pytest.mark.parametrize("suffix", ["", ".v2"])
def test_a_writers_file_is_named_as_torchs(tmp_path: Path, suffix: str) -> None:
    with TorchSummaryWriter(tmp_path / "torch", filename_suffix=suffix) as theirs:
        theirs.add_scalar("loss", 0.5, 1)
    with SummaryWriter(tmp_path / "ours", filename_suffix=suffix) as ours:
        ours.add_scalar("loss", 0.5, 1)
    torch_name = TORCH_NAME.fullmatch(only_file(tmp_path / "torch"))
    our_name = TORCH_NAME.fullmatch(only_file(tmp_path / "ours"))
    assert torch_name and our_name, (only_file(tmp_path / "torch"), only_file(tmp_path / "ours"))
    assert our_name[2] == torch_name[2] == socket.gethostname()
    assert int(our_name[3]) == int(torch_name[3]) == os.getpid()
    assert our_name[4] == "0"  # the rank (torch counts its writers there: 0 for the first)
    assert our_name[5] == torch_name[5] == suffix
    assert abs(int(our_name[1]) - int(torch_name[1])) <= 60


def test_the_rank_stays_last_and_mindspore_names_keep_their_pattern(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RANK", "3")
    with SummaryRecord(tmp_path / "tb", file_format="tensorboard") as record:
        record.add_value("scalar", "loss", 0.5)
        record.record(1)
    name = only_file(tmp_path / "tb")
    assert name.endswith(f".{os.getpid()}.3")
    assert tensorboard_file_rank(name) == 3  # what tells a rank's live writers apart
    with SummaryRecord(tmp_path / "ms") as record:
        record.add_value("scalar", "loss", 0.5)
        record.record(1)
    (summary,) = (p.name for p in (tmp_path / "ms").iterdir() if file_kind(p.name) == "summary")
    host = re.escape(hostname())
    assert re.fullmatch(rf"events\.out\.events\.summary\.\d+\.3\.{host}_MS", summary), summary


def test_a_second_writer_of_one_process_in_one_second_takes_the_next_second(
    tmp_path: Path,
) -> None:
    def name(t: int) -> str:
        return tensorboard_file_name(t, "h", ".0")

    first, t1 = claim_free_name(tmp_path, name, seconds=1795304165)
    second, t2 = claim_free_name(tmp_path, name, seconds=1795304165)
    assert (t1, t2) == (1795304165, 1795304166)
    assert first.name == f"events.out.tfevents.1795304165.h.{os.getpid()}.0"
    assert second.name == f"events.out.tfevents.1795304166.h.{os.getpid()}.0"
    # another process's file of the same second is another name: no clash to resolve
    other, t3 = claim_free_name(tmp_path, lambda t: tensorboard_file_name(t, "h", ".0", 1), t1)
    assert t3 == t1 and other.name == "events.out.tfevents.1795304165.h.1.0"


def test_two_writers_opened_at_once_get_two_files(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path) as a, SummaryWriter(tmp_path) as b:
        a.add_scalar("a", 1.0, 1)
        b.add_scalar("b", 2.0, 1)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 and all(TORCH_NAME.fullmatch(n) for n in names), names
    assert {(e.tag, e.step) for e in iter_events(tmp_path)} == {("a", 1), ("b", 1)}


def write_steps(path: Path, *steps: int) -> None:
    """A TensorBoard event file at ``path`` holding a scalar at each of ``steps``."""
    from sumlens._proto import tensorboard_pb2

    with RecordWriter(path) as writer:
        writer.write(version_payload("tensorboard", 1.0))
        for step in steps:
            event = tensorboard_pb2.Event(wall_time=float(step), step=step)
            event.summary.value.add(tag="loss", simple_value=float(step))
            writer.write(event.SerializeToString())


def test_readers_and_discovery_order_old_and_new_names(tmp_path: Path) -> None:
    run = tmp_path / "base" / "run"
    run.mkdir(parents=True)
    names = [
        "events.out.tfevents.1700000000.vm.0",  # sumlens before the process id
        "events.out.tfevents.1700000001.vm.812.0",  # now
        "events.out.tfevents.1700000001.vm.812.10",  # torch: the same second, 10th writer
        "events.out.tfevents.1700000002.vm.99.0",
    ]
    for index, name in enumerate(reversed(names)):
        write_steps(run / name, 10 * (len(names) - 1 - index))
    order = [p.name for p in event_files(run)]
    assert order == names
    (found,) = discover(tmp_path / "base").runs.values()
    assert [f.name for f in found.files] == names
    assert [e.step for e in iter_events(run)] == [0, 10, 20, 30]
