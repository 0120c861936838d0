"""What PyTorch's tools write, as the dashboard's API serves it: every tag and every value.

Logs written in the test run by torch's ``SummaryWriter`` (every method), Lightning's
``TensorBoardLogger`` (a 2-epoch fit with ``log_graph`` and ``log_hyperparams``) and Hugging
Face's ``Trainer`` (``report_to="tensorboard"``) are served by the real loader; the real
TensorBoard ``EventAccumulator`` reads the same files. Each run's ``/api/v1/runs`` entry
lists exactly the tags the accumulator finds, per plugin, and skips only what sumlens
does not show (torch's mesh and custom scalars, said by name); the routes give back the
values the library wrote.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from google.protobuf.json_format import MessageToDict
from helpers.board import route_client, wait_until
from helpers.tb_logs import hf_tensorboard_run, lightning_tensorboard_run, torch_every_method
from helpers.tensorboard import accumulator
from starlette.testclient import TestClient
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from tensorboard.util import tensor_util

from sumlens._proto import tensorboard_graph_pb2, tensorboard_plugins_pb2
from sumlens.board.query.markdown import render_markdown
from sumlens.board.settings import BoardSettings

pytest.importorskip("lightning")
pytest.importorskip("transformers")

TENSOR_PLUGINS = {"text": "text", "pr_curves": "pr_curve", "hparams": "hparams"}
"""TensorBoard's plugin names of tensor values -> sumlens's plugins."""
SKIPPED = {"mesh", "custom_scalars"}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("logs")
    torch_every_method(base / "torch")
    lightning_tensorboard_run(base / "lightning")
    hf_tensorboard_run(base / "hf")
    return base


@pytest.fixture(scope="module")
def client(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = BoardSettings.create(base, workspace=tmp_path_factory.mktemp("ws"), watch=False)
    with route_client(settings=settings) as client:
        yield client


def _run_dirs(base: Path) -> dict[str, Path]:
    """Each directory holding event files, by the run id sumlens gives it."""
    found = {}
    for events in base.rglob("events.out.tfevents.*"):
        relative = events.parent.relative_to(base).as_posix()
        found["./" + relative] = events.parent
    return found


def _expected(run: Path) -> tuple[dict[str, set[str]], dict[str, int], object]:
    """The tags the accumulator finds in ``run``, by sumlens plugin; the plugins sumlens
    skips, with their value counts; and the accumulator itself."""
    acc = accumulator(run)
    tags = acc.Tags()
    expected: dict[str, set[str]] = {
        "scalar": set(tags["scalars"]),
        "histogram": set(tags["histograms"]),
        "image": set(tags["images"]),
        "audio": set(tags["audio"]),
        "run_metadata": set(tags["run_metadata"]),
    }
    skipped: dict[str, int] = {}
    for tag in tags["tensors"]:
        plugin = acc.SummaryMetadata(tag).plugin_data.plugin_name
        if plugin in SKIPPED:
            skipped[plugin] = skipped.get(plugin, 0) + len(acc.Tensors(tag))
        else:
            expected.setdefault(TENSOR_PLUGINS[plugin], set()).add(tag)
    with contextlib.suppress(KeyError):  # no hparams: the accumulator raises KeyError
        # the accumulator keeps hyper-parameters' plugin content whatever the value holds
        expected.setdefault("hparams", set()).update(acc.PluginTagToContent("hparams"))
    if tags["graph"]:  # named by the file holding it
        expected["graph"] = {
            path.name
            for path in run.glob("events.out.tfevents.*")
            if any(e.HasField("graph_def") for e in EventFileLoader(str(path)).Load())
        }
    return {plugin: names for plugin, names in expected.items() if names}, skipped, acc


def _runs(client: TestClient, wanted: set[str]) -> dict[str, dict]:
    """The run list once it holds every run in ``wanted``, loaded."""

    def listed() -> dict[str, dict] | None:
        answer = client.get("/api/v1/runs").json()
        runs = {run["id"]: run for run in answer["runs"]}
        return runs if wanted <= set(runs) and not answer.get("loading") else None

    return wait_until(listed, timeout=60)


def test_every_tag_is_listed_and_only_mesh_and_layouts_are_skipped(
    base: Path, client: TestClient
) -> None:
    dirs = _run_dirs(base)
    assert {"./torch", "./lightning/tb/version_0"} <= set(dirs)
    assert any(run.startswith("./hf") for run in dirs)
    runs = _runs(client, set(dirs))
    for run_id, path in dirs.items():
        expected, skipped, _ = _expected(path)
        listed = {p: set(names) for p, names in runs[run_id]["tags"].items() if p != "embedding"}
        assert listed == expected, run_id
        assert runs[run_id]["skipped"] == skipped, run_id
        assert not any(runs[run_id]["damage"][k] for k in ("corrupt_records", "damaged_values"))
    assert runs["./torch"]["skipped"] == {"mesh": 2, "custom_scalars": 1}
    assert runs["./torch"]["tags"]["embedding"] == ["emb:00001"]


def test_scalars_histograms_and_pictures_are_the_librarys(base: Path, client: TestClient) -> None:
    dirs = _run_dirs(base)
    _runs(client, set(dirs))
    for run_id, path in dirs.items():
        expected, _, acc = _expected(path)
        for tag in expected.get("scalar", ()):
            answer = client.get("/api/v1/scalars", params={"run": run_id, "tag": tag}).json()
            (series,) = answer["series"]
            # a step written again with the same value is one point (HF logs its epoch
            # with the training and the evaluation metrics)
            written = [(e.step, e.value) for e in acc.Scalars(tag)]
            written = [p for i, p in enumerate(written) if i == 0 or p != written[i - 1]]
            assert list(zip(series["step"], series["value"], strict=True)) == written, run_id
        for tag in expected.get("histogram", ()):
            answer = client.get("/api/v1/histograms", params={"run": run_id, "tag": tag}).json()
            (series,) = answer["series"]
            written = acc.Histograms(tag)
            assert [h["step"] for h in series["histograms"]] == [e.step for e in written]
            for ours, theirs in zip(series["histograms"], written, strict=True):
                np.testing.assert_array_equal(ours["counts"], theirs.histogram_value.bucket)
        for tag in expected.get("image", ()):
            for written in acc.Images(tag):
                params = {"run": run_id, "tag": tag, "step": written.step}
                answer = client.get("/api/v1/image", params=params)
                assert answer.content == written.encoded_image_string, (run_id, tag)


def test_text_audio_pr_curves_and_hparams_are_the_librarys(base: Path, client: TestClient) -> None:
    dirs = _run_dirs(base)
    _runs(client, set(dirs))
    seen: set[str] = set()
    for run_id, path in dirs.items():
        expected, _, acc = _expected(path)
        for tag in expected.get("text", ()):
            for written in acc.Tensors(tag):
                params = {"run": run_id, "tag": tag, "step": written.step}
                answer = client.get("/api/v1/text", params=params).json()
                cells = tensor_util.make_ndarray(written.tensor_proto).reshape(-1)
                assert answer["html"] == render_markdown(cells[0].decode()), (run_id, tag)
                seen.add("text")
        for tag in expected.get("audio", ()):
            for written in acc.Audio(tag):
                params = {"run": run_id, "tag": tag, "step": written.step}
                answer = client.get("/api/v1/audio", params=params)
                assert answer.content == written.encoded_audio_string
                seen.add("audio")
        for tag in expected.get("pr_curve", ()):
            answer = client.get("/api/v1/pr_curve", params={"run": run_id, "tag": tag}).json()
            (series,) = answer["series"]
            for ours, theirs in zip(series["curves"], acc.Tensors(tag), strict=True):
                array = tensor_util.make_ndarray(theirs.tensor_proto)
                assert ours["step"] == theirs.step
                end = len(ours["tp"])  # TensorBoard's plugin drops the tail with TP + FP = 0
                assert not (array[0, end:] + array[1, end:]).any()
                np.testing.assert_array_equal(ours["tp"], array[0, :end])
                np.testing.assert_array_equal(ours["recall"], array[5, :end])
                seen.add("pr_curve")
        for tag in expected.get("hparams", ()):
            params = {"run": run_id, "plugin": "hparams", "tag": tag}
            answer = client.get("/api/v1/message", params=params).json()
            content = acc.PluginTagToContent("hparams")[tag]
            written = tensorboard_plugins_pb2.HParamsPluginData.FromString(content)
            newest = MessageToDict(written, preserving_proto_field_name=True)
            assert answer["message"].keys() == newest.keys(), (run_id, tag)
            seen.add("hparams")
    assert seen == {"text", "audio", "pr_curve", "hparams"}


def test_graphs_hold_every_node_the_library_wrote(base: Path, client: TestClient) -> None:
    dirs = _run_dirs(base)
    _runs(client, set(dirs))
    graphs = 0
    for run_id, path in dirs.items():
        expected, _, acc = _expected(path)
        for tag in expected.get("graph", ()):
            answer = client.get("/api/v1/graph", params={"run": run_id, "tag": tag}).json()
            ours = {node["name"] for node in answer["graph"]["nodes"]}
            written = tensorboard_graph_pb2.GraphDef.FromString(acc.Graph().SerializeToString())
            assert {node.name for node in written.node} <= ours, run_id
            graphs += 1
    assert graphs == 2  # torch's add_graph and Lightning's log_graph
