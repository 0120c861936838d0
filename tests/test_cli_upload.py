"""``sumlens upload`` sends only what a writer made, and only where the user agreed (issue 40,
item 14).

A spool directory is crafted here as anyone able to write it could: the event files a real
writer made, beside a link to a file outside, a second name of an outside file, a pipe, a
linked directory and a file of another name, under a manifest that may name another bucket
or endpoint. Only the writer's files reach the store (moto's S3 server); the rest is named
and kept. The destination is shown and asked for on a terminal (a real pseudo-terminal
here), and without one nothing is sent unless ``--to`` names it and every option choosing
the endpoint comes from the command line.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.s3 import make_bucket, moto_server, s3_options

from sumlens import SummaryRecord
from sumlens.cli import main
from sumlens.io.spool import MANIFEST, read_manifest, upload_target

BUCKET = "records"
OTHER = "elsewhere"
SECRET = b"root:x:0:0:the password file's bytes\n"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with moto_server() as url:
        make_bucket(url, BUCKET)
        make_bucket(url, OTHER)
        yield url


def objects(endpoint: str, bucket: str) -> dict[str, bytes]:
    import s3fs

    fs = s3fs.S3FileSystem(**s3_options(endpoint))
    fs.invalidate_cache()
    return {path: fs.cat_file(path) for path in fs.find(bucket)}


def make_spool(directory: Path, url: str, options: dict[str, Any] | None = None) -> list[str]:
    """A spool left by a writer on another host: the files a real record wrote, and a
    manifest; the names of the event files."""
    with SummaryRecord(directory, file_format="tensorboard") as record:
        record.add_value("scalar", "loss", 0.5)
        record.record(1)
    manifest = {"url": url, "options": options or {}, "left_out": [], "pid": 1, "host": "gone"}
    (directory / MANIFEST).write_text(json.dumps(manifest))
    return sorted(p.name for p in directory.iterdir() if p.name != MANIFEST)


def credentials(endpoint: str) -> list[str]:
    return [
        "--storage-option", "key=testing",
        "--storage-option", "secret=testing",
        "--storage-option", f"endpoint_url={endpoint}",
    ]  # fmt: skip


def test_only_the_files_a_writer_made_are_uploaded(
    endpoint: str, tmp_path: Path, capsys: Any
) -> None:
    secret = tmp_path / "passwd"
    secret.write_bytes(SECRET)
    outside = tmp_path / "outside"
    (outside / "tensor").mkdir(parents=True)
    (outside / "tensor" / "x_1.npy").write_bytes(SECRET)
    spool = tmp_path / "spool"
    spool.mkdir()
    (written,) = make_spool(spool, f"s3://{BUCKET}/run")
    crafted = {
        "events.out.tfevents.1700000000.h.1.0": "a symbolic link",  # to /etc/passwd's like
        "events.out.tfevents.1700000001.h.1.0": "a file with 2 names (hard links)",
        "events.out.tfevents.1700000002.h.1.0": "not a regular file",
        "export_1": "a symbolic link",  # a directory elsewhere, with an export's layout
        "notes.txt": "not a file a sumlens writer makes",
    }
    (spool / "events.out.tfevents.1700000000.h.1.0").symlink_to(secret)
    os.link(secret, spool / "events.out.tfevents.1700000001.h.1.0")
    os.mkfifo(spool / "events.out.tfevents.1700000002.h.1.0")
    (spool / "export_1").symlink_to(outside, target_is_directory=True)
    (spool / "notes.txt").write_bytes(SECRET)

    status = main(["upload", str(spool), "--to", f"s3://{BUCKET}/", *credentials(endpoint)])
    err = capsys.readouterr().err
    assert status == 1, err  # something was refused: said, and the spool is kept
    assert "5 file(s) no sumlens writer makes are not uploaded" in err
    shown = sorted(crafted.items())[:3]
    assert all(f"{name} ({why})" in err for name, why in shown), err
    stored = objects(endpoint, BUCKET)
    assert list(stored) == [f"{BUCKET}/run/{written}"]
    assert all(SECRET not in data for data in stored.values())
    assert sorted(p.name for p in spool.iterdir()) == sorted([MANIFEST, *crafted])
    assert secret.read_bytes() == SECRET  # nothing outside was touched


def test_without_a_terminal_nothing_goes_where_only_the_manifest_says(
    endpoint: str, tmp_path: Path, capsys: Any
) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    make_spool(spool, f"s3://{OTHER}/stolen")
    assert main(["upload", str(spool), *credentials(endpoint)]) == 1
    err = capsys.readouterr().err
    assert f"would go to s3://{OTHER}/stolen; nothing uploaded" in err
    assert f"--to s3://{OTHER}/stolen" in err  # how to say yes without a terminal
    assert main(["upload", str(spool), "--to", f"s3://{BUCKET}", *credentials(endpoint)]) == 1
    err = capsys.readouterr().err
    assert f"which --to s3://{BUCKET} does not name; nothing uploaded" in err
    assert main(["upload", str(spool), "--to", f"s3://{OTHER}/sto", *credentials(endpoint)]) == 1
    capsys.readouterr()
    assert objects(endpoint, OTHER) == {}
    assert spool.exists()


def test_an_endpoint_only_the_manifest_names_must_be_confirmed(
    endpoint: str, tmp_path: Path, capsys: Any
) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    url = f"s3://{BUCKET}/confirmed"
    make_spool(spool, url, {"endpoint_url": endpoint, "client_kwargs": {"region_name": "x"}})
    keys = ["--storage-option", "key=testing", "--storage-option", "secret=testing"]
    assert main(["upload", str(spool), "--to", url, *keys]) == 1
    err = capsys.readouterr().err
    assert f"endpoint_url='{endpoint}', from the spool's manifest" in err
    assert f"--storage-option endpoint_url={endpoint}" in err
    assert not any("confirmed" in name for name in objects(endpoint, BUCKET))
    flags = [*keys, "--storage-option", f"endpoint_url={endpoint}"]
    assert main(["upload", str(spool), "--to", url, *flags]) == 0, capsys.readouterr().err
    assert any(name.startswith(f"{BUCKET}/confirmed/") for name in objects(endpoint, BUCKET))
    assert not spool.exists()


def test_nothing_a_manifest_names_is_contacted_before_the_user_agreed(
    tmp_path: Path, capsys: Any
) -> None:
    """A crafted manifest names a host (an FTP URL, whose file system connects as soon as
    it is made, or an S3 endpoint): without the user's yes no connection reaches it, and
    what is refused is one line, not a traceback."""
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    for index, (url, options) in enumerate(
        [
            (f"ftp://127.0.0.1:{port}/run", {}),
            (f"s3://{BUCKET}/run", {"endpoint_url": f"http://127.0.0.1:{port}"}),
        ]
    ):
        spool = tmp_path / f"spool{index}"
        spool.mkdir()
        make_spool(spool, url, options)
        assert main(["upload", str(spool), "--to", f"s3://{BUCKET}/run"]) == 1
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err and spool.exists()
        if url.startswith("ftp"):
            assert f"url={url!r}: sumlens upload sends spools only to object storage" in err
        with pytest.raises(TimeoutError):  # nobody knocked
            listener.accept()
    listener.close()


def test_a_connection_the_manifest_leaves_unchecked_must_be_confirmed() -> None:
    """A manifest turning TLS or its check off is part of where the files go: the user
    must give it too, or be asked."""
    url = f"s3://{BUCKET}/run"
    for options in ({"use_ssl": False}, {"client_kwargs": {"verify": False}}):
        manifest = {"url": url, "options": options, "pid": 1, "host": "gone"}
        target = upload_target(manifest, {})
        assert target.from_manifest and not target.matches(url)
        assert upload_target(manifest, options).matches(url)


def test_a_folder_of_spools_to_several_places_is_said_per_spool(
    endpoint: str, tmp_path: Path, capsys: Any
) -> None:
    root = tmp_path / "spools"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    make_spool(root / "a", f"s3://{BUCKET}/team/a")
    make_spool(root / "b", f"s3://{OTHER}/b")
    assert main(["upload", str(root), "--to", f"s3://{BUCKET}/team", *credentials(endpoint)]) == 1
    captured = capsys.readouterr()
    assert f"to s3://{BUCKET}/team/a" in captured.out
    assert f"{root / 'b'}: its files go to s3://{OTHER}/b" in captured.err
    assert not (root / "a").exists() and (root / "b").exists()
    assert objects(endpoint, OTHER) == {}


def read_until(fd: int, wanted: str, timeout: float = 120.0) -> str:
    """What ``fd`` gives until it holds ``wanted`` (fails after ``timeout`` seconds)."""
    text = ""
    deadline = time.monotonic() + timeout
    while wanted not in text:
        left = deadline - time.monotonic()
        assert left > 0, f"no {wanted!r} in {text!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 4096)
            assert chunk, f"closed before {wanted!r}: {text!r}"
            text += chunk.decode()
    return text


@pytest.mark.parametrize("answer", ["y", "n"])
def test_on_a_terminal_the_destination_is_shown_and_asked(
    endpoint: str, tmp_path: Path, answer: str
) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    url = f"s3://{BUCKET}/asked-{answer}"
    (written,) = make_spool(spool, url, {"endpoint_url": endpoint})
    keys = ["--storage-option", "key=testing", "--storage-option", "secret=testing"]
    terminal, child_end = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "sumlens", "upload", str(spool), *keys],
        stdin=child_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    os.close(child_end)
    try:
        assert child.stderr is not None
        prompt = read_until(child.stderr.fileno(), "[y/N] ")
        assert "1 file(s)" in prompt and f"go to {url} (endpoint_url='{endpoint}'" in prompt
        os.write(terminal, f"{answer}\n".encode())
        out, _ = child.communicate(timeout=120)
    finally:
        child.kill()
        os.close(terminal)
    stored = [name for name in objects(endpoint, BUCKET) if f"asked-{answer}" in name]
    if answer == "y":
        assert child.returncode == 0 and f"to {url}" in out.decode()
        assert stored == [f"{BUCKET}/asked-y/{written}"]
    else:
        assert child.returncode == 1 and stored == [] and spool.exists()


def test_to_names_a_directory_at_a_path_boundary() -> None:
    target = upload_target({"url": "s3://records/team/run"}, {})
    assert target.matches("s3://records/team/run") and target.matches("s3://records/team/")
    assert target.matches("s3://records")
    assert not target.matches("s3://records/te") and not target.matches("s3://rec")
    assert not target.matches(None)
    chosen = upload_target({"url": "s3://records/run", "options": {"profile": "p"}}, {})
    assert chosen.from_manifest == {"profile": "p"} and not chosen.matches("s3://records/run")
    given = upload_target(
        {"url": "s3://records/run", "options": {"profile": "p"}}, {"profile": "q"}
    )
    assert given.options == {"profile": "q"} and given.matches("s3://records/run")


def test_a_manifest_that_is_not_one_is_refused(tmp_path: Path) -> None:
    (tmp_path / "link").mkdir()
    (tmp_path / "link" / MANIFEST).symlink_to("/dev/zero")  # never read: not a regular file
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / MANIFEST).write_text(json.dumps({"url": "s3://b/r", "x": "y" * 2**21}))
    (tmp_path / "options").mkdir()
    (tmp_path / "options" / MANIFEST).write_text(json.dumps({"url": "s3://b/r", "options": "x"}))
    for name, why in (("link", "not a readable"), ("big", "larger than"), ("options", "'options'")):
        with pytest.raises(ValueError, match=why):
            read_manifest(tmp_path / name)
