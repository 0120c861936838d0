"""The drop-in's last gaps, each against torch's own writer on the same calls (issue 40,
item 3): embedding labels given as tensors and arrays, ``add_graph`` raising what torch's
raises, torch's ``file_writer`` API (the hparams-in-the-same-run recipe, Lightning's
``TensorBoardLogger``), and ``add_onnx_graph(prototxt=...)``. Both runs are read back with
TensorBoard's ``EventAccumulator``."""

from __future__ import annotations

import collections
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.graph_zoo import DataDependent
from helpers.tensorboard import accumulator

import sumlens._log
from sumlens import SummaryWriter

torch = pytest.importorskip("torch")
tb = pytest.importorskip("torch.utils.tensorboard")
from torch import nn  # noqa: E402  (after the skip: torch may be absent)
from torch.utils.tensorboard.summary import hparams, scalar  # noqa: E402

WRITERS = {"torch": tb.SummaryWriter, "ours": SummaryWriter}


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once-per-cause warnings are remembered for the process; each test starts afresh."""
    monkeypatch.setattr(sumlens._log, "_warned", set())


# ---- add_embedding's labels ------------------------------------------------------------------

LABELS = {
    "float tensor": (torch.tensor([33.0, 44.0, 55.0]), None),
    "int tensor": (torch.tensor([1, 2, 3]), None),
    "1-D array": (np.array([7, 8, 9]), None),
    "float32 array": (np.array([1.5, 2.0, 3.25], dtype=np.float32), None),
    "(N, 1) array": (np.array([[1], [2], [3]]), None),
    "(N, 1) tensor": (torch.tensor([[1], [2], [3]]), None),
    "strings": (["cat", "dog", "émeu"], None),
    "2-D list": ([["a", 1], ["b", 2], ["c", 3]], ["name", "value"]),
    "tensor and str columns": (
        list(zip(torch.tensor([1.0, 2.0, 3.0]), ["x", "y", "z"], strict=True)),
        ["digit", "dataset"],
    ),
    "empty header": (["a", "b", "c"], []),
}


@pytest.mark.parametrize("case", LABELS)
def test_embedding_labels_are_written_as_torchs_writer_writes_them(
    tmp_path: Path, case: str
) -> None:
    metadata, header = LABELS[case]
    for name, writer_class in WRITERS.items():
        with writer_class(str(tmp_path / name)) as writer:
            writer.add_embedding(
                torch.rand(3, 4), metadata=metadata, metadata_header=header, tag="emb"
            )
    theirs, ours = ((tmp_path / name / "00000" / "emb" / "metadata.tsv") for name in WRITERS)
    assert ours.read_bytes() == theirs.read_bytes()


def test_embedding_columns_of_a_2d_array_which_torchs_writer_cannot_join(tmp_path: Path) -> None:
    """torch's writer fails to join a header list to an array (a numpy ufunc error); ours
    writes each row's cells."""
    with SummaryWriter(tmp_path) as writer:
        writer.add_embedding(
            np.ones((2, 3)), metadata=np.array([[1, 2], [3, 4]]), metadata_header=["a", "b"]
        )
    assert (tmp_path / "00000" / "default" / "metadata.tsv").read_text() == "a\tb\n1\t2\n3\t4\n"


@pytest.mark.parametrize(
    ("metadata", "header", "message"),
    [
        (torch.tensor([1, 2]), None, r"'metadata' must be a list, array or tensor of one label "),
        (np.float64(3.0), None, r"'metadata' must be a list, array or tensor .* got float64"),
        (["a", "b\nc", "d"], None, r"metadata\[1\] must not hold tabs or line breaks"),
        ([["a", 1], ["b"], ["c", 3]], ["n", "v"], r"metadata\[1\] must be a list of 2 columns"),
        (["a", "b", "c"], "name", r"'metadata_header' must be a list, array or tensor"),
    ],
)
def test_embedding_labels_that_cannot_be_written_are_named(
    tmp_path: Path, metadata: Any, header: Any, message: str
) -> None:
    with SummaryWriter(tmp_path) as writer, pytest.raises(ValueError, match=message):
        writer.add_embedding(np.ones((3, 2)), metadata=metadata, metadata_header=header)


# ---- add_graph raises what torch's writer raises ---------------------------------------------


class DictOut(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(3, 5)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"out": self.linear(x)}


class DictInTuple(DictOut):
    def forward(self, x: torch.Tensor) -> tuple[Any, ...]:  # type: ignore[override]
        return self.linear(x), collections.OrderedDict(inner=self.linear(x))


class ListOut(DictOut):
    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:  # type: ignore[override]
        return [self.linear(x), self.linear(x) * 2]


class Fails(DictOut):
    def forward(self, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        raise ValueError("the model's own error")


class TwoArguments(DictOut):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return self.linear(x) + y


X = torch.zeros(1, 3)
REFUSED: dict[str, tuple[Callable[[], nn.Module], Any, dict[str, Any], type, str]] = {
    "a wrong shape": (
        lambda: nn.Linear(3, 5),
        torch.rand(1, 9),
        {},
        RuntimeError,
        r"Linear fails on input_to_model \(Tensor\[1, 9\] float32\).*mat1 and mat2",
    ),
    "a dict output, strict": (
        DictOut,
        X,
        {},
        RuntimeError,
        r"the output of DictOut holds a dict \(output\).*use_strict_trace=False",
    ),
    "a dict inside the output, strict": (
        DictInTuple,
        X,
        {"use_strict_trace": True},
        RuntimeError,
        r"holds a dict \(output\[1\]\)",
    ),
    "the forward's own error": (Fails, X, {}, ValueError, "the model's own error"),
    "a missing argument": (TwoArguments, X, {}, TypeError, "missing 1 required positional"),
    "no input": (lambda: nn.Linear(3, 5), None, {}, RuntimeError, "input_to_model is None"),
}


@pytest.mark.parametrize("file_format", ["tensorboard", "mindspore"])
@pytest.mark.parametrize("case", REFUSED)
def test_add_graph_raises_what_torchs_writer_raises(
    tmp_path: Path, case: str, file_format: str, capsys: pytest.CaptureFixture[str]
) -> None:
    make, inputs, options, error, message = REFUSED[case]
    with pytest.raises(error), tb.SummaryWriter(str(tmp_path / "torch")) as theirs:
        theirs.add_graph(make(), inputs, **options)
    capsys.readouterr()  # torch's writer prints the error
    ours = SummaryWriter(tmp_path / "ours", file_format=file_format)
    with ours, pytest.raises(error, match=message) as raised:
        ours.add_graph(make(), inputs, **options)
    assert "SummaryWriter.add_graph" in str(raised.value)
    if file_format == "tensorboard":
        assert not accumulator(tmp_path / "ours").Tags()["graph"]


GRAPHED: dict[str, tuple[Callable[[], nn.Module], Any, dict[str, Any], bool]] = {
    "data-dependent control flow": (DataDependent, torch.randn(2, 4), {}, True),
    "a dict output, not strict": (DictOut, X, {"use_strict_trace": False}, False),
    "a list output, strict": (ListOut, X, {}, False),
    "a list of arguments": (lambda: nn.Linear(3, 5), [X], {}, False),
}


@pytest.mark.parametrize("case", GRAPHED)
def test_add_graph_writes_a_graph_where_torchs_writer_does(
    tmp_path: Path, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The module hierarchy stands in only for a model torch's writer traces and export
    cannot follow (said once in the log); the others get their operator graph."""
    make, inputs, options, hierarchy = GRAPHED[case]
    for name, writer_class in WRITERS.items():
        with (
            caplog.at_level(logging.WARNING, logger="sumlens"),
            writer_class(str(tmp_path / name)) as writer,
        ):
            writer.add_graph(make(), inputs, **options)
    assert accumulator(tmp_path / "torch").Tags()["graph"]
    graph = accumulator(tmp_path / "ours").Graph()
    fallback = [r for r in caplog.records if "module hierarchy instead" in r.getMessage()]
    assert len(fallback) == int(hierarchy)
    ops = {node.op for node in graph.node}
    assert ("Linear" in ops) == hierarchy and ("aten::linear" in ops) != hierarchy


def test_add_graph_leaves_each_modules_mode_as_it_was(tmp_path: Path) -> None:
    """Checking a model that export cannot follow runs it in eval mode, as torch's writer
    does; afterwards every module has its own mode back (a frozen part stays in eval)."""
    model = DataDependent().train()
    model.negative.eval()
    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(model, torch.randn(2, 4))
    assert (model.training, model.positive.training, model.negative.training) == (
        True,
        True,
        False,
    )


# ---- file_writer: torch's FileWriter API -----------------------------------------------------


def test_file_writer_is_there_while_open_and_none_after_close(tmp_path: Path) -> None:
    seen: dict[str, list[Any]] = {}
    for name, writer_class in WRITERS.items():
        writer = writer_class(str(tmp_path / name))
        opened = writer.file_writer
        logdir = opened.get_logdir()
        writer.add_scalar("loss", 1.0, 0)
        writer.close()
        closed = writer.file_writer
        again = writer._get_file_writer()  # torch's name, as Lightning calls it
        writer.add_scalar("loss", 2.0, 1)
        writer.close()
        seen[name] = [
            opened is not None,
            logdir == str(tmp_path / name),
            writer.get_logdir() == str(tmp_path / name),
            closed,
            again is not None and again.get_logdir() == logdir,
            len([f for f in os.listdir(tmp_path / name) if "tfevents" in f]),
        ]
        steps = [(e.step, e.value) for e in accumulator(tmp_path / name).Scalars("loss")]
        assert steps == [(0, 1.0), (1, 2.0)]
    assert seen["ours"] == seen["torch"] == [True, True, True, None, True, 2]
    from sumlens.writer.file_writer import FileWriter

    assert isinstance(SummaryWriter(tmp_path / "kind").file_writer, FileWriter)


def _hparams_recipe(writer: Any) -> None:
    """The recipe that puts hyper-parameters into the run itself (not a sub-run)."""
    exp, ssi, sei = hparams({"lr": 0.01, "optimizer": "adam"}, {"hp/accuracy": 0.0})
    writer.file_writer.add_summary(exp)
    writer.file_writer.add_summary(ssi)
    writer.file_writer.add_summary(sei)
    for step in range(3):
        writer.add_scalar("hp/accuracy", 0.5 + step / 10, step)


@pytest.mark.parametrize("file_format", ["tensorboard", "mindspore"])
def test_hparams_through_file_writer_land_in_the_same_run(tmp_path: Path, file_format: str) -> None:
    with tb.SummaryWriter(str(tmp_path / "torch")) as theirs:
        _hparams_recipe(theirs)
    with SummaryWriter(tmp_path / "ours", file_format=file_format) as ours:
        _hparams_recipe(ours)
    theirs_acc, ours_acc = accumulator(tmp_path / "torch"), accumulator(tmp_path / "ours")
    content = ours_acc.PluginTagToContent("hparams")
    assert content == theirs_acc.PluginTagToContent("hparams")
    assert set(content) == {
        "_hparams_/experiment",
        "_hparams_/session_start_info",
        "_hparams_/session_end_info",
    }
    assert [d.name for d in (tmp_path / "ours").iterdir() if d.is_dir()] == []  # no sub-run
    if file_format == "tensorboard":
        assert [e.value for e in ours_acc.Scalars("hp/accuracy")] == [
            e.value for e in theirs_acc.Scalars("hp/accuracy")
        ]


def test_lightning_tensorboard_logger_hyperparameters_reach_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lightning's ``TensorBoardLogger`` with torch's writer, then with ours in its place
    (it imports ``torch.utils.tensorboard.SummaryWriter`` when it opens the run):
    ``log_hyperparams`` calls ``experiment._get_file_writer().add_summary(exp, step)``."""
    loggers = pytest.importorskip("lightning.pytorch.loggers")
    for name in WRITERS:
        if name == "ours":
            monkeypatch.setattr(tb, "SummaryWriter", SummaryWriter)
        logger = loggers.TensorBoardLogger(str(tmp_path), name=name, version=0)
        logger.log_hyperparams({"lr": 0.1, "layers": 2}, {"val_loss": 0.25})
        assert isinstance(logger.experiment, WRITERS[name])
        logger.finalize("success")
    theirs, ours = (accumulator(tmp_path / name / "version_0") for name in WRITERS)
    assert ours.PluginTagToContent("hparams") == theirs.PluginTagToContent("hparams")
    assert [(e.step, e.value) for e in ours.Scalars("val_loss")] == [
        (e.step, e.value) for e in theirs.Scalars("val_loss")
    ]


def test_add_event_and_add_summary_keep_torchs_steps_and_times(tmp_path: Path) -> None:
    from tensorboard.compat.proto import event_pb2

    def calls(writer: Any) -> None:
        file_writer = writer.file_writer
        file_writer.add_summary(scalar("a", 1.0), 5, walltime=100.0)
        file_writer.add_summary(scalar("a", 2.0), np.int64(6), walltime=101.0)
        file_writer.add_summary(scalar("b", 3.0))  # step 0, now
        event = event_pb2.Event(step=7, wall_time=1.0, summary=scalar("c", 4.0))
        file_writer.add_event(event, walltime=102.0)  # the event's step, a new time
        file_writer.add_event(event_pb2.Event(summary=scalar("c", 5.0)), step=8, walltime=103.0)
        file_writer.flush()

    for name, writer_class in WRITERS.items():
        with writer_class(str(tmp_path / name)) as writer:
            calls(writer)
    theirs, ours = (accumulator(tmp_path / name) for name in WRITERS)
    for tag in ("a", "c"):
        assert [(e.step, e.wall_time, e.value) for e in ours.Scalars(tag)] == [
            (e.step, e.wall_time, e.value) for e in theirs.Scalars(tag)
        ]
    assert [e.step for e in ours.Scalars("b")] == [0]


def test_file_writer_takes_tensorboardx_messages_and_refuses_others(tmp_path: Path) -> None:
    """tensorboardX compiles the same messages under its own package name (torch's writer
    refuses them); anything else is refused where called, naming the argument."""
    tensorboardx_summary = pytest.importorskip("tensorboardX.summary")
    with SummaryWriter(tmp_path) as writer:
        exp, ssi, sei = tensorboardx_summary.hparams({"lr": 0.1}, {"acc": 0.5})
        for message in (exp, ssi, sei):
            writer.file_writer.add_summary(message, 3)
        with pytest.raises(TypeError, match=r"'summary' must be a TensorBoard Summary message"):
            writer.file_writer.add_summary(b"bytes")
        with pytest.raises(TypeError, match=r"'event' must be a TensorBoard Event message"):
            writer.file_writer.add_event(exp)  # a Summary, not an Event
        with pytest.raises(ValueError, match=r"'walltime' must be finite and >= 0.0"):
            writer.file_writer.add_summary(exp, 1, walltime=float("nan"))
    assert len(accumulator(tmp_path).PluginTagToContent("hparams")) == 3


def test_file_writer_close_closes_the_run_file_and_a_later_value_opens_another(
    tmp_path: Path,
) -> None:
    writer = SummaryWriter(tmp_path)
    writer.add_scalar("x", 1.0, 0)
    writer.file_writer.close()
    writer.add_scalar("x", 2.0, 1)  # torch's writer raises OSError('Writer is closed') here
    writer.close()
    assert [e.value for e in accumulator(tmp_path).Scalars("x")] == [1.0, 2.0]


# ---- add_onnx_graph(prototxt=...) ------------------------------------------------------------


def test_add_onnx_graph_takes_torchs_keyword(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
    )
    path = tmp_path / "net.onnx"
    onnx.save(helper.make_model(graph), str(path))
    for name, writer_class in WRITERS.items():
        with writer_class(str(tmp_path / name)) as writer:
            writer.add_onnx_graph(prototxt=str(path))
    capsys.readouterr()  # torch's writer prints the nodes
    theirs, ours = (accumulator(tmp_path / name).Graph() for name in WRITERS)
    assert [n.op for n in ours.node if n.op == "Relu"] == ["Relu"]
    assert [n.op for n in theirs.node if n.op == "Relu"] == ["Relu"]
