"""Where a landscape is evaluated: its axes, its points, and the blocks they are computed in.

Axes follow MindSpore's: a train landscape spans the projected training path plus a
margin of ``MARGIN`` times the path's extent on each side (path x ``[0.2114, 0.131,
0.0373, 0.0]`` with 3 points gives x axis ``[-0.0423, 0.1057, 0.2537]``); a result
landscape spans [-1, 1] on both axes. Points run row by row (row r is
``y_axis[r]``, column c is ``x_axis[c]``), then a train landscape's path points follow,
so one list of coordinates describes everything a landscape needs evaluated.
"""

from __future__ import annotations

import math

import numpy as np

MARGIN = 0.2
RESULT_HALF_WIDTH = 1.0
TARGET_BLOCKS = 64
"""Default blocks per landscape: small enough that an interrupted run loses little,
large enough that per-block bookkeeping (a file, a task) stays negligible."""
MAX_BLOCK_POINTS = 1024


def path_axis(values: np.ndarray, size: int) -> np.ndarray:
    """``size`` evenly spaced values over ``values``' range widened by ``MARGIN`` per side."""
    low, high = float(np.min(values)), float(np.max(values))
    extent = high - low
    return np.linspace(low - MARGIN * extent, high + MARGIN * extent, size)


def result_axis(size: int) -> np.ndarray:
    """``size`` evenly spaced values over [-1, 1]."""
    return np.linspace(-RESULT_HALF_WIDTH, RESULT_HALF_WIDTH, size)


def grid_points(x_axis: np.ndarray, y_axis: np.ndarray) -> np.ndarray:
    """All (x, y) pairs, row-major: point ``r * len(x_axis) + c`` is ``(x_axis[c], y_axis[r])``."""
    xs, ys = np.meshgrid(x_axis, y_axis)
    return np.stack([xs.ravel(), ys.ravel()], axis=1)


def default_block_points(total: int) -> int:
    """Points per block for ``total`` points: about ``TARGET_BLOCKS`` blocks."""
    return max(1, min(MAX_BLOCK_POINTS, math.ceil(total / TARGET_BLOCKS)))


def blocks(total: int, block_points: int) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges of ``block_points`` points covering ``range(total)``."""
    return [(start, min(start + block_points, total)) for start in range(0, total, block_points)]


def result_convergence(
    x_axis: np.ndarray, y_axis: np.ndarray, z: np.ndarray
) -> tuple[float, float, float]:
    """The grid centre ``(x[N//2], y[N//2], z[N//2, N//2])`` (not the origin for even N)."""
    cx, cy = len(x_axis) // 2, len(y_axis) // 2
    return float(x_axis[cx]), float(y_axis[cy]), float(z[cy, cx])
