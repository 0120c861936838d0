"""Directions and projections: PCA, randomized PCA, the three normalisations, random planes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.decomposition import PCA
from torch import nn

from sumlens.landscape import directions


def norm(array: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(array, dtype=np.float64)))


def tiny_state(seed: int) -> dict[str, np.ndarray]:
    """A conv + batch-norm + linear network's state (parameters and buffers), perturbed."""
    torch.manual_seed(seed)
    network = nn.Sequential(nn.Conv2d(1, 3, 2), nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(12, 2))
    with torch.no_grad():
        network[1].running_mean.uniform_()
        network[1].weight.uniform_(0.5, 1.5)
        network[1].bias.uniform_(-0.5, 0.5)
    return {k: v.numpy().copy() for k, v in network.state_dict().items()}


def snapshots(count: int) -> list[dict[str, np.ndarray]]:
    """``count`` states drifting from one start, as a training run does."""
    start = tiny_state(0)
    rng = np.random.default_rng(1)
    out = []
    for i in range(count):
        out.append(
            {
                k: v + (0.05 * (i + 1) * rng.standard_normal(v.shape)).astype(v.dtype)
                if np.issubdtype(v.dtype, np.floating)
                else v
                for k, v in start.items()
            }
        )
    return out


def flip(u: np.ndarray) -> np.ndarray:
    rows = np.abs(u).argmax(axis=0)
    return u * np.sign(u[rows, range(u.shape[1])])


def test_filtered_set() -> None:
    state = tiny_state(0)
    assert directions.filtered_names(state) == [
        "0.weight",
        "0.bias",
        "1.weight",
        "1.bias",
        "3.weight",
        "3.bias",
    ]  # not running_mean / running_var / num_batches_tracked
    assert not directions.in_filtered_set("pos_embedding", np.zeros(2))
    assert not directions.in_filtered_set("adam.moment1.weight", np.zeros(2))
    assert not directions.in_filtered_set("weight_index", np.zeros(2, dtype=np.int64))


@pytest.mark.parametrize("count", [3, 5])
def test_pca_plane_equals_a_direct_numpy_computation(count: int) -> None:
    states = snapshots(count)
    v, w, coords = directions.pca_plane(states, "tensor")

    names = ["0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias"]
    points = np.stack([np.concatenate([s[n].ravel() for n in names]) for s in states]).astype(
        np.float64
    )
    x = (points[:-1] - points[-1]).T  # D x (m - 1), one column per snapshot
    u, s, _ = np.linalg.svd(x - x.mean(axis=0), full_matrices=False)
    u = flip(u[:, :2])
    expected = []
    for raw in (u[:, 0] * s[0], u[:, 1] * s[1]):
        parts, offset = {}, 0
        for n in names:
            size = states[-1][n].size
            block = raw[offset : offset + size]
            theta = states[-1][n].astype(np.float64).ravel()
            parts[n] = (block * np.linalg.norm(theta) / np.linalg.norm(block)).reshape(
                states[-1][n].shape
            )
            offset += size
        expected.append(parts)
    for got, want in zip((v, w), expected, strict=True):
        assert list(got) == names
        for n in names:
            np.testing.assert_allclose(got[n], want[n], rtol=1e-10, atol=1e-12)

    basis = np.stack([np.concatenate([d[n].ravel() for n in names]) for d in expected], axis=1)
    lstsq, *_ = np.linalg.lstsq(basis, x, rcond=None)
    np.testing.assert_allclose(coords[:-1], lstsq.T, rtol=1e-9, atol=1e-12)
    assert coords[-1].tolist() == [0.0, 0.0]


def test_principal_directions_agree_with_scikit_learn_up_to_sign() -> None:
    x = np.random.default_rng(2).standard_normal((40, 4)) @ np.diag([5.0, 3.0, 1.0, 0.5])
    v, w = directions.principal_directions(x)
    reference = PCA(n_components=2, svd_solver="full").fit_transform(x)
    for ours, theirs in zip((v, w), reference.T, strict=True):
        sign = np.sign(ours @ theirs)
        np.testing.assert_allclose(ours, sign * theirs, rtol=1e-9, atol=1e-12)
        assert ours[np.abs(ours).argmax()] > 0


@pytest.mark.parametrize("columns", [5, 30])
def test_randomized_pca_for_large_matrices_matches_the_exact_svd(columns: int) -> None:
    rng = np.random.default_rng(3)
    signal = (
        rng.standard_normal((2000, 3))
        @ np.diag([10.0, 4.0, 1.0])
        @ rng.standard_normal((3, columns))
    )
    x = signal + 1e-3 * rng.standard_normal((2000, columns))
    assert x.shape[0] > directions.EXACT_SVD_MAX_SIZE  # the randomized solver's territory
    v, w = directions.principal_directions(x, seed=7)
    u, s, _ = np.linalg.svd(x - x.mean(axis=0), full_matrices=False)
    u = flip(u[:, :2])
    np.testing.assert_allclose(v, u[:, 0] * s[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(w, u[:, 1] * s[1], rtol=1e-6, atol=1e-8)
    again = directions.principal_directions(x, seed=7)
    assert all(np.array_equal(a, b) for a, b in zip((v, w), again, strict=True))


def test_a_rank_deficient_interval_gives_a_zero_direction_not_noise() -> None:
    states = snapshots(3)
    states[1] = {k: v.copy() for k, v in states[0].items()}  # no progress between 1 and 2
    v, w, coords = directions.pca_plane(states, "tensor")
    assert all(np.all(block == 0) for block in w.values())
    assert all(np.isfinite(block).all() and np.any(block != 0) for block in v.values())
    assert np.all(coords[:, 1] == 0)
    same = [states[0]] * 3
    v, w, coords = directions.pca_plane(same, "tensor")
    assert all(np.all(b == 0) for b in (*v.values(), *w.values()))
    assert np.all(coords == 0)


def test_tensor_normalization_matches_each_tensor_to_its_weights() -> None:
    weights = tiny_state(0)
    rng = np.random.default_rng(4)
    raw = {n: rng.standard_normal(weights[n].shape) for n in directions.filtered_names(weights)}
    raw["3.bias"] = np.zeros_like(raw["3.bias"])
    out = directions.normalize(raw, weights, "tensor")
    for name, d in out.items():
        if name == "3.bias":
            assert np.all(d == 0)  # a zero block stays zero
            continue
        np.testing.assert_allclose(norm(d), norm(weights[name]), rtol=1e-12)
        np.testing.assert_allclose(d / norm(d), raw[name] / norm(raw[name]))


def test_filter_normalization_is_li_et_al() -> None:
    weights = tiny_state(0)
    rng = np.random.default_rng(5)
    raw = {n: rng.standard_normal(weights[n].shape) for n in directions.filtered_names(weights)}
    out = directions.normalize(raw, weights, "filter")
    for name, d in out.items():
        if weights[name].ndim <= 1:
            assert np.all(d == 0), name  # biases and norm-layer scales do not move
            continue
        for i in range(d.shape[0]):  # every output channel (filter) on its own
            np.testing.assert_allclose(norm(d[i]), norm(weights[name][i]), rtol=1e-12)
            np.testing.assert_allclose(d[i] / norm(d[i]), raw[name][i] / norm(raw[name][i]))


def test_no_normalization_keeps_the_principal_plane_of_three_snapshots() -> None:
    states = snapshots(3)
    v, w, coords = directions.pca_plane(states, "none")
    names = directions.filtered_names(states[-1])
    basis = np.stack([directions.flatten(v, names), directions.flatten(w, names)], axis=1)
    last = directions.flatten(states[-1], names)
    x = np.stack([directions.flatten(s, names) - last for s in states[:-1]], axis=1)
    centred = x - x.mean(axis=0)
    # two centred difference vectors lie exactly in the plane of the two components
    fit, *_ = np.linalg.lstsq(basis, centred, rcond=None)
    np.testing.assert_allclose(basis @ fit, centred, atol=1e-9)
    # and the path coordinates are the least-squares projections (normal equations)
    np.testing.assert_allclose(basis.T @ (basis @ coords[:-1].T - x), 0, atol=1e-9)
    with pytest.raises(ValueError, match="normalization"):
        directions.normalize(v, states[-1], "layer")


def test_random_plane_is_seeded_and_normalized() -> None:
    state = tiny_state(0)
    v, w = directions.random_plane(state, "tensor", seed=3)
    again_v, again_w = directions.random_plane(state, "tensor", seed=3)
    other_v, _ = directions.random_plane(state, "tensor", seed=4)
    assert list(v) == directions.filtered_names(state) == list(w)
    for name in v:
        assert np.array_equal(v[name], again_v[name]) and np.array_equal(w[name], again_w[name])
        assert not np.array_equal(v[name], other_v[name])
        for d in (v[name], w[name]):
            np.testing.assert_allclose(norm(d), norm(state[name]), rtol=1e-12)
    assert not np.allclose(v["0.weight"], w["0.weight"])
