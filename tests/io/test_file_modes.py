"""Who may read what the writers make: the modes the umask leaves by default, as torch's
writer and ``os.makedirs``/``open`` make them, and MindSpore's owner-only modes with
``owner_only=True``.

A dashboard under a service account, teammates on a shared volume and a group-readable
NFS must read the logs; so every writer (SummaryRecord in both formats, locally and in the
spool of a URL, SummaryWriter, ``sumlens.init``/``log``, SummaryCollector with its
landscape files, the ``.npy`` exports) makes directories ``0o777 & ~umask`` and files
``0o666 & ~umask`` and leaves them so when closed. Checkpoints keep their own rule: 0400.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from helpers.file_modes import modes_below, umask, unreadable_as_nobody
from helpers.unprivileged import shared_dir
from torch import nn
from torch.utils.tensorboard import SummaryWriter as TorchSummaryWriter

import sumlens
from sumlens import SummaryCollector, SummaryRecord, SummaryWriter
from sumlens.io.naming import file_kind
from sumlens.io.spool import MANIFEST
from sumlens.landscape import SummaryLandscape

LANDSCAPE = {
    "landscape_size": 3,
    "unit": "step",
    "num_samples": 4,
    "create_landscape": {"train": True, "result": False},
    "intervals": [[1, 2, 3]],
}


def record_mindspore(run: Path, **options: Any) -> None:
    with SummaryRecord(run, export_options={"tensor_format": "npy"}, **options) as record:
        record.add_value("scalar", "loss", 0.5)
        record.add_value("tensor", "weights", np.arange(4.0))
        record.record(1)


def record_tensorboard(run: Path, **options: Any) -> None:
    with SummaryRecord(run, file_format="tensorboard", **options) as record:
        record.add_value("scalar", "loss", 0.5)
        record.record(1)


def summary_writer(run: Path, **options: Any) -> None:
    with SummaryWriter(run, **options) as writer:
        writer.add_scalar("loss", 0.5, 1)
        writer.add_scalars("pair", {"a": 1.0, "b": 2.0}, 1)  # sub-writers: runs of their own


def log_api(run: Path, **options: Any) -> None:
    sumlens.init(run, **options)
    sumlens.log({"loss": 0.5, "note": "text"})
    sumlens.finish()


def collector(run: Path, **options: Any) -> None:
    torch.manual_seed(0)
    network = nn.Linear(4, 2)
    model = sumlens.Model(
        network, nn.CrossEntropyLoss(), torch.optim.SGD(network.parameters(), lr=0.1)
    )
    data = [(torch.randn(2, 4), torch.tensor([0, 1])) for _ in range(3)]
    callback = SummaryCollector(
        run,
        collect_freq=1,
        collect_specified_data={"collect_landscape": LANDSCAPE, "collect_metric": True},
        keep_default_action=False,
        **options,
    )
    model.train(1, data, callbacks=[callback])


WRITERS: dict[str, Callable[..., None]] = {
    "record-mindspore": record_mindspore,
    "record-tensorboard": record_tensorboard,
    "summary-writer": summary_writer,
    "log": log_api,
    "collector": collector,
}


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder other users may enter (pytest's own are root's, mode 0700)."""
    with shared_dir("sumlens-modes-") as path:
        yield path


def split(modes: dict[str, int], base: Path) -> tuple[set[int], set[int], set[int]]:
    """The modes of the directories, the checkpoints and the other files below ``base``."""
    dirs, ckpts, files = set(), set(), set()
    for relative, mode in modes.items():
        path = base / relative
        if path.is_dir():
            dirs.add(mode)
        elif path.suffix == ".ckpt":
            ckpts.add(mode)
        else:
            files.add(mode)
    return dirs, ckpts, files


@pytest.mark.parametrize("name", list(WRITERS))
@pytest.mark.parametrize("mask", [0o022, 0o027])
def test_every_writer_follows_the_umask(shared: Path, name: str, mask: int) -> None:
    run = shared / "run"
    with umask(mask):
        WRITERS[name](run)
    modes = modes_below(run)
    assert any(file_kind(Path(p).name) for p in modes), modes  # event files were written
    dirs, ckpts, files = split(modes, run)
    assert dirs == {0o777 & ~mask}, modes
    assert files == {0o666 & ~mask}, modes  # also once closed: never made read-only
    if name == "collector":  # the landscape weights and train_metadata.json
        assert "ckpt_dir/train_metadata.json" in modes
        assert ckpts == {0o400}, modes  # checkpoints keep their rule, whatever the umask
    if name == "record-mindspore":
        assert any(p.endswith(".npy") for p in modes), modes


@pytest.mark.parametrize("name", list(WRITERS))
def test_owner_only_gives_mindspores_modes(tmp_path: Path, name: str) -> None:
    run = tmp_path / "run"
    with umask(0o022):
        WRITERS[name](run, owner_only=True)
    modes = modes_below(run)
    dirs, ckpts, files = split(modes, run)
    assert dirs == {0o700}, modes
    assert files | ckpts == {0o400}, modes


def test_owner_only_files_are_0600_while_open(tmp_path: Path) -> None:
    with umask(0o022):
        writer = SummaryWriter(tmp_path / "run", owner_only=True)
        writer.add_scalar("loss", 0.5, 1)
        writer.flush()
        (path,) = (tmp_path / "run").iterdir()
        assert (path.stat().st_mode & 0o777) == 0o600
        writer.close()
    assert (path.stat().st_mode & 0o777) == 0o400


@pytest.mark.parametrize("owner_only", [False, True])
def test_the_projectors_files_follow_the_same_rule(tmp_path: Path, owner_only: bool) -> None:
    """``add_embedding``'s directories and files (vectors, labels, thumbnails, the config)
    get the run's modes: the umask's, or only their owner's with ``owner_only`` (0600: they
    are rewritten as embeddings are added)."""
    run = tmp_path / "run"
    with umask(0o022), SummaryWriter(run, owner_only=owner_only) as writer:
        writer.add_embedding(torch.rand(4, 3), metadata=list("abcd"),
                             label_img=torch.rand(4, 3, 8, 8), tag="emb")  # fmt: skip
        writer.add_embedding(torch.rand(4, 3), metadata=list("wxyz"), tag="emb")  # rewritten
    modes = modes_below(run)
    projector = {path: mode for path, mode in modes.items() if not file_kind(Path(path).name)}
    assert {"00000", "00000/emb", "00000/emb/sprite.png", "projector_config.pbtxt"} <= set(
        projector
    ), modes
    dirs, _, files = split(projector, run)
    assert dirs == ({0o700} if owner_only else {0o755}), modes
    assert files == ({0o600} if owner_only else {0o644}), modes


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_the_modes_are_torchs_writers(tmp_path: Path, mask: int) -> None:
    with umask(mask):
        torch_writer = TorchSummaryWriter(tmp_path / "torch")
        torch_writer.add_scalar("loss", 0.5, 1)
        torch_writer.close()
        summary_writer(tmp_path / "ours")
    theirs = modes_below(tmp_path / "torch")
    ours = modes_below(tmp_path / "ours")
    assert ours["."] == theirs["."]
    event_modes = {m for p, m in ours.items() if file_kind(Path(p).name) == "tensorboard"}
    assert event_modes == {m for p, m in theirs.items() if p != "."}


def test_another_user_reads_what_the_writers_make(shared: Path) -> None:
    """The service-account dashboard: ``nobody`` lists the runs and reads every file."""
    with umask(0o022):
        summary_writer(shared / "writer")
        record_mindspore(shared / "record")
    paths = [shared / p for p in ("writer", "record")]
    paths += [p for root in list(paths) for p in root.rglob("*")]
    assert unreadable_as_nobody(paths) == []


def test_a_group_reads_under_umask_027_and_others_do_not(shared: Path) -> None:
    with umask(0o027):
        summary_writer(shared / "run")
    files = [p for p in (shared / "run").rglob("*") if p.is_file()]
    everything = [shared / "run", *files]
    group = (shared / "run").stat().st_gid
    assert unreadable_as_nobody(everything, group=group) == []  # a teammate of the group
    refused = unreadable_as_nobody(everything)  # anyone else: neither the listing nor a file
    assert [line.split(" ", 1)[0] for line in refused] == list(map(os.fspath, everything))


@pytest.mark.parametrize(("owner_only", "modes"), [(False, (0o755, 0o644)), (True, (0o700, 0o600))])
def test_the_spool_of_a_url_follows_the_same_rule(
    tmp_path: Path, owner_only: bool, modes: tuple[int, int]
) -> None:
    """A record to object storage writes its files in a local spool, with the modes a
    local run gets; the files its writer closed (rotated out) leave the spool once
    uploaded, told by the writer rather than by a read-only mode."""
    url = f"memory://sumlens-{uuid.uuid4().hex}/run"
    spool_root = tmp_path / "spool"
    with umask(0o022):
        record = SummaryRecord(
            url, spool_dir=spool_root, upload_secs=3600, max_file_size=400, owner_only=owner_only
        )
        try:
            (spool,) = spool_root.iterdir()
            for step in range(12):  # several files: each rotated one is closed
                record.add_value("tensor", "t", np.zeros(20, dtype=np.float32))
                record.record(step)
            record.flush()  # uploads, and removes what is closed and uploaded
            left = modes_below(spool)
            assert left["."] == modes[0]
            assert left[MANIFEST] == modes[1]
            events = [p for p in left if file_kind(p) == "summary"]
            assert len(events) == 1, left  # the open file only
            assert left[events[0]] == modes[1]
        finally:
            record.close()
    assert not spool.exists()  # all uploaded


@pytest.mark.parametrize(
    ("make", "owner"),
    [
        (lambda d: SummaryRecord(d, owner_only="yes"), "SummaryRecord"),
        (lambda d: SummaryWriter(d, owner_only=1), "SummaryWriter"),
        (lambda d: SummaryCollector(d, owner_only="yes"), "SummaryCollector"),
        (lambda d: SummaryLandscape(d, owner_only=None), "SummaryLandscape"),
    ],
    ids=["record", "writer", "collector", "landscape"],
)
def test_owner_only_must_be_a_bool(tmp_path: Path, make: Callable[[Path], Any], owner: str) -> None:
    with pytest.raises(TypeError, match=f"For '{owner}', the argument 'owner_only' must be"):
        make(tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_the_landscapes_directories_follow_the_rule(tmp_path: Path) -> None:
    with umask(0o022):
        SummaryLandscape(tmp_path / "a")
        SummaryLandscape(tmp_path / "b", owner_only=True)
    assert (tmp_path / "a" / "ckpt_dir").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "b" / "ckpt_dir").stat().st_mode & 0o777 == 0o700


def test_an_adapter_passes_owner_only_on_to_its_writer(tmp_path: Path) -> None:
    from sumlens.integrations.lightning import SumlensLogger

    logger = SumlensLogger(tmp_path, owner_only=True)
    logger.log_metrics({"loss": 0.5}, step=1)
    logger.finalize("success")
    modes = modes_below(Path(logger.log_dir))
    assert modes["."] == 0o700
    assert {m for p, m in modes.items() if file_kind(p) == "tensorboard"} == {0o400}, modes
