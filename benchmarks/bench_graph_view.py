"""Graph view speed: from navigation to the drawing on screen, in headless Chromium.

Two graphs, each written as a run by ``SummaryRecord``:

(a) a generated graph of 5,000 operators in 50 nested scopes (10 top-level stages, each
    a chain of 4 nested blocks of 100 operators; operators feed the next one and, every
    tenth, one further back), and
(b) ResNet-50 (bottleneck blocks [3, 4, 6, 3], written here with torch.nn: torchvision is
    not installed) captured by ``sumlens.graph.from_module``, and
(d) the graph of (a) as a TensorBoard ``GraphDef`` of 5,000 nodes (``/``-scoped names,
    inputs by name, ``_output_shapes``, torch's ``attr`` text) written by TensorBoard's own
    event writer: the server converts it (``sumlens.io.tb_graph``) when it reads the file.

``sumlens serve`` serves them; for each graph the page is opened ``--opens`` times in a
fresh browser context (Chromium launched as the browser tests do), timing from
``page.goto`` until the view says ``data-state="drawn"`` (the SVG is in the page). The
table gives the median, min and max per graph, how many boxes the first drawing shows,
and the machine's load average (other work on the machine slows the numbers).

(c) Flat scopes: ``Default`` holding 200, 500, 1,000 and 2,000 operators directly, chained
    as in (a), of four operator types in turn. The page groups a scope's direct nodes by
    type above 200 of them (static/graph/graph_model.js), so the first drawing shows ``Default``
    open into four groups; the second table times opening the Conv2D group (a quarter of
    the scope; with 200 operators, not grouped, the scope itself) by double-clicking its
    box, until its drawing is on screen. Graphviz's time goes there (it runs in a Web
    Worker, see static/graph/graph_layout.js). The ``onetype`` rows are the same scopes with one
    operator type: their one group holds the whole chain, so they time Graphviz on a flat
    scope of that many nodes.

Run: ``.venv/bin/python -m benchmarks.bench_graph_view [--opens 7]``. Targets: < 2 s each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import httpx
import torch
from playwright.sync_api import sync_playwright

from benchmarks.harness.browser import open_chromium
from benchmarks.harness.clock import now
from benchmarks.harness.http import get_body, local
from benchmarks.harness.servers import free_port, serve_args, server_until
from sumlens import SummaryRecord
from sumlens._proto import anf_ir_pb2, tensorboard_graph_pb2
from sumlens.graph import from_module

STAGES, DEPTH, PER_BLOCK = 10, 4, 125  # 10 x 4 = 40 scopes of ops (+10 stages) = 50 scopes
FLAT_SIZES = (200, 500, 1000, 2000)
FLAT_TYPES = ("Conv2D", "BatchNorm", "ReLU", "Add")
WAIT_MS = 120_000


def generated_graph() -> anf_ir_pb2.GraphProto:
    """5,000 operators in 50 nested scopes: stage<i>/block0/block1/block2/block3 chains."""
    graph = anf_ir_pb2.GraphProto(name="generated 5000")
    previous = None
    count = 0
    for stage in range(STAGES):
        scope = f"Default/stage{stage}"
        for depth in range(DEPTH):
            scope = f"{scope}/block{depth}"
            for _ in range(PER_BLOCK):
                count += 1
                node = graph.node.add(name=str(count), op_type=("Conv2D", "ReLU", "Add")[count % 3])
                node.scope = scope
                node.full_name = f"{scope}/{node.op_type}-op{count}"
                node.output_type.data_type = anf_ir_pb2.DT_TENSOR
                node.output_type.tensor_type.elem_type = anf_ir_pb2.DT_FLOAT32
                for size in (8, 64, 28, 28):
                    node.output_type.tensor_type.shape.dim.add(size=size)
                if previous is not None:
                    node.input.add(name=previous)
                if count % 10 == 0 and count > 20:
                    node.input.add(name=str(count - 17))
                previous = node.name
    return graph


def generated_graph_def() -> tensorboard_graph_pb2.GraphDef:
    """(a) as a TensorBoard GraphDef: the same scopes, chains and inputs, named by path."""
    graph = tensorboard_graph_pb2.GraphDef()
    previous = None
    names = []
    for stage in range(STAGES):
        scope = f"Net/stage{stage}"
        for depth in range(DEPTH):
            scope = f"{scope}/block{depth}"
            for _ in range(PER_BLOCK):
                count = len(names) + 1
                op = ("aten::conv2d", "aten::relu", "aten::add")[count % 3]
                node = graph.node.add(name=f"{scope}/input.{count}", op=op)
                node.attr["attr"].s = b"{}"
                shape = node.attr["_output_shapes"].list.shape.add()
                for size in (8, 64, 28, 28):
                    shape.dim.add(size=size)
                if previous is not None:
                    node.input.append(previous)
                if count % 10 == 0 and count > 20:
                    node.input.append(names[count - 18])
                previous = node.name
                names.append(node.name)
    return graph


def write_graph_def_run(run: Path, graph: tensorboard_graph_pb2.GraphDef) -> None:
    """``graph`` in a TensorBoard event file, as TensorBoard's own writer writes it."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(run))
    writer.add_event(event_pb2.Event(graph_def=graph.SerializeToString()))
    writer.close()


def flat_graph(size: int, types: tuple[str, ...] = FLAT_TYPES) -> anf_ir_pb2.GraphProto:
    """``size`` operators directly in scope ``Default``, of ``types`` in turn: a chain,
    every tenth also fed by the operator 17 before it."""
    graph = anf_ir_pb2.GraphProto(name=f"flat {size}")
    for count in range(1, size + 1):
        node = graph.node.add(name=str(count), op_type=types[count % len(types)])
        node.scope = "Default"
        node.full_name = f"Default/{node.op_type}-op{count}"
        if count > 1:
            node.input.add(name=str(count - 1))
        if count % 10 == 0 and count > 20:
            node.input.add(name=str(count - 17))
    return graph


class Bottleneck(torch.nn.Module):
    """ResNet's 1x1 -> 3x3 -> 1x1 block with its shortcut."""

    def __init__(self, inputs: int, width: int, stride: int) -> None:
        super().__init__()
        outputs = width * 4
        self.conv1 = torch.nn.Conv2d(inputs, width, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(width)
        self.conv2 = torch.nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(width)
        self.conv3 = torch.nn.Conv2d(width, outputs, 1, bias=False)
        self.bn3 = torch.nn.BatchNorm2d(outputs)
        self.relu = torch.nn.ReLU()
        self.downsample = None
        if stride != 1 or inputs != outputs:
            self.downsample = torch.nn.Sequential(
                torch.nn.Conv2d(inputs, outputs, 1, stride, bias=False),
                torch.nn.BatchNorm2d(outputs),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        shortcut = x if self.downsample is None else self.downsample(x)
        return self.relu(out + shortcut)


class ResNet50(torch.nn.Module):
    """ResNet-50: a 7x7 stem, bottleneck stages [3, 4, 6, 3], average pool, a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(64)
        self.relu = torch.nn.ReLU()
        self.maxpool = torch.nn.MaxPool2d(3, 2, 1)
        inputs = 64
        stages = []
        for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            layers = []
            for index in range(blocks):
                layers.append(Bottleneck(inputs, width, stride if index == 0 else 1))
                inputs = width * 4
            stages.append(torch.nn.Sequential(*layers))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(2048, 1000)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def write_runs(base: Path) -> dict[str, int]:
    """The two runs under ``base``; their node counts."""
    graphs = {
        "generated5000": generated_graph(),
        "resnet50": from_module(ResNet50(), (torch.zeros(1, 3, 224, 224),)),
        **{f"flat{size}": flat_graph(size) for size in FLAT_SIZES},
        **{f"onetype{size}": flat_graph(size, FLAT_TYPES[:1]) for size in FLAT_SIZES},
    }
    for name, graph in graphs.items():
        with SummaryRecord(base / name) as record:
            record.add_value("graph", "graph", graph)
            record.record(0)
    graph_def = generated_graph_def()
    write_graph_def_run(base / "graphdef5000", graph_def)
    sizes = {name: len(graph.node) for name, graph in graphs.items()}
    return {"generated5000": sizes.pop("generated5000"), "graphdef5000": len(graph_def.node),
            **sizes}  # fmt: skip


def runs_listed(runs: int) -> Callable[[httpx.Client], bool]:
    """Whether the server lists ``runs`` runs with a graph (asked of its client)."""
    return lambda http: (get_body(http, "/api/v1/runs") or b"").count(b'"graph"') >= runs


DRAWN = """(after) => { const view = document.querySelector('#graph-view');
    return view.dataset.state === 'drawn' && Number(view.dataset.draws) > after; }"""
GROUPED = "Default/Conv2D \N{MULTIPLICATION SIGN}"
OPEN_BOX = (  # the Conv2D group, or scope Default when it holds too few nodes to be grouped
    f"#graph-view [data-kind='scope']:is([data-name='Default'], [data-name^='{GROUPED}']) rect"
)


def time_opens(
    url: str, runs: list[str], opens: int, box: str | None = None
) -> dict[str, tuple[list[float], str]]:
    """Seconds from navigation to the drawing, per run; and the status line of the view.
    With ``box`` (a CSS selector): seconds from the double-click on it (once the page shows
    its first drawing) to the next drawing."""
    found: dict[str, tuple[list[float], str]] = {}
    with sync_playwright() as playwright:
        browser = open_chromium(playwright)
        for run in runs:
            times = []
            status = ""
            for _ in range(opens):
                context = browser.new_context(viewport={"width": 1440, "height": 900})
                page = context.new_page()
                started = now()
                page.goto(f"{url}/#/graph?run={quote(run)}")
                page.wait_for_function(DRAWN, arg=0, timeout=WAIT_MS, polling="raf")
                if box:
                    page.wait_for_selector(box, timeout=WAIT_MS)
                    started = now()
                    page.dblclick(box, position={"x": 12, "y": 10})
                    page.wait_for_function(DRAWN, arg=1, timeout=WAIT_MS, polling="raf")
                times.append(now() - started)
                status = page.inner_text(".graph-status")
                context.close()
            found[run] = (times, status)
        browser.close()
    return found


def print_table(title: str, sizes: dict[str, int], results: dict, column: str) -> None:
    """One table: a row per run with its operator count, median, min and max seconds."""
    print(title)
    print(f"{'graph':<16}{'operators':>10}{'median s':>10}{'min s':>8}{'max s':>8}  {column}")
    for name, operators in sizes.items():
        times, status = results[f"./{name}"]
        print(
            f"{name:<16}{operators:>10}{statistics.median(times):>10.3f}{min(times):>8.3f}"
            f"{max(times):>8.3f}  {status}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opens", type=int, default=7, help="page opens per graph")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "base"
        sizes = write_runs(base)
        port = free_port()
        command = serve_args(base, port, Path(scratch) / "ws")
        with server_until(
            "sumlens", command, dict(os.environ), port, runs_listed(len(sizes)), 0.1, 60.0
        ):
            url = local(port)
            whole = [name for name in sizes if not name.startswith("onetype")]
            results = time_opens(url, [f"./{name}" for name in whole], args.opens)
            flat = [name for name in sizes if name.startswith(("flat", "onetype"))]
            opened = time_opens(url, [f"./{name}" for name in flat], args.opens, OPEN_BOX)
    load = os.getloadavg()
    machine = f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} CPUs"
    print_table(
        f"graph view: navigation -> drawing on screen, {args.opens} opens per graph ({machine})",
        {name: sizes[name] for name in whole},
        results,
        "first drawing",
    )
    print()
    print_table(
        f"flat scope: double-click on its Conv2D group -> drawing of it open, {args.opens} opens",
        {name: sizes[name] for name in flat},
        opened,
        "drawing of the open group",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
