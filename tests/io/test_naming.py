"""File names: making them as MindSpore and TensorBoard do, and picking a run's files."""

from __future__ import annotations

import os
import platform
import re
import threading
from pathlib import Path

import pytest
from helpers.file_modes import umask

from sumlens.io.naming import (
    DEFAULT_PREFIX,
    DEFAULT_SUFFIX,
    LINEAGE_SUFFIX,
    check_affix,
    claim_free_name,
    current_rank,
    event_files,
    file_kind,
    file_order_key,
    hostname,
    lineage_file_name,
    summary_file_name,
    tensorboard_file_name,
)

T = 1795304165


# ----------------------------------------------------------------------------- names


def test_summary_and_lineage_names_follow_mindspore() -> None:
    assert (DEFAULT_PREFIX, DEFAULT_SUFFIX, LINEAGE_SUFFIX) == ("events", "_MS", "_lineage")
    assert summary_file_name(T, rank=0, host="vm") == "events.out.events.summary.1795304165.0.vm_MS"
    assert (
        lineage_file_name(T, rank=0, host="vm")
        == "events.out.events.summary.1795304165.0.vm_lineage"
    )
    assert (
        summary_file_name(T, prefix="run", suffix="_x.y", rank=3, host="node.example.com")
        == "run.out.events.summary.1795304165.3.node.example.com_x.y"
    )
    # The lineage file always ends in _lineage, whatever the summary suffix is.
    assert lineage_file_name(T, prefix="run", rank=3, host="h").endswith(".3.h_lineage")


def test_golden_file_names_are_what_we_would_make(golden_dir: Path) -> None:
    names = {p.name for p in golden_dir.glob("*/events.*")}
    assert summary_file_name(1795304162, rank=0, host="vm") in names
    assert lineage_file_name(1795304162, rank=0, host="vm") in names
    assert lineage_file_name(1795304168, rank=0, host="vm") in names


def test_default_host_is_platform_node() -> None:
    assert hostname() == (platform.node() or "localhost")
    assert summary_file_name(T, rank=0).endswith(f".{T}.0.{hostname()}_MS")
    assert tensorboard_file_name(T).startswith(f"events.out.tfevents.{T}.{hostname()}")


def test_tensorboard_name() -> None:
    """torch's pattern: ``<seconds, 10 digits>.<host>.<pid>``, then the suffix."""
    assert tensorboard_file_name(T, host="h", pid=812) == "events.out.tfevents.1795304165.h.812"
    assert (
        tensorboard_file_name(T, host="h", suffix=".0.v2", pid=812)
        == "events.out.tfevents.1795304165.h.812.0.v2"
    )
    assert tensorboard_file_name(7, host="h", pid=1) == "events.out.tfevents.0000000007.h.1"
    assert tensorboard_file_name(T, host="h") == f"events.out.tfevents.{T}.h.{os.getpid()}"
    assert file_kind(tensorboard_file_name(T, host="h")) == "tensorboard"


@pytest.mark.parametrize("value", ["events", "_", "a.b", "x1", "run_2.", "A_b.C9"])
def test_valid_affixes(value: str) -> None:
    assert check_affix("prefix", value) == value


@pytest.mark.parametrize("value", ["", ".a", "-a", "a-b", "a/b", "a b", "é", "aé", "a\nb"])
def test_invalid_affixes(value: str) -> None:
    with pytest.raises(ValueError, match="prefix"):
        check_affix("prefix", value)


def test_trailing_newline_is_not_an_allowed_affix() -> None:
    with pytest.raises(ValueError, match="suffix"):
        check_affix("suffix", "_MS\n")


@pytest.mark.parametrize("value", [None, 1, b"events"])
def test_affix_must_be_str(value: object) -> None:
    with pytest.raises(TypeError):
        check_affix("suffix", value)


# ----------------------------------------------------------------------------- rank


def test_rank_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "3")
    assert current_rank() == 3
    assert summary_file_name(T, host="h") == "events.out.events.summary.1795304165.3.h_MS"
    assert lineage_file_name(T, host="h") == "events.out.events.summary.1795304165.3.h_lineage"


def test_rank_defaults_to_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANK", raising=False)
    assert current_rank() == 0
    monkeypatch.setenv("RANK", "not-a-number")
    assert current_rank() == 0


def test_explicit_rank_wins_over_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "5")
    assert ".7.h_MS" in summary_file_name(T, rank=7, host="h")


# ----------------------------------------------------------------------------- claiming


def summary_maker(host: str = "h"):
    return lambda t: summary_file_name(t, rank=0, host=host)


def test_claim_free_name_takes_the_requested_second(tmp_path: Path) -> None:
    with umask(0o022):
        path, t = claim_free_name(tmp_path, summary_maker(), seconds=T)
    assert t == T
    assert path == tmp_path / summary_file_name(T, rank=0, host="h")
    assert path.is_file()
    assert path.stat().st_size == 0
    assert path.stat().st_mode & 0o777 == 0o644  # the umask's, as open() makes files


def test_claim_free_name_moves_to_the_next_free_second(tmp_path: Path) -> None:
    (tmp_path / summary_file_name(T, rank=0, host="h")).write_bytes(b"someone else's")
    (tmp_path / summary_file_name(T + 1, rank=0, host="h")).write_bytes(b"and another")
    path, t = claim_free_name(tmp_path, summary_maker(), seconds=T)
    assert t == T + 2
    assert path.name == "events.out.events.summary.1795304167.0.h_MS"
    # Never a counter or any other change to the pattern.
    assert re.fullmatch(r"events\.out\.events\.summary\.\d+\.0\.h_MS", path.name)
    # The clashing files are untouched.
    assert (tmp_path / summary_file_name(T, rank=0, host="h")).read_bytes() == b"someone else's"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        summary_file_name(s, rank=0, host="h") for s in (T, T + 1, T + 2)
    )


def test_claim_free_name_lineage_clash(tmp_path: Path) -> None:
    # Another file's lineage clashes, not its summary: still the next second.
    (tmp_path / lineage_file_name(T, rank=0, host="h")).touch()
    path, t = claim_free_name(tmp_path, lambda s: lineage_file_name(s, rank=0, host="h"), T)
    assert t == T + 1
    assert path.name.endswith(".1795304166.0.h_lineage")


def test_claim_free_name_defaults_to_now(tmp_path: Path) -> None:
    import time

    before = int(time.time())
    _, t = claim_free_name(tmp_path, summary_maker())
    assert before <= t <= int(time.time()) + 1


def test_claim_free_name_concurrent_writers_never_share(tmp_path: Path) -> None:
    results: list[tuple[Path, int]] = []
    lock = threading.Lock()

    def claim() -> None:
        got = claim_free_name(tmp_path, summary_maker(), seconds=T)
        with lock:
            results.append(got)

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(t for _, t in results) == list(range(T, T + 8))
    assert len({p for p, _ in results}) == 8


# ----------------------------------------------------------------------------- kinds


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("events.out.events.summary.1795304165.0.vm_MS", "summary"),
        ("events.out.events.summary.1795304165.0.vm_lineage", "lineage"),
        ("run.out.events.summary.12.3.host.with.dots_custom", "summary"),
        ("x.summary.7", "summary"),
        ("events.out.tfevents.1700000000.host.1234.0", "tensorboard"),
        ("events.out.tfevents.1700000000.host.v2", "tensorboard"),
        ("train_metadata.json", None),
        ("golden-2_2.ckpt", None),
        ("ms_output_after_hwopt_0.pb", None),
        ("summary.txt", None),
        ("events.out.events.summary", None),
        ("README.md", None),
    ],
)
def test_file_kind(name: str, kind: str | None) -> None:
    assert file_kind(name) == kind


def test_order_is_numeric_by_timestamp() -> None:
    names = [
        "events.out.events.summary.100.0.h_lineage",
        "events.out.events.summary.99.0.h_MS",
        "events.out.events.summary.100.0.h_MS",
        "events.out.events.summary.1000.0.h_MS",
    ]
    assert sorted(names, key=file_order_key) == [
        "events.out.events.summary.99.0.h_MS",
        "events.out.events.summary.100.0.h_MS",
        "events.out.events.summary.100.0.h_lineage",
        "events.out.events.summary.1000.0.h_MS",
    ]
    tb = ["events.out.tfevents.20.h", "events.out.tfevents.3.h"]
    assert sorted(tb, key=file_order_key) == ["events.out.tfevents.3.h", "events.out.tfevents.20.h"]


def test_files_opened_in_one_second_keep_their_writers_numbers() -> None:
    """torch's writer names files ``tfevents.<time>.<host>.<pid>.<n>``: a process opening
    its 10th file in the same second as its 9th wrote the 9th first."""
    names = [
        "events.out.tfevents.1700000000.vm.812.10",
        "events.out.tfevents.1700000000.vm.812.9",
        "events.out.tfevents.1700000000.vm.812.100",
    ]
    assert sorted(names, key=file_order_key) == [names[1], names[0], names[2]]


def test_event_files_of_a_run(tmp_path: Path) -> None:
    wanted = [
        "events.out.events.summary.9.0.h_MS",
        "events.out.events.summary.10.0.h_MS",
        "events.out.events.summary.10.0.h_lineage",
        "events.out.events.summary.11.0.h_lineage",
    ]
    for name in reversed(wanted):
        (tmp_path / name).touch()
    # What SummaryCollector leaves next to them, and other clutter: all ignored.
    ckpt_dir = tmp_path / "ckpt_dir"
    ckpt_dir.mkdir()
    (ckpt_dir / "train_metadata.json").write_text("{}")
    (ckpt_dir / "events.out.events.summary.5.0.h_MS").touch()  # subfolders are not read
    (ckpt_dir / "golden-1_1.ckpt").touch()
    (tmp_path / "train_metadata.json").write_text("{}")
    (tmp_path / "notes.json").write_text("[]")
    (tmp_path / "graph.pb").touch()
    (tmp_path / "export_12").mkdir()
    (tmp_path / "events.out.events.summary.8.0.h_MS.d").mkdir()  # a directory, not a file
    assert [p.name for p in event_files(tmp_path)] == wanted
    assert all(p.parent == tmp_path for p in event_files(tmp_path))


def test_event_files_of_the_golden_runs(golden_dir: Path) -> None:
    assert [p.name for p in event_files(golden_dir / "collector")] == [
        "events.out.events.summary.1795304165.0.vm_MS",
        "events.out.events.summary.1795304165.0.vm_lineage",
        "events.out.events.summary.1795304168.0.vm_lineage",
    ]
    assert [p.name for p in event_files(golden_dir / "landscape")] == [
        "events.out.events.summary.1795304175.0.vm_MS",
        "events.out.events.summary.1795304175.0.vm_lineage",
        "events.out.events.summary.1795304177.0.vm_MS",
    ]
    assert event_files(golden_dir) == []  # the runs are subfolders


def test_event_files_of_an_empty_dir(tmp_path: Path) -> None:
    assert event_files(tmp_path) == []
    assert os.listdir(tmp_path) == []
