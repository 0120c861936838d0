"""``export_options={"tensor_format": "npy"}``: every recorded tensor also as a ``.npy`` file."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.file_modes import umask
from helpers.summary import mode_of, read_events

from sumlens import SummaryRecord, ops

NPY = {"tensor_format": "npy"}


def export_dir(tmp_path: Path, rec: SummaryRecord) -> Path:
    seconds = re.search(r"summary\.(\d+)\.", Path(rec.log_dir).name)
    assert seconds
    return tmp_path / f"export_{seconds.group(1)}" / "tensor"


@pytest.mark.parametrize(
    "value",
    [
        np.arange(24, dtype=np.float64).reshape(2, 3, 4),
        np.arange(6, dtype=np.int32).reshape(3, 2),
        np.array([True, False]),
        np.arange(5, dtype=np.uint8),
        np.array([2**40 + 1], dtype=np.int64),
        torch.arange(12, dtype=torch.float32).reshape(3, 4).requires_grad_(),
    ],
    ids=["f64", "i32", "bool", "u8", "i64", "torch-grad"],
)
def test_tensors_are_exported_with_dtype_shape_and_the_umask_mode(tmp_path: Path, value) -> None:
    with umask(0o022), SummaryRecord(tmp_path, export_options=NPY) as rec:
        rec.add_value("tensor", "my/tensor", value)
        rec.record(1)
        folder = export_dir(tmp_path, rec)
    path = folder / "my%2Ftensor_1.npy"
    assert sorted(p.name for p in folder.iterdir()) == [path.name]
    expected = value.detach().numpy() if isinstance(value, torch.Tensor) else value
    loaded = np.load(path)
    assert loaded.dtype == expected.dtype
    assert loaded.shape == expected.shape
    np.testing.assert_array_equal(loaded, expected)  # exact, unlike the float32 record
    assert (mode_of(folder), mode_of(path)) == (0o755, 0o644)


def test_only_tensors_are_exported_and_tags_are_url_quoted(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path, export_options=NPY) as rec:
        for step in (1, 2):
            rec.add_value("tensor", "a b/c?d", np.zeros(2))
            rec.add_value("scalar", "s", 1.0)
            rec.add_value("histogram", "h", np.zeros(4))
            rec.add_value("image", "i", np.zeros((1, 3, 2, 2)))
            ops.tensor("from_op", torch.ones(3))
            rec.record(step)
        folder = export_dir(tmp_path, rec)
    assert sorted(p.name for p in folder.iterdir()) == [
        "a%20b%2Fc%3Fd_1.npy",
        "a%20b%2Fc%3Fd_2.npy",
        "from_op_1.npy",
        "from_op_2.npy",
    ]
    assert sorted(p.name for p in folder.parent.iterdir()) == ["tensor"]
    assert len(read_events(tmp_path)) == 2 * 5  # the summary file holds everything


def test_recording_a_step_again_replaces_its_file(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path, export_options=NPY, owner_only=True) as rec:  # read-only
        rec.add_value("tensor", "t", np.zeros(3))
        rec.record(5)
        rec.add_value("tensor", "t", np.ones(3))
        rec.record(5)
        folder = export_dir(tmp_path, rec)
    np.testing.assert_array_equal(np.load(folder / "t_5.npy"), np.ones(3))
    assert (mode_of(folder), mode_of(folder / "t_5.npy")) == (0o700, 0o400)


@pytest.mark.parametrize("options", [None, {"tensor_format": None}])
def test_no_export_without_the_option(tmp_path: Path, options: dict | None) -> None:
    with SummaryRecord(tmp_path, export_options=options) as rec:
        rec.add_value("tensor", "t", np.zeros(3))
        rec.record(1)
    assert list(tmp_path.glob("export_*")) == []


def test_export_is_not_bound_by_max_file_size(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path, export_options=NPY, max_file_size=10_000) as rec:
        rec.add_value("tensor", "small", np.zeros(10))
        rec.record(1)
        folder = export_dir(tmp_path, rec)
    assert (folder / "small_1.npy").exists()
    big = np.arange(100_000, dtype=np.float64)
    with SummaryRecord(tmp_path / "big", export_options=NPY, max_file_size=10_000) as rec:
        rec.add_value("tensor", "big", big)  # too large for the summary file
        rec.record(1)
        folder = export_dir(tmp_path / "big", rec)
    np.testing.assert_array_equal(np.load(folder / "big_1.npy"), big)


def test_reduced_float_tensors_are_exported_as_float32(tmp_path: Path) -> None:
    # bfloat16 has no numpy dtype; fp16 and bf16 are upcast once, at snapshot time.
    with SummaryRecord(tmp_path, export_options=NPY) as rec:
        rec.add_value("tensor", "bf16", torch.ones(2, dtype=torch.bfloat16))
        rec.record(1)
        folder = export_dir(tmp_path, rec)
    loaded = np.load(folder / "bf16_1.npy")
    assert loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, [1.0, 1.0])
