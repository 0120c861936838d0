"""The graph view in headless Chromium: a torch model SummaryRecord(network=...) captured,
the graphs and dataset graph MindSpore wrote, a graph whose names hold markup, and a flat
graph of 1,200 operators in one scope (grouped by type; a long layout in the Web Worker).

Screenshots go to the artifacts folder (graph-*.png).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from helpers.board import free_port, get_json, running_server, wait_until
from helpers.collector_runs import COLLECTOR_RATES, write_collector_runs
from helpers.digits import DigitsCNN
from helpers.graph_data import Net
from helpers.graph_page import GraphPage
from playwright.sync_api import Page

from sumlens import SummaryRecord
from sumlens._proto import anf_ir_pb2
from sumlens.board.settings import BoardSettings

MARKUP = "<img src=x onerror=alert(1)>"
BLOCK = "Default/features-Sequential/0-Block"
CONV = f"{BLOCK}/conv-Conv2d"
DIGITS_LAYERS = list(DigitsCNN().named_children())
LAYERS = [CONV, f"{BLOCK}/bn-BatchNorm2d", f"{BLOCK}/act-ReLU", "Default/head-Linear"]
FLAT_TYPES = {"MatMul": 250, "Add": 150, "Mul": 50}
CHAIN = FLAT_TYPES["MatMul"]
GROUPS = {
    op_type: f"Default/{op_type} \N{MULTIPLICATION SIGN}{count}"
    for op_type, count in FLAT_TYPES.items()
}
ZOOM_IN = "button[aria-label='Zoom in']"


def markup_graph() -> anf_ir_pb2.GraphProto:
    """A scope and an operator whose names are markup."""
    graph = anf_ir_pb2.GraphProto(name=MARKUP)
    first = graph.node.add(name="1", op_type=MARKUP, scope=f"Default/{MARKUP}")
    first.full_name = f"Default/{MARKUP}/{MARKUP}"
    second = graph.node.add(name="2", op_type="Add", scope="Default", full_name="Default/Add-op0")
    second.input.add(name="1")
    return graph


def flat_graph() -> anf_ir_pb2.GraphProto:
    """Operators directly in scope Default, numbered from 1: a chain of CHAIN MatMul, every
    third also fed by one of the 50 before it (a layout of seconds), then 150 Add and 50 Mul,
    each fed by a MatMul."""
    graph = anf_ir_pb2.GraphProto(name="flat")
    types = [op_type for op_type, count in FLAT_TYPES.items() for _ in range(count)]
    for count, op_type in enumerate(types, start=1):
        node = graph.node.add(name=str(count), op_type=op_type, scope="Default")
        node.full_name = f"Default/{op_type}-op{count}"
        if count > CHAIN:
            node.input.add(name=str(count - CHAIN))
        elif count > 1:
            node.input.add(name=str(count - 1))
        if count <= CHAIN and count > 50 and count % 3 == 0:
            node.input.add(name=str(count - 2 - (count * 7919) % 48))
    return graph


@pytest.fixture(scope="module")
def graph_url(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> Iterator[str]:
    """The server over the golden runs, a run of the torch model and the markup graph."""
    root = tmp_path_factory.mktemp("graphview")
    base = root / "base"
    for name in ("all_plugins", "collector"):
        shutil.copytree(golden_dir / name, base / name)
    net = Net()
    with SummaryRecord(base / "torch", network=net) as record:
        net(torch.zeros(2, 3, 8, 8))
        record.add_value("scalar", "loss", 1.0)
        record.record(1)
    with SummaryRecord(base / "markup") as record:
        record.add_value("graph", "g", markup_graph())
        record.record(1)
    with SummaryRecord(base / "flat") as record:
        record.add_value("graph", "g", flat_graph())
        record.record(1)
    write_collector_runs(base)
    settings = BoardSettings.create(base, port=free_port(), workspace=root / "ws")
    with running_server(settings) as url:
        wait_until(lambda: len(get_json(f"{url}/api/v1/runs")["runs"]) == 5 + len(COLLECTOR_RATES))
        yield url


@pytest.fixture
def graph(page: Page, graph_url: str, artifacts: Path) -> GraphPage:
    return GraphPage(page, graph_url, artifacts)


def test_summary_collector_graph_shows_each_layer(graph: GraphPage) -> None:
    graph.open_graph(next(iter(COLLECTOR_RATES)))
    drawn = graph.boxes()
    layers = [f"Default/{name}-{type(module).__name__}" for name, module in DIGITS_LAYERS]
    assert {("scope", layer) for layer in layers} <= set(drawn), drawn
    conv = layers[0]
    graph.toggle("scope", conv)
    inside = {name for kind, name in graph.boxes() if kind == "node"}
    assert any(name.startswith(f"{conv}/Conv2d") for name in inside), inside
    graph.screenshot("graph-collector-conv1-open")


def test_layers_are_scopes_and_open_into_nodes(graph: GraphPage) -> None:
    graph.open_graph("./torch")
    drawn = graph.boxes()
    for layer in LAYERS:
        assert ("scope", layer) in drawn
    assert ("cluster", BLOCK) in drawn  # scopes holding scopes start open
    assert not any(kind == "node" and name.startswith(f"{CONV}/") for kind, name in drawn)
    graph.screenshot("graph-torch-first")
    graph.toggle("scope", CONV)
    drawn = graph.boxes()
    assert ("cluster", CONV) in drawn
    assert {f"{CONV}/Conv2d-op0", f"{CONV}/features.0.conv.weight"} <= {
        name for kind, name in drawn if kind == "node"
    }
    assert CONV in graph.options()["open"]
    graph.screenshot("graph-torch-conv-open")
    # a reload shows the same view
    graph.page.reload()
    graph.wait_drawing()
    assert ("cluster", CONV) in graph.boxes() and graph.panel_field(".graph-name") == CONV
    graph.toggle("cluster", CONV)
    assert ("scope", CONV) in graph.boxes()


def test_search_selects_a_node_and_the_panel_shows_it(graph: GraphPage) -> None:
    graph.open_graph("./torch")
    found = graph.search("batchnorm-op")
    bn = f"{BLOCK}/bn-BatchNorm2d/BatchNorm-op0"
    assert found == [bn]
    before = graph.drawings()
    graph.pick_result(bn)
    graph.wait_drawing(before)
    assert graph.selected_box() == bn  # its scope was opened to show it
    assert graph.panel_field(".graph-type") == "BatchNorm"
    assert graph.panel_field(".graph-output-shape") == "[2, 4, 8, 8]"
    inputs = graph.page.locator(".graph-panel .graph-neighbours").first.inner_text()
    assert f"{CONV}/Conv2d-op0" in inputs and "[2, 4, 8, 8]" in inputs
    assert "[4]" in inputs  # the weight's shape
    graph.screenshot("graph-torch-search")
    # a neighbour in the panel selects that node
    graph.page.locator(".graph-panel .graph-link", has_text=f"{CONV}/Conv2d-op0").click()
    graph.wait_selected(f"{CONV}/Conv2d-op0")
    graph.wait_drawing(before + 1)
    assert graph.panel_field(".graph-type") == "Conv2d"
    assert graph.options()["sel"] == f"{CONV}/Conv2d-op0"


def test_fit_brings_the_whole_drawing_into_view(graph: GraphPage) -> None:
    graph.open_graph("./torch")
    assert graph.drawing_inside()
    for _ in range(6):
        graph.page.click("button[aria-label='Zoom in']")
    assert not graph.drawing_inside()
    graph.page.click("button[aria-label='Fit the drawing to the window']")
    assert graph.drawing_inside()
    graph.page.mouse.move(500, 500)
    graph.page.mouse.down()
    graph.page.mouse.move(900, 800, steps=5)
    graph.page.mouse.up()
    assert not graph.drawing_inside()  # dragged off to the corner
    graph.page.click("button[aria-label='Fit the drawing to the window']")
    assert graph.drawing_inside()


def test_mindspore_graphs_and_the_dataset_graph(graph: GraphPage) -> None:
    graph.open_graph("./all_plugins")
    drawn = graph.boxes()
    for layer in ("Default/fc1-Dense", "Default/relu-ReLU", "Default/fc2-Dense"):
        assert ("scope", layer) in drawn
    graph.screenshot("graph-mindspore-all-plugins")
    graph.open_graph("./collector")
    assert ("scope", "Default/network-WithLossCell/_backbone-SmallLeNet/conv1-Conv2d") in (
        graph.boxes()
    )
    graph.screenshot("graph-mindspore-collector")
    before = graph.drawings()
    graph.page.select_option(".graph-pick", label="Dataset: dataset_graph")
    graph.wait_drawing(before)
    assert sorted(graph.boxes()) == [("node", "Batch-0"), ("node", "GeneratorDataset-1")]
    graph.box("node", "Batch-0").click()
    graph.wait_selected("Batch-0")
    assert graph.panel_field(".graph-type") == "Batch"
    assert "batch_size" in graph.panel_field(".graph-attrs")
    graph.screenshot("graph-mindspore-dataset")


def test_names_with_markup_show_as_text(graph: GraphPage) -> None:
    graph.open_graph("./markup", {"open": ["Default", f"Default/{MARKUP}"]})
    assert ("node", f"Default/{MARKUP}/{MARKUP}") in graph.boxes()
    label = graph.box("node", f"Default/{MARKUP}/{MARKUP}").locator("text").text_content()
    assert label is not None and label.startswith("<img src=x")
    graph.box("node", f"Default/{MARKUP}/{MARKUP}").click()
    graph.wait_selected(f"Default/{MARKUP}/{MARKUP}")
    assert graph.panel_field(".graph-type") == MARKUP
    assert graph.page.evaluate("() => document.querySelectorAll('main img').length") == 0
    assert MARKUP in graph.page.inner_text(".graph-status")
    graph.screenshot("graph-markup")


def test_a_big_flat_scope_opens_into_groups_by_type(graph: GraphPage) -> None:
    graph.open_graph("./flat")
    drawn = graph.boxes()
    assert ("cluster", "Default") in drawn  # the lone scope is looked into: its groups show
    assert {("scope", group) for group in GROUPS.values()} <= set(drawn), drawn
    assert not any(kind == "node" for kind, _ in drawn)
    assert "3 groups by type" in graph.status()
    graph.screenshot("graph-flat-groups")
    graph.box("scope", GROUPS["Add"]).click()
    graph.wait_selected(GROUPS["Add"])
    assert graph.panel_field(".graph-type") == "group of Add nodes"
    graph.toggle("scope", GROUPS["Add"])
    drawn = graph.boxes()
    assert ("cluster", GROUPS["Add"]) in drawn
    adds = {name for kind, name in drawn if kind == "node"}
    assert adds == {f"Default/Add-op{n}" for n in range(CHAIN + 1, CHAIN + 151)}
    assert ("scope", GROUPS["MatMul"]) in drawn  # its inputs: one box, edges counted
    graph.screenshot("graph-flat-add-group-open")


def test_search_reveals_a_grouped_node(graph: GraphPage) -> None:
    graph.open_graph("./flat")
    wanted = f"Default/Mul-op{CHAIN + 180}"
    assert graph.search(f"Mul-op{CHAIN + 180}") == [wanted]
    before = graph.drawings()
    graph.pick_result(wanted)
    graph.wait_drawing(before)
    assert graph.selected_box() == wanted
    assert ("cluster", GROUPS["Mul"]) in graph.boxes()  # its group was opened to show it
    assert graph.panel_field(".graph-type") == "Mul"
    assert "null" not in graph.page.inner_text(".graph-panel")  # no attributes: no section
    assert GROUPS["Mul"] in graph.options()["open"]
    graph.screenshot("graph-flat-search")


def test_the_page_stays_responsive_during_a_long_layout(graph: GraphPage) -> None:
    graph.open_graph("./flat")
    before = graph.drawings()
    scale = graph.scale()
    graph.box("scope", GROUPS["MatMul"]).locator("rect").dblclick(position={"x": 12, "y": 10})
    # the chain of MatMul nodes and the 2 other groups
    assert graph.wait_laying_out() == f"Laying out {CHAIN + 2:,} boxes…"
    graph.page.click(ZOOM_IN)  # handled while Graphviz runs in its worker
    state, zoomed = graph.page.evaluate(
        """() => [document.querySelector('#graph-view').dataset.state,
            Number(document.querySelector('.graph-svg').dataset.scale)]"""
    )
    assert state == "loading" and zoomed == pytest.approx(scale * 1.25, rel=1e-3)
    graph.screenshot("graph-flat-laying-out")
    frames = graph.page.evaluate(
        """() => new Promise((done) => { let frames = 0;
            const tick = () => {
              if (document.querySelector('#graph-view').dataset.state !== 'loading') done(frames);
              else { frames += 1; requestAnimationFrame(tick); }
            };
            requestAnimationFrame(tick); })"""
    )
    assert frames > 1  # animation frames went on while it was laid out
    graph.wait_drawing(before)
    nodes = {name for kind, name in graph.boxes() if kind == "node"}
    assert len(nodes) == CHAIN and f"Default/MatMul-op{CHAIN // 2}" in nodes
    graph.screenshot("graph-flat-matmul-open")


def test_a_superseded_layout_is_never_drawn(graph: GraphPage) -> None:
    graph.open_graph("./flat")
    before = graph.drawings()
    first = sorted(graph.boxes())
    graph.box("scope", GROUPS["MatMul"]).locator("rect").dblclick(position={"x": 12, "y": 10})
    graph.wait_laying_out()
    assert len(graph.page.workers) == 1  # the layout runs in a Web Worker
    graph.page.click("button[aria-label='Close the scopes opened (back to the first drawing)']")
    graph.page.wait_for_function(
        "() => document.querySelector('#graph-view').dataset.state === 'drawn'"
    )
    worker = graph.page.workers[0]
    stopped: list[bool] = []
    worker.on("close", lambda _: stopped.append(True))
    # the running layout was stopped (each evaluate lets Playwright take the worker's events)
    wait_until(lambda: graph.page.evaluate("() => true") and stopped)
    assert graph.drawings() == before and sorted(graph.boxes()) == first
    assert not graph.status().startswith("Laying out")
    graph.screenshot("graph-flat-superseded")


def test_another_run_shown_starts_afresh(graph: GraphPage) -> None:
    graph.open_graph("./collector")
    fresh = sorted(graph.boxes())
    graph.open_graph("./all_plugins")
    graph.toggle("scope", "Default/fc1-Dense")  # opens it, selects it: the URL keeps both

    # another run picked on the Runs page: the nav links carry the graph settings along
    graph.page.locator("nav a[data-view=runs]").click()
    graph.wait_runs_listed(["./all_plugins", "./collector"])
    graph.page.get_by_label("Select ./all_plugins").uncheck()
    graph.page.get_by_label("Select ./collector").check()
    drawn = graph.drawings()
    graph.page.locator("nav a[data-view=graph]").click()
    graph.wait_drawing(after=drawn)
    assert graph.page.input_value(".graph-run") == "./collector"
    assert sorted(graph.boxes()) == fresh  # not drawn with the scopes open in ./all_plugins
    assert graph.selected_box() is None
    assert graph.options()["run"] == "./all_plugins"  # kept, for the run they were picked in
