"""Recording to object storage: moto's S3 server on 127.0.0.1, and ``memory://``.

``SummaryRecord``, ``SummaryWriter`` and ``SummaryCollector`` given an ``s3://`` (or
``memory://``) log directory write what they write locally: read back through
``sumlens.io`` value for value. Uploads happen at each flush and every ``upload_secs``,
in parts that keep the object count bounded; an outage of the store is retried without
loss; a killed writer keeps what it uploaded and its spool holds the rest for ``sumlens
upload``; a store that cannot be written fails at once in one line naming the URL.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.board import wait_until
from helpers.s3 import S3Server, credentials_checked, s3_options, stoppable_server

from sumlens import SummaryCollector, SummaryRecord, SummaryWriter
from sumlens.cli import main
from sumlens.io import RemoteStorageError, iter_events, open_storage
from sumlens.io import spool as spools
from sumlens.io.remote import FsspecStorage
from sumlens.io.spool import MANIFEST

BUCKET = "records"


@pytest.fixture(scope="module")
def server() -> Iterator[S3Server]:
    with stoppable_server() as running:
        import s3fs

        s3fs.S3FileSystem(**s3_options(running.endpoint)).mkdir(BUCKET)
        yield running


@pytest.fixture
def spool_root(tmp_path: Path) -> Path:
    return tmp_path / "spool"


def values(location: str | Path, options: dict[str, Any] | None = None) -> list[tuple]:
    """What was recorded, without wall times: ``(plugin, tag, step, value)`` pickled."""
    kwargs = {"storage_options": options} if options else {}
    events = iter_events(location, **kwargs)
    return sorted(pickle.dumps((e.plugin, e.tag, e.step, e.value)) for e in events)


def write_steps(record: SummaryRecord, steps: range, rng: np.random.Generator) -> None:
    for step in steps:
        record.add_value("scalar", "loss", 1.0 / (step + 1))
        record.add_value("histogram", "weights", rng.normal(size=256).astype(np.float32))
        if step % 5 == 0:
            record.add_value("image", "input", rng.integers(0, 255, (1, 3, 16, 16), np.uint8))
        record.record(step)


def remote_files(url: str, options: dict[str, Any]) -> list[str]:
    storage, root = open_storage(url, options)
    assert isinstance(storage, FsspecStorage)
    return sorted(storage.fs.find(root))


@pytest.mark.parametrize("protocol", ["s3", "memory"])
def test_a_record_reads_back_as_written_locally(
    server: S3Server, tmp_path: Path, spool_root: Path, protocol: str
) -> None:
    if protocol == "s3":
        url, options = f"s3://{BUCKET}/same/{uuid.uuid4().hex}", s3_options(server.endpoint)
    else:
        url, options = f"memory://sumlens-{uuid.uuid4().hex}/run", {}
    remote = {"storage_options": options, "spool_dir": spool_root}
    for where, kwargs in ((tmp_path / "local", {}), (url, remote)):
        with SummaryRecord(where, **kwargs) as record:
            write_steps(record, range(20), np.random.default_rng(0))
            record.add_value("custom_lineage_data", "lineage", {"learning_rate": 0.1})
            record.record(20)
    assert values(url, options) == values(tmp_path / "local")
    assert {e.plugin for e in iter_events(url, storage_options=options)} >= {
        "scalar", "histogram", "image", "custom_lineage_data",
    }  # fmt: skip
    assert not any(spool_root.iterdir())  # all uploaded: the spool is gone


def test_log_dir_names_the_object(server: S3Server, spool_root: Path) -> None:
    url = f"s3://{BUCKET}/named"
    options = s3_options(server.endpoint)
    with SummaryRecord(url, storage_options=options, spool_dir=spool_root) as record:
        record.add_value("scalar", "x", 1.0)
        record.record(0)
        record.flush()
        assert record.log_dir.startswith(f"{url}/events.out.events.summary.")
        assert Path(record.local_dir).parent == spool_root
        assert f"{BUCKET}/named/{record.log_dir.rpartition('/')[2]}" in remote_files(url, options)


def test_flush_uploads_and_an_interval_uploads_without_one(
    server: S3Server, spool_root: Path
) -> None:
    url = f"s3://{BUCKET}/live"
    options = s3_options(server.endpoint)
    record = SummaryRecord(url, storage_options=options, spool_dir=spool_root, upload_secs=0.2)
    try:
        record.add_value("scalar", "loss", 1.0)
        record.record(0)
        record.flush()
        assert [e.step for e in iter_events(url, storage_options=options)] == [0]
        for step in range(1, 5):
            record.add_value("scalar", "loss", 1.0)
            record.record(step)

        def steps() -> list[int] | None:
            found = [e.step for e in iter_events(url, storage_options=options)]
            return found if found == list(range(5)) else None

        wait_until(steps, timeout=30)  # the uploader's interval, no flush asked
    finally:
        record.close()


def test_parts_bound_the_objects_and_read_back_joined(
    server: S3Server, spool_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    part = 64 * 1024
    monkeypatch.setattr(spools, "PART_BYTES", part)
    url = f"s3://{BUCKET}/parts"
    options = s3_options(server.endpoint)
    rng = np.random.default_rng(1)
    with SummaryRecord(url, storage_options=options, spool_dir=spool_root) as record:
        for step in range(40):
            record.add_value("tensor", "w", rng.normal(size=2048).astype(np.float32))  # ~8 KiB
            record.record(step)
            if step % 7 == 0:
                record.flush()
        record.add_value("tensor", "big", rng.normal(size=40_000).astype(np.float32))  # > part
        record.record(40)
    storage, root = open_storage(url, options)
    sizes = {name: info.size for name, info in storage.list_tree(root)}
    summaries = [name for name in sizes if ".summary." in name and "_lineage" not in name]
    total = sum(sizes[name] for name in summaries)
    assert len(summaries) <= total // part + 2  # parts fill up: no object per upload
    assert sum(size > part for size in sizes.values()) == 1  # the one step larger than a part
    steps = [e.step for e in iter_events(url, storage_options=options) if e.plugin == "tensor"]
    assert steps == list(range(41))


def test_an_outage_is_retried_and_nothing_is_lost(
    server: S3Server, spool_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"s3://{BUCKET}/outage"
    options = s3_options(server.endpoint)
    record = SummaryRecord(url, storage_options=options, spool_dir=spool_root, upload_secs=0.2)
    try:
        write_steps(record, range(10), np.random.default_rng(2))
        record.flush()
        server.stop()
        with caplog.at_level(logging.WARNING, logger="sumlens"):
            write_steps(record, range(10, 20), np.random.default_rng(3))
            record.flush()  # the store is down: said, not raised, the records kept
            wait_until(lambda: "failed" in caplog.text, timeout=30)
            server.start()

            def uploaded() -> bool:
                steps = {e.step for e in iter_events(url, storage_options=options)}
                return steps == set(range(20))

            wait_until(uploaded, timeout=60)
            wait_until(lambda: "go through again" in caplog.text, timeout=30)
        failures = [r for r in caplog.records if "uploading to" in r.getMessage()]
        assert len(failures) == 1 and url in failures[0].getMessage()  # said once, naming it
    finally:
        if not server.running:
            server.start()
        record.close()
    local = spool_root.parent / "again"
    with SummaryRecord(local) as again:
        write_steps(again, range(10), np.random.default_rng(2))
        write_steps(again, range(10, 20), np.random.default_rng(3))
    assert values(url, options) == values(local)


def test_close_with_the_store_down_keeps_the_spool_for_sumlens_upload(
    server: S3Server, spool_root: Path, caplog: pytest.LogCaptureFixture, capsys: Any
) -> None:
    url = f"s3://{BUCKET}/closed-down"
    options = s3_options(server.endpoint)
    record = SummaryRecord(url, storage_options=options, spool_dir=spool_root, upload_secs=60)
    write_steps(record, range(10), np.random.default_rng(4))
    server.stop()
    try:
        with caplog.at_level(logging.ERROR, logger="sumlens"):
            record.close(timeout=1.0)
    finally:
        server.start()
    (left,) = spool_root.iterdir()
    said = [r.getMessage() for r in caplog.records if "could not be uploaded" in r.getMessage()]
    assert len(said) == 1 and url in said[0] and f"sumlens upload {left}" in said[0]
    manifest = (left / MANIFEST).read_text()
    assert "testing" not in manifest  # the key and secret were not written down
    flags = ["--storage-option", "key=testing", "--storage-option", "secret=testing"]
    flags += ["--to", url, "--storage-option", f"endpoint_url={server.endpoint}"]
    assert main(["upload", str(spool_root), *flags]) == 0, capsys.readouterr().err
    assert f"to {url}" in capsys.readouterr().out
    assert not left.exists()
    assert [e.step for e in iter_events(url, storage_options=options) if e.tag == "loss"] == list(
        range(10)
    )


KILLED_WRITER = """
import sys, time
from pathlib import Path
from sumlens import SummaryRecord
from sumlens.io import iter_events

url, endpoint, spool = sys.argv[1:4]
options = {"key": "testing", "secret": "testing", "endpoint_url": endpoint,
           "client_kwargs": {"region_name": "eu-west-1"}}
record = SummaryRecord(url, storage_options=options, spool_dir=spool, upload_secs=3600)
for step in range(50):
    record.add_value("scalar", "loss", float(step))
    record.record(step)
record.flush()
print("uploaded", flush=True)
for step in range(50, 80):
    record.add_value("scalar", "loss", float(step))
    record.record(step)
local = Path(record.local_dir)
while {e.step for e in iter_events(local)} != set(range(80)):  # on the spool's disk
    time.sleep(0.05)
print("spooled", flush=True)
time.sleep(600)
"""


def test_a_killed_writer_keeps_its_uploads_and_its_spool_uploads_the_rest(
    server: S3Server, tmp_path: Path, spool_root: Path, capsys: Any
) -> None:
    url = f"s3://{BUCKET}/killed"
    options = s3_options(server.endpoint)
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent(KILLED_WRITER))
    writer = subprocess.Popen(
        [sys.executable, str(script), url, server.endpoint, str(spool_root)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "uploaded"
        assert writer.stdout.readline().strip() == "spooled"
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    uploaded = sorted(e.step for e in iter_events(url, storage_options=options))
    assert uploaded == list(range(50))  # every record uploaded before the kill
    (left,) = spool_root.iterdir()
    assert main(["upload", str(left), "--storage-option", "key=testing",
                 "--storage-option", "secret=testing", "--to", url,
                 "--storage-option", f"endpoint_url={server.endpoint}"]) == 0  # fmt: skip
    assert sorted(e.step for e in iter_events(url, storage_options=options)) == list(range(80))
    assert not left.exists()


def test_a_live_writers_spool_is_left_to_it(
    server: S3Server, spool_root: Path, capsys: Any
) -> None:
    url = f"s3://{BUCKET}/alive"
    with SummaryRecord(url, storage_options=s3_options(server.endpoint), spool_dir=spool_root):
        (live,) = spool_root.iterdir()
        assert main(["upload", str(live)]) == 0
        assert "still runs" in capsys.readouterr().err
        assert live.exists()
    assert main(["upload", str(spool_root / "nothing-here")]) == 1
    assert "is not a directory" in capsys.readouterr().err


def test_a_store_that_cannot_be_written_fails_at_once_in_one_line(
    server: S3Server, spool_root: Path
) -> None:
    options = s3_options(server.endpoint)
    url = "s3://no-such-bucket/run"
    with pytest.raises(RemoteStorageError) as missing:
        SummaryRecord(url, storage_options=options, spool_dir=spool_root)
    assert str(missing.value).startswith(url) and "\n" not in str(missing.value)
    url = f"s3://{BUCKET}/refused"
    with credentials_checked(server.endpoint), pytest.raises(RemoteStorageError) as refused:
        SummaryRecord(url, storage_options=options, spool_dir=spool_root)
    assert str(refused.value).startswith(url) and "refused" in str(refused.value)
    assert not spool_root.exists() or not any(spool_root.iterdir())


def test_storage_options_for_a_local_path_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'storage_options' applies to a log_dir URL"):
        SummaryRecord(tmp_path, storage_options={"anon": True})
    with pytest.raises(ValueError, match="'upload_secs'"):
        SummaryRecord("memory://x/y", upload_secs=0)


def test_summary_writer_to_s3_reads_back_with_its_embedding(
    server: S3Server, tmp_path: Path, spool_root: Path
) -> None:
    options = s3_options(server.endpoint)
    url = f"s3://{BUCKET}/writer"
    rng = np.random.default_rng(5)
    mat = rng.normal(size=(30, 4))
    remote = {"storage_options": options, "spool_dir": spool_root}
    for where, kwargs in ((str(tmp_path / "w"), {}), (url, remote)):
        with SummaryWriter(where, **kwargs) as writer:
            for step in range(5):
                writer.add_scalar("loss", 1.0 / (step + 1), step)
                writer.add_scalars("pair", {"a": step, "b": -step}, step)
            writer.add_text("note", "hello", 0)
            writer.add_embedding(mat, metadata=[str(i) for i in range(30)], global_step=1)
    assert values(url, options) == values(tmp_path / "w")
    assert values(f"{url}/pair_a", options) == values(tmp_path / "w" / "pair_a")
    names = {os.path.relpath(p, f"{BUCKET}/writer") for p in remote_files(url, options)}
    assert {"projector_config.pbtxt", "00001/default/tensors.tsv"} <= names
    assert not any(spool_root.iterdir())


def test_summary_collector_to_s3_reads_back(server: S3Server, tmp_path: Path) -> None:
    import torch

    from sumlens import Model

    options = s3_options(server.endpoint)
    url = f"s3://{BUCKET}/collector"
    torch.manual_seed(0)
    data = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(6)]
    for where, kwargs in ((tmp_path / "c", {}), (url, {"storage_options": options})):
        torch.manual_seed(1)  # the same network and training for both
        net = torch.nn.Linear(4, 2)
        model = Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), 0.1))
        collector = SummaryCollector(where, collect_freq=1, **kwargs)
        model.train(2, data, callbacks=[collector])

    def recorded(events: Iterator[Any]) -> dict[tuple[str, str, int], bytes | None]:
        """What was recorded: scalars and histograms with their values (a graph's tag is
        its file's name, and lineage names the directory: those differ)."""
        return {
            (e.plugin, "" if e.plugin == "graph" else e.tag, e.step): (
                pickle.dumps(e.value) if e.plugin in ("scalar", "histogram") else None
            )
            for e in events
        }

    remote = recorded(iter_events(url, storage_options=options))
    assert remote == recorded(iter_events(tmp_path / "c"))
    assert {
        ("scalar", "loss/auto", 12),
        ("histogram", "weight/auto", 12),
        ("graph", "", 1),
        ("train_lineage", "train_lineage", 0),
    } <= remote.keys()
    with pytest.raises(ValueError, match="collect_landscape needs a local summary_dir"):
        SummaryCollector(
            url, collect_specified_data={"collect_landscape": {"intervals": [[1, 2, 3]]}}
        )
