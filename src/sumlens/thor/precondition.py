"""THOR's per-layer rules: statistics to factors, damped inverses, preconditioned gradient.

Notation: ``B`` the optimizer's ``batch_size``, ``S`` the loss scale the output
gradients carry, ``λ`` the damping of the refresh step.

* ``G = δᵀδ / rows · B² / S²`` for every kind: the mean-reduced loss divides each output
  gradient by the batch size and the loss scale multiplies it; both are undone.
* Linear: ``A = xᵀx / rows``; inverses of ``A + √λ·I`` and ``G + √λ·I``.
* Conv2d: ``A``/``G`` averaged over ``a_norm``/``g_norm`` rows (``N·L`` for the KFC
  estimate, ``L`` for MindSpore-GPU's batch mean); inverses of ``A + √(λ/a_norm)·I`` and
  ``G + √(λ/g_norm)·I``, both multiplied by ``√(1/a_norm)`` afterwards. A linear layer is
  the same rule with ``a_norm = g_norm = 1``, so both share one code path.
* Embedding: ``a`` is the vector of token counts, ``A⁻¹ = 1 / (a/B + √λ)`` element-wise;
  ``G`` as above.
* The gradient of the weight becomes ``Ĝ⁻¹·∇W·Â⁻¹`` (the conv kernel flattened to
  ``out x in·kh·kw``; for an embedding the rows are scaled by ``A⁻¹`` first).
* LayerNorm (weight and bias), every step: ``g / (g²/B + √λ)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from sumlens.thor.factors import Statistics
from sumlens.thor.inverse import apply_left, apply_right, damped_blocks

__all__ = ["Factors", "damped", "diagonal_rule", "factors_from", "inverses_from", "precondition"]


@dataclass(frozen=True)
class Factors:
    """A layer's curvature factors from one refresh (before damping).

    ``a``: ``in x in`` (token counts, a vector, for an embedding); ``g``: ``out x out``,
    already rescaled by ``B²/S²``; ``a_norm``/``g_norm``: the conv normalisers (1 for the
    other kinds).
    """

    a: torch.Tensor
    g: torch.Tensor
    a_norm: float
    g_norm: float


def factors_from(kind: str, stats: Statistics, batch_size: int, backward_scale: float) -> Factors:
    """The factors of a ``kind`` layer from the sums its tap collected."""
    g = stats.g_sum * ((batch_size / backward_scale) ** 2 / stats.g_count)
    if kind == "embedding":
        return Factors(stats.a_sum, g, 1.0, 1.0)
    a = stats.a_sum / stats.a_count
    if kind == "conv2d":
        return Factors(a, g, float(stats.a_count), float(stats.g_count))
    return Factors(a, g, 1.0, 1.0)


def damped(
    kind: str, factors: Factors, damping: float, block_size: int | None
) -> list[torch.Tensor]:
    """The damped block matrices to invert: ``[A, G]`` (just ``[G]`` for an embedding)."""
    g_blocks = damped_blocks(factors.g, math.sqrt(damping / factors.g_norm), block_size)
    if kind == "embedding":
        return [g_blocks]
    a_blocks = damped_blocks(factors.a, math.sqrt(damping / factors.a_norm), block_size)
    return [a_blocks, g_blocks]


def inverses_from(
    kind: str,
    factors: Factors,
    inverted: list[torch.Tensor],
    damping: float,
    batch_size: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(a_inverse, g_inverse)`` to store, from the inverted blocks of :func:`damped`."""
    if kind == "embedding":
        a_inverse = 1.0 / (factors.a / batch_size + math.sqrt(damping))
        return a_inverse, inverted[0]
    scale = math.sqrt(1.0 / factors.a_norm)
    a_inverse, g_inverse = inverted
    if scale != 1.0:
        a_inverse, g_inverse = a_inverse * scale, g_inverse * scale
    return a_inverse, g_inverse


def precondition(
    kind: str, grad: torch.Tensor, a_inverse: torch.Tensor, g_inverse: torch.Tensor
) -> torch.Tensor:
    """The preconditioned weight gradient (float32 ``grad``, the layer's weight shape)."""
    if kind == "embedding":
        return apply_right(grad * a_inverse.unsqueeze(1), g_inverse)
    matrix = grad.reshape(grad.shape[0], -1)
    return apply_left(g_inverse, apply_right(matrix, a_inverse)).reshape(grad.shape)


def diagonal_rule(grad: torch.Tensor, damping: float, batch_size: int) -> torch.Tensor:
    """LayerNorm's element-wise rule ``g / (g²/B + √λ)`` (0 where both terms are 0)."""
    denominator = grad * grad / batch_size + math.sqrt(damping)
    return torch.where(denominator > 0, grad / denominator, torch.zeros_like(grad))
