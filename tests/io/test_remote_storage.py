"""Reading event files from object storage: moto's S3 server on 127.0.0.1, and ``memory://``.

Runs written locally by ``SummaryRecord`` (MindSpore's format with a lineage file, and
TensorBoard's) are uploaded and read back through ``sumlens.io`` exactly as from the
local copy; the requests a read costs are counted on the wire (:class:`WireLog`).
"""

from __future__ import annotations

import json
import os
import pickle
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import numpy as np
import pytest
from helpers.lineage_data import write_lineage_run
from helpers.s3 import (
    WireLog,
    bucket_server,
    closed_port,
    credentials_checked,
    s3_options,
)

from sumlens import SummaryRecord
from sumlens.cli import main
from sumlens.io import RecordFile, RemoteStorageError, iter_events, open_storage, read_scalars
from sumlens.io.remote import WINDOW, FsspecStorage, parse_storage_options
from sumlens.io.scalars import read_file_scalars

BUCKET = "runs"
ENGINES = ("numba", "python")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with bucket_server(BUCKET) as url:
        yield url


@pytest.fixture(scope="module")
def local_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ms``: a MindSpore summary file and its lineage file; ``tb``: a TensorBoard run."""
    base = tmp_path_factory.mktemp("runs")
    write_lineage_run(base / "ms", learning_rate=0.1, accuracy=0.9, batch_size=32)
    rng = np.random.default_rng(0)
    with SummaryRecord(base / "tb", file_format="tensorboard") as record:
        for step in range(1, 21):
            record.add_value("scalar", "loss", 1.0 / step)
            record.add_value("scalar", "lr", 0.01 * step)
            record.add_value("histogram", "weights", rng.normal(size=64).astype(np.float32))
            record.record(step)
    return base


@pytest.fixture(scope="module", params=["s3", "memory"])
def uploaded(
    request: pytest.FixtureRequest, endpoint: str, local_runs: Path
) -> tuple[str, dict[str, Any]]:
    """The local runs put below a URL; returns the URL and the options that reach it."""
    if request.param == "s3":
        url, options = f"s3://{BUCKET}/upload", s3_options(endpoint)
    else:
        url, options = f"memory://sumlens-{uuid.uuid4().hex}", {}
    upload(local_runs, url, options)
    return url, options


def upload(local_runs: Path, url: str, options: dict[str, Any]) -> None:
    """Put the runs ``ms`` and ``tb`` below ``url`` with the file system's ``put``."""
    storage, root = open_storage(url, options)
    assert isinstance(storage, FsspecStorage)
    for run in ("ms", "tb"):
        storage.fs.put(str(local_runs / run), f"{root}/{run}", recursive=True)


def same(events: list[Any]) -> list[bytes]:
    """Events in a form compared exactly (numpy values included)."""
    return [pickle.dumps(event) for event in events]


@pytest.mark.parametrize("run", ["ms", "tb"])
def test_runs_read_back_exactly(
    uploaded: tuple[str, dict[str, Any]], local_runs: Path, run: str
) -> None:
    url, options = uploaded
    local = list(iter_events(local_runs / run))
    assert {event.plugin for event in local} >= {"scalar"}
    assert same(list(iter_events(f"{url}/{run}", storage_options=options))) == same(local)
    storage, root = open_storage(f"{url}/{run}", options)
    assert same(list(iter_events(root, storage))) == same(local)
    for engine in ENGINES:
        expected = read_scalars(local_runs / run, engine=engine)
        for got in (
            read_scalars(f"{url}/{run}", engine=engine, storage_options=options),
            read_scalars(root, engine=engine, storage=storage),
        ):
            assert got.keys() == expected.keys()
            for tag, columns in expected.items():
                for a, b in zip(got[tag], columns, strict=True):
                    np.testing.assert_array_equal(a, b)
            assert got.stats == expected.stats


def test_list_tree_of_100_runs_is_one_listing(endpoint: str) -> None:
    storage, root = open_storage(f"s3://{BUCKET}/hundred", s3_options(endpoint))
    assert isinstance(storage, FsspecStorage)
    storage.fs.pipe({f"{root}/run{i:03d}/events.out.tfevents.1.host": b"x" * i for i in range(100)})
    wire = WireLog(storage.fs)
    before = storage.requests.snapshot()
    tree = storage.list_tree(root)
    assert sorted(name for name, _ in tree) == [
        f"{root}/run{i:03d}/events.out.tfevents.1.host" for i in range(100)
    ]
    assert {info.size for _, info in tree} == set(range(100))
    assert all(info.mtime_ns > 0 and info.is_file for _, info in tree)
    after = storage.requests.snapshot()
    assert len(wire.listings()) == len(wire.requests) == 1  # one page: 1,000 keys a page
    assert after["listings"] - before["listings"] == len(wire.listings())
    assert after["gets"] == before["gets"] and after["stats"] == before["stats"]


def record_starts(path: Path) -> list[int]:
    """Where each record of a file starts (its payload is 12 bytes on)."""
    return [offset - 12 for offset, _ in RecordFile(path).read_located()]


@pytest.mark.parametrize("engine", ENGINES)
def test_grown_object_is_one_ranged_get_of_its_new_bytes(
    endpoint: str, local_runs: Path, engine: str
) -> None:
    [local] = list((local_runs / "tb").iterdir())
    data = local.read_bytes()
    cut = record_starts(local)[len(record_starts(local)) // 2]
    storage, path = open_storage(f"s3://{BUCKET}/grown-{engine}/{local.name}", s3_options(endpoint))
    assert isinstance(storage, FsspecStorage)
    storage.fs.pipe_file(path, data[:cut])
    first, end = read_file_scalars(path, "tensorboard", engine=engine, storage=storage)
    assert end == cut
    storage.fs.pipe_file(path, data)  # re-uploaded with more records
    wire = WireLog(storage.fs)
    before = storage.requests.snapshot()
    rest, end = read_file_scalars(path, "tensorboard", start=cut, engine=engine, storage=storage)
    after = storage.requests.snapshot()
    assert end == len(data)
    window_end = cut + WINDOW - 1  # S3 answers with what there is: the new bytes
    assert [(method, rng) for method, _, rng in wire.requests] == [
        ("GET", f"bytes={cut}-{window_end}")
    ]
    assert after["gets"] - before["gets"] == 1
    assert after["bytes"] - before["bytes"] == len(data) - cut
    assert after["listings"] == before["listings"] and after["stats"] == before["stats"]
    whole = read_scalars(local, engine=engine)
    for tag, columns in whole.items():
        for a, b, c in zip(first[tag], rest[tag], columns, strict=True):
            np.testing.assert_array_equal(np.concatenate([a, b]), c)
    with storage.open_read(path, cut) as handle:
        assert handle.read() == data[cut:]


def one_line_naming(err: pytest.ExceptionInfo[RemoteStorageError], url: str) -> str:
    message = str(err.value)
    assert "\n" not in message and message.startswith(url), message
    return message


def test_missing_bucket_is_one_line(endpoint: str) -> None:
    url = "s3://no-such-bucket/run"
    with pytest.raises(RemoteStorageError) as err:
        list(iter_events(url, storage_options=s3_options(endpoint)))
    assert "bucket does not exist" in one_line_naming(err, url)


def test_bad_credentials_are_one_line(endpoint: str) -> None:
    url = f"s3://{BUCKET}/upload/tb"
    with credentials_checked(endpoint), pytest.raises(RemoteStorageError) as err:
        read_scalars(url, storage_options=s3_options(endpoint))
    assert "refused" in one_line_naming(err, url)


def test_unreachable_endpoint_is_one_line() -> None:
    url = f"s3://{BUCKET}/run"
    options = s3_options(f"http://127.0.0.1:{closed_port()}")
    with pytest.raises(RemoteStorageError) as err:
        read_scalars(url, storage_options=options)
    assert "cannot reach the endpoint" in one_line_naming(err, url)


def test_local_paths_and_file_urls_stay_local(tmp_path: Path) -> None:
    from sumlens.io.storage import LOCAL_STORAGE

    assert open_storage(tmp_path) == (LOCAL_STORAGE, os.fspath(tmp_path))
    assert open_storage(f"file://{tmp_path}") == (LOCAL_STORAGE, str(tmp_path))
    with pytest.raises(ValueError, match="apply to URLs only"):
        open_storage(tmp_path, {"anon": True})
    with pytest.raises(ValueError, match="fsspec knows no protocol 'nosuch'"):
        open_storage("nosuch://x/y")


def test_parse_storage_options() -> None:
    assert parse_storage_options(
        ["endpoint_url=http://127.0.0.1:5000", "anon=false", 'client_kwargs={"a": 1}', "n=3"]
    ) == {"endpoint_url": "http://127.0.0.1:5000", "anon": False, "client_kwargs": {"a": 1}, "n": 3}
    with pytest.raises(ValueError, match="'anon' is not KEY=VALUE"):
        parse_storage_options(["anon"])


def option_flags(endpoint: str) -> list[str]:
    flags = []
    for key, value in s3_options(endpoint).items():
        text = value if isinstance(value, str) else json.dumps(value)
        flags += ["--storage-option", f"{key}={text}"]
    return flags


def test_cli_read_and_export_over_s3(
    endpoint: str, local_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"s3://{BUCKET}/cli"
    upload(local_runs, url, s3_options(endpoint))
    assert main(["read", f"{url}/tb", *option_flags(endpoint)]) == 0
    out = capsys.readouterr().out
    assert "tfevents" in out and "loss" in out and "weights" in out
    assert main(["read", "s3://no-such-bucket/run", *option_flags(endpoint)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("sumlens read: error: s3://no-such-bucket/run: ") and "\n" not in err
    out_file = tmp_path / "scalars.csv"
    code = main(
        [
            "export",
            "--summary-base-dir",
            url,
            "-o",
            str(out_file),
            "--workspace",
            str(tmp_path / "ws"),
            *option_flags(endpoint),
        ]
    )
    assert code == 0, capsys.readouterr().err
    text = out_file.read_text()
    assert "loss" in text and "lr" in text


def test_memory_protocol_is_fsspec() -> None:
    storage, path = open_storage("memory://a/b")
    assert isinstance(storage, FsspecStorage) and path == "/a/b"
    assert isinstance(storage.fs, type(fsspec.filesystem("memory")))
