"""Axes, points and blocks, checked against an axis measured from MindSpore and its golden run."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from sumlens.io import iter_events
from sumlens.landscape import LossLandscape, grid


@pytest.fixture(scope="module")
def golden(golden_dir: Path) -> dict[str, LossLandscape]:
    """The train (``landscape_[1, 3]``) and result (``landscape_[3]``) values MindSpore wrote."""
    found = {}
    for path in sorted((golden_dir / "landscape").glob("*_MS")):
        for event in iter_events(path):
            if event.plugin == "landscape":
                found[event.tag] = LossLandscape.from_proto(event.value)
    assert sorted(found) == ["landscape_[1, 3]", "landscape_[3]"]
    return found


def test_a_path_axis_measured_from_mindspore() -> None:
    axis = grid.path_axis(np.array([0.2114, 0.131, 0.0373, 0.0]), 3)
    np.testing.assert_allclose(axis, [-0.0423, 0.1057, 0.2537], atol=5e-5)


def test_path_axes_as_mindspore_drew_them(golden: dict[str, LossLandscape]) -> None:
    train = golden["landscape_[1, 3]"]
    assert train.path is not None
    xs, ys, _ = train.path
    # the golden file holds float32 values, so compare at float32 precision
    np.testing.assert_allclose(grid.path_axis(xs, len(train.x)), train.x, rtol=1e-6)
    np.testing.assert_allclose(grid.path_axis(ys, len(train.y)), train.y, rtol=1e-5)
    assert train.convergence_point == (0.0, 0.0, pytest.approx(float(train.path[2][-1])))


def test_result_axes_and_the_off_centre_convergence_point(
    golden: dict[str, LossLandscape],
) -> None:
    result = golden["landscape_[3]"]
    axis = grid.result_axis(4)
    np.testing.assert_allclose(axis, result.x, rtol=1e-6)
    np.testing.assert_allclose(axis, result.y, rtol=1e-6)
    x, y, z = grid.result_convergence(axis, axis, result.z)
    assert (x, y) == pytest.approx((1 / 3, 1 / 3))  # N even: not the origin (MindSpore)
    assert result.convergence_point == pytest.approx((x, y, z), rel=1e-6)


def test_points_run_row_by_row() -> None:
    points = grid.grid_points(np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0]))
    assert points.tolist() == [
        [1.0, 10.0],
        [2.0, 10.0],
        [3.0, 10.0],
        [1.0, 20.0],
        [2.0, 20.0],
        [3.0, 20.0],
    ]


@pytest.mark.parametrize("total", [1, 9, 64, 65, 1604, 256 * 256 + 20])
def test_blocks_cover_every_point_once(total: int) -> None:
    size = grid.default_block_points(total)
    ranges = grid.blocks(total, size)
    assert ranges[0][0] == 0 and ranges[-1][1] == total
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    assert all(0 < stop - start <= size for start, stop in ranges)
    assert len(ranges) <= max(grid.TARGET_BLOCKS, total // grid.MAX_BLOCK_POINTS + 1)
