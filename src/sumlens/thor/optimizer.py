"""``Thor``: THOR's natural-gradient momentum optimizer (``mindspore.nn.thor``) for torch.

The optimizer owns the step counter ``t`` (every ``step()`` call, from 0). Step ``t`` is a
*curvature step* iff ``t % frequency == 0``: after each step the optimizer arms the
layers' taps for the next one (only then do the hooks collect anything), and at the
curvature step itself it turns the collected statistics into damped block-diagonal
inverses, all layers' blocks in one batched Cholesky per block size. Every step then
preconditions the gradients with the stored inverses. Because the counter lives in the
optimizer, ``frequency`` holds in any loop that calls ``step()`` once per batch:
``Model.train`` with or without sink mode, or a hand-written loop (MindSpore honours it
in sink mode only).

One ``step()``, per parameter:

1. ``g ← g / S`` for a static loss scale ``S``;
2. Kronecker layers: ``g ← Ĝ⁻¹·g·Â⁻¹`` with the stored inverses (first order while the
   layer has none); LayerNorm: the diagonal rule with ``λ = damping[t]``; biases and
   everything else: unchanged (rules in :mod:`sumlens.thor.precondition`);
3. ``g ← g + wd·w`` where ``decay_filter`` holds; clip ``g`` to L2 norm 1 when asked;
4. ``v ← μ·v + g``; ``w ← w - lr·v`` (Nesterov: ``w ← w - lr·(g + μ·v)``), with
   ``lr = learning_rate[t]``.

A factor that is not positive definite even after the jitter retry makes its layer
first-order (with one warning per layer) until a later refresh succeeds.

Distributed runs (``torch.distributed`` initialised, more than one rank): the factors are
averaged across ranks before inversion, one all-reduce per group of layers cut at
``split_indices``; every rank must run the same layers.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
from torch import nn

from sumlens._checks import check_bool, check_int, check_number
from sumlens._log import logger
from sumlens._readonly import ReadOnly
from sumlens.thor.checks import check_float, check_split_indices
from sumlens.thor.convert_net import ConvertNetUtils, converted_layers
from sumlens.thor.factors import CONV_STATS, Conv2dTap, Tap
from sumlens.thor.inverse import JITTER, invert_blocks
from sumlens.thor.loss_scale import LossScale
from sumlens.thor.precondition import (
    Factors,
    damped,
    diagonal_rule,
    factors_from,
    inverses_from,
    precondition,
)
from sumlens.thor.schedule import Schedule

__all__ = ["ParamInfo", "Thor", "thor"]

_OWNER = "thor"

ScheduleLike = float | Iterable[float] | torch.Tensor | Callable[[int], float]
"""What ``lr`` and ``damping`` may be: a number, a sequence indexed by step, or
``callable(step)`` (see :class:`~sumlens.thor.schedule.Schedule`)."""


class ParamInfo(NamedTuple):
    """What ``decay_filter`` receives: the parameter's qualified name and the parameter
    (so MindSpore-style filters such as ``lambda x: "bias" not in x.name`` work)."""

    name: str
    param: nn.Parameter


@dataclass
class _Layer:
    """A Kronecker-factored layer and its stored inverses."""

    name: str
    kind: str
    tap: Tap
    weight: torch.Tensor
    a_inverse: torch.Tensor | None = None
    g_inverse: torch.Tensor | None = None
    inverse_step: int | None = None
    traces: tuple[float, float] | None = None


class Thor(torch.optim.Optimizer):
    """THOR for every trainable parameter of ``model`` (see the module docstring).

    Args:
        model: the network (not a loss or training wrapper); converted in place with
            :class:`ConvertNetUtils` if that was not done yet.
        lr: learning rate -- a number, a 1-D sequence/tensor indexed by step (the last
            value is kept past its end, with one warning) or ``callable(step)``. A
            number lives in ``param_groups[i]["lr"]``, so torch LR schedulers and
            sumlens' LR callbacks can change it; a schedule overwrites it every step.
        damping: ``λ``, the same kinds as ``lr``.
        momentum: ``μ``, a float >= 0.
        weight_decay: L2 coefficient added to the preconditioned gradient.
        loss_scale: a number ``S`` the loss was multiplied by (the optimizer unscales),
            or a live ``LossScaleManager``/``torch.amp.GradScaler`` that unscales the
            gradients itself (see :mod:`sumlens.thor.loss_scale`).
        batch_size: the batch size ``B`` the mean-reduced loss divided by (rescales ``G``).
        use_nesterov: Nesterov momentum.
        decay_filter: ``f(ParamInfo) -> bool``, weight decay where true (None: every
            parameter).
        split_indices: distributed only: layer indices closing each all-reduce group.
        enable_clip_grad: clip each gradient to L2 norm 1 before the momentum update.
        frequency: refresh period of the curvature inverses, an int >= 2.
        block_size: factors larger than this are split into diagonal blocks of this
            size (None: exact inverses of whole factors).
        conv_stats: ``"kfc"`` (all N·L patch rows, the default) or ``"batch_mean"``
            (MindSpore-GPU parity).
        trace_threshold: None, or refresh a layer at a curvature step only when the
            trace of ``A`` or ``G`` moved by more than this fraction since its last
            refresh (the paper's criterion).
    """

    def __init__(
        self,
        model: nn.Module,
        lr: ScheduleLike,
        damping: ScheduleLike,
        momentum: float,
        weight_decay: float = 0.0,
        loss_scale: Any = 1.0,
        batch_size: int = 32,
        use_nesterov: bool = False,
        decay_filter: Callable[[ParamInfo], bool] | None = None,
        split_indices: list[int] | None = None,
        enable_clip_grad: bool = False,
        frequency: int = 100,
        *,
        block_size: int | None = 128,
        conv_stats: str = "kfc",
        trace_threshold: float | None = None,
    ) -> None:
        if not isinstance(model, nn.Module):
            raise TypeError(
                f"For '{_OWNER}', the argument 'net' must be a torch.nn.Module, "
                f"but got {type(model).__name__}"
            )
        self._lr = Schedule.build(lr, "learning_rate", _OWNER)
        self._damping = Schedule.build(damping, "damping", _OWNER)
        momentum = check_float(momentum, "momentum", _OWNER)
        weight_decay = check_number(weight_decay, "weight_decay", _OWNER, 0)
        self._scale = LossScale(loss_scale, _OWNER)
        self._batch_size = check_int(batch_size, "batch_size", _OWNER, 1)
        use_nesterov = check_bool(use_nesterov, "use_nesterov", _OWNER)
        if decay_filter is not None and not callable(decay_filter):
            raise TypeError(
                f"For '{_OWNER}', the argument 'decay_filter' must be callable or None, "
                f"but got {type(decay_filter).__name__} {decay_filter!r}"
            )
        self._clip = check_bool(enable_clip_grad, "enable_clip_grad", _OWNER)
        self._frequency = check_int(frequency, "frequency", _OWNER, 2)
        if block_size is not None:
            check_int(block_size, "block_size", _OWNER, 1)
        self._block_size = block_size
        if conv_stats not in CONV_STATS:
            raise ValueError(
                f"For '{_OWNER}', the argument 'conv_stats' must be one of "
                f"{list(CONV_STATS)}, but got {conv_stats!r}"
            )
        self._trace_threshold = (
            None
            if trace_threshold is None
            else check_number(trace_threshold, "trace_threshold", _OWNER, 0)
        )

        ConvertNetUtils().convert_to_thor_net(model)
        self._layers: list[_Layer] = []
        self._by_weight: dict[torch.Tensor, _Layer] = {}
        self._diagonal: set[nn.Parameter] = set()
        for name, module, tap in converted_layers(model):
            weight = module.weight  # every converted kind has one (None: LayerNorm, no affine)
            if isinstance(tap, Tap) and isinstance(weight, torch.Tensor) and weight.requires_grad:
                layer = _Layer(name, tap.kind, tap, weight)
                self._layers.append(layer)
                self._by_weight[weight] = layer
                if isinstance(tap, Conv2dTap):
                    tap.conv_stats = conv_stats
            elif tap.kind == "layernorm":
                self._diagonal.update(p for p in module.parameters(recurse=False))
        self._split = check_split_indices(split_indices, len(self._layers), _OWNER)

        decayed: list[nn.Parameter] = []
        kept: list[nn.Parameter] = []
        for name, param in model.named_parameters():
            if param.requires_grad:
                wanted = decay_filter is None or bool(decay_filter(ParamInfo(name, param)))
                (decayed if wanted else kept).append(param)
        defaults = {
            "lr": self._lr(0),
            "momentum": momentum,
            "weight_decay": weight_decay,
            "nesterov": use_nesterov,
        }
        groups: list[dict[str, Any]] = [{"params": decayed}]
        if kept:
            groups.append({"params": kept, "weight_decay": 0.0})
        super().__init__([g for g in groups if g["params"]], defaults)

        self._step = 0
        self._factorizations = 0
        self._factors: dict[str, Factors] = {}
        self._warned_layers: set[str] = set()
        self._arm()

    # ------------------------------------------------------------------ inspection

    step_count = ReadOnly[int](
        "``t``: how many steps were taken (the next step is a curvature step iff "
        "``t % frequency == 0``).",
        attribute="_step",
    )
    frequency = ReadOnly[int]("The refresh period of the inverses.")
    factorizations = ReadOnly[int](
        "How many steps recomputed inverses (a curvature step with statistics)."
    )

    @property
    def factors(self) -> dict[str, Factors]:
        """Each layer's factors from its latest refresh, by module name."""
        return dict(self._factors)

    def inverses(self, name: str) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The stored ``(a_inverse, g_inverse)`` of layer ``name`` (None: first order).

        Block-diagonal inverses are ``(blocks, b, b)`` tensors; an embedding's
        ``a_inverse`` is a vector."""
        for layer in self._layers:
            if layer.name == name:
                if layer.a_inverse is None or layer.g_inverse is None:
                    return None
                return layer.a_inverse, layer.g_inverse
        raise KeyError(f"thor: no second-order layer named {name!r}")

    def set_loss_scale(self, loss_scale: Any) -> None:
        """Replace ``loss_scale`` (a number, ``LossScaleManager`` or ``GradScaler``);
        ``ConvertModelUtils`` uses it to hand over the Model's loss-scale manager."""
        self._scale = LossScale(loss_scale, _OWNER)

    # ------------------------------------------------------------------ step

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One THOR update; refreshes the inverses first on a curvature step."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        t = self._step
        damping = self._damping(t)
        if not self._lr.is_constant:
            lr = self._lr(t)
            for group in self.param_groups:
                group["lr"] = lr
        if t % self._frequency == 0:
            self._refresh(t, damping)
        divisor = self._scale.grad_divisor()
        for group in self.param_groups:
            self._update(group, damping, divisor)
        self._step = t + 1
        self._arm()
        return loss

    def _update(self, group: dict[str, Any], damping: float, divisor: float) -> None:
        """Steps 1-7 of the module docstring for one param group; the element-wise part
        runs as multi-tensor (``_foreach``) ops, one per operation for the whole group."""
        params: list[torch.Tensor] = []
        grads: list[torch.Tensor] = []
        for param in group["params"]:
            if param.grad is None:
                continue
            grad = param.grad.float()
            if divisor != 1.0:
                grad = grad / divisor
            grad = self._precondition(param, grad, damping)
            params.append(param)
            grads.append(grad if grad.dtype == param.dtype else grad.to(param.dtype))
        if not params:
            return
        # Out-of-place until the momentum update: a first-order gradient is still p.grad.
        if group["weight_decay"]:
            grads = list(torch._foreach_add(grads, params, alpha=group["weight_decay"]))
        if self._clip:
            norms = torch._foreach_norm(grads)
            grads = [g * (1.0 / n).clamp(max=1.0) for g, n in zip(grads, norms, strict=True)]
        buffers = []
        for param in params:
            state = self.state[param]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = torch.zeros_like(param)
            buffers.append(state["momentum_buffer"])
        momentum, lr = group["momentum"], float(group["lr"])
        torch._foreach_mul_(buffers, momentum)
        torch._foreach_add_(buffers, grads)
        if group["nesterov"]:
            torch._foreach_add_(
                params, torch._foreach_add(grads, buffers, alpha=momentum), alpha=-lr
            )
        else:
            torch._foreach_add_(params, buffers, alpha=-lr)

    def _precondition(
        self, param: nn.Parameter, grad: torch.Tensor, damping: float
    ) -> torch.Tensor:
        layer = self._by_weight.get(param)
        if layer is not None:
            if layer.a_inverse is None or layer.g_inverse is None:
                return grad
            return precondition(layer.kind, grad, layer.a_inverse, layer.g_inverse)
        if param in self._diagonal:
            return diagonal_rule(grad, damping, self._batch_size)
        return grad

    # ------------------------------------------------------------------ curvature

    def _arm(self) -> None:
        curvature = self._step % self._frequency == 0
        for layer in self._layers:
            layer.tap.armed = curvature

    def _refresh(self, t: int, damping: float) -> None:
        """Turn the taps' statistics into stored inverses (curvature step ``t``)."""
        scale = self._scale.backward_scale()
        taken: list[tuple[int, _Layer, Factors]] = []
        for index, layer in enumerate(self._layers):
            stats = layer.tap.take()
            if stats is not None:
                factors = factors_from(layer.kind, stats, self._batch_size, scale)
                taken.append((index, layer, factors))
        if not taken:
            return
        taken = self._average_across_ranks(taken)
        for _, layer, factors in taken:
            self._factors[layer.name] = factors
        if self._trace_threshold is not None:
            taken = [item for item in taken if self._traces_moved(item[1], item[2])]
            if not taken:
                return
        blocks = [damped(layer.kind, f, damping, self._block_size) for _, layer, f in taken]
        inverted = invert_blocks([b for layer_blocks in blocks for b in layer_blocks])
        self._factorizations += 1
        start = 0
        for (_, layer, factors), layer_blocks in zip(taken, blocks, strict=True):
            mine = [m for m in inverted[start : start + len(layer_blocks)] if m is not None]
            failed = len(mine) < len(layer_blocks)
            start += len(layer_blocks)
            if failed:
                layer.a_inverse = layer.g_inverse = layer.inverse_step = layer.traces = None
                self._warn_failed(layer, t)
                continue
            layer.a_inverse, layer.g_inverse = inverses_from(
                layer.kind, factors, mine, damping, self._batch_size
            )
            layer.inverse_step = t
            if self._trace_threshold is not None:
                layer.traces = _traces(factors)

    def _traces_moved(self, layer: _Layer, factors: Factors) -> bool:
        if layer.traces is None or layer.a_inverse is None:
            return True
        assert self._trace_threshold is not None
        for old, new in zip(layer.traces, _traces(factors), strict=True):
            if abs(new - old) > self._trace_threshold * abs(old):
                return True
        return False

    def _warn_failed(self, layer: _Layer, t: int) -> None:
        if layer.name in self._warned_layers:
            return
        self._warned_layers.add(layer.name)
        logger.warning(
            "thor: at step %d a curvature factor of layer '%s' is not positive definite "
            "(even with %g jitter); the layer is updated first-order until a later "
            "refresh succeeds (further failures of this layer are not reported)",
            t,
            layer.name,
            JITTER,
        )

    def _average_across_ranks(
        self, taken: list[tuple[int, _Layer, Factors]]
    ) -> list[tuple[int, _Layer, Factors]]:
        """Mean of each factor over the ranks, one all-reduce per (group, device)."""
        dist = torch.distributed
        if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
            return taken
        world = dist.get_world_size()
        buckets: dict[tuple[int, torch.device], list[int]] = {}
        for position, (index, layer, _) in enumerate(taken):
            key = (bisect.bisect_left(self._split, index), layer.weight.device)
            buckets.setdefault(key, []).append(position)
        result = list(taken)
        for positions in buckets.values():
            tensors = [t for p in positions for t in (taken[p][2].a, taken[p][2].g)]
            flat = torch.cat([t.reshape(-1) for t in tensors])
            dist.all_reduce(flat)
            flat /= world
            pieces = iter(flat.split([t.numel() for t in tensors]))
            for p in positions:
                index, layer, factors = taken[p]
                a = next(pieces).view_as(factors.a)
                g = next(pieces).view_as(factors.g)
                result[p] = (index, layer, dataclasses.replace(factors, a=a, g=g))
        return result

    # ------------------------------------------------------------------ state

    def state_dict(self) -> dict[str, Any]:
        """Torch's state (momentum buffers, param groups) plus ``"thor"``: the step
        counter and each layer's stored inverses."""
        state = super().state_dict()
        state["thor"] = {
            "step": self._step,
            "factorizations": self._factorizations,
            "layers": {
                layer.name: {
                    "a_inverse": layer.a_inverse,
                    "g_inverse": layer.g_inverse,
                    "inverse_step": layer.inverse_step,
                    "traces": layer.traces,
                }
                for layer in self._layers
            },
        }
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` (inverses go to each layer's device, float32)."""
        if "thor" not in state_dict:
            raise ValueError(
                "For 'Thor.load_state_dict', the state dict has no 'thor' entry; it was not "
                "saved by a Thor optimizer"
            )
        state_dict = dict(state_dict)
        saved = state_dict.pop("thor")
        names = {layer.name for layer in self._layers}
        if set(saved["layers"]) != names:
            raise ValueError(
                "For 'Thor.load_state_dict', the saved second-order layers "
                f"{sorted(saved['layers'])} do not match this optimizer's {sorted(names)}"
            )
        super().load_state_dict(state_dict)
        self._step = int(saved["step"])
        self._factorizations = int(saved["factorizations"])
        for layer in self._layers:
            entry = saved["layers"][layer.name]
            device = layer.weight.device
            layer.a_inverse, layer.g_inverse = (
                None if entry[key] is None else entry[key].to(device, torch.float32)
                for key in ("a_inverse", "g_inverse")
            )
            layer.inverse_step = entry["inverse_step"]
            layer.traces = None if entry["traces"] is None else tuple(entry["traces"])
        self._arm()


def _traces(factors: Factors) -> tuple[float, float]:
    """``(tr A, tr G)``; an embedding's ``A`` is a vector of counts, its trace the sum."""
    a = factors.a
    trace_a = a.sum() if a.ndim == 1 else a.diagonal().sum()
    return float(trace_a), float(factors.g.diagonal().sum())


def thor(
    net: nn.Module,
    learning_rate: ScheduleLike,
    damping: ScheduleLike,
    momentum: float,
    *args: Any,
    **kwargs: Any,
) -> Thor:
    """MindSpore's ``nn.thor``: converts ``net`` in place and returns a :class:`Thor` over
    all its trainable parameters.

    The arguments are :class:`Thor`'s, in MindSpore's positional order, which is Thor's
    own: after ``momentum`` come ``weight_decay``, ``loss_scale``, ``batch_size``,
    ``use_nesterov``, ``decay_filter``, ``split_indices``, ``enable_clip_grad`` and
    ``frequency``, then Thor's keyword-only extensions (``block_size``, ``conv_stats``,
    ``trace_threshold``). Two are named differently: MindSpore's ``net`` and
    ``learning_rate`` are Thor's ``model`` and ``lr``.
    """
    return Thor(net, learning_rate, damping, momentum, *args, **kwargs)
