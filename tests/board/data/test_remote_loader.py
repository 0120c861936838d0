"""Serving a bucket of runs: the dashboard's loader over object storage, and what it costs.

Against a real S3 API (moto's server on 127.0.0.1, :mod:`helpers.s3`) and fsspec's
``memory://``: discovery groups one recursive listing into the runs a local walk finds; a
reload of an unchanged bucket is one listing and no GET; a grown object is read by one
ranged GET of its new bytes; ``sumlens serve`` over ``s3://`` with ``--storage-option``
lists the runs and says the requests in ``/api/v1/health``, and shows what a running
writer to the bucket flushed by the second reload after the flush.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import numpy as np
import pytest
from helpers.board import free_port, get_json, route_client, wait_until, write_run
from helpers.s3 import bucket_server, s3_options

from sumlens import SummaryRecord
from sumlens.board.data.discover import MAX_DEPTH, Walker
from sumlens.board.data.loader import Loader
from sumlens.board.projector_config import CONFIG_FILE
from sumlens.board.settings import BoardSettings, BoardSettingsError
from sumlens.cli import main
from sumlens.io.remote import open_storage

RUNS = 100
BUCKET = "runs"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with bucket_server(BUCKET) as url:
        yield url


@pytest.fixture(scope="module")
def local_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100 tiny runs (in groups, one at the top, one of two files), a projector config and
    a file that is no event file: the local copy of what is uploaded."""
    base = tmp_path_factory.mktemp("local") / "team"
    write_run(base, range(1, 4))  # the run ./
    for i in range(RUNS - 1):
        write_run(
            base / f"group{i % 3}" / f"run{i:03d}", range(1, 6), value=lambda t, s, i=i: i + s
        )
    write_run(base / "group0" / "run000", range(6, 9), fmt="tensorboard")
    (base / "group1" / "run001" / CONFIG_FILE).write_text('embeddings { tensor_name: "e" }\n')
    (base / "group2" / "notes.txt").write_text("no event file\n")
    return base


@pytest.fixture(scope="module")
def bucket(endpoint: str, local_runs: Path) -> str:
    """The runs uploaded to ``s3://runs/team``; its URL."""
    fs = fsspec.filesystem("s3", **s3_options(endpoint))
    fs.put(f"{local_runs}/", f"{BUCKET}/team/", recursive=True)
    return f"s3://{BUCKET}/team"


def _layout(walker: Walker) -> list[tuple[str, list[str], str | None]]:
    """Each run found: its id, its files in reading order and its projector config."""
    found = walker.walk()
    return [
        (run.id, [f.name for f in run.files], run.projector and run.projector.name)
        for run in found.runs.values()
    ]


def _points(loader: Loader) -> dict[tuple[str, int | None, str], list[tuple[Any, ...]]]:
    return {
        (run["id"], ref.rank, ref.tag): loader.points(ref).tolist()
        for run in loader.runs()
        for ref in loader.series(run["id"])
    }


def test_one_listing_finds_the_runs_a_local_walk_finds(
    bucket: str, endpoint: str, local_runs: Path
) -> None:
    storage, root = open_storage(bucket, s3_options(endpoint))
    local = _layout(Walker(local_runs))
    before = storage.requests.snapshot()
    remote = _layout(Walker(Path(root), storage))
    after = storage.requests.snapshot()
    assert remote == local
    assert len(remote) == RUNS
    assert {name: after[name] - before[name] for name in after} == {
        "listings": 1,
        "stats": 0,
        "gets": 0,
        "bytes": 0,
        "puts": 0,
        "bytes_put": 0,
    }


def test_bounds_cut_the_listing_as_they_cut_the_walk(tmp_path: Path) -> None:
    """Depth and run bounds, over ``memory://`` (the same grouping without a server)."""
    fs = fsspec.filesystem("memory")
    names = [
        "a/events.out.tfevents.1.h",
        "a/b/events.out.tfevents.1.h",
        "c/events.out.tfevents.1.h",
    ]
    names.append("/".join(["d"] * (MAX_DEPTH + 1)) + "/events.out.tfevents.1.h")
    for name in names:
        fs.pipe(f"/bounds/{name}", b"x")
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    storage, root = open_storage("memory://bounds")
    for max_runs in (2, 10):
        remote = Walker(Path(root), storage, max_runs=max_runs).walk()
        local = Walker(tmp_path, max_runs=max_runs).walk()
        assert list(remote.runs) == list(local.runs)
        assert remote.truncated and local.truncated


def test_an_unchanged_bucket_costs_one_listing_and_no_get(
    bucket: str, endpoint: str, local_runs: Path, tmp_path: Path
) -> None:
    remote = Loader(bucket, tmp_path / "remote", storage_options=s3_options(endpoint))
    here = Loader(local_runs, tmp_path / "local")
    try:
        remote.poll()
        here.poll()
        assert len(remote.runs()) == RUNS
        assert [run["id"] for run in remote.runs()] == [run["id"] for run in here.runs()]
        assert _points(remote) == _points(here)
        cold = remote.requests()
        assert cold is not None and cold["last_reload"] is not None
        assert cold["last_reload"]["listings"] == 1
        remote.poll()
        again = remote.requests()
        assert again is not None
        assert again["last_reload"] == {
            "listings": 1,
            "stats": 0,
            "gets": 0,
            "bytes": 0,
            "puts": 0,
            "bytes_put": 0,
        }
        assert remote.status()["polling_reason"] is not None
        assert "object storage" in remote.status()["polling_reason"]
    finally:
        remote.stop()
        here.stop()


def _grown_file(directory: Path) -> tuple[str, bytes, bytes]:
    """One event file as a writer left it after 10 steps, and after 20: its name and both."""
    with SummaryRecord(directory) as record:
        for step in range(1, 21):
            record.add_value("scalar", "loss", 1.0 / step)
            record.record(step)
            if step == 10:
                record.flush()
                (path,) = directory.iterdir()
                first = path.read_bytes()
    return path.name, first, path.read_bytes()


def test_a_grown_object_is_read_by_one_ranged_get_of_its_new_bytes(
    endpoint: str, tmp_path: Path
) -> None:
    name, first, grown = _grown_file(tmp_path / "run")
    fs = fsspec.filesystem("s3", **s3_options(endpoint))
    key = f"{BUCKET}/grow/run/{name}"
    fs.pipe(key, first)
    loader = Loader(f"s3://{BUCKET}/grow", tmp_path / "ws", storage_options=s3_options(endpoint))
    try:
        loader.poll()
        (ref,) = loader.series("./run")
        assert loader.points(ref)["step"].tolist() == list(range(1, 11))
        fs.pipe(key, grown)  # a writer on object storage uploads the whole file again
        loader.poll()
        used = loader.requests()
        assert used is not None
        assert used["last_reload"] == {
            "listings": 1,
            "stats": 0,
            "gets": 1,
            "bytes": len(grown) - len(first),
            "puts": 0,
            "bytes_put": 0,
        }
        (ref,) = loader.series("./run")
        points = loader.points(ref)
        assert points["step"].tolist() == list(range(1, 21))
        np.testing.assert_array_equal(points["value"], 1.0 / np.arange(1, 21, dtype=np.float32))
        stamp = fs.info(key)["LastModified"]

        def uploaded_again() -> bool:
            """Upload the same bytes; whether the object now has a later time (seconds)."""
            fs.pipe(key, grown)
            return bool(fs.info(key, refresh=True)["LastModified"] > stamp)

        wait_until(uploaded_again, timeout=10, interval=0.2)
        loader.poll()  # uploaded again, unchanged: a new time, no new byte, nothing read
        used = loader.requests()
        assert used is not None and used["last_reload"]["gets"] == 0
        assert loader.points(ref)["step"].tolist() == list(range(1, 21))
    finally:
        loader.stop()


def test_serve_lists_a_bucket_and_says_its_requests(
    bucket: str, endpoint: str, tmp_path: Path
) -> None:
    options = [f"--storage-option={key}={value}" for key, value in _cli_options(endpoint)]
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "sumlens", "serve", "--summary-base-dir", bucket, f"--port={port}",
         "--workspace", str(tmp_path), "--reload-interval=0.2", *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/api/v1"

        def reloaded_unchanged() -> dict[str, Any] | None:
            """The health answer once a reload after the first found nothing new."""
            health = get_json(f"{url}/health")
            last = health and health["requests"] and health["requests"]["last_reload"]
            return health if last and last["gets"] == 0 else None

        health = wait_until(reloaded_unchanged, timeout=60)
        assert health["base_dir"] == bucket
        assert health["requests"]["last_reload"]["listings"] == 1
        assert health["requests"]["total"]["gets"] >= RUNS
        listed = get_json(f"{url}/runs")
        assert listed is not None and len(listed["runs"]) == RUNS
        assert all(run["status"] == "ready" for run in listed["runs"])
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=60)
    assert "Traceback" not in stderr


def test_serve_shows_a_running_writers_flush_within_two_reloads(
    endpoint: str, tmp_path: Path
) -> None:
    base = f"s3://{BUCKET}/live"
    options = [f"--storage-option={key}={value}" for key, value in _cli_options(endpoint)]
    writer = SummaryRecord(f"{base}/writer", storage_options=s3_options(endpoint),
                           spool_dir=tmp_path / "spool", upload_secs=3600)  # fmt: skip
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "sumlens", "serve", "--summary-base-dir", base, f"--port={port}",
         "--workspace", str(tmp_path / "ws"), "--reload-interval=0.3", *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/api/v1"

    def steps() -> list[int]:
        body = get_json(f"{url}/scalars?run=./writer&tag=loss")
        return [] if not body or not body["series"] else body["series"][0]["step"]

    def reloads() -> int:
        health = get_json(f"{url}/health")
        return -1 if health is None else health["reloads"]

    try:
        wait_until(lambda: reloads() >= 1, timeout=60)
        for step in range(3):
            writer.add_value("scalar", "loss", float(step))
            writer.record(step)
            writer.flush()  # uploaded when it returns
            flushed_at = reloads()
            # a reload under way may have listed the bucket before the upload; the next
            # one starts after it
            wait_until(lambda at=flushed_at: reloads() >= at + 2, timeout=60)
            assert steps() == list(range(step + 1))
    finally:
        writer.close()
        server.terminate()
        _, stderr = server.communicate(timeout=60)
    assert "Traceback" not in stderr


def _cli_options(endpoint: str) -> list[tuple[str, str]]:
    """:func:`s3_options` as ``--storage-option`` values (JSON where not a plain string)."""
    import json

    return [
        (key, value if isinstance(value, str) else json.dumps(value))
        for key, value in s3_options(endpoint).items()
    ]


def test_the_app_over_a_bucket_shows_its_runs_and_requests(
    bucket: str, endpoint: str, tmp_path: Path
) -> None:
    settings = BoardSettings.create(
        bucket, workspace=tmp_path, reload_interval=0.1, storage_options=s3_options(endpoint)
    )
    assert settings.base_dir == bucket
    assert BoardSettings.from_json(settings.to_json()) == settings
    with route_client(settings=settings) as client:
        wait_until(lambda: client.get("/api/v1/runs").json()["loading"] is False, timeout=60)
        assert len(client.get("/api/v1/runs").json()["runs"]) == RUNS
        requests = client.get("/api/v1/health").json()["requests"]
        assert requests["total"]["listings"] >= 1 and requests["total"]["gets"] >= RUNS


def test_a_storage_option_that_is_no_pair_fails_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["start", "--summary-base-dir", "s3://b/t", "--storage-option", "anon"]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("sumlens start: error: --storage-option 'anon' is not KEY=VALUE")


def test_a_bucket_that_cannot_be_served_fails_in_one_line(endpoint: str, tmp_path: Path) -> None:
    with pytest.raises(BoardSettingsError, match=r"s3://no-such-bucket/team") as missing:
        BoardSettings.create("s3://no-such-bucket/team", storage_options=s3_options(endpoint))
    assert "\n" not in str(missing.value)
    with pytest.raises(BoardSettingsError, match=r"--storage-option .* local folder"):
        BoardSettings.create(tmp_path, storage_options={"anon": True})
    with pytest.raises(BoardSettingsError, match=r"does not exist"):
        BoardSettings.create("memory://nothing-here", storage_options={})
    # a prefix of a bucket that holds nothing yet is served: runs appear as writers upload
    empty = BoardSettings.create(f"s3://{BUCKET}/nothing-yet", storage_options=s3_options(endpoint))
    assert empty.base_dir == f"s3://{BUCKET}/nothing-yet"
