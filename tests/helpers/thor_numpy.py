"""THOR's formulas (spec §4-§5) written again in numpy, independently of sumlens.thor.

Everything here is float64 and explicit: patches are cut out with Python loops, block
inverses are ``np.linalg.inv`` of each diagonal block, the update is the spec's list of
steps. Tests compare the optimizer against these functions.
"""

from __future__ import annotations

import math

import numpy as np


def linear_factors(
    x: np.ndarray, delta: np.ndarray, batch_size: int, scale: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """``A = xᵀx/N``, ``G = δᵀδ/N · B²/S²`` for inputs ``(N, in)`` and grads ``(N, out)``."""
    x = x.reshape(-1, x.shape[-1]).astype(np.float64)
    delta = delta.reshape(-1, delta.shape[-1]).astype(np.float64)
    a = x.T @ x / x.shape[0]
    g = delta.T @ delta / delta.shape[0] * (batch_size / scale) ** 2
    return a, g


def conv_patches(
    x: np.ndarray,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
) -> np.ndarray:
    """``(N, L, C·kh·kw)``: the input patch of every output position, channel-major."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    padded = np.zeros((n, c, h + 2 * ph, w + 2 * pw))
    padded[:, :, ph : ph + h, pw : pw + w] = x
    out_h = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    out_w = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    patches = np.zeros((n, out_h * out_w, c * kh * kw))
    for i in range(out_h):
        for j in range(out_w):
            window = padded[
                :,
                :,
                i * sh : i * sh + dh * (kh - 1) + 1 : dh,
                j * sw : j * sw + dw * (kw - 1) + 1 : dw,
            ]
            patches[:, i * out_w + j, :] = window.reshape(n, -1)
    return patches


def conv_factors(
    patches: np.ndarray,
    delta: np.ndarray,
    batch_size: int,
    scale: float = 1.0,
    mode: str = "kfc",
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """``(A, G, a_norm, g_norm)`` from patches ``(N, L, K)`` and grads ``(N, C, H, W)``."""
    n, positions, k = patches.shape
    columns = delta.reshape(n, delta.shape[1], -1).astype(np.float64)  # (N, C, L)
    rescale = (batch_size / scale) ** 2
    if mode == "kfc":
        rows = patches.reshape(-1, k)
        grads = columns.transpose(0, 2, 1).reshape(-1, columns.shape[1])
        count = float(n * positions)
        return rows.T @ rows / count, grads.T @ grads / count * rescale, count, count
    mean_patch = patches.mean(axis=0)  # (L, K)
    mean_grad = columns.mean(axis=0)  # (C, L)
    a = mean_patch.T @ mean_patch / positions
    g = mean_grad @ mean_grad.T / positions * rescale
    return a, g, float(positions), float(positions)


def block_inverse(matrix: np.ndarray, damping: float, block: int | None) -> np.ndarray:
    """Inverse of the block-diagonal part of ``matrix + damping·I`` (blocks of ``block``,
    the last one smaller), as a full matrix."""
    n = matrix.shape[0]
    damped = matrix + damping * np.eye(n)
    size = n if block is None else block
    out = np.zeros((n, n))
    for start in range(0, n, size):
        stop = min(start + size, n)
        out[start:stop, start:stop] = np.linalg.inv(damped[start:stop, start:stop])
    return out


def kronecker_inverses(
    a: np.ndarray,
    g: np.ndarray,
    damping: float,
    block: int | None,
    a_norm: float = 1.0,
    g_norm: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The stored ``(A⁻¹, G⁻¹)`` of a linear (norms 1) or conv layer."""
    a_inv = block_inverse(a, math.sqrt(damping / a_norm), block) * math.sqrt(1 / a_norm)
    g_inv = block_inverse(g, math.sqrt(damping / g_norm), block) * math.sqrt(1 / a_norm)
    return a_inv, g_inv


def momentum_update(
    weight: np.ndarray,
    grad: np.ndarray,
    buffer: np.ndarray,
    lr: float,
    momentum: float,
    weight_decay: float = 0.0,
    clip: bool = False,
    nesterov: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Spec §5 steps 5-7 on an already preconditioned gradient: ``(new weight, buffer)``."""
    grad = grad + weight_decay * weight
    if clip:
        grad = grad * min(1.0, 1.0 / np.linalg.norm(grad))
    buffer = momentum * buffer + grad
    step = grad + momentum * buffer if nesterov else buffer
    return weight - lr * step, buffer
