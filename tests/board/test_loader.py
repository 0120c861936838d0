"""The dashboard's loader over real run directories: growth, damage, restarts, removal."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers.board import write_run

from sumlens import SummaryRecord
from sumlens._proto import summary_pb2
from sumlens.board.data.loader import Loader
from sumlens.board.data.store import COMPACT_MIN_POINTS, POINT
from sumlens.io import encode_record, read_scalars
from sumlens.io.naming import summary_file_name


@pytest.fixture
def base(tmp_path: Path) -> Path:
    path = tmp_path / "base"
    path.mkdir()
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "workspace"


def _loader(base: Path, workspace: Path, engine: str = "auto") -> Loader:
    return Loader(base, workspace, reload_interval=0.1, engine=engine)  # type: ignore[arg-type]


def _runs(loader: Loader) -> dict[str, dict]:
    return {run["id"]: run for run in loader.runs()}


def _segments(loader: Loader) -> dict[Path, int]:
    """The loader's segment files and their modification times."""
    return {p: p.stat().st_mtime_ns for p in sorted(loader.store.root.glob("segments/*.seg"))}


def _steps(loader: Loader, run: str, tag: str = "loss", rank: int | None = 0) -> list[int]:
    (ref,) = [r for r in loader.series(run) if r.tag == tag and r.rank == rank]
    return loader.points(ref)["step"].tolist()


def test_runs_at_any_depth_both_formats(base: Path, workspace: Path, golden_dir: Path) -> None:
    write_run(base, range(1, 4))
    write_run(base / "a" / "b" / "c", range(1, 11), fmt="tensorboard")
    shutil.copytree(golden_dir / "collector", base / "golden")
    (base / "empty" / "deeper").mkdir(parents=True)
    (base / "notes.txt").write_text("not an event file")
    loader = _loader(base, workspace)
    loader.poll()
    runs = _runs(loader)
    assert sorted(runs) == ["./", "./a/b/c", "./golden"]
    assert runs["./a/b/c"]["points"] == 10 and runs["./a/b/c"]["ranks"] == []
    assert runs["./"]["tags"]["scalar"] == ["loss"] and runs["./"]["ranks"] == [0]
    golden = runs["./golden"]
    assert golden["status"] == "ready" and golden["files"] == 3
    assert {"scalar", "image", "histogram", "graph", "train_lineage", "eval_lineage"} <= set(
        golden["tags"]
    )
    # MindSpore writes each epoch's last step twice: the second replaces the first
    expected = read_scalars(golden_dir / "collector")["loss/auto"]
    assert _steps(loader, "./golden", "loss/auto") == sorted(set(expected[0].tolist()))
    loader.stop()


def test_links_to_runs_are_followed_each_run_once(base: Path, tmp_path: Path) -> None:
    """A folder of links to the runs one compares (as TensorBoard users build): links to
    directories are followed like links to files, a link back up ends there, and a
    directory reached by two names is listed once, under the first the walk meets
    (breadth-first, in name order)."""
    outside = tmp_path / "elsewhere"
    write_run(outside / "a", range(1, 4))
    write_run(outside / "b", range(1, 6))
    write_run(outside / "files", range(1, 3))
    (base / "compare").mkdir()
    (base / "compare" / "a").symlink_to(outside / "a", target_is_directory=True)
    (base / "compare" / "b1").symlink_to(outside / "b", target_is_directory=True)
    (base / "compare" / "b2").symlink_to(outside / "b", target_is_directory=True)
    (base / "compare" / "up").symlink_to(base, target_is_directory=True)  # a loop
    (base / "compare" / "broken").symlink_to(tmp_path / "nothing", target_is_directory=True)
    (base / "file_links").mkdir()
    for event_file in (outside / "files").iterdir():
        (base / "file_links" / event_file.name).symlink_to(event_file)
    write_run(base / "real" / "c", range(1, 3))
    (base / "alias_of_c").symlink_to(base / "real" / "c", target_is_directory=True)
    loader = Loader(base, tmp_path / "ws")
    loader.poll()
    runs = _runs(loader)
    assert sorted(runs) == ["./alias_of_c", "./compare/a", "./compare/b1", "./file_links"]
    assert [runs[name]["points"] for name in sorted(runs)] == [2, 3, 5, 2]
    assert not loader.truncated
    loader.stop()


def test_engines_agree(base: Path, tmp_path: Path, golden_dir: Path) -> None:
    write_run(base / "ms", range(1, 300), tags=("loss", "acc"))
    write_run(base / "tb", range(1, 300), fmt="tensorboard", tags=("loss", "acc"))
    shutil.copytree(golden_dir, base / "golden")
    seen = {}
    for engine in ("python", "numba"):
        loader = _loader(base, tmp_path / engine, engine)
        loader.poll()
        seen[engine] = (
            loader.runs(),
            {
                (run, ref.rank, ref.tag): loader.points(ref).tobytes()
                for run in ("./ms", "./tb", "./golden/collector", "./golden/all_plugins")
                for ref in loader.series(run)
            },
        )
        loader.stop()
    assert seen["python"] == seen["numba"]


def test_a_growing_run_is_followed(base: Path, workspace: Path) -> None:
    loader = _loader(base, workspace)
    with SummaryRecord(base / "run") as record:
        for step in range(1, 51):
            record.add_value("scalar", "loss", float(step))
            record.record(step)
        record.flush()
        loader.poll()
        assert _steps(loader, "./run") == list(range(1, 51))
        version = loader.version
        for step in range(51, 81):
            record.add_value("scalar", "loss", float(step))
            record.record(step)
        record.flush()
        loader.poll()
    assert _steps(loader, "./run") == list(range(1, 81))
    assert loader.version > version
    loader.stop()


def _records(n: int, start: int = 1) -> list[bytes]:
    from sumlens._proto import summary_pb2

    out = []
    for step in range(start, start + n):
        event = summary_pb2.Event(wall_time=1000.0 + step, step=step)
        value = event.summary.value.add()
        value.tag, value.scalar_value = "loss", float(step)
        out.append(encode_record(event.SerializeToString()))
    return out


def test_a_torn_file_is_read_once_complete(base: Path, workspace: Path) -> None:
    run = base / "run"
    run.mkdir()
    path = run / summary_file_name(1000, rank=0, host="h")
    records = _records(10)
    data = b"".join(records)
    path.write_bytes(data[: len(data) - 7])  # the last record is torn
    loader = _loader(base, workspace)
    loader.poll()
    assert _steps(loader, "./run") == list(range(1, 10))
    assert _runs(loader)["./run"]["damage"]["corrupt_records"] == 0
    path.write_bytes(data)  # the writer finished it
    loader.poll()
    assert _steps(loader, "./run") == list(range(1, 11))
    loader.stop()


def test_a_damaged_record_is_counted_and_skipped(base: Path, workspace: Path) -> None:
    run = base / "run"
    run.mkdir()
    records = _records(10)
    broken = bytearray(records[4])
    broken[20] ^= 0xFF  # inside the payload: its CRC fails
    records[4] = bytes(broken)
    (run / summary_file_name(1000, rank=0, host="h")).write_bytes(b"".join(records))
    (run / summary_file_name(999, rank=0, host="junk")).write_bytes(b"\x00" * 100)
    loader = _loader(base, workspace)
    loader.poll()
    summary = _runs(loader)["./run"]
    assert summary["damage"] == {
        "corrupt_records": 1,
        "skipped_bytes": 0,
        "unreadable_files": 1,
        "damaged_values": 0,
        "unreadable_directory": None,
        "unreadable_projector_config": None,
    }
    assert _steps(loader, "./run") == [1, 2, 3, 4, 6, 7, 8, 9, 10]
    loader.stop()


def test_a_resumed_run_drops_the_replaced_points(base: Path, workspace: Path) -> None:
    write_run(base / "run", range(1, 101), value=lambda tag, step: 1.0)
    write_run(base / "run", range(61, 91), value=lambda tag, step: 2.0)  # resumed at 60
    loader = _loader(base, workspace)
    loader.poll()
    (ref,) = loader.series("./run")
    points = loader.points(ref)
    assert points["step"].tolist() == list(range(1, 91))
    assert (points["value"][:60] == 1.0).all() and (points["value"][60:] == 2.0).all()
    summary = _runs(loader)["./run"]
    assert summary["stale_points_dropped"] == 40 and summary["restarts"] == 1
    assert not summary["several_trainings"]
    loader.stop()


def test_untouched_mindspore_runs_replace_nothing(
    base: Path, tmp_path: Path, golden_dir: Path
) -> None:
    """MindSpore writes each epoch's last step twice, with the same values: no restart,
    nothing replaced (the run list showed 10-20 "replaced points" per golden run)."""
    shutil.copytree(golden_dir, base / "golden")
    for engine in ("python", "numba"):
        loader = _loader(base, tmp_path / engine, engine)
        loader.poll()
        for run in loader.runs():
            assert (run["stale_points_dropped"], run["restarts"]) == (0, 0), (engine, run["id"])
        assert _steps(loader, "./golden/landscape", "loss/auto") == list(range(1, 9))
        (kept,) = loader.samples("./golden/landscape", "histogram", "fc1.bias/auto")
        assert kept.items["step"].tolist() == list(range(1, 9))
        loader.stop()


def _step_record(step: int, loss: float, weights: list[int]) -> bytes:
    event = summary_pb2.Event(step=step, wall_time=1000.0 + step)
    event.summary.value.add(tag="loss", scalar_value=loss)
    histogram = event.summary.value.add(tag="w").histogram
    for left, count in enumerate(weights):
        histogram.buckets.add(left=float(left), width=1.0, count=count)
    histogram.count, histogram.min, histogram.max = sum(weights), 0.0, float(len(weights))
    return encode_record(event.SerializeToString())


def test_a_step_written_again_with_other_values_replaces_the_first(
    base: Path, workspace: Path
) -> None:
    """The same step written again: unchanged, it is left out; changed (a resume that
    rewrites the last step), it replaces the first and is counted."""
    run = base / "run"
    run.mkdir()
    path = run / summary_file_name(1000, rank=0, host="h")
    path.write_bytes(
        _step_record(1, 1.0, [1, 2])
        + _step_record(2, 0.5, [2, 2])
        + _step_record(2, 0.5, [2, 2])  # written again, unchanged
        + _step_record(3, 0.25, [3, 1])
    )
    loader = _loader(base, workspace)
    loader.poll()
    summary = _runs(loader)["./run"]
    assert (summary["stale_points_dropped"], summary["restarts"]) == (0, 0)
    with open(path, "ab") as handle:  # in a later read: the last step again, then changed
        handle.write(_step_record(3, 0.25, [3, 1]) + _step_record(3, 0.375, [1, 3]))
    loader.poll()
    (ref,) = loader.series("./run")
    points = loader.points(ref)
    assert points["step"].tolist() == [1, 2, 3] and points["value"].tolist() == [1.0, 0.5, 0.375]
    (kept,) = loader.samples("./run", "histogram", "w")
    assert kept.items["step"].tolist() == [1, 2, 3]
    newest = loader.value(kept, 2)
    assert newest is not None and newest.value.counts.tolist() == [1, 3]
    summary = _runs(loader)["./run"]
    assert (summary["stale_points_dropped"], summary["restarts"]) == (2, 0)  # loss and w
    loader.stop()


def _scalars_record(step: int, values: dict[str, float]) -> bytes:
    event = summary_pb2.Event(step=step, wall_time=1000.0 + step)
    for tag, value in values.items():
        event.summary.value.add(tag=tag, scalar_value=value)
    return encode_record(event.SerializeToString())


def test_series_going_back_beside_plain_ones_in_one_read(base: Path, workspace: Path) -> None:
    """One read of many series, written together: those that go back, repeat a step or
    continue after points read before are fitted one by one, the others as read; each
    keeps its own points."""
    run = base / "run"
    run.mkdir()
    path = run / summary_file_name(1000, rank=0, host="h")
    path.write_bytes(b"".join(_scalars_record(s, {"a": s, "b": s, "c": s}) for s in range(1, 6)))
    loader = _loader(base, workspace)
    loader.poll()
    steps = [*range(6, 9), 7, 8, 9]  # "b" resumes at 6 in this read; the others go on
    with open(path, "ab") as handle:
        for i, step in enumerate(steps):
            values = {"b": 10.0 * step}
            if i < 3:
                values.update(a=step, c=step)
            handle.write(_scalars_record(step, values))
        handle.write(_scalars_record(8, {"a": 8.0}))  # "a" written again, unchanged
        handle.write(_scalars_record(4, {"c": -4.0}))  # "c" back before this read
    loader.poll()
    got = {ref.tag: loader.points(ref) for ref in loader.series("./run")}
    assert got["a"]["step"].tolist() == list(range(1, 9))
    assert got["b"]["step"].tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert got["b"]["value"].tolist() == [1, 2, 3, 4, 5, 60, 70, 80, 90]
    assert got["c"]["step"].tolist() == [1, 2, 3, 4] and got["c"]["value"][-1] == -4.0
    summary = _runs(loader)["./run"]
    assert summary["points"] == 8 + 9 + 4 and summary["restarts"] == 1  # "c" only
    assert summary["stale_points_dropped"] == 2 + 5  # "b": 7, 8; "c": 4, 5 and 6, 7, 8
    loader.stop()
    again = _loader(base, workspace)
    again.restore()
    assert {ref.tag: again.points(ref).tolist() for ref in again.series("./run")} == {
        tag: points.tolist() for tag, points in got.items()
    }
    again.stop()


def test_two_trainings_in_one_directory_are_flagged(base: Path, workspace: Path) -> None:
    write_run(base / "run", range(1, 21))
    write_run(base / "run", range(1, 11))
    loader = _loader(base, workspace)
    loader.poll()
    assert _runs(loader)["./run"]["several_trainings"]
    assert _steps(loader, "./run") == list(range(1, 11))
    loader.stop()


def test_ranks_stay_apart(base: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for rank in (0, 1):
        monkeypatch.setenv("RANK", str(rank))
        write_run(base / "run", range(1, 6), value=lambda tag, step, r=rank: float(r))
    loader = _loader(base, workspace)
    loader.poll()
    assert _runs(loader)["./run"]["ranks"] == [0, 1]
    for rank in (0, 1):
        (ref,) = [r for r in loader.series("./run") if r.rank == rank]
        assert (loader.points(ref)["value"] == rank).all() and ref.count == 5
    loader.stop()


def test_deleted_and_renamed_runs(base: Path, workspace: Path) -> None:
    write_run(base / "a", range(1, 6))
    write_run(base / "b", range(1, 6))
    loader = _loader(base, workspace)
    loader.poll()
    shutil.rmtree(base / "a")
    (base / "b").rename(base / "c")
    loader.poll()
    assert sorted(_runs(loader)) == ["./c"]
    assert loader.series("./a") == []
    assert _steps(loader, "./c") == [1, 2, 3, 4, 5]
    loader.stop()
    again = _loader(base, workspace)
    again.restore()  # the saved state forgot them too
    assert sorted(_runs(again)) == ["./c"] and _steps(again, "./c") == [1, 2, 3, 4, 5]
    again.stop()


def test_a_replaced_or_shrunk_file_is_read_again(base: Path, workspace: Path) -> None:
    run = base / "run"
    run.mkdir()
    path = run / summary_file_name(1000, rank=0, host="h")
    path.write_bytes(b"".join(_records(20)))
    loader = _loader(base, workspace)
    loader.poll()
    assert len(_steps(loader, "./run")) == 20
    path.write_bytes(b"".join(_records(5, start=100)))  # shorter: another file now
    loader.poll()
    assert _steps(loader, "./run") == list(range(100, 105))
    path.write_bytes(b"".join(_records(30, start=500)))  # longer, but a different head
    loader.poll()
    assert _steps(loader, "./run") == list(range(500, 530))
    loader.stop()


def test_reopening_resumes_from_the_saved_state(base: Path, workspace: Path) -> None:
    write_run(base / "a", range(1, 201), tags=("loss", "acc"))
    write_run(base / "b", range(1, 51), fmt="tensorboard")
    loader = _loader(base, workspace)
    loader.poll()
    before = loader.runs()
    stamps = _segments(loader)
    loader.stop()
    again = _loader(base, workspace)
    again.restore()
    assert again.runs() == before  # known before any file is read
    again.poll()
    assert again.runs() == before
    assert _segments(again) == stamps  # nothing was read again
    write_run(base / "b", range(51, 61), fmt="tensorboard")  # a new file while it was down
    again.poll()
    assert _steps(again, "./b", rank=None) == list(range(1, 61))
    again.stop()


def test_a_segment_longer_than_saved_is_fine(base: Path, workspace: Path) -> None:
    write_run(base / "a", range(1, 11))
    loader = _loader(base, workspace)
    loader.poll()
    (path,) = _segments(loader)
    loader.stop()
    with open(path, "ab") as handle:  # a crash between appending and saving the state
        handle.write(np.zeros(3, dtype=POINT).tobytes() + b"torn")
    again = _loader(base, workspace)
    again.restore()
    assert _steps(again, "./a") == list(range(1, 11))
    write_run(base / "a", range(11, 14))  # and the next points go after the dead ones
    again.poll()
    assert _steps(again, "./a") == list(range(1, 14))
    again.stop()


def test_a_segment_shorter_than_saved_means_reading_again(base: Path, workspace: Path) -> None:
    write_run(base / "a", range(1, 11))
    write_run(base / "b", range(1, 6))
    loader = _loader(base, workspace)
    loader.poll()
    before = loader.runs()
    (path,) = _segments(loader)
    loader.stop()
    os.truncate(path, path.stat().st_size - POINT.itemsize)  # the last points were lost
    again = _loader(base, workspace)
    again.restore()
    assert sorted(_runs(again)) == ["./a"]  # b's points were written last: b is read again
    again.poll()
    assert again.runs() == before
    assert _steps(again, "./b") == [1, 2, 3, 4, 5]
    again.stop()


def test_points_dropped_by_a_rewritten_run_are_compacted_away(base: Path, workspace: Path) -> None:
    """A rank read again from the start leaves its old points dead in the segments; once
    they pass their share they are copied away and their segment removed, and nothing
    shown changes, now or after a re-open."""
    big = COMPACT_MIN_POINTS + 1000
    run = base / "run"
    run.mkdir()
    path = run / summary_file_name(1000, rank=0, host="h")
    path.write_bytes(b"".join(_records(big)))
    write_run(base / "other", range(1, 6))
    loader = _loader(base, workspace)
    loader.poll()
    first = set(_segments(loader))
    path.write_bytes(b"".join(_records(20, start=500)))  # replaced: read again from the start
    loader.poll()
    assert _steps(loader, "./run") == list(range(500, 520))
    assert not first & set(_segments(loader))  # the old segment is gone
    assert _steps(loader, "./other") == [1, 2, 3, 4, 5]
    before = loader.runs()
    loader.stop()
    again = _loader(base, workspace)
    again.poll()
    assert again.runs() == before and _steps(again, "./run") == list(range(500, 520))
    again.stop()


def test_two_servers_over_one_base_dir_keep_separate_caches(base: Path, workspace: Path) -> None:
    write_run(base / "a", range(1, 11))
    first, second = _loader(base, workspace), _loader(base, workspace)
    assert first.store.root != second.store.root
    first.poll()
    second.poll()
    assert first.runs() == second.runs()
    first.stop()
    second.stop()
    third = _loader(base, workspace)
    assert third.store.root == first.store.root  # the lock was released
    third.stop()
