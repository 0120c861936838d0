"""The spool of a writer to object storage, on fsspec's ``memory://`` and moto's S3 server.

Only whole records reach the store; a name the remote directory already holds is never
taken again; a listing of a bucket of many pages is one recursive listing, not a walk.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import fsspec
import pytest
from helpers.s3 import WireLog, bucket_server, s3_options

from sumlens import SummaryRecord
from sumlens.io import iter_events, open_storage
from sumlens.io.framing import encode_record
from sumlens.io.naming import hostname, summary_file_name
from sumlens.io.remote import FsspecStorage
from sumlens.io.spool import create, whole_records_end


def test_whole_records_end_stops_before_a_torn_or_foreign_record() -> None:
    records = [encode_record(b"a" * n) for n in (0, 5, 300)]
    data = b"".join(records)
    ends = [len(records[0]), len(records[0]) + len(records[1]), len(data)]
    assert whole_records_end(data) == len(data)
    assert whole_records_end(data[:-1]) == ends[1]  # the last one still being written
    assert whole_records_end(data[: ends[1] + 7]) == ends[1]  # its header not yet whole
    assert whole_records_end(data, ends[0]) == len(data)  # resumed from a record's offset
    assert whole_records_end(data + b"\x00" * 20) == len(data)  # a length whose CRC fails
    assert whole_records_end(b"") == 0


def test_a_name_the_remote_directory_holds_is_not_taken_again(tmp_path: Path) -> None:
    url = f"memory://sumlens-{uuid.uuid4().hex}/run"
    storage, root = open_storage(url)
    assert isinstance(storage, FsspecStorage)
    now = int(time.time())
    taken = [summary_file_name(t, "events", "_MS", 0, hostname()) for t in range(now, now + 5)]
    for name in taken:
        storage.fs.pipe(f"{root}/{name}", b"another writer's file")
    with SummaryRecord(url, spool_dir=tmp_path) as record:
        record.add_value("scalar", "x", 1.0)
        record.record(0)
    assert record.log_dir.rpartition("/")[2] not in taken
    for name in taken:
        assert storage.fs.cat(f"{root}/{name}") == b"another writer's file"
    assert [e.step for e in iter_events(record.log_dir)] == [0]


def test_create_refuses_a_local_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a URL of object storage"):
        create(str(tmp_path))


def test_a_bucket_of_many_pages_is_one_recursive_listing() -> None:
    with bucket_server("pages") as endpoint:
        storage, root = open_storage("s3://pages/team", s3_options(endpoint))
        assert isinstance(storage, FsspecStorage)
        files = {f"{root}/run{i:04d}/events.out.tfevents.1.host": b"x" for i in range(2500)}
        fsspec.filesystem("s3", **s3_options(endpoint)).pipe(files)
        wire = WireLog(storage.fs)
        before = storage.requests.snapshot()["listings"]
        tree = storage.list_tree(root)
        assert sorted(name for name, _ in tree) == sorted(files)
        pages = wire.listings()
        assert len(pages) == len(wire.requests) == 3  # 1,000 keys a page, one listing
        # recursive (an empty delimiter), one prefix: no listing per level
        assert all("prefix=team%2F&delimiter=&" in page for page in pages)
        assert storage.requests.snapshot()["listings"] - before == 1
