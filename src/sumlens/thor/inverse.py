"""Damped block-diagonal inverses of THOR's factors, batched across layers.

THOR's hardware-driven split approximates a factor larger than ``block_size`` by its
diagonal blocks (the last one smaller). A block-diagonal inverse is stored as a
``(blocks, b, b)`` tensor: the last block is padded with identity rows and columns to
``b``, which leaves its inverse unchanged (``[[T, 0], [0, I]]⁻¹ = [[T⁻¹, 0], [0, I]]``)
and lets every block of every layer with the same size go through *one* batched
Cholesky call. Applying it to a gradient is one batched matmul.

A block that is not positive definite (zero damping on a rank-deficient factor, or
non-finite statistics) is retried once with ``JITTER`` added to its diagonal; if it
still fails, its factor is reported as failed and the caller falls back to first order.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

__all__ = ["JITTER", "apply_left", "apply_right", "damped_blocks", "invert_blocks"]

JITTER = 1e-8


def damped_blocks(matrix: torch.Tensor, damping: float, block_size: int | None) -> torch.Tensor:
    """The diagonal blocks of ``matrix + damping·I`` as ``(blocks, b, b)``.

    ``block_size=None`` (or a matrix no larger than it) gives one block, the whole matrix.
    """
    n = matrix.shape[0]
    if block_size is None or n <= block_size:
        whole = matrix.clone()
        whole.diagonal().add_(damping)
        return whole.unsqueeze(0)
    count = math.ceil(n / block_size)
    size = count * block_size
    padded = F.pad(matrix, (0, size - n, 0, size - n))
    diagonal = padded.diagonal()
    diagonal[:n] += damping
    diagonal[n:] = 1.0
    blocks = padded.view(count, block_size, count, block_size).diagonal(dim1=0, dim2=2)
    return blocks.permute(2, 0, 1).contiguous()


def invert_blocks(factors: list[torch.Tensor]) -> list[torch.Tensor | None]:
    """Invert each ``(blocks, b, b)`` tensor by Cholesky; None where a block failed.

    All blocks of the same size, device and dtype are inverted in one batched call.
    """
    results: list[torch.Tensor | None] = [None] * len(factors)
    groups: dict[tuple[int, torch.device, torch.dtype], list[int]] = {}
    for index, blocks in enumerate(factors):
        groups.setdefault((blocks.shape[-1], blocks.device, blocks.dtype), []).append(index)
    for members in groups.values():
        batch = (
            factors[members[0]] if len(members) == 1 else torch.cat([factors[i] for i in members])
        )
        inverses, ok = _cholesky_inverse(batch)
        ok_host = ok.cpu()
        start = 0
        for i in members:
            stop = start + factors[i].shape[0]
            if bool(ok_host[start:stop].all()):
                results[i] = inverses[start:stop]
            start = stop
    return results


def _cholesky_inverse(batch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Inverses of a batch of matrices and a per-matrix success flag (jitter retry once).

    A matrix that fails both attempts gets the identity as a placeholder inverse."""
    lower, info = torch.linalg.cholesky_ex(batch)
    ok = info == 0
    if not bool(ok.all()):
        eye = torch.eye(batch.shape[-1], dtype=batch.dtype, device=batch.device)
        retry = (~ok).nonzero().squeeze(1)
        retry_lower, retry_info = torch.linalg.cholesky_ex(batch[retry] + JITTER * eye)
        lower = lower.index_copy(0, retry, retry_lower)
        ok = ok.index_copy(0, retry, retry_info == 0)
        lower = torch.where(ok[:, None, None], lower, eye)
    return torch.cholesky_inverse(lower), ok


def apply_right(x: torch.Tensor, inverse: torch.Tensor) -> torch.Tensor:
    """``x @ M`` for a 2-D ``x`` whose columns match the block-diagonal ``M``."""
    count, size, _ = inverse.shape
    if count == 1:
        return torch.mm(x, inverse[0])
    rows, n = x.shape
    padded = F.pad(x, (0, count * size - n)).view(rows, count, size).transpose(0, 1)
    out = torch.bmm(padded, inverse).transpose(0, 1).reshape(rows, count * size)
    return out[:, :n]


def apply_left(inverse: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``M @ x`` for a 2-D ``x`` whose rows match the (symmetric) block-diagonal ``M``."""
    if inverse.shape[0] == 1:
        return torch.mm(inverse[0], x)
    return apply_right(x.t(), inverse).t()
