"""``SummaryWriter.file_writer``: torch's ``FileWriter`` API over the writer's own record.

Code written for torch's writer reaches past ``SummaryWriter`` to its file writer: the
recipe that puts hyper-parameters into the same run (``exp, ssi, sei =
torch.utils.tensorboard.summary.hparams(...)``, then ``writer.file_writer.add_summary(exp)``
...) and Lightning's ``TensorBoardLogger`` (``self.experiment._get_file_writer()
.add_summary(exp)``). The ``Summary`` and ``Event`` messages it is handed (compiled by
tensorboard, by torch's copy of it, by tensorboardX or by sumlens) go through the one
record every other value goes through (``SummaryRecord.record_tensorboard_event``): into
the run's TensorBoard event file, in order with the rest, and in MindSpore's format into
the TensorBoard file beside it, where the writer puts what MindSpore's format cannot hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sumlens._checks import check_int, check_number
from sumlens._proto import tensorboard_graph_pb2, tensorboard_pb2
from sumlens.writer.graph_def import graph_events

if TYPE_CHECKING:
    from google.protobuf.message import Message

    from sumlens.writer.summary_writer import SummaryWriter

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
PROTO_PACKAGES = ("tensorboard", "tensorboardX", "sumlens.tbpb")
"""The packages of the TensorBoard messages accepted: tensorboard's (torch's writer uses
them), tensorboardX's and sumlens' own; the same wire format under three names."""


class FileWriter:
    """The event file of a :class:`~sumlens.writer.SummaryWriter`, as torch's ``FileWriter``.

    Its methods write through the writer: after the writer's ``close()`` (or this one's),
    a later message opens a new file in the same directory, as any later value does.
    """

    def __init__(self, writer: SummaryWriter) -> None:
        self._writer = writer

    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self._writer.get_logdir()

    def add_event(self, event: Any, step: Any = None, walltime: float | None = None) -> None:
        """Write a TensorBoard ``Event`` message at ``step`` (the event's own step when None,
        as torch's) and ``walltime`` (now when None; the event's own time is replaced, as
        torch's writer replaces it)."""
        owner = "FileWriter.add_event"
        ours = _as_ours(event, tensorboard_pb2.Event, "event", owner)
        at = ours.step if step is None else _step(step, "step", owner)
        self._write(ours, at, walltime, owner)

    def add_summary(
        self, summary: Any, global_step: Any = None, walltime: float | None = None
    ) -> None:
        """Write a TensorBoard ``Summary`` message (what ``torch.utils.tensorboard.summary``
        makes: ``hparams``, ``scalar`` ...) as one event at ``global_step`` (0 when None)."""
        owner = "FileWriter.add_summary"
        event = tensorboard_pb2.Event()
        event.summary.CopyFrom(_as_ours(summary, tensorboard_pb2.Summary, "summary", owner))
        at = 0 if global_step is None else _step(global_step, "global_step", owner)
        self._write(event, at, walltime, owner)

    def add_graph(self, graph_profile: Any, walltime: float | None = None) -> None:
        """Write a graph: ``graph_profile`` is (``GraphDef``, ``RunMetadata``) messages, as
        torch's ``_pytorch_graph.graph`` returns them."""
        owner = "FileWriter.add_graph"
        if not isinstance(graph_profile, tuple | list) or len(graph_profile) != 2:
            raise TypeError(
                f"For '{owner}', the argument 'graph_profile' must be a pair (GraphDef, "
                f"RunMetadata), but got {type(graph_profile).__name__}"
            )
        graph, run_metadata = graph_profile
        _message(graph, tensorboard_graph_pb2.GraphDef, "graph_profile[0]", owner)
        _message(run_metadata, tensorboard_graph_pb2.RunMetadata, "graph_profile[1]", owner)
        for event in graph_events(graph.SerializeToString(), run_metadata.SerializeToString()):
            self._write(event, 0, walltime, owner)

    def add_onnx_graph(self, graph: Any, walltime: float | None = None) -> None:
        """Write a ``GraphDef`` message (torch's ``load_onnx_graph`` makes one)."""
        owner = "FileWriter.add_onnx_graph"
        _message(graph, tensorboard_graph_pb2.GraphDef, "graph", owner)
        for event in graph_events(graph.SerializeToString(), None):
            self._write(event, 0, walltime, owner)

    def flush(self) -> None:
        """Return once everything written so far is on disk."""
        self._writer.flush()

    def close(self) -> None:
        """Write everything and close the run's file (not the sub-runs of ``add_scalars``,
        as torch's); a later value opens a new file."""
        self._writer._close_file()

    def reopen(self) -> None:
        """Nothing to do: after :meth:`close`, the next value opens a new file by itself.
        (torch's own ``reopen`` fails: its event file writer has no such method.)"""

    def _write(
        self, event: tensorboard_pb2.Event, step: int, walltime: float | None, owner: str
    ) -> None:
        wall = check_number(walltime, "walltime", owner, 0.0, allow_none=True)
        self._writer.summary_record.record_tensorboard_event(event, step, wall)

    def __repr__(self) -> str:
        return f"FileWriter({self.get_logdir()!r})"


def _step(value: Any, name: str, owner: str) -> int:
    """A step as torch's writer takes it (an int, a numpy int, a one-element tensor)."""
    if hasattr(value, "item") and not isinstance(value, int):
        value = value.item()
    return int(check_int(value, name, owner, INT64_MIN, maximum=INT64_MAX))


def _message(value: Any, kind: type[Message], name: str, owner: str) -> None:
    """Refuse ``value`` unless it is a message of the same name as ``kind``, from one of
    :data:`PROTO_PACKAGES`."""
    expected = kind.DESCRIPTOR.name
    descriptor = getattr(value, "DESCRIPTOR", None)
    full_name = getattr(descriptor, "full_name", "")
    package, _, message = full_name.rpartition(".")
    if message != expected or package not in PROTO_PACKAGES:
        raise TypeError(
            f"For '{owner}', the argument '{name}' must be a TensorBoard {expected} message "
            f"(tensorboard's, torch's or tensorboardX's), but got {type(value).__name__} "
            f"{full_name or value!r:.100}"
        )


def _as_ours(value: Any, kind: type[Message], name: str, owner: str) -> Any:
    """``value`` as sumlens' own ``kind`` (the same wire format: what our fields do not name
    is kept as unknown fields, and written back byte for byte)."""
    _message(value, kind, name, owner)
    if isinstance(value, kind):
        return value
    return kind.FromString(value.SerializeToString())
