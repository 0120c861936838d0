"""MindInsight's routes show what ``/api/v1`` shows when run files change under the server.

Both faces read through the one read surface; MindInsight's routes keep their own reading
of a job (its order and sampling) but follow the files the surface lists. They kept a
private index that did not: a file that could not be read once stayed empty there after
it could be again, and a file truncated or written anew kept showing its old values.
Real files and the real server on 127.0.0.1; each check waits until ``/api/v1`` shows the
change, then asks MindInsight's routes at once.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
from helpers.board import free_port, get_json, running_server, wait_until, write_run
from helpers.unprivileged import run_unprivileged, shared_dir

from sumlens import SummaryRecord
from sumlens.board.settings import BoardSettings
from sumlens.lineage import TrainLineage

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _answer(url: str) -> tuple[int, bytes]:
    """The status and body of a GET, errors included."""
    try:
        with _NO_PROXY.open(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def _run(url: str, run_id: str) -> dict:
    """The run ``run_id`` as ``/api/v1/runs`` lists it ({} until it is listed)."""
    runs = (get_json(url + "/api/v1/runs") or {}).get("runs", [])
    return next((run for run in runs if run["id"] == run_id), {})


def _summary_file(run: Path) -> Path:
    (found,) = [path for path in run.iterdir() if path.name.endswith("_MS")]
    return found


def test_a_truncated_file_shows_nothing_and_its_image_is_missing(tmp_path: Path) -> None:
    """Truncated to 0 bytes: MindInsight's routes kept serving the old scalars, and the
    single image answered 500 ("changed since it was read")."""
    run = tmp_path / "base" / "a"
    with SummaryRecord(run) as record:
        for step in (1, 2):
            record.add_value("scalar", "loss", 1.0 / step)
            record.add_value("image", "img", np.full((1, 3, 4, 4), 0.5, dtype=np.float32))
            record.record(step)
    settings = BoardSettings.create(
        tmp_path / "base", port=free_port(), workspace=tmp_path / "ws", reload_interval=0.2
    )
    with running_server(settings) as url:
        mindinsight = f"{url}/v1/mindinsight/datavisual"
        scalars = f"{mindinsight}/scalar/metadata?train_id=./a&tag=loss/scalar"
        image = f"{mindinsight}/image/single-image?train_id=./a&tag=img/image&step=2"
        wait_until(lambda: _run(url, "./a").get("points") == 2)
        assert [m["step"] for m in get_json(scalars)["metadatas"]] == [1, 2]
        assert _answer(image)[0] == 200
        os.truncate(_summary_file(run), 0)
        wait_until(lambda: _run(url, "./a").get("points") == 0)
        assert _run(url, "./a")["tags"] == {}
        status, body = _answer(scalars)
        assert status == 400 and json.loads(body)["error_code"] == "5054500E", body
        plugins = get_json(f"{mindinsight}/plugins?train_id=./a&manual_update=true")["plugins"]
        assert plugins["scalar"] == [] and plugins["image"] == []
        status, body = _answer(image)
        assert status == 400 and json.loads(body)["error_code"] == "5054500D", body


def test_a_file_written_anew_shows_its_new_values(tmp_path: Path) -> None:
    """Replaced by a longer file of the same name: MindInsight's routes read on from the
    old offset into the new file, mixing old values with pieces of the new."""
    run = tmp_path / "base" / "a"
    write_run(run, [1, 2])
    name = _summary_file(run).name
    write_run(tmp_path / "new", range(1, 6), value=lambda tag, step: 10.0 * step)
    settings = BoardSettings.create(
        tmp_path / "base", port=free_port(), workspace=tmp_path / "ws", reload_interval=0.2
    )
    with running_server(settings) as url:
        scalars = f"{url}/v1/mindinsight/datavisual/scalar/metadata?train_id=./a&tag=loss/scalar"
        wait_until(lambda: _run(url, "./a").get("points") == 2)
        assert [m["value"] for m in get_json(scalars)["metadatas"]] == [1.0, 0.5]
        os.replace(_summary_file(tmp_path / "new"), run / name)
        wait_until(lambda: _run(url, "./a").get("points") == 5)
        shown = [(m["step"], m["value"]) for m in get_json(scalars)["metadatas"]]
        assert shown == [(step, 10.0 * step) for step in range(1, 6)]


# ------------------------------------------------------------- files that cannot be read

CHILD = r"""
import json, sys, urllib.request
from pathlib import Path
from helpers.board import free_port, get_json, running_server, wait_until
from sumlens.board.settings import BoardSettings

base, workspace = Path(sys.argv[1]), Path(sys.argv[2])
files = sorted((base / "a").iterdir())
no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))

def run(url):
    runs = (get_json(url + "/api/v1/runs") or {}).get("runs", [])
    return next((found for found in runs if found["id"] == "./a"), {})

def shown(url):
    mindinsight = url + "/v1/mindinsight"
    plugins = get_json(mindinsight + "/datavisual/plugins?train_id=./a&manual_update=true")
    asked = urllib.request.Request(mindinsight + "/lineagemgr/lineages", data=b"{}")
    with no_proxy.open(asked, timeout=5) as answer:
        lineage = json.loads(answer.read())
    return {"scalar": plugins["plugins"]["scalar"], "lineage": lineage["count"]}

for path in files:
    path.chmod(0)
settings = BoardSettings.create(base, port=free_port(), workspace=workspace, reload_interval=0.2)
out = {}
with running_server(settings) as url:
    wait_until(lambda: run(url).get("damage", {}).get("unreadable_files") == len(files))
    out["locked"] = shown(url)
    for path in files:
        path.chmod(0o644)
    wait_until(lambda: run(url).get("points") == 3)
    out["unlocked"] = shown(url)
print(json.dumps(out))
"""


def test_a_file_that_could_not_be_read_shows_once_it_can() -> None:
    """Unreadable (EACCES) when first read, readable again: MindInsight's routes stayed
    empty, even with ``manual_update=true``, while ``/api/v1`` showed the values again.

    Root reads whatever the modes say, so as root the server runs in a child process as
    ``nobody`` over files it owns (see :mod:`helpers.unprivileged`)."""
    with shared_dir("sumlens-mindinsight-") as shared:
        base = shared / "base"
        with SummaryRecord(base / "a") as record:
            for step in (1, 2, 3):
                record.add_value("scalar", "loss", 1.0 / step)
                record.record(step)
            record.add_value("train_lineage", "train_lineage", TrainLineage(learning_rate=0.1))
            record.record(3)
        assert len(list((base / "a").iterdir())) == 2  # the summary and the lineage file
        done = run_unprivileged(CHILD, [str(base), str(shared / "ws")], shared)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["locked"] == {"scalar": [], "lineage": 0}
    assert seen["unlocked"] == {"scalar": ["loss/scalar"], "lineage": 1}
