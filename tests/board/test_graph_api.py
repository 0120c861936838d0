"""``GET /api/v1/graph`` end to end: a graph ``SummaryRecord`` wrote, and one torch's
``SummaryWriter.add_graph`` wrote (a TensorBoard GraphDef with its RunMetadata), read back
from their files by the real server, answer as the graph model draws that file's graph
(what the route does with a graph is tested on an in-memory read surface:
``api/test_graph_routes.py``, ``api/test_tb_graph_routes.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlencode

import torch
from helpers.board import free_port, get_json, running_server, wait_until
from helpers.graph_data import Net
from helpers.tensorboard import accumulator

from sumlens import SummaryRecord
from sumlens.board.query.graph_model import network_view
from sumlens.board.responses import json_response
from sumlens.board.settings import BoardSettings
from sumlens.graph import from_module
from sumlens.io import iter_events


def test_a_written_graph_is_served_as_its_file_holds_it(tmp_path: Path) -> None:
    base = tmp_path / "base"
    with SummaryRecord(base / "ours") as record:
        record.add_value("graph", "net", from_module(Net(), (torch.zeros(2, 3, 8, 8),)))
        record.add_value("scalar", "loss", 1.0)
        record.record(1)
    (stored,) = [event for event in iter_events(base / "ours") if event.plugin == "graph"]
    settings = BoardSettings.create(base, port=free_port(), workspace=tmp_path / "ws")
    with running_server(settings) as url:
        runs = wait_until(lambda: (get_json(f"{url}/api/v1/runs") or {}).get("runs"))
        (tag,) = runs[0]["tags"]["graph"]
        body = get_json(f"{url}/api/v1/graph?{urlencode({'run': './ours', 'tag': tag})}")
    assert body is not None and tag == stored.tag
    assert (body["run"], body["step"], body["steps"], body["layout_library"]) == (
        "./ours",
        1,
        [1],
        None,
    )
    assert body["graph"] == json.loads(json_response(network_view(stored.value)).body)
    assert "Default/features-Sequential/0-Block/conv-Conv2d/Conv2d-op0" in {
        node["name"] for node in body["graph"]["nodes"]
    }


def test_a_tensorboard_graph_is_served_with_its_run_metadata(tmp_path: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter

    base = tmp_path / "base"
    with SummaryWriter(str(base / "tb")) as writer:
        writer.add_graph(Net().eval(), torch.zeros(2, 3, 8, 8))
    written = {node.name for node in accumulator(base / "tb").Graph().node}
    settings = BoardSettings.create(base, port=free_port(), workspace=tmp_path / "ws")
    with running_server(settings) as url:
        runs = wait_until(lambda: (get_json(f"{url}/api/v1/runs") or {}).get("runs"))
        tags = runs[0]["tags"]
        assert tags["run_metadata"] == ["step1"]
        (tag,) = tags["graph"]
        body = get_json(f"{url}/api/v1/graph?{urlencode({'run': './tb', 'tag': tag})}")
        stats = get_json(f"{url}/api/v1/graph/stats?{urlencode({'run': './tb', 'tag': 'step1'})}")
    assert body is not None and tag.startswith("events.out.tfevents.")
    names = {node["name"] for node in body["graph"]["nodes"]}
    assert written <= names and {"input/x", "Net/Linear[head]/weight/weight"} <= written
    assert stats is not None and (stats["devices"], stats["nodes"]) == (["/device:CPU:0"], {})
