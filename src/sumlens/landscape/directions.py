"""The two directions that span a landscape's plane, and where snapshots lie on it.

A *train* landscape takes its plane from PCA over the snapshots of one interval (the
differences to the last snapshot, as in Li et al. 2018 section 7: :func:`pca_plane`); a
*result* landscape takes two Gaussian directions around the final weights
(:func:`random_plane`). Either way the directions are then rescaled per parameter tensor so that a
unit step along them is as large as the weights themselves; that per-tensor rule is
MindSpore's and our default (its golden files were made with it), Li et al.'s per-filter
rule is the ``"filter"`` option.

Only the *filtered set* F moves: floating-point entries whose name contains ``weight`` or
``bias`` and not ``moment`` (so BatchNorm running statistics and other buffers stay put).
Everything here is numpy float64 on named arrays; nothing needs torch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

NORMALIZATIONS = ("tensor", "filter", "none")
"""``tensor``: per parameter tensor (MindSpore); ``filter``: per output channel, 1-D
tensors zeroed (Li et al.); ``none``: as computed."""

EXACT_SVD_MAX_SIZE = 500
"""Matrices with no side longer than this always get an exact SVD (scikit-learn's rule)."""
RANDOMIZED_OVERSAMPLES = 10

Arrays = dict[str, np.ndarray]


def in_filtered_set(name: str, value: np.ndarray) -> bool:
    """True for entries a landscape moves: floating, ``*weight*``/``*bias*``, no ``moment``."""
    return (
        ("weight" in name or "bias" in name)
        and "moment" not in name
        and np.issubdtype(value.dtype, np.floating)
    )


def filtered_names(state: Mapping[str, np.ndarray]) -> list[str]:
    """The names of F in ``state``'s order."""
    return [name for name, value in state.items() if in_filtered_set(name, value)]


def flatten(state: Mapping[str, np.ndarray], names: Sequence[str]) -> np.ndarray:
    """The named entries, raveled and concatenated into one float64 vector."""
    if not names:
        return np.zeros(0)
    return np.concatenate([np.asarray(state[n], dtype=np.float64).ravel() for n in names])


def unflatten(flat: np.ndarray, like: Mapping[str, np.ndarray], names: Sequence[str]) -> Arrays:
    """Cut ``flat`` back into arrays shaped like ``like[name]`` for each name."""
    out: Arrays = {}
    offset = 0
    for name in names:
        shape = np.shape(like[name])
        size = int(np.prod(shape, dtype=np.int64))
        out[name] = flat[offset : offset + size].reshape(shape)
        offset += size
    if offset != flat.size:
        raise ValueError(f"a vector of {flat.size} values does not cut into {offset}")
    return out


def _flip_signs(u: np.ndarray) -> np.ndarray:
    """Each column's largest-magnitude entry made positive (a deterministic SVD sign)."""
    rows = np.argmax(np.abs(u), axis=0)
    signs = np.sign(u[rows, np.arange(u.shape[1])])
    signs[signs == 0] = 1.0
    return u * signs


def _randomized_svd(matrix: np.ndarray, rank: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Left singular vectors and values of ``matrix`` by a seeded randomized range finder.

    Halko, Martinsson and Tropp (2011), algorithm 4.4: a Gaussian sketch with
    ``RANDOMIZED_OVERSAMPLES`` extra columns, power iterations (7 for a small rank
    relative to the matrix, else 4) re-orthonormalised by QR, then an exact SVD of the
    small projected matrix.
    """
    rng = np.random.default_rng(seed)
    columns = min(rank + RANDOMIZED_OVERSAMPLES, min(matrix.shape))
    iterations = 7 if rank < 0.1 * min(matrix.shape) else 4
    basis, _ = np.linalg.qr(matrix @ rng.standard_normal((matrix.shape[1], columns)))
    for _ in range(iterations):
        back, _ = np.linalg.qr(matrix.T @ basis)
        basis, _ = np.linalg.qr(matrix @ back)
    small_u, values, _ = np.linalg.svd(basis.T @ matrix, full_matrices=False)
    return basis @ small_u[:, :rank], values[:rank]


def principal_directions(differences: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The first two principal components of ``differences`` (D x k) as D-vectors ``U[:, i]*s_i``.

    The columns are centred over their D entries; the SVD is exact when no side exceeds
    ``EXACT_SVD_MAX_SIZE`` or when two components are not below 80 % of the shorter side,
    randomized (seeded) otherwise, which is scikit-learn's ``svd_solver="auto"`` rule that
    MindSpore relies on. Signs: each component's largest-magnitude entry is positive. A
    component whose singular value is zero at working precision (numpy's rank tolerance)
    comes back as an exact zero vector: MindSpore's substitute ``1e-19`` would be blown
    up by the normalisation into an arbitrary direction.
    """
    if differences.ndim != 2 or differences.shape[1] < 2:
        raise ValueError(f"PCA needs a D x k matrix with k >= 2, got shape {differences.shape}")
    centred = differences - differences.mean(axis=0, keepdims=True)
    rows, cols = centred.shape
    exact = max(rows, cols) <= EXACT_SVD_MAX_SIZE or 0.8 * min(rows, cols) <= 2
    if exact:
        u, values, _ = np.linalg.svd(centred, full_matrices=False)
        u, values = u[:, :2], values[:2]
    else:
        u, values = _randomized_svd(centred, 2, seed)
    u = _flip_signs(u)
    tolerance = max(rows, cols) * np.finfo(np.float64).eps * (values[0] if values.size else 0.0)
    scale = np.where(values > tolerance, values, 0.0)
    return u[:, 0] * scale[0], u[:, 1] * scale[1]


def normalize(
    direction: Mapping[str, np.ndarray], weights: Mapping[str, np.ndarray], method: str
) -> Arrays:
    """``direction`` rescaled entry by entry against ``weights`` (see :data:`NORMALIZATIONS`).

    ``tensor``: ``d_j * ||theta_j|| / ||d_j||``; ``filter``: the same per slice along the
    first axis, and 1-D entries (biases, norm-layer scales) set to zero; ``none``: a copy.
    A zero-norm block stays zero instead of dividing by zero.
    """
    if method not in NORMALIZATIONS:
        raise ValueError(f"normalization={method!r} is not one of {NORMALIZATIONS}")
    out: Arrays = {}
    for name, d in direction.items():
        d = np.asarray(d, dtype=np.float64)
        theta = np.asarray(weights[name], dtype=np.float64)
        if method == "none":
            out[name] = d.copy()
        elif method == "tensor":
            out[name] = _rescale(d.reshape(1, -1), theta.reshape(1, -1)).reshape(d.shape)
        elif d.ndim <= 1:
            out[name] = np.zeros_like(d)
        else:
            rows = d.shape[0]
            out[name] = _rescale(d.reshape(rows, -1), theta.reshape(rows, -1)).reshape(d.shape)
    return out


def _rescale(d: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Each row of ``d`` scaled to the norm of the same row of ``theta`` (zero rows stay zero)."""
    d_norm = np.linalg.norm(d, axis=1, keepdims=True)
    factor = np.divide(
        np.linalg.norm(theta, axis=1, keepdims=True),
        d_norm,
        out=np.zeros_like(d_norm),
        where=d_norm > 0,
    )
    return d * factor


def project(v: np.ndarray, w: np.ndarray, differences: np.ndarray) -> np.ndarray:
    """Least-squares plane coordinates ``(x, y)`` of each column of ``differences`` (D x k)."""
    basis = np.stack([v, w], axis=1)
    coords, *_ = np.linalg.lstsq(basis, differences, rcond=None)
    return coords.T


def pca_plane(
    snapshots: Sequence[Mapping[str, np.ndarray]], normalization: str = "tensor", seed: int = 0
) -> tuple[Arrays, Arrays, np.ndarray]:
    """Directions through an interval's snapshots and the snapshots' plane coordinates.

    Returns ``(v, w, coords)``: v and w keyed by the F names of the last snapshot
    (normalised against it), coords an m x 2 array whose last row is exactly (0, 0).
    """
    if len(snapshots) < 3:
        raise ValueError(f"a train landscape needs at least 3 snapshots, got {len(snapshots)}")
    final = snapshots[-1]
    names = filtered_names(final)
    for i, state in enumerate(snapshots[:-1]):
        missing = [n for n in names if n not in state or np.shape(state[n]) != np.shape(final[n])]
        if missing:
            raise ValueError(
                f"snapshot #{i + 1} lacks or reshapes entries of the last one: {missing[:5]}"
            )
    last = flatten(final, names)
    differences = np.stack([flatten(s, names) - last for s in snapshots[:-1]], axis=1)
    v_flat, w_flat = principal_directions(differences, seed)
    v = normalize(unflatten(v_flat, final, names), final, normalization)
    w = normalize(unflatten(w_flat, final, names), final, normalization)
    coords = project(flatten(v, names), flatten(w, names), differences)
    return v, w, np.vstack([coords, np.zeros((1, 2))])


def random_plane(
    state: Mapping[str, np.ndarray], normalization: str = "tensor", seed: int = 0
) -> tuple[Arrays, Arrays]:
    """Two seeded Gaussian directions over ``state``'s F entries, normalised against it.

    Entries are drawn for every floating entry in ``state`` order, v then w per entry,
    so adding or dropping a buffer changes the draw no more than MindSpore's would.
    """
    rng = np.random.default_rng(seed)
    v: Arrays = {}
    w: Arrays = {}
    for name, value in state.items():
        if not np.issubdtype(np.asarray(value).dtype, np.floating):
            continue
        dv = rng.standard_normal(np.shape(value))
        dw = rng.standard_normal(np.shape(value))
        if in_filtered_set(name, np.asarray(value)):
            v[name], w[name] = dv, dw
    return normalize(v, state, normalization), normalize(w, state, normalization)
