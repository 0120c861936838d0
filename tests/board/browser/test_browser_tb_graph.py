"""TensorBoard graphs in the graph view, in headless Chromium: ResNet-18 as torch's own
``SummaryWriter.add_graph`` writes it (a GraphDef and its RunMetadata in a real run
directory), its module scopes, search and the side panel with a node's attributes; and a
RunMetadata with compute time and memory (written by TensorBoard's own event writer) shown
in the panel for its node.

Screenshots go to the artifacts folder (graph-tb-*.png).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from helpers.board import free_port, get_json, running_server, wait_until
from helpers.graph_page import GraphPage
from helpers.graph_zoo import ResNet18
from playwright.sync_api import Page
from tensorboard.compat.proto import config_pb2, event_pb2, step_stats_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from sumlens._proto import tensorboard_graph_pb2
from sumlens.board.settings import BoardSettings

CONV1 = "ResNet18/Conv2d[conv1]/input.1"
WEIGHT = "ResNet18/Conv2d[conv1]/weight/weight.81"
TIMED = "Net/Linear[fc]/out"


def write_timed_run(run: Path) -> None:
    """A two-node GraphDef and a RunMetadata saying the linear layer took 1,234 µs and
    2,048 bytes, as TensorBoard's own writer writes them."""
    graph = tensorboard_graph_pb2.GraphDef()
    graph.node.add(name="input/x", op="IO Node")
    graph.node.add(name=TIMED, op="aten::linear", input=["input/x"])
    stats = step_stats_pb2.StepStats()
    node = stats.dev_stats.add(device="/device:CPU:0").node_stats.add(node_name=TIMED)
    node.all_end_rel_micros = 1234
    node.memory.add(allocator_name="cpu", total_bytes=2048)
    metadata = config_pb2.RunMetadata(step_stats=stats).SerializeToString()
    writer = EventFileWriter(str(run))
    writer.add_event(event_pb2.Event(graph_def=graph.SerializeToString()))
    tagged = event_pb2.TaggedRunMetadata(tag="step1", run_metadata=metadata)
    writer.add_event(event_pb2.Event(tagged_run_metadata=tagged))
    writer.close()


@pytest.fixture(scope="module")
def tb_graph_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server over ResNet-18's add_graph run and the timed run."""
    from torch.utils.tensorboard import SummaryWriter

    root = tmp_path_factory.mktemp("tbgraph")
    base = root / "base"
    with SummaryWriter(str(base / "resnet")) as writer:
        writer.add_graph(ResNet18(num_classes=10).eval(), torch.rand(1, 3, 32, 32))
    write_timed_run(base / "timed")
    settings = BoardSettings.create(base, port=free_port(), workspace=root / "ws")
    with running_server(settings) as url:
        wait_until(
            lambda: (
                sum(
                    bool(run["tags"].get("graph")) for run in get_json(f"{url}/api/v1/runs")["runs"]
                )
                == 2
            )
        )
        yield url


@pytest.fixture
def graph(page: Page, tb_graph_url: str, artifacts: Path) -> GraphPage:
    return GraphPage(page, tb_graph_url, artifacts)


def test_torch_add_graph_resnet18_opens_searches_and_shows_attributes(graph: GraphPage) -> None:
    graph.open_graph("./resnet")
    drawn = graph.boxes()
    assert ("cluster", "ResNet18") in drawn  # the model's scope holds scopes: open at first
    scopes = {name for kind, name in drawn if kind in ("scope", "cluster")}
    for layer in ("Conv2d[conv1]", "Sequential[layer1]", "Sequential[layer4]", "Linear[fc]"):
        assert f"ResNet18/{layer}" in scopes, drawn
    assert "348 nodes" in graph.status()  # 307 NodeDefs and the 41 modules they read
    graph.screenshot("graph-tb-resnet18-first")

    found = graph.search("Conv2d[conv1]/input.1")
    assert found[0] == CONV1
    graph.pick_result(CONV1)
    assert graph.selected_box() == CONV1
    assert graph.panel_field(".graph-type") == "aten::_convolution"
    assert graph.panel_field(".graph-output-shape") == "[1, 64, 16, 16]"
    inputs = graph.page.locator(".graph-panel .graph-neighbours").first.inner_text()
    assert "input/x" in inputs and WEIGHT in inputs
    graph.screenshot("graph-tb-resnet18-search")

    # a neighbour in the panel selects it: torch's attribute text is shown
    graph.page.locator(".graph-panel .graph-link", has_text=WEIGHT).click()
    graph.wait_selected(WEIGHT)
    assert graph.panel_field(".graph-type") == "prim::GetAttr"
    assert "{ name :  weight }" in graph.panel_field(".graph-attrs")
    graph.screenshot("graph-tb-resnet18-attributes")


def test_run_metadata_shows_in_the_panel(graph: GraphPage) -> None:
    graph.open_graph("./timed", {"sel": TIMED})
    graph.wait_selected(TIMED)
    graph.page.wait_for_selector(".graph-panel .graph-compute")
    assert graph.panel_field(".graph-compute") == "1.2 ms"
    assert graph.panel_field(".graph-memory") == "2.0 KiB"
    assert "step1" in graph.panel_field(".graph-stats h4")
    graph.screenshot("graph-tb-run-metadata")
    graph.page.locator(".graph-panel .graph-link", has_text="input/x").click()
    graph.wait_selected("input/x")  # no statistics: no section
    assert graph.page.locator(".graph-panel .graph-stats").count() == 0
