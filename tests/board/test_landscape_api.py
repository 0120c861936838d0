"""The landscape view's routes end to end: the golden MindSpore landscapes, read back from
their files by the real server, answer as the landscape model draws those files' messages
(what the routes do with a landscape is tested on an in-memory read surface:
``api/test_landscape_routes.py``)."""

from __future__ import annotations

import json
import shutil
import urllib.parse
from pathlib import Path

from helpers.board import free_port, get_json, running_server, wait_until

from sumlens.board.query.landscape_values import landscape_json
from sumlens.board.responses import json_response
from sumlens.board.settings import BoardSettings
from sumlens.io import iter_events


def test_the_golden_landscapes_are_served_as_the_files_hold_them(
    tmp_path: Path, golden_dir: Path
) -> None:
    shutil.copytree(golden_dir / "landscape", tmp_path / "base" / "landscape")
    stored = {e.tag: e.value for e in iter_events(golden_dir / "landscape")
              if e.plugin == "landscape"}  # fmt: skip
    settings = BoardSettings.create(tmp_path / "base", port=free_port(), workspace=tmp_path / "ws")
    with running_server(settings) as url:
        wait_until(lambda: not (get_json(f"{url}/api/v1/runs") or {"loading": True})["loading"])
        listing = get_json(f"{url}/api/v1/landscapes?run=./landscape")
        assert listing is not None
        served = {}
        for entry in listing["landscapes"]:
            query = urllib.parse.urlencode({"run": "./landscape", "tag": entry["tag"], "rank": 0})
            served[entry["tag"]] = get_json(f"{url}/api/v1/landscape?{query}")
    assert [e["kind"] for e in listing["landscapes"]] == ["train", "result"]
    assert list(served) == ["landscape_[1, 3]", "landscape_[3]"] and set(stored) == set(served)
    for tag, body in served.items():
        expected = json.loads(json_response(landscape_json(stored[tag])).body)
        assert body is not None and {key: body[key] for key in expected} == expected
        assert (body["run"], body["tag"], body["rank"], body["step"]) == ("./landscape", tag, 0, 0)
