"""The storage seam: ``LocalStorage`` does what ``os`` does, and every reader and the event
file writer reach files through the storage they are given."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest
from helpers.file_modes import umask
from helpers.storage import RecordingStorage

from sumlens import SummaryRecord
from sumlens.io import (
    RecordChangedError,
    RecordFile,
    iter_events,
    read_events_at,
    read_file_scalars,
    read_record_at,
    read_scalars,
)
from sumlens.io.naming import claim_free_name, event_files
from sumlens.io.reader import resolve_files
from sumlens.io.storage import (
    LOCAL_STORAGE,
    OWNER_ONLY_STORAGE,
    AppendFile,
    FileInfo,
    LocalStorage,
    Storage,
    WriteStorage,
)
from sumlens.summary.eventfile import EventFile

EVENT_NAME = "events.out.tfevents.1700000000.host"


def _write_run(directory: Path, steps: int = 20) -> Path:
    """A small run of scalars and a histogram; its summary file."""
    with SummaryRecord(directory) as record:
        for step in range(1, steps + 1):
            record.add_value("scalar", "loss", 1.0 / step)
            if step % 5 == 0:
                record.add_value("histogram", "w", np.arange(4, dtype=np.float32) * step)
            record.record(step)
    (path,) = [p for p in resolve_files(directory) if "lineage" not in p.name]
    return path


# ---------------------------------------------------------------- the local implementation


def test_local_storage_implements_both_interfaces() -> None:
    assert isinstance(LOCAL_STORAGE, Storage)
    assert isinstance(LOCAL_STORAGE, WriteStorage)


def test_listing_gives_directories_and_the_kept_regular_files(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / EVENT_NAME).write_bytes(b"12345")
    (tmp_path / "notes.txt").write_text("x")
    os.mkfifo(tmp_path / "events.out.tfevents.2.pipe")  # not a regular file: left out
    (tmp_path / "gone.tfevents").symlink_to(tmp_path / "missing")  # leads nowhere

    def keep(name: str) -> bool:
        return "tfevents" in name

    infos = {i.name: i for i in LOCAL_STORAGE.list_dir(str(tmp_path), keep=keep)}
    assert sorted(infos) == [EVENT_NAME, "sub"]
    event, sub = infos[EVENT_NAME], infos["sub"]
    real = os.stat(tmp_path / EVENT_NAME)
    assert (event.is_file, event.is_dir, event.size) == (True, False, 5)
    assert (event.mtime_ns, event.ctime_ns) == (real.st_mtime_ns, real.st_ctime_ns)
    assert event.identity == (real.st_dev, real.st_ino)
    assert (sub.is_dir, sub.is_file) == (True, False)
    everything = {i.name for i in LOCAL_STORAGE.list_dir(str(tmp_path))}
    assert everything == {EVENT_NAME, "sub", "notes.txt"}
    files_only = {i.name for i in LOCAL_STORAGE.list_dir(str(tmp_path), keep=keep, dirs=False)}
    assert files_only == {EVENT_NAME}


def test_links_are_followed_and_can_be_listed_where_left_out(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "to_dir").symlink_to(target)
    (tmp_path / "to_nothing").symlink_to(tmp_path / "missing")
    (tmp_path / "to_text").symlink_to(tmp_path / "notes.txt")
    (tmp_path / "notes.txt").write_text("x")

    def keep(name: str) -> bool:
        return False

    plain = {i.name: i for i in LOCAL_STORAGE.list_dir(str(tmp_path), keep=keep)}
    assert sorted(plain) == ["target", "to_dir"]
    assert plain["to_dir"].is_link and plain["to_dir"].identity == plain["target"].identity
    with_links = {i.name: i for i in LOCAL_STORAGE.list_dir(str(tmp_path), keep, links=True)}
    assert sorted(with_links) == ["target", "to_dir", "to_nothing", "to_text"]
    assert with_links["to_nothing"].is_link
    assert not with_links["to_nothing"].is_dir and not with_links["to_nothing"].is_file
    linked = LOCAL_STORAGE.stat(str(tmp_path / "to_dir"))
    assert linked == FileInfo("to_dir", *plain["to_dir"][1:])
    assert not LOCAL_STORAGE.stat(str(target)).is_link


def test_stat_and_listing_say_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        LOCAL_STORAGE.stat(str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError):
        LOCAL_STORAGE.list_dir(str(tmp_path / "missing"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        LOCAL_STORAGE.list_dir(str(tmp_path / "file"))


def test_open_read_starts_at_the_offset_and_knows_the_size(tmp_path: Path) -> None:
    path = tmp_path / "data"
    path.write_bytes(bytes(range(100)))
    with LOCAL_STORAGE.open_read(str(path), 40) as handle:
        assert handle.read(3) == bytes([40, 41, 42])
        assert handle.seek(0, os.SEEK_END) == 100
        handle.seek(98)
        assert handle.read(10) == bytes([98, 99])  # the end comes first


def test_join_is_os_path_join(tmp_path: Path) -> None:
    for directory in (str(tmp_path), f"{tmp_path}/", "/", "relative", "a/../b"):
        assert LOCAL_STORAGE.join(directory, "x") == os.path.join(directory, "x")


@pytest.mark.parametrize(
    ("storage", "modes"),
    [(LOCAL_STORAGE, (0o750, 0o640, 0o640)), (OWNER_ONLY_STORAGE, (0o700, 0o600, 0o400))],
    ids=["umask", "owner-only"],
)
def test_write_side_creates_exclusively_appends_cuts_back_and_seals(
    tmp_path: Path, storage: LocalStorage, modes: tuple[int, int, int]
) -> None:
    directory = tmp_path / "a" / "b"
    with umask(0o027):
        storage.make_dirs(str(directory))
        path = str(directory / EVENT_NAME)
        storage.create(path)
    assert stat.S_IMODE(os.stat(directory).st_mode) == modes[0]
    assert stat.S_IMODE(os.stat(path).st_mode) == modes[1]
    with pytest.raises(FileExistsError):
        storage.create(path)
    file = storage.open_append(path)
    assert isinstance(file, AppendFile)
    assert file.write(b"abcdef") == 6
    file.truncate(4)
    assert file.write(b"XY") == 2  # appended at the end, after the cut
    file.flush()
    file.close()
    assert Path(path).read_bytes() == b"abcdXY"
    storage.seal(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == modes[2]
    assert storage.free_bytes(str(directory)) > 0
    storage.remove(path)
    assert not Path(path).exists()


# ---------------------------------------------------------------- readers use the seam


def test_every_reader_opens_files_through_its_storage(tmp_path: Path, scalar_engine: str) -> None:
    path = _write_run(tmp_path)
    storage = RecordingStorage()
    whole = read_scalars(tmp_path, engine=scalar_engine, storage=storage)
    assert storage.listed() == [str(tmp_path)]
    assert str(path) in storage.calls["open_read"]
    assert whole.keys() == read_scalars(tmp_path, engine=scalar_engine).keys()

    storage.clear()
    others: list[tuple[int, int]] = []
    columns, end = read_file_scalars(
        path,
        engine=scalar_engine,
        other=lambda event, offset, length: others.append((offset, length)),
        storage=storage,
    )
    assert end == path.stat().st_size and set(columns) == {"loss"} and others
    assert storage.calls["open_read"] == [str(path)]

    storage.clear()
    offset, length = others[0]
    events = read_events_at(path, "summary", offset, length, storage=storage)
    assert "w" in [e.tag for e in events]  # the record of a step with a histogram
    assert storage.calls["open_read"] == [str(path)]

    storage.clear()
    payload = read_record_at(path, offset, length, storage)
    assert len(payload) == length and storage.calls["open_read"] == [str(path)]
    with pytest.raises(RecordChangedError):
        read_record_at(path, offset + 1, length, storage)


def test_event_streams_and_record_files_read_through_their_storage(tmp_path: Path) -> None:
    path = _write_run(tmp_path)
    storage = RecordingStorage()
    steps = [e.step for e in iter_events(path, storage=storage) if e.tag == "loss"]
    assert steps == list(range(1, 21))
    assert storage.calls["open_read"] == [str(path)]
    storage.clear()
    records = RecordFile(path, storage=storage)
    assert len(list(records.read_payloads())) > 20
    assert storage.calls["open_read"] == [str(path)]
    assert event_files(tmp_path, storage) == resolve_files(tmp_path)


# ---------------------------------------------------------------- the writer uses the seam


def test_event_files_are_created_written_and_sealed_through_their_storage(
    tmp_path: Path,
) -> None:
    storage = RecordingStorage(owner_only=True)
    directory = tmp_path / "run"
    file = EventFile(
        directory,
        lambda t: f"events.out.events.summary.{t}.0.h_MS",
        1,
        max_file_size=200,
        header=lambda: b"version",
        storage=storage,
    )
    file.append([b"x" * 100])
    file.append([b"y" * 100])  # does not fit beside the first: a second file
    file.close()
    names = [p.name for p in file.paths]
    assert names == ["events.out.events.summary.1.0.h_MS", "events.out.events.summary.2.0.h_MS"]
    created = [str(directory / name) for name in names]
    assert storage.calls["create"] == created
    assert storage.calls["open_append"] == created
    assert storage.calls["seal"] == created
    assert set(storage.calls["make_dirs"]) == {str(directory)}
    assert set(storage.calls["free_bytes"]) == {str(directory)}
    for path in file.paths:
        assert stat.S_IMODE(path.stat().st_mode) == 0o400
    assert [len(list(RecordFile(p).read_payloads())) for p in file.paths] == [2, 2]


def test_a_taken_name_moves_on_to_the_next_second_through_the_storage(tmp_path: Path) -> None:
    storage = RecordingStorage()
    (tmp_path / "f.5").write_text("taken")
    path, t = claim_free_name(tmp_path, lambda s: f"f.{s}", 5, storage)
    assert (path.name, t) == ("f.6", 6)
    assert storage.calls["create"] == [str(tmp_path / "f.5"), str(tmp_path / "f.6")]
