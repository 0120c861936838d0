"""A NaN or infinite hyper-parameter is served, as null (``board/proto_json.py``).

``add_hparams({"lr": float("nan")})`` made ``/api/v1/message?plugin=hparams`` answer 500:
protobuf's ``MessageToDict`` refuses a non-finite ``google.protobuf.Value``. Written by
torch's ``SummaryWriter``, ours, and Lightning's ``TensorBoardLogger`` and our
``SumlensLogger``, read by the real loader: every hparams message is served, non-finite
numbers as null (as the scalar routes serve them), everything else as protobuf's JSON
printer gives it, and the lineage table lists the run.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict, SerializeToJsonError
from helpers.board import route_client
from starlette.testclient import TestClient

from sumlens._proto import tensorboard_graph_pb2, tensorboard_plugins_pb2
from sumlens.board.data.loader import Loader

NAN, INF = float("nan"), float("inf")
HPARAMS = {"lr": NAN, "wd": INF, "clip": -INF, "layers": 3, "opt": "sgd"}
SERVED = {"lr": None, "wd": None, "clip": None, "layers": 3.0, "opt": "sgd"}
TAGS = ("_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info")
RUNS = ("./torch", "./ours", "./lightning_tb", "./lightning_ours")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    from lightning.pytorch.loggers import TensorBoardLogger
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from sumlens import SummaryWriter
    from sumlens.integrations.lightning import SumlensLogger

    base = tmp_path_factory.mktemp("nan")
    with TorchWriter(str(base / "torch")) as writer:
        writer.add_hparams(HPARAMS, {"hp/acc": NAN}, run_name=".")
    with SummaryWriter(str(base / "ours")) as writer:
        writer.add_hparams(HPARAMS, {"hp/acc": NAN}, run_name=".")
    for logger in (
        TensorBoardLogger(str(base), name="lightning_tb", version=""),
        SumlensLogger(base, name="lightning_ours", version=""),
    ):
        logger.log_hyperparams(HPARAMS, metrics={"hp/acc": 0.5})
        logger.finalize("success")
    loader = Loader(base, tmp_path_factory.mktemp("ws"))
    loader.poll()
    assert {run["id"] for run in loader.runs()} == set(RUNS)
    with route_client(loader) as client:
        yield client


def _message(client: TestClient, run: str, tag: str) -> dict[str, Any]:
    params = {"run": run, "plugin": "hparams", "tag": tag}
    answer = client.get("/api/v1/message", params=params)
    assert answer.status_code == 200, (run, tag, answer.text)
    return answer.json()["message"]


@pytest.mark.parametrize("run", RUNS)
def test_every_hparams_message_is_served_with_nan_as_null(client: TestClient, run: str) -> None:
    start = _message(client, run, "_hparams_/session_start_info")["session_start_info"]
    assert start["hparams"] == SERVED
    infos = _message(client, run, "_hparams_/experiment")["experiment"]["hparam_infos"]
    assert {info["name"] for info in infos} == set(HPARAMS)
    assert _message(client, run, "_hparams_/session_end_info")["session_end_info"]["status"] == (
        "STATUS_SUCCESS"
    )


def test_the_lineage_table_lists_every_run(client: TestClient) -> None:
    answer = client.get("/api/v1/lineage")
    assert answer.status_code == 200, answer.text
    assert set(RUNS) <= set(answer.json()["runs"])


def test_a_message_without_non_finite_numbers_is_protobufs_json() -> None:
    from sumlens.board.proto_json import message_json

    data = tensorboard_plugins_pb2.HParamsPluginData(version=0)
    data.session_start_info.hparams["lr"].number_value = 0.1
    data.session_start_info.hparams["names"].list_value.values.add().string_value = "a"
    data.session_start_info.start_time_secs = 12.5
    assert message_json(data) == MessageToDict(data, preserving_proto_field_name=True)


def test_non_finite_numbers_are_null_at_any_depth_and_in_float_fields() -> None:
    from sumlens.board.proto_json import message_json

    data = tensorboard_plugins_pb2.HParamsPluginData()
    hparams = data.session_start_info.hparams
    listed = hparams["schedule"].list_value.values
    listed.add().number_value = 0.1
    listed.add().number_value = NAN
    hparams["nested"].struct_value.fields["inf"].number_value = -INF
    data.session_start_info.start_time_secs = INF
    with pytest.raises(SerializeToJsonError):  # protobuf's own printer: the 500 this replaces
        MessageToDict(data)
    found = message_json(data)["session_start_info"]
    assert found["hparams"] == {"schedule": [0.1, None], "nested": {"inf": None}}
    assert found["start_time_secs"] is None
    assert math.isnan(hparams["schedule"].list_value.values[1].number_value)  # left as it was
    # the Value itself, as the lineage table turns one hyper-parameter into a cell
    assert message_json(hparams["schedule"]) == [0.1, None]

    graph = tensorboard_graph_pb2.GraphDef()
    node = graph.node.add(name="n", op="Const")
    node.attr["f"].f = NAN
    node.attr["list"].list.f.extend([1.5, INF])
    node.attr["s"].s = b"NaN"  # a string is never touched
    attrs = message_json(graph)["node"][0]["attr"]
    assert attrs["f"] == {"f": None}
    assert attrs["list"] == {"list": {"f": [1.5, None]}}
    assert attrs["s"] == MessageToDict(node.attr["s"])
