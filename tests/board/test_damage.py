"""Damage the run list shows: crafted values, and files or directories that cannot be read.

Real files, the real loader and the real server on 127.0.0.1. A crafted value is counted
in its run's damage when it is indexed if its shape, counts or sizes give it away, and
when it is read back otherwise; either way its route answers a clear 422, never a 404
"its file changed". Files and directories that cannot be read: permissions do not stop
root, as whom the tests run, so those checks run in a child process as the unprivileged
user ``nobody`` (as whoever runs them, when that is not root), over files it owns and
then makes unreadable with chmod 000.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from helpers import unprivileged
from helpers.board import free_port, get_json, running_server, wait_until, write_run
from helpers.damage_data import CRAFTED_CORRUPT, write_crafted_run

from sumlens import SummaryRecord
from sumlens.board.data.loader import Loader
from sumlens.board.settings import BoardSettings


@pytest.mark.parametrize("engine", ["python", "numba"])
def test_crafted_values_are_counted_when_indexed(tmp_path: Path, engine: str) -> None:
    write_crafted_run(tmp_path / "base" / "crafted")
    loader = Loader(tmp_path / "base", tmp_path / "ws", engine=engine)  # type: ignore[arg-type]
    loader.poll()
    (run,) = loader.runs()
    assert run["damage"]["corrupt_records"] == CRAFTED_CORRUPT
    assert run["damage"]["damaged_values"] == 0
    (tensors,) = loader.samples("./crafted", "tensor", "t")
    assert tensors.items["step"].tolist() == [1, 5, 6, 7]
    (images,) = loader.samples("./crafted", "image", "img")
    assert images.items["step"].tolist() == [1, 5, 6, 7]
    loader.stop()


def test_a_damaged_value_is_a_422_and_counted_once(tmp_path: Path) -> None:
    write_crafted_run(tmp_path / "base" / "crafted")
    settings = BoardSettings.create(tmp_path / "base", port=free_port(), workspace=tmp_path / "ws")
    with running_server(settings) as url:
        wait_until(
            lambda: (get_json(url + "/api/v1/runs") or {"loading": True})["loading"] is False
        )
        for _ in range(2):
            with pytest.raises(urllib.error.HTTPError) as raised:
                urllib.request.urlopen(f"{url}/api/v1/tensor?run=./crafted&tag=t&step=5")
            assert raised.value.code == 422
            detail = json.loads(raised.value.read())["detail"]
            assert "'t' at step 5 of run './crafted' is damaged" in detail and "int8" in detail
        (run,) = get_json(url + "/api/v1/runs")["runs"]
        assert run["damage"]["damaged_values"] == 1  # counted once, however often asked
        (series,) = get_json(f"{url}/api/v1/histograms?run=./crafted&tag=h")["series"]
        assert [h["step"] for h in series["histograms"]] == [1, 5, 6] and series["unreadable"] == 1
        assert get_json(f"{url}/api/v1/tensor?run=./crafted&tag=t&step=6")["values"] == [1.0, 6.0]


def test_the_mindinsight_routes_leave_out_what_the_readers_refuse(tmp_path: Path) -> None:
    """MindInsight's routes showed a width of -5 and negative counts as they were."""
    write_crafted_run(tmp_path / "base" / "crafted")
    settings = BoardSettings.create(tmp_path / "base", port=free_port(), workspace=tmp_path / "ws")
    with running_server(settings) as url:
        wait_until(
            lambda: (get_json(url + "/api/v1/runs") or {"loading": True})["loading"] is False
        )
        mindinsight = f"{url}/v1/mindinsight/datavisual"
        images = get_json(f"{mindinsight}/image/metadata?train_id=./crafted&tag=img/image")
        histograms = get_json(f"{mindinsight}/histograms?train_id=./crafted&tag=h/histogram")
    # a record one of whose values is refused shows nothing, as in MindInsight
    assert [(m["step"], m["width"]) for m in images["metadatas"]] == [(1, 4), (5, 4), (6, 4)]
    steps = [h["step"] for h in histograms["histograms"]]
    assert steps == [1, 5, 6]  # 7: a negative bucket count
    assert all(b[2] >= 0 for h in histograms["histograms"] for b in h["buckets"])


# ------------------------------------------------------------- files that cannot be read

CHILD = r"""
import json, logging, os, sys
from pathlib import Path
from sumlens.board.data.loader import Loader

logging.basicConfig(level=logging.WARNING, format="LOG %(message)s")
base, workspace = Path(sys.argv[1]), Path(sys.argv[2])
locked_file = next((base / "a").glob("*_MS"))
loader = Loader(base, workspace, engine="python")
out = {}

def state(name):
    loader.poll()
    runs = {run["id"]: run["damage"] for run in loader.runs()}
    (images,) = loader.samples("./a", "image", "img")
    try:
        value = "read" if loader.value(images, 0) is not None else "gone"
    except Exception as err:  # the loader's ValueUnreadable: its message is the answer's
        value = str(err)
    out[name] = {"runs": runs, "value": value}

state("before")
locked_file.chmod(0)
(base / "b").chmod(0)
state("locked")
state("locked again")
locked_file.chmod(0o644)
(base / "b").chmod(0o755)
state("unlocked")
loader.stop()
print(json.dumps(out))
"""


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder the unprivileged user can use (see :mod:`helpers.unprivileged`)."""
    with unprivileged.shared_dir("sumlens-damage-") as path:
        yield path


def test_files_and_directories_that_cannot_be_read(shared_dir: Path) -> None:
    """A run file made unreadable after it was read, and a run directory made unlistable:
    the run list says so (it said nothing: damage 0, the run gone), the value's answer
    says why (it said "its file changed"), each is logged once, and both mend."""
    base = shared_dir / "base"
    with SummaryRecord(base / "a") as record:  # with an image, to read back
        for step in (1, 2):
            record.add_value("scalar", "loss", 1.0 / step)
            record.add_value("image", "img", np.full((1, 3, 4, 4), 0.5, dtype=np.float32))
            record.record(step)
    write_run(base / "b", range(1, 4))
    done = unprivileged.run_unprivileged(CHILD, [str(base), str(shared_dir / "ws")], shared_dir)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert seen["before"]["value"] == "read"
    assert seen["before"]["runs"]["./a"]["unreadable_files"] == 0
    for name in ("locked", "locked again"):
        runs = seen[name]["runs"]
        assert runs["./a"]["unreadable_files"] == 1, name
        assert "Permission denied" in seen[name]["value"], name
        assert "./b" in runs and runs["./b"]["unreadable_directory"] == "Permission denied", name
    assert seen["unlocked"]["value"] == "read"
    assert seen["unlocked"]["runs"]["./a"]["unreadable_files"] == 0
    assert seen["unlocked"]["runs"]["./b"]["unreadable_directory"] is None
    logged = [line for line in done.stderr.splitlines() if line.startswith("LOG ")]
    assert sum("cannot read" in line for line in logged) == 1, logged
    assert sum("cannot list ./b" in line for line in logged) == 1, logged
