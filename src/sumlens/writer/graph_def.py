"""A model's graph in TensorBoard's format: TensorFlow's ``GraphDef`` and ``RunMetadata``.

What ``SummaryWriter.add_graph`` writes (``Event.graph_def`` and ``Event.tagged_run_metadata``
under the tag ``"step1"``, as torch's writer does), so that TensorBoard's graph dashboard
and ``EventAccumulator.Graph()`` read it (an ONNX file's: :mod:`sumlens.writer.onnx_graph`).

A torch model's graph is our own capture (:func:`sumlens.graph.capture`: ``torch.export``,
else the module hierarchy with one warning), not ``torch.jit.trace`` as torch's writer
uses: one capture serves both formats, it follows dict inputs and non-tensor arguments that
tracing refuses, and runs the model on fake tensors (nothing computed, nothing in the model
changed). What torch's writer refuses is refused alike (:func:`checked_capture`): a model
that fails on its inputs, and with ``use_strict_trace=True`` a dict among its outputs; the
module hierarchy is written only for a model that torch's tracing follows and export does
not (data-dependent control flow).
Its MindSpore ``GraphProto`` is rewritten here with TensorBoard's conventions:

* names are ``/``-scoped by the module path as torch's writer scopes them:
  ``Net/Sequential[blocks]/Block[0]/Conv2d[conv]/Conv2d-op0``;
* ``op`` is the ATen operator (``aten::conv2d``), or the module class in the hierarchy graph;
* parameters and buffers are nodes in their module's scope (``.../Conv2d[conv]/weight``,
  op ``Parameter`` / ``Buffer``), the model's inputs and outputs ``IO Node``s
  (``input/x``, ``output/output.0``) and constants ``Const`` nodes under the root;
* every node has ``_output_shapes`` (symbolic sizes are -1) and its element type (``T`` on
  operators, ``dtype`` on the others); the operator's arguments are attributes.

The ``RunMetadata`` holds one ``DeviceStepStats`` for the model's device with, per operator,
the bytes of its outputs (from the traced shapes and dtypes: TensorBoard's "memory"
colouring); nothing runs, so there are no times.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from sumlens._proto import anf_ir_pb2, tensorboard_graph_pb2, tensorboard_pb2

if TYPE_CHECKING:
    import torch

    from sumlens.graph import GraphCapture

TB = tensorboard_pb2.DataType
MS = anf_ir_pb2.DataType
PRODUCER = 22
"""``VersionDef.producer``, as torch's writer sets it."""
ROOT_MS_SCOPE = "Default"
IO_OP = "IO Node"
OWNER = "SummaryWriter.add_graph"

TORCH_DTYPES: dict[str, tuple[tensorboard_pb2.DataType, int]] = {
    "bool": (TB.DT_BOOL, 1),
    "int8": (TB.DT_INT8, 1),
    "int16": (TB.DT_INT16, 2),
    "int32": (TB.DT_INT32, 4),
    "int64": (TB.DT_INT64, 8),
    "uint8": (TB.DT_UINT8, 1),
    "uint16": (TB.DT_UINT16, 2),
    "uint32": (TB.DT_UINT32, 4),
    "uint64": (TB.DT_UINT64, 8),
    "float16": (TB.DT_HALF, 2),
    "bfloat16": (TB.DT_BFLOAT16, 2),
    "float32": (TB.DT_FLOAT, 4),
    "float64": (TB.DT_DOUBLE, 8),
    "complex64": (TB.DT_COMPLEX64, 8),
    "complex128": (TB.DT_COMPLEX128, 16),
}
"""Torch dtype name -> (TensorBoard ``DataType``, bytes per element)."""

_MS_NAMES = {
    MS.DT_BOOL: "bool",
    MS.DT_INT8: "int8",
    MS.DT_INT16: "int16",
    MS.DT_INT32: "int32",
    MS.DT_INT64: "int64",
    MS.DT_UINT8: "uint8",
    MS.DT_UINT16: "uint16",
    MS.DT_UINT32: "uint32",
    MS.DT_UINT64: "uint64",
    MS.DT_FLOAT16: "float16",
    MS.DT_FLOAT32: "float32",
    MS.DT_FLOAT64: "float64",
}
"""MindSpore element type -> torch dtype name (the others are in a node's ``dtype`` text)."""


# ---- a torch model --------------------------------------------------------------------------


def graph_def_of(
    model: torch.nn.Module,
    input_to_model: Any = None,
    verbose: bool = False,
    use_strict_trace: bool = True,
) -> tuple[bytes, bytes]:
    """(``GraphDef``, ``RunMetadata``) bytes of ``model`` called with ``input_to_model``
    (see :func:`checked_capture`); ``verbose`` prints the graph, one node a line."""
    from sumlens.graph import unwrap

    graph = checked_capture(model, input_to_model, verbose, use_strict_trace).graph
    inner = unwrap(model)
    graph_def, run_metadata = _Converter(inner, _device_of(inner, input_to_model)).convert(graph)
    if verbose:
        print(describe(graph_def))
    return graph_def.SerializeToString(), run_metadata.SerializeToString()


def checked_capture(
    model: torch.nn.Module,
    input_to_model: Any = None,
    verbose: bool = False,
    use_strict_trace: bool = True,
) -> GraphCapture:
    """The captured graph of ``model`` called with ``input_to_model``, refused where torch's
    ``add_graph`` refuses it.

    ``input_to_model`` is what torch's ``add_graph`` takes: a tuple or list of positional
    arguments, any other value being the single argument (None: no arguments). torch's
    writer traces the model (``torch.jit.trace``) and raises what tracing raises; so does
    this, with the same exception type: a model failing on its inputs (a wrong shape:
    ``RuntimeError``; an error of the forward's own, as it is), no inputs for a forward that
    needs them (``RuntimeError``), and with ``use_strict_trace=True`` (the default) a dict
    among the outputs (``RuntimeError``; False writes its graph). A model that export cannot
    follow and torch's tracing can (data-dependent control flow) gets its module hierarchy
    and one warning (see :func:`sumlens.graph.capture`).
    """
    import torch

    from sumlens.graph import capture

    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    for name, flag in (("verbose", verbose), ("use_strict_trace", use_strict_trace)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    example = _arguments(input_to_model)
    check = _as_torch_traces(model, input_to_model, use_strict_trace)
    captured = capture(model, example, before_fallback=check)
    where = _dict_in(captured.outputs, "output")
    if use_strict_trace and where is not None:
        raise RuntimeError(
            f"For '{OWNER}', the output of {type(model).__name__} holds a dict ({where}), "
            "which torch's writer refuses with use_strict_trace=True (the default; "
            "torch.jit.trace(strict=True) does): pass use_strict_trace=False to write its graph"
        )
    return captured


def _arguments(input_to_model: Any) -> Any:
    """``input_to_model`` as :func:`sumlens.graph.capture` takes it: torch's writer calls the
    model with a list's items, as with a tuple's."""
    if input_to_model is None:
        return ()
    return tuple(input_to_model) if isinstance(input_to_model, list) else input_to_model


def _dict_in(spec: Any, where: str) -> str | None:
    """Where the first dict (or dict subclass) of an output tree spec is, or None."""
    if spec is None or not isinstance(spec.type, type):
        return None
    if issubclass(spec.type, dict):
        return where
    keys = spec.context if isinstance(spec.context, list) else range(spec.num_children)
    for key, child in zip(keys, spec.children(), strict=True):
        found = _dict_in(child, f"{where}[{key!r}]")
        if found is not None:
            return found
    return None


def _as_torch_traces(
    model: torch.nn.Module, input_to_model: Any, use_strict_trace: bool
) -> Callable[[str], None]:
    """What :func:`sumlens.graph.capture` calls before it falls back to the module
    hierarchy: trace the model as torch's writer does (in eval mode; here without
    gradients), and raise what that raises, since torch's writer would write no graph."""
    import torch

    def check(reason: str) -> None:
        modes = [(module, module.training) for module in model.modules()]
        model.train(False)
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the tracer's warnings of a traceable model
                torch.jit.trace(model, input_to_model, strict=use_strict_trace)
        except Exception as err:
            refusal = _refusal(err, model, input_to_model, reason)
            if refusal is err:
                raise
            raise refusal from err
        finally:  # each module's own mode back (a frozen part stays in eval)
            for module, training in modes:
                module.training = training

    return check


def _refusal(err: Exception, model: torch.nn.Module, input_to_model: Any, reason: str) -> Exception:
    """``err`` of torch's tracing, as an error of the same type that says what was called
    on what (``err`` itself when its type takes no message alone)."""
    name = type(model).__name__
    if input_to_model is None:
        text = (
            f"For '{OWNER}', input_to_model is None and {name} cannot be captured without "
            f"inputs ({reason}); torch's writer fails too ({type(err).__name__}: {err}): pass "
            "the forward's arguments (a tensor, or a tuple of them)"
        )
    else:
        text = (
            f"For '{OWNER}', {name} fails on input_to_model ({_shown(input_to_model)}), and "
            f"torch's writer fails alike; no graph is written: {type(err).__name__}: {err}"
        )
    try:
        return type(err)(text)
    except Exception:  # an exception type with arguments of its own
        return err


def _shown(value: Any) -> str:
    """Tensors as ``Tensor[1, 9] float32``, containers of them as such, others by type."""
    if isinstance(value, list | tuple):
        return f"({', '.join(_shown(item) for item in value)})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {_shown(item)}" for key, item in value.items()) + "}"
    shape = getattr(value, "shape", None)
    if shape is not None:
        dtype = str(getattr(value, "dtype", "")).removeprefix("torch.")
        return f"{type(value).__name__}{list(shape)} {dtype}".rstrip()
    return type(value).__name__


def graph_events(graph_def: bytes, run_metadata: bytes | None) -> list[tensorboard_pb2.Event]:
    """The events a graph is written as, in torch's writer's order: the ``GraphDef``, then
    its ``RunMetadata`` tagged ``step1`` when there is one (an ONNX graph has none)."""
    events = [tensorboard_pb2.Event(graph_def=graph_def)]
    if run_metadata is not None:
        tagged = tensorboard_pb2.Event()
        tagged.tagged_run_metadata.tag = "step1"
        tagged.tagged_run_metadata.run_metadata = run_metadata
        events.append(tagged)
    return events


def describe(graph_def: tensorboard_graph_pb2.GraphDef) -> str:
    """``graph_def`` as text, a node a line: ``name = op(input, ...)``."""
    return "\n".join(f"{node.name} = {node.op}({', '.join(node.input)})" for node in graph_def.node)


def _device_of(model: torch.nn.Module, example: Any) -> str:
    """TensorFlow's name of the device the model's tensors live on (``/device:GPU:0``)."""
    import torch

    tensors = [*model.parameters(), *model.buffers()]
    tensors += [item for item in _leaves(example) if isinstance(item, torch.Tensor)]
    device = tensors[0].device if tensors else torch.device("cpu")
    kind = {"cuda": "GPU"}.get(device.type, device.type.upper())
    return f"/device:{kind}:{device.index or 0}"


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    else:
        yield value


def tb_scope(ms_scope: str, root: str) -> str:
    """MindSpore's ``Default/blocks-Sequential/0-Block`` as torch's writer scopes it:
    ``Net/Sequential[blocks]/Block[0]`` (``root`` is the model's class name)."""
    parts = [root]
    for segment in ms_scope.split("/")[1:]:
        name, _, cls = segment.rpartition("-")
        parts.append(f"{cls}[{_clean(name)}]" if name else cls)
    return "/".join(parts)


def _clean(name: str) -> str:
    """A module or parameter name as one segment of a node name: ``/`` would open a scope
    and ``:`` name an output in TensorFlow's syntax."""
    return name.replace("/", "_").replace(":", "_")


class _Converter:
    """One MindSpore ``GraphProto`` of ``model`` into a ``GraphDef`` and ``RunMetadata``."""

    def __init__(self, model: torch.nn.Module, device: str) -> None:
        from sumlens.graph.common import module_classes, scope_of

        self.root = type(model).__name__
        self.graph = tensorboard_graph_pb2.GraphDef()
        self.graph.versions.producer = PRODUCER
        self.run = tensorboard_graph_pb2.RunMetadata()
        self.stats = self.run.step_stats.dev_stats.add(device=device)
        self.device = device
        self.names: dict[str, str] = {}
        """Input name in the GraphProto (node id, parameter, constant key) -> node name."""
        classes = module_classes(model)
        self.owners: dict[str, tuple[str, str]] = {}
        """Parameter or buffer name -> (its node's name, op)."""
        for kind, named in (
            ("Parameter", model.named_parameters(remove_duplicate=False)),
            ("Buffer", model.named_buffers(remove_duplicate=False)),
        ):
            for full, _ in named:
                path, _, attr = full.rpartition(".")
                scope = tb_scope(scope_of(path, classes), self.root)
                self.owners[full] = (f"{scope}/{_clean(attr)}", kind)
        self.dtypes = {
            full: str(tensor.dtype).removeprefix("torch.")
            for full, tensor in [*model.named_parameters(), *model.named_buffers()]
        }
        """Parameter name -> its torch dtype name, for the dtypes MindSpore's enum has no
        code for (see :func:`_tensors`)."""
        self.texts: dict[str, str] = {}
        """Node id -> its ``dtype`` text, the same for the node's outputs."""

    def convert(
        self, graph: anf_ir_pb2.GraphProto
    ) -> tuple[tensorboard_graph_pb2.GraphDef, tensorboard_graph_pb2.RunMetadata]:
        for param in graph.parameters:
            self._parameter(param)
        for const in graph.const_vals:
            self._const(const.key, const.value)
        for node in graph.node:
            self.names[node.name] = (
                f"{tb_scope(node.scope, self.root)}/" + (node.full_name.rpartition("/")[2])
            )
        for node in graph.node:
            self._operator(node)
        for index, output in enumerate(graph.outputs):
            text = self.texts.get(output.name, "")
            out = self._node(f"output/output.{index}", IO_OP, output.type, "dtype", text)
            if output.name in self.names:
                out.input.append(self.names[output.name])
        return self.graph, self.run

    def _node(
        self, name: str, op: str, value_type: anf_ir_pb2.TypeProto, type_attr: str, text: str = ""
    ) -> tensorboard_graph_pb2.NodeDef:
        node = self.graph.node.add(name=name, op=op)
        outputs = [
            (_shape_of(shape), TORCH_DTYPES.get(name, (TB.DT_INVALID, 0))[0])
            for shape, name in _tensors(value_type, text)
        ]
        set_outputs(node, outputs, type_attr)
        return node

    def _parameter(self, param: anf_ir_pb2.ParameterProto) -> None:
        owner = self.owners.get(param.name)
        if owner is None:  # one of the model's inputs
            name, op = f"input/{param.name}", IO_OP
        else:
            name, op = owner
        self._node(name, op, param.type, "dtype", self.dtypes.get(param.name, ""))
        self.names[param.name] = name

    def _const(self, key: str, value: anf_ir_pb2.ValueProto) -> None:
        name = f"{self.root}/{key}"
        if value.dtype == MS.DT_TENSOR:  # a tensor constant: its type and shape, no values
            tensor = anf_ir_pb2.TypeProto(data_type=MS.DT_TENSOR)
            tensor.tensor_type.elem_type = value.tensor_val.data_type
            for size in value.tensor_val.dims:
                tensor.tensor_type.shape.dim.add(size=size)
            self._node(name, "Const", tensor, "dtype")
        else:
            self.graph.node.add(name=name, op="Const").attr["value"].CopyFrom(_attr_of(value))
        self.names[key] = name

    def _operator(self, node: anf_ir_pb2.NodeProto) -> None:
        attrs = {attr.name: attr.value for attr in node.attribute}
        aten = attrs.pop("aten", None)
        if aten is not None:  # "aten.conv2d.default" -> "aten::conv2d", as torch's writer
            namespace, _, rest = aten.str_val.partition(".")
            op = f"{namespace}::{rest.partition('.')[0]}"
        else:
            op = node.op_type
        dtype = attrs.get("dtype")
        text = dtype.str_val if dtype is not None and dtype.dtype == MS.DT_STRING else ""
        self.texts[node.name] = text
        name = self.names[node.name]
        proto = self._node(name, op, node.output_type, "T", text)
        proto.device = self.device
        proto.input.extend(self.names[item.name] for item in node.input if item.name in self.names)
        for key, value in attrs.items():
            proto.attr[key].CopyFrom(_attr_of(value))
        stats = self.stats.node_stats.add(node_name=name)
        stats.memory.add(allocator_name=self.device, total_bytes=_bytes_of(node.output_type, text))


def set_outputs(
    node: tensorboard_graph_pb2.NodeDef,
    outputs: list[tuple[tensorboard_pb2.TensorShapeProto, tensorboard_pb2.DataType]],
    type_attr: str,
) -> None:
    """Give ``node`` its outputs' ``_output_shapes`` and types (one type, or a list)."""
    if not outputs:
        return
    node.attr["_output_shapes"].list.shape.extend(shape for shape, _ in outputs)
    if len(outputs) == 1:
        node.attr[type_attr].type = outputs[0][1]
    else:
        node.attr[type_attr].list.type.extend(dtype for _, dtype in outputs)


def _tensor_types(value_type: anf_ir_pb2.TypeProto) -> list[anf_ir_pb2.TypeProto]:
    """The tensors of an output type, tuples flattened."""
    if value_type.data_type == MS.DT_TENSOR:
        return [value_type]
    if value_type.data_type == MS.DT_TUPLE:
        return [
            leaf for item in value_type.sequence_type.elem_types for leaf in _tensor_types(item)
        ]
    return []


def _shape_of(shape: anf_ir_pb2.TensorShapeProto) -> tensorboard_pb2.TensorShapeProto:
    proto = tensorboard_pb2.TensorShapeProto()
    for dim in shape.dim:
        proto.dim.add(size=dim.size, name=dim.name)
    return proto


def _tensors(
    value_type: anf_ir_pb2.TypeProto, text: str
) -> list[tuple[anf_ir_pb2.TensorShapeProto, str]]:
    """(shape, torch dtype name) of each tensor of a value. ``text`` is the node's ``dtype``
    attribute: it names, in order, the dtypes MindSpore's enum has no code for (bfloat16 ...)."""
    unmapped = iter(name.strip() for name in text.split(","))
    return [
        (leaf.tensor_type.shape, _MS_NAMES.get(leaf.tensor_type.elem_type) or next(unmapped, ""))
        for leaf in _tensor_types(value_type)
    ]


def _bytes_of(value_type: anf_ir_pb2.TypeProto, text: str) -> int:
    """Bytes of the tensors of a value (one of a symbolic size counts as unknown: 0)."""
    total = 0
    for shape, name in _tensors(value_type, text):
        sizes = [dim.size for dim in shape.dim]
        if all(size >= 0 for size in sizes):
            total += math.prod(sizes) * TORCH_DTYPES.get(name, (0, 0))[1]
    return total


def _attr_of(value: anf_ir_pb2.ValueProto) -> tensorboard_graph_pb2.AttrValue:
    """A MindSpore attribute value (see ``sumlens.graph.common.value_of``) as an
    ``AttrValue``: numbers, flags and text as such, flat lists as lists, tuples as text."""
    attr = tensorboard_graph_pb2.AttrValue()
    kind = value.dtype
    if kind == MS.DT_BOOL:
        attr.b = value.bool_val
    elif kind == MS.DT_INT64:
        attr.i = value.int_val
    elif kind == MS.DT_FLOAT64:
        attr.f = value.double_val
    elif kind in (MS.DT_STRING, MS.DT_TYPE):
        attr.s = value.str_val.encode()
    elif kind == MS.DT_INTS64:
        attr.list.i.extend(value.int_vals)
    elif kind == MS.DT_FLOATS64:
        attr.list.f.extend(value.double_vals)
    elif kind == MS.DT_BOOLS:
        attr.list.b.extend(value.bool_vals)
    elif kind == MS.DT_TUPLE:
        attr.s = _text_of(value).encode()
    else:  # None
        attr.s = b"None"
    return attr


def _text_of(value: anf_ir_pb2.ValueProto) -> str:
    """A tuple attribute as text: ``(1, (2, 3), 'same')``."""
    if value.dtype != MS.DT_TUPLE:
        attr = _attr_of(value)
        field = attr.WhichOneof("value")
        if field == "list":
            return str(tuple(attr.list.i or attr.list.f or attr.list.b))
        return repr(attr.s.decode()) if field == "s" else str(getattr(attr, field))
    return "(" + ", ".join(_text_of(item) for item in value.values) + ")"
