"""What the real MindInsight 2.3.1 shows of the graphs written by ``sumlens.graph``.

Two train jobs are written: ``./lenet`` (LeNet through ``SummaryRecord(network=...)``,
plus a train lineage and the dataset graph of a DataLoader over a TensorDataset with a
transform) and ``./resnet18`` (a hand-written ResNet-18). MindInsight is started over
them with the classes of ``mindinsight_probe.py``: every route the probe queries, and
besides, every name scope of each graph expanded (the probe itself only opens the root's
children). The normalized answers are compared with
``tests/data/mindinsight/graph_runs.json``; regenerate it with
``SUMLENS_UPDATE_MINDINSIGHT_EXPECTED=1`` after an intended change (and review the diff).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import torch
from helpers.mindinsight import (
    PROBE,
    assert_matches_committed,
    event_file_names,
    free_ports,
    mindinsight_bin,
    replace_strings,
    run_dir,
)
from torch.utils.data import DataLoader, Dataset, TensorDataset

from sumlens import SummaryRecord
from sumlens.graph import from_dataloader
from sumlens.lineage import TrainLineage

pytestmark = pytest.mark.mindinsight

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXPECTED_JSON = REPO / "tests" / "data" / "mindinsight" / "graph_runs.json"
JOBS = ("./lenet", "./resnet18")
LOAD_TIMEOUT = 90


def _load(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


probe = _load("mindinsight_probe", PROBE)
zoo = _load("graph_zoo", REPO / "tests" / "helpers" / "graph_zoo.py")


class Scaled(Dataset):
    """A TensorDataset whose inputs go through a transform."""

    def __init__(self, base: TensorDataset, transform: Any) -> None:
        self.base, self.transform = base, transform

    def __len__(self) -> int:
        return len(self.base)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        x, y = self.base[i]
        return self.transform(x), y


class Normalize:
    def __init__(self, mean: float, std: float) -> None:
        self.mean, self.std = mean, std

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std


def write_lenet(log_dir: Path) -> None:
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(8, 1, 28, 28), torch.arange(8) % 10)
    loader = DataLoader(Scaled(data, Normalize(0.5, 0.25)), batch_size=4, shuffle=True)
    model = zoo.LeNet()
    with SummaryRecord(log_dir, network=model, raise_exception=True) as record:
        record.add_value("dataset_graph", "data", from_dataloader(loader))
        record.add_value(
            "train_lineage",
            "train",
            TrainLineage(
                optimizer="SGD",
                learning_rate=0.1,
                loss_function="CrossEntropyLoss",
                epoch=1,
                batch_size=4,
                train_dataset_size=8,
                network="LeNet",
                loss=1.5,
            ),
        )
        for step, (x, _) in enumerate(loader, start=1):
            model(x)
            record.add_value("scalar", "loss", 1.0 / step)  # exact on every machine
            record.record(step)


def write_resnet(log_dir: Path) -> None:
    model = zoo.ResNet18(num_classes=10)
    with SummaryRecord(log_dir, network=model, raise_exception=True) as record:
        with torch.no_grad():
            model(torch.randn(2, 3, 32, 32))
        record.add_value("scalar", "loss", 1.0)
        record.record(1)


def _expand_scopes(client: Any, train_id: str, tag: str) -> dict[str, Any]:
    """Every name scope of the graph, expanded (``graphs/nodes?name=<scope>``)."""
    params = {"train_id": train_id, "tag": tag, "mode": "normal"}
    found: dict[str, Any] = {}
    queue = [""]
    while queue:
        scope = queue.pop(0)
        reply = client.get(
            "/datavisual/graphs/nodes", dict(params, name=scope) if scope else params
        )
        found[scope or "<root>"] = probe.summarize_nodes(reply)
        for node in reply.get("nodes", []) if isinstance(reply, dict) else []:
            if node.get("type") == "name_scope":
                queue.append(node["name"])
    return found


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    exe = mindinsight_bin()
    tmp = tmp_path_factory.mktemp("mindinsight_graph")
    base = tmp / "runs"
    write_lenet(run_dir(base, "./lenet"))
    write_resnet(run_dir(base, "./resnet18"))
    (port,) = free_ports(1)
    workspace = tmp / "workspace"
    workspace.mkdir()
    server = probe.MindInsight(exe, str(base), port, str(workspace), False)
    result: dict[str, Any] = {}
    try:
        server.start(0)
        client = probe.Client(port)
        probe.wait_loaded(client, LOAD_TIMEOUT)
        listing = client.get("/datavisual/train-jobs", {"offset": 0, "limit": 999})
        jobs = {job["train_id"]: job for job in listing["train_jobs"]}
        assert sorted(jobs) == sorted(JOBS)
        result["jobs"] = {}
        for train_id in JOBS:
            job = probe.probe_job(client, jobs[train_id])
            tags = job["plugins"]["plugins"]["graph"]
            job["scopes"] = {tag: _expand_scopes(client, train_id, tag) for tag in tags}
            result["jobs"][train_id] = job
        result["lineage"] = client.post("/lineagemgr/lineages", {})
    finally:
        log = server.log_lines()
        server.stop()
        shutil.rmtree(workspace, ignore_errors=True)
    result["mindinsight_log"] = sorted({f"{level} {sub}: {msg}" for level, sub, msg in log})
    names = {str(base): "<base>"}
    for train_id in JOBS:
        for kind in ("summary", "lineage"):
            for i, name in enumerate(event_file_names(run_dir(base, train_id), kind)):
                names[name] = f"<{kind} file #{i}>"
    return replace_strings(probe.normalize(result), names)


def _children(scopes: dict[str, Any], scope: str) -> dict[str, str]:
    return {n["name"]: n["type"] for n in scopes[scope]["nodes"]}


def _graph_scopes(shown: dict[str, Any], train_id: str) -> dict[str, Any]:
    (scopes,) = shown["jobs"][train_id]["scopes"].values()
    return scopes


def test_loads_without_errors_or_warnings(shown: dict[str, Any]) -> None:
    assert shown["mindinsight_log"] == []
    for train_id in JOBS:
        plugins = shown["jobs"][train_id]["plugins"]["plugins"]
        assert plugins["graph"] == ["<summary file #0>"], train_id


@pytest.mark.parametrize(
    ("train_id", "layers"),
    [("./lenet", zoo.LENET_LAYERS), ("./resnet18", zoo.RESNET_LAYERS)],
)
def test_one_scope_per_layer(shown: dict[str, Any], train_id: str, layers: tuple[str]) -> None:
    scopes = _graph_scopes(shown, train_id)
    assert _children(scopes, "<root>") == {"Default": "name_scope"}
    model = zoo.LeNet() if train_id == "./lenet" else zoo.ResNet18()
    expected = {
        f"Default/{name}-{type(getattr(model, name)).__name__}": "name_scope" for name in layers
    }
    children = _children(scopes, "Default")
    assert {k: v for k, v in children.items() if v == "name_scope"} == expected
    # besides the layers, only operators the model's own forward runs (torch.flatten)
    others = {k: v for k, v in children.items() if v != "name_scope"}
    assert others == ({} if train_id == "./lenet" else {"Default/Flatten-op0": "Flatten"})


def test_expanding_a_scope_lists_its_operators(shown: dict[str, Any]) -> None:
    lenet = _graph_scopes(shown, "./lenet")
    conv1 = _children(lenet, "Default/conv1-Conv2d")
    assert conv1["Default/conv1-Conv2d/Conv2d-op0"] == "Conv2d"
    assert conv1["Default/conv1-Conv2d/conv1.weight"] == "Parameter"
    relu = _children(lenet, "Default/relu-ReLU")
    assert sorted(relu) == [f"Default/relu-ReLU/Relu-op{i}" for i in range(4)]
    resnet = _graph_scopes(shown, "./resnet18")
    assert sorted(_children(resnet, "Default/layer1-Sequential")) == [
        "Default/layer1-Sequential/0-BasicBlock",
        "Default/layer1-Sequential/1-BasicBlock",
    ]
    block = "Default/layer2-Sequential/0-BasicBlock"
    assert _children(resnet, block)[f"{block}/downsample-Sequential"] == "name_scope"
    assert f"{block}/Add-op0" in _children(resnet, block)  # the residual connection
    conv = _children(resnet, f"{block}/conv1-Conv2d")
    assert conv[f"{block}/conv1-Conv2d/Conv2d-op0"] == "Conv2d"
    # every operator of every scope is reachable by expanding scopes
    operators = {
        name
        for scopes in (lenet, resnet)
        for listing in scopes.values()
        for name, kind in ((n["name"], n["type"]) for n in listing["nodes"])
        if "-op" in name and kind not in ("name_scope", "aggregation_scope")
    }
    assert len(operators) >= zoo.LENET_OPERATORS + zoo.RESNET_OPERATORS


def test_dataset_graph_in_lineage(shown: dict[str, Any]) -> None:
    (row,) = [r for r in shown["lineage"]["object"] if r["summary_dir"] == "./lenet"]
    graph = row["dataset_graph"]
    assert graph["op_type"] == "Batch"
    assert (graph["batch_size"], graph["shuffle"], graph["drop_last"]) == (4, True, False)
    assert graph["sampler"]["sampler_name"] == "RandomSampler"
    (mapped,) = graph["children"]
    assert [op["tensor_op_name"] for op in mapped["operations"]] == ["Normalize"]
    (wrapper,) = mapped["children"]
    (tensors,) = wrapper["children"]
    assert tensors["op_type"] == "TensorDataset"
    assert row["model_lineage"]["network"] == "LeNet"
    endpoint = shown["jobs"]["./lenet"]["dataset_graph"]
    assert endpoint["dataset_graph"] == graph


def test_matches_committed_output(shown: dict[str, Any]) -> None:
    assert_matches_committed(shown, EXPECTED_JSON, "the graphs")
