"""What ``add_value`` accepts and what is written: snapshots, dtypes, images, histograms, sizes."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.summary import read_events
from PIL import Image as PILImage

import sumlens.summary.intake as intake
from sumlens import SummaryRecord
from sumlens.io import Event, Histogram
from sumlens.summary.histogram import reference_histogram
from sumlens.summary.intake import MAX_STEP_BYTES


def record_one(tmp_path: Path, plugin: str, value: object, **kwargs: object) -> Event:
    """Write ``value`` as the only value of step 1 and read it back."""
    with SummaryRecord(tmp_path) as rec:
        rec.add_value(plugin, "v", value, **kwargs)
        rec.record(1)
    [event] = read_events(tmp_path)
    assert (event.step, event.plugin, event.tag) == (1, plugin, "v")
    return event


def pixels(event: Event) -> np.ndarray:
    """The decoded RGB pixels of an image event (checked against its stated size)."""
    image = PILImage.open(io.BytesIO(event.value.encoded))
    assert image.format == "PNG"
    array = np.asarray(image.convert("RGB"))
    assert array.shape == (event.value.height, event.value.width, 3)
    return array


def assert_histogram_equal(actual: Histogram, expected: Histogram) -> None:
    np.testing.assert_array_equal(actual.counts, expected.counts)
    np.testing.assert_allclose(actual.left, expected.left, rtol=1e-12)
    np.testing.assert_allclose(actual.width, expected.width, rtol=1e-12)
    for field in ("count", "nan_count", "pos_inf_count", "neg_inf_count"):
        assert getattr(actual, field) == getattr(expected, field), field
    for field in ("min", "max", "sum"):
        assert getattr(actual, field) == pytest.approx(getattr(expected, field), rel=1e-12)


# ---- snapshots --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["numpy", "torch", "torch_grad"])
def test_in_place_change_right_after_add_value_is_not_recorded(tmp_path: Path, kind: str) -> None:
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2) / 24
    if kind == "numpy":
        values = {p: base.copy() for p in ("scalar", "tensor", "histogram", "image")}
        values["scalar"] = np.array([0.25], dtype=np.float32)
    else:
        values = {p: torch.tensor(base, requires_grad=kind == "torch_grad") for p in range(4)}
        values = dict(zip(("scalar", "tensor", "histogram", "image"), values.values(), strict=True))
        values["scalar"] = torch.tensor([0.25], requires_grad=kind == "torch_grad")
    with SummaryRecord(tmp_path) as rec:
        for plugin, value in values.items():
            rec.add_value(plugin, plugin, value)
        for value in values.values():  # at once, before record() and before any write
            if isinstance(value, torch.Tensor):
                with torch.no_grad():
                    value.mul_(-3).add_(100)
            else:
                value *= -3
                value += 100
        rec.record(1)
    events = {e.plugin: e for e in read_events(tmp_path)}
    assert events["scalar"].value == 0.25
    np.testing.assert_array_equal(events["tensor"].value, base)
    assert_histogram_equal(events["histogram"].value, reference_histogram(base))
    expected = record_one(tmp_path / "expected", "image", base)
    np.testing.assert_array_equal(pixels(events["image"]), pixels(expected))


def test_in_place_change_while_the_writer_is_busy_is_not_recorded(tmp_path: Path) -> None:
    value = np.zeros(1000, dtype=np.float64)
    with SummaryRecord(tmp_path) as rec:
        for step in range(50):
            value[:] = step
            rec.add_value("tensor", "t", value)
            rec.record(step)
    for event in read_events(tmp_path):
        np.testing.assert_array_equal(event.value, np.full(1000, event.step, dtype=np.float64))


# ---- scalars ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value,expected",
    [
        (3, 3.0),
        (2.5, 2.5),
        (True, 1.0),
        (np.float64(0.1), np.float32(0.1)),
        (np.int64(-7), -7.0),
        (np.array([[1.5]]), 1.5),
        (torch.tensor(4.25), 4.25),
        (torch.tensor([4.25], requires_grad=True) * 2, 8.5),
        (torch.tensor(1.3, dtype=torch.bfloat16), float(torch.tensor(1.3, dtype=torch.bfloat16))),
        (torch.tensor(1.3, dtype=torch.float16), float(torch.tensor(1.3, dtype=torch.float16))),
        (np.float16(0.3), np.float32(np.float16(0.3))),
    ],
    ids=lambda v: type(v).__name__,
)
def test_scalar_values(tmp_path: Path, value: object, expected: float) -> None:
    event = record_one(tmp_path, "scalar", value)
    assert event.value == pytest.approx(float(np.float32(expected)), rel=0, abs=0)


def test_requires_grad_scalar_keeps_the_graph_intact(tmp_path: Path) -> None:
    weight = torch.ones(3, requires_grad=True)
    loss = (weight * 2).sum()
    with SummaryRecord(tmp_path) as rec:
        rec.add_value("scalar", "loss", loss)
        rec.add_value("histogram", "w", weight)
        rec.add_value("tensor", "w", weight)
        rec.record(1)
    loss.backward()
    np.testing.assert_array_equal(weight.grad.numpy(), [2.0, 2.0, 2.0])
    assert {e.plugin: e.tag for e in read_events(tmp_path)}["scalar"] == "loss"


# ---- tensors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype",
    [
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float32,
        np.float64,
    ],
)
def test_tensor_keeps_dtype_and_shape(tmp_path: Path, dtype: type) -> None:
    value = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    event = record_one(tmp_path, "tensor", value)
    assert event.value.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(event.value, value)


@pytest.mark.parametrize(
    "value",
    [
        np.linspace(-2, 2, 12, dtype=np.float16).reshape(3, 4),
        torch.linspace(-2, 2, 12, dtype=torch.float16).reshape(3, 4),
        torch.linspace(-2, 2, 12, dtype=torch.bfloat16).reshape(3, 4),
        torch.linspace(-2, 2, 12, dtype=torch.bfloat16).reshape(3, 4).requires_grad_(),
    ],
    ids=["np-fp16", "torch-fp16", "torch-bf16", "torch-bf16-grad"],
)
def test_reduced_floats_are_upcast_to_float32(tmp_path: Path, value: object) -> None:
    expected = (
        value.detach().float().numpy() if isinstance(value, torch.Tensor) else value.astype("f4")
    )
    tensor = record_one(tmp_path / "t", "tensor", value)
    assert tensor.value.dtype == np.float32
    np.testing.assert_array_equal(tensor.value, expected)
    hist = record_one(tmp_path / "h", "histogram", value)
    assert_histogram_equal(hist.value, reference_histogram(expected))


def test_torch_non_contiguous_conj_and_neg_views(tmp_path: Path) -> None:
    base = torch.arange(12.0).reshape(3, 4)
    view = base.t()[1:]
    neg = torch.arange(4.0)._neg_view()
    with SummaryRecord(tmp_path) as rec:
        rec.add_value("tensor", "view", view)
        rec.add_value("tensor", "neg", neg)
        rec.record(1)
    events = {e.tag: e.value for e in read_events(tmp_path)}
    np.testing.assert_array_equal(events["view"], view.numpy())
    np.testing.assert_array_equal(events["neg"], [0.0, -1.0, -2.0, -3.0])


# ---- histograms -------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 4, 9, 100, 881, 100_000])
def test_histogram_matches_reference(tmp_path: Path, size: int) -> None:
    rng = np.random.default_rng(size)
    value = rng.normal(size=size).astype(np.float32)
    if size > 10:
        value[:3] = [np.nan, np.inf, -np.inf]
    event = record_one(tmp_path, "histogram", value)
    assert_histogram_equal(event.value, reference_histogram(value))


@pytest.mark.parametrize(
    "value",
    [np.full(7, 2.0), np.arange(50, dtype=np.int32), np.array([True, False, True]), [np.nan]],
    ids=["constant", "int", "bool", "nan-only"],
)
def test_histogram_edge_cases(tmp_path: Path, value: object) -> None:
    value = np.asarray(value)
    event = record_one(tmp_path, "histogram", value)
    assert_histogram_equal(event.value, reference_histogram(value))


# ---- images -----------------------------------------------------------------------------


def test_uint8_images_are_kept_unscaled(tmp_path: Path) -> None:
    value = np.array([10, 20, 30, 200], dtype=np.uint8).reshape(1, 1, 2, 2).repeat(3, axis=1)
    value[0, 1] += 1
    value[0, 2] += 2
    event = record_one(tmp_path, "image", value)
    np.testing.assert_array_equal(pixels(event), value[0].transpose(1, 2, 0))


def test_uint8_torch_image_is_kept_unscaled(tmp_path: Path) -> None:
    value = torch.tensor([[0, 7], [9, 100]], dtype=torch.uint8).reshape(1, 1, 2, 2)
    event = record_one(tmp_path, "image", value)
    np.testing.assert_array_equal(pixels(event)[..., 0], [[0, 7], [9, 100]])


def test_float_images_are_scaled_as_mindspore_does(tmp_path: Path) -> None:
    unit = np.array([0.0, 0.5, 1.0, 0.25], dtype=np.float32).reshape(1, 1, 2, 2)
    np.testing.assert_array_equal(
        pixels(record_one(tmp_path / "unit", "image", unit))[..., 0],
        (unit[0, 0] * 255).astype(np.uint8),
    )
    wide = np.array([-2.0, 0.0, 3.0, 10.0], dtype=np.float32).reshape(1, 1, 2, 2)
    expected = ((wide[0, 0] + 2) * 255 / (10 + 2 + 1)).astype(np.uint8)
    actual = pixels(record_one(tmp_path / "wide", "image", wide))
    np.testing.assert_array_equal(actual[..., 0], expected)


def test_image_batch_is_tiled(tmp_path: Path) -> None:
    batch = np.stack([np.full((3, 2, 5), i, dtype=np.uint8) for i in range(10)])
    event = record_one(tmp_path, "image", batch)
    assert (event.value.height, event.value.width) == (2 * 2, 8 * 5)
    canvas = pixels(event)
    for index in range(16):
        row, col = divmod(index, 8)
        cell = canvas[row * 2 : row * 2 + 2, col * 5 : col * 5 + 5]
        assert (cell == (index if index < 10 else 0)).all(), index


@pytest.mark.parametrize(
    "dataformats,transform",
    [
        ("NCHW", lambda a: a),
        ("nchw", lambda a: a),
        ("NHWC", lambda a: a.transpose(0, 2, 3, 1)),
        ("CHW", lambda a: a[0]),
        ("HWC", lambda a: a[0].transpose(1, 2, 0)),
    ],
)
@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_image_dataformats(tmp_path: Path, dataformats: str, transform, kind: str) -> None:
    rng = np.random.default_rng(0)
    nchw = rng.integers(0, 255, size=(1, 3, 4, 6), dtype=np.uint8)
    value = np.ascontiguousarray(transform(nchw))
    if kind == "torch":
        value = torch.from_numpy(value)
    event = record_one(tmp_path, "image", value, dataformats=dataformats)
    np.testing.assert_array_equal(pixels(event), nchw[0].transpose(1, 2, 0))


def test_image_dataformats_hw_and_single_channel(tmp_path: Path) -> None:
    gray = np.arange(12, dtype=np.uint8).reshape(3, 4) * 20
    event = record_one(tmp_path, "image", gray, dataformats="HW")
    np.testing.assert_array_equal(pixels(event), np.repeat(gray[..., None], 3, axis=2))
    batch_nhwc = np.stack([gray, gray + 1])[..., None]
    event = record_one(tmp_path / "nhwc", "image", batch_nhwc, dataformats="NHWC")
    assert (event.value.height, event.value.width) == (3, 8)
    np.testing.assert_array_equal(pixels(event)[:, 4:, 1], gray + 1)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_reduced_float_images(tmp_path: Path, dtype: torch.dtype) -> None:
    value = torch.tensor([0.0, 0.5, 1.0, 0.75], dtype=dtype).reshape(1, 1, 2, 2)
    event = record_one(tmp_path, "image", value)
    np.testing.assert_array_equal(pixels(event)[..., 0], [[0, 127], [255, 191]])


# ---- the 2 GiB limit of one step ----------------------------------------------------------


@pytest.fixture
def no_big_copies(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Fail any snapshot of more than 64 MiB (the size check must come before the copy)."""
    real = intake.snapshot
    sizes: list[int] = []

    def guarded(value: object, name: str = "value"):
        size = int(np.prod(np.shape(value), dtype=np.int64))
        sizes.append(size)
        if size > 16 * 2**20:
            raise AssertionError(f"{name}: {size} elements copied before the size check")
        return real(value, name)

    monkeypatch.setattr(intake, "snapshot", guarded)
    return sizes


def huge_numpy(elements: int) -> np.ndarray:
    """A float32 array of ``elements`` elements that uses 4 bytes of memory."""
    return np.broadcast_to(np.float32(1.0), (elements,))


def test_one_value_over_2_gib_is_a_value_error_before_any_copy(
    tmp_path: Path, no_big_copies: list[int]
) -> None:
    elements = MAX_STEP_BYTES // 4 + 1
    with SummaryRecord(tmp_path) as rec:
        with pytest.raises(ValueError, match="2147483647"):
            rec.add_value("tensor", "huge", huge_numpy(elements))
        with pytest.raises(ValueError, match="2147483647"):
            rec.add_value("tensor", "huge", torch.zeros(1).expand(elements))
        rec.add_value("scalar", "after", 1.0)
        rec.record(1)
    assert [(e.tag, e.value) for e in read_events(tmp_path)] == [("after", 1.0)]


def test_several_values_over_2_gib_in_one_step_are_a_value_error_before_any_copy(
    tmp_path: Path, no_big_copies: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Shrink the limit so that the test holds real (small) copies of its values.
    monkeypatch.setattr(intake, "MAX_STEP_BYTES", 10_000)
    with SummaryRecord(tmp_path) as rec:
        rec.add_value("tensor", "a", np.zeros(1000, np.float32))
        rec.add_value("tensor", "b", np.zeros(1000, np.float32))
        with pytest.raises(ValueError, match="10000"):
            rec.add_value("tensor", "c", np.zeros(1000, np.float32))
        rec.add_value("tensor", "a", np.zeros(1000, np.float32))  # replaces a: still fits
        rec.record(1)
    assert sorted(e.tag for e in read_events(tmp_path)) == ["a", "b"]


def test_histogram_of_a_huge_array_is_not_limited_by_its_size(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as rec:
        rec.add_value("histogram", "h", np.broadcast_to(np.float32(2.0), (3_000_000,)))
        rec.record(1)
    [event] = read_events(tmp_path)
    assert event.value.count == 3_000_000
    assert event.value.counts.sum() == 3_000_000


def test_step_total_over_2_gib_from_operators_is_a_value_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sumlens import ops

    monkeypatch.setattr(intake, "MAX_STEP_BYTES", 10_000)
    with SummaryRecord(tmp_path) as rec:
        for name in "abc":
            ops.tensor(name, torch.zeros(1000))
        with pytest.raises(ValueError, match="10000"):
            rec.record(1)
        rec.add_value("scalar", "ok", 1.0)
        rec.record(2)
    assert [(e.step, e.tag) for e in read_events(tmp_path)] == [(2, "ok")]
