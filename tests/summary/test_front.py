"""``SummaryRecord`` stays a thin front, checked on the source with ``ast``.

A value has one way in: ``SummaryWriter.add_scalar`` makes one call into the record (its
scalar lane), every path of ``SummaryRecord.record_value`` ends in one call to a part that
submits to the pipeline (the scalar lane or the pending step), and the record never submits
to the pipeline itself. ``record.py`` stays under 400 lines: what grows goes into a part.
"""

from __future__ import annotations

import ast
from pathlib import Path

from helpers.source_imports import SRC

RECORD = SRC / "summary" / "record.py"
WRITER = SRC / "writer" / "summary_writer.py"
MAX_RECORD_LINES = 400
RECORD_DOORS = frozenset(
    {"add_value", "add_scalar", "record", "record_value", "record_tensorboard_event", "put"}
)
"""The record's ways in, and its scalar lane's."""
SUBMITTING_PARTS = frozenset({"self.scalar_lane.put", "self._pending.write_alone"})


def _method(source: Path, cls: str, name: str) -> ast.FunctionDef:
    tree = ast.parse(source.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item
    raise AssertionError(f"{cls}.{name} not found")


def _calls(function: ast.FunctionDef) -> list[str]:
    """The dotted names of the method calls in ``function``."""
    return [
        ast.unparse(node.func)
        for node in ast.walk(function)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    ]


def test_record_module_stays_small() -> None:
    lines = len(RECORD.read_text().splitlines())
    assert lines < MAX_RECORD_LINES, f"summary/record.py has {lines} lines: move a part out"


def test_writer_add_scalar_makes_one_call_into_the_record() -> None:
    doors = [
        call
        for call in _calls(_method(WRITER, "SummaryWriter", "add_scalar"))
        if call.rsplit(".", 1)[1] in RECORD_DOORS
    ]
    assert doors == ["record.scalar_lane.put"], doors


def test_record_value_reaches_the_pipeline_through_one_call_per_path() -> None:
    method = _method(RECORD, "SummaryRecord", "record_value")
    for node in ast.walk(method):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Call):
            assert ast.unparse(node.value.func) in SUBMITTING_PARTS, ast.unparse(node)
    submitting = [call for call in _calls(method) if call in SUBMITTING_PARTS]
    returned = [
        node
        for node in ast.walk(method)
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Call)
    ]
    assert len(submitting) == len(returned), "a part is called besides the one returned"


def test_the_record_never_submits_by_itself() -> None:
    submits = [
        f"record.py:{node.lineno}"
        for node in ast.walk(ast.parse(RECORD.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in ("submit", "_hand_over")
    ]
    assert not submits, f"the pipeline is reached through the parts only: {submits}"
