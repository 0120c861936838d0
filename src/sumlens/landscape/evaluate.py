"""The loss at many points of a plane, as fast as the hardware allows.

Every point needs a full pass over the same samples with different weights, so the
work is arranged to waste as little as possible around those passes:

* **Samples are materialised once.** The batches are concatenated into one tensor per
  input, on the network's device (channels-last for a CPU network with 2-D
  convolutions, the layout in which oneDNN convolves and pools fastest), and a *pass* is
  a view of it.
* **Passes are sized for the hardware, not the dataset.** In eval mode the network
  treats samples independently, so the samples are regrouped into passes of about
  ``memory_budget`` bytes of activations (a cache-sized 8 MiB on CPU, 16 MiB on oneDNN
  tensors, 512 MiB on a GPU);
  the per-batch losses (the height is their mean, as MindSpore's ``Loss`` metric) are
  then cut out of the pass outputs (one loss call for many equal batches: see
  ``batch_loss``, else one ``vmap``-ed call).
* **On CPU, oneDNN's own tensors where faster.** Point by point, a pass can run on
  ``Tensor.to_mkldnn()`` tensors (see ``onednn``), each convolution and the ReLU after
  it as one call (see ``fusion``): a probe point decides, and its height must agree
  with the ordinary run's.
* **The first layer is not recomputed.** A first convolution or linear layer reading
  the input is linear in its weights: three outputs per plane replace it at every
  point (see ``stem``).
* **Several points per pass where that is faster.** ``torch.func.vmap`` over stacked
  weights (``functional_call``) runs K points in one pass; a short timing of both ways
  on the first block decides (``points_per_pass=None``). vmap wins on GPUs and for
  small models, where per-operator overhead dominates; on CPU a convolutional network
  is faster point by point, because vmap turns its convolutions into grouped ones.
  Models vmap cannot run (data-dependent control flow, ``.item()``, in-place updates
  of buffers) fall back to point by point, with a log line saying why.
* **Every CPU thread on its own points.** With ``torch.get_num_threads()`` = T > 1 on CPU,
  T copies of the network each evaluate a share of the points on one thread (torch's
  threads are set to 1 meanwhile and restored after). Small layers parallelise badly
  inside one operator; whole points parallelise perfectly, and a point's value no longer
  depends on the thread count.
* **No state leaks between points.** Eval mode by default; ``train_mode=True`` keeps the
  user's batches as they are (batch statistics depend on them), restores the buffers
  before every point and seeds the random generator from the point's index, so the
  result does not depend on which worker computed which point.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import copy
import dataclasses
import functools
import math
import operator
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
from torch.func import functional_call, vmap

from sumlens._log import logger, warn_once
from sumlens.landscape import onednn
from sumlens.landscape.batch_loss import BatchLosses
from sumlens.landscape.fusion import fuse_relus
from sumlens.landscape.nested import tensor_leaves, tree_map
from sumlens.landscape.objective import Objective
from sumlens.landscape.plane import Plane
from sumlens.landscape.stem import StemOutputs, find_stem

CPU_PASS_BYTES = 8 * 2**20
ONEDNN_PASS_BYTES = 16 * 2**20
"""On oneDNN tensors fewer, longer passes pay (digits CNN: 1,024 samples a pass 3-11%
faster per point than 512; on plain tensors 512 is faster)."""
GPU_PASS_BYTES = 512 * 2**20
AUTO_POINTS_PER_PASS = 8
VMAP_ADVANTAGE = 0.8
"""vmap is chosen only when its time per point is below this share of point by point."""
ONEDNN_ADVANTAGE = 0.9
"""oneDNN tensors are chosen only when their time per point is below this share."""
ONEDNN_AGREEMENT = 1e-5
"""... and the probe's height on them is this close (relative) to the ordinary run's."""
SLOW_POINT_SECONDS = 1.0
"""A point slower than this is compute-bound: per-pass overhead is moot, skip the timing."""
PROBE_SAMPLES = 8
LOSS_VMAP_MIN_BATCHES = 24
"""From this many equal batches in a pass on, one vmapped loss call beats one call each."""
SETTLE_MAX_BYTES = 32 * 2**20
"""glibc raises its mmap threshold no higher than this."""


@dataclasses.dataclass(frozen=True)
class EvalOptions:
    """How points are evaluated (none of it changes the result beyond float rounding).

    ``points_per_pass``: None times both ways and picks the faster, 1 is point by point,
    k > 1 is vmap over k points. ``samples_per_pass``: samples per forward pass (None:
    from ``memory_budget``, the activation bytes one pass may hold). ``onednn``: point
    by point on oneDNN tensors (see ``onednn``): None times both ways on CPU, True uses
    them where the network runs on them, False never. ``train_mode`` and ``seed``: see
    the module docstring.
    """

    train_mode: bool = False
    seed: int = 0
    points_per_pass: int | None = None
    samples_per_pass: int | None = None
    memory_budget: int | None = None
    onednn: bool | None = None


def _first(outputs: Any) -> torch.Tensor:
    return outputs[0] if isinstance(outputs, tuple | list) else outputs


def _split_rows(tensor: torch.Tensor, count: int, size: int) -> torch.Tensor:
    """``tensor``'s ``count * size`` rows as ``count`` batches of ``size`` (a view)."""
    return tensor.view(count, size, *tensor.shape[1:])


def _cat(parts: list[Any], dim: int = 0) -> Any:
    """Join pass outputs (same nesting) along the sample axis ``dim``."""
    head = parts[0]
    if len(parts) == 1:
        return head
    if isinstance(head, torch.Tensor):
        return torch.cat(parts, dim=dim)
    if isinstance(head, tuple | list):
        return type(head)(_cat([p[i] for p in parts], dim) for i in range(len(head)))
    if isinstance(head, dict):
        return {key: _cat([p[key] for p in parts], dim) for key in head}
    raise TypeError(f"cannot join network outputs of type {type(head).__name__}")


@dataclasses.dataclass
class _Run:
    """``count`` consecutive batches of ``size`` samples at ``offset`` in a unit's outputs."""

    offset: int
    size: int
    count: int
    labels: Any  # stacked (count, size, ...) when count > 1, else the batch's label
    flat_labels: Any = None  # the same labels one after the other
    one_call: bool | None = None  # its batch losses may come from one loss call


@dataclasses.dataclass
class _Unit:
    """Passes whose joined outputs hold whole batches (``runs``)."""

    passes: list[tuple[Any, ...]]
    runs: list[_Run]


class _Replica:
    """A network (and loss) that one thread evaluates points with."""

    def __init__(self, network: torch.nn.Module, loss_fn: Any) -> None:
        self.network = network
        self.loss_fn = loss_fn
        self.batch_losses = BatchLosses.of(loss_fn)
        self.targets: dict[str, torch.Tensor] = dict(network.named_parameters())
        self.targets.update(dict(network.named_buffers()))
        self.fused: torch.nn.Module | None = None  # the network with fused ReLUs (``fusion``)
        self.fusion_tried = False


class Evaluator:
    """Losses at plane coordinates for one :class:`Objective` (one per worker)."""

    def __init__(self, objective: Objective, options: EvalOptions | None = None) -> None:
        self.objective = objective
        self.options = options or EvalOptions()
        self.network = objective.network
        self.device = objective.device
        self.strategy: str | None = "loop" if self._loop_only() else None
        self._points = 1
        self._loss_vmap = True
        self._channels_last = self.device.type == "cpu" and _channels_last(self.network)
        self._replicas = [_Replica(self.network, objective.loss_fn)]
        streams = torch.get_num_threads() if self.device.type == "cpu" else 1
        if streams > 1 and not self.options.train_mode:  # train mode: one global RNG
            self._replicas += self._copies(streams - 1)
        self._targets = self._replicas[0].targets
        self.plane_key: str | None = None
        self._base: dict[str, torch.Tensor] = {}
        self._v: dict[str, torch.Tensor] = {}
        self._w: dict[str, torch.Tensor] = {}
        self._buffers: dict[str, torch.Tensor] = {}
        self._plans: dict[int, list[_Unit]] = {}
        self._per_sample_bytes: int | None = None
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._joined = self._join_batches()
        self._onednn = False  # the loop's passes are oneDNN tensors (see ``onednn``)
        self._layout_chosen = self.options.train_mode  # train mode: the user's batches as given
        self._onednn_units: tuple[list[_Unit], list[_Unit]] | None = None  # (plain, oneDNN)
        self._stem_place: tuple[str, int] | bool | None = False  # False: not looked for yet
        self._stem: StemOutputs | None = None
        self._stem_for: tuple[str | None, list[_Unit] | None] = (None, None)

    # ---------------------------------------------------------------- set-up

    def _copies(self, count: int) -> list[_Replica]:
        """``count`` more replicas for more threads (none if the network cannot be copied)."""
        try:
            return [
                _Replica(copy.deepcopy(self.network), copy.deepcopy(self.objective.loss_fn))
                for _ in range(count)
            ]
        except (TypeError, RuntimeError, copy.Error) as err:
            logger.info("landscape: one thread evaluates the points (no network copy: %s)", err)
            return []

    def _loop_only(self) -> bool:
        return self.options.train_mode or self.options.points_per_pass == 1

    def _rechunk(self) -> bool:
        return not self.options.train_mode and self.objective.loss_fn is not None

    def _join_batches(self) -> tuple[tuple[torch.Tensor, ...], Any] | None:
        """All batch inputs (and labels) concatenated, when the batches allow regrouping."""
        batches = self.objective.batches
        if not self._rechunk():
            return None
        try:
            inputs = tuple(torch.cat([b[i] for b in batches]) for i in range(len(batches[0]) - 1))
            labels = torch.cat([b[-1] for b in batches])
        except (TypeError, RuntimeError):
            return None  # ragged or non-tensor items: passes stay the user's batches
        if self._channels_last:
            inputs = tuple(
                t.contiguous(memory_format=torch.channels_last)
                if t.dim() == 4 and t.shape[1] > 1
                else t
                for t in inputs
            )
        return inputs, labels

    def set_plane(self, plane: Plane, key: str) -> None:
        """Load ``plane.base`` into the network (by name, non-strict) and keep the directions."""
        if key == self.plane_key:
            return
        matched = [name for name in plane.base if name in self._targets]
        if not matched:
            raise ValueError(
                "none of the snapshot's entries matches a parameter or buffer of callback_fn's "
                f"network (snapshot has {list(plane.base)[:5]}..., network has "
                f"{list(self._targets)[:5]}...); return the network the weights were saved from"
            )
        missing = [name for name in self._targets if name not in plane.base]
        if missing:
            warn_once(
                "landscape-missing-entries",
                "the snapshot has no value for %d entries of the network (e.g. %s); "
                "they keep the network's own values",
                len(missing),
                missing[:3],
            )
        self._base, self._v, self._w = {}, {}, {}
        with torch.no_grad():
            for name in matched:
                target = self._targets[name]
                target.copy_(_tensor(plane.base[name], target))
                for replica in self._replicas[1:]:
                    replica.targets[name].copy_(target)
                if name in plane.v:
                    self._base[name] = target.detach().clone()
                    self._v[name] = _tensor(plane.v[name], target)
                    self._w[name] = _tensor(plane.w[name], target)
        self._buffers = {n: b.detach().clone() for n, b in self.network.named_buffers()}
        self.plane_key = key

    # ---------------------------------------------------------------- pass plans

    def _activation_bytes(self) -> int:
        """Bytes of module outputs per sample of one forward pass (forward hooks, a few samples)."""
        assert self._joined is not None
        inputs = tuple(t[:PROBE_SAMPLES] for t in self._joined[0])
        samples = len(inputs[0])
        total = sum(t.numel() * t.element_size() for t in inputs)

        def count(_module: torch.nn.Module, _args: Any, output: Any) -> None:
            nonlocal total
            for tensor in tensor_leaves(output):
                total += tensor.numel() * tensor.element_size()

        handles = [m.register_forward_hook(count) for m in self.network.modules()]
        try:
            with torch.inference_mode():
                self.network.eval()
                self.network(*inputs)
        finally:
            for handle in handles:
                handle.remove()
        return max(1, total // samples)

    def _sample_bytes(self) -> int:
        if self._per_sample_bytes is None:
            self._per_sample_bytes = self._activation_bytes()
        return self._per_sample_bytes

    def _budget(self) -> int:
        if self.options.memory_budget is not None:
            return self.options.memory_budget
        if self.device.type != "cpu":
            return GPU_PASS_BYTES
        return ONEDNN_PASS_BYTES if self._onednn else CPU_PASS_BYTES

    def _settle_allocator(self, samples: int, points: int) -> None:
        """Keep a pass's activations on the heap instead of mapping fresh pages every pass.

        glibc serves blocks above its mmap threshold (128 KiB at first) with fresh
        mappings and gives heap tops above its trim threshold back to the system, so every
        pass can page-fault all its activations in again (1,200 faults, a third of the
        time of a point, for the digits CNN in passes of 574). Freeing one mapped block of
        S bytes raises both thresholds for good (to S and 2 S, at most 32 MiB), which is
        what one throwaway block the size of a pass does; other allocators ignore it.
        """
        if self.device.type != "cpu":
            return
        size = min(SETTLE_MAX_BYTES, self._sample_bytes() * samples * points)
        block = torch.empty(size, dtype=torch.uint8)
        del block

    def _samples_per_pass(self, points: int) -> int:
        assert self._joined is not None
        total = len(self._joined[1])
        if self.options.samples_per_pass is not None:
            return min(self.options.samples_per_pass, total)
        per_sample = self._sample_bytes() * points
        return int(max(1, min(total, self._budget() // per_sample)))

    def _plan(self, samples: int) -> list[_Unit]:
        """Units over the joined samples: whole batches grouped up to ``samples``, or split."""
        if samples in self._plans:
            return self._plans[samples]
        assert self._joined is not None
        inputs, labels = self._joined
        sizes = [len(b[-1]) for b in self.objective.batches]
        units: list[_Unit] = []
        group: list[tuple[int, int]] = []  # (offset, size) of whole batches in the pass

        def close_group() -> None:
            if not group:
                return
            start, stop = group[0][0], group[-1][0] + group[-1][1]
            runs: list[_Run] = []
            for offset, size in group:
                if runs and runs[-1].size == size:
                    runs[-1].count += 1
                else:
                    runs.append(_Run(offset - start, size, 1, None))
            for run in runs:
                first = start + run.offset
                chunk = labels[first : first + run.size * run.count]
                run.flat_labels = chunk
                if run.count > 1:
                    chunk = chunk.view(run.count, run.size, *chunk.shape[1:])
                run.labels = chunk
            units.append(_Unit([tuple(t[start:stop] for t in inputs)], runs))
            group.clear()

        # equal passes where the batches allow: same-sized activations every pass, which
        # the allocator then reuses (1,024 samples at most 574 a pass: 2 x 512, not 574 + 450)
        limit = math.ceil(len(labels) / math.ceil(len(labels) / samples))
        offset = 0
        for size in sizes:
            if size > samples:
                close_group()
                step = math.ceil(size / math.ceil(size / samples))
                passes = [
                    tuple(t[s : min(s + step, offset + size)] for t in inputs)
                    for s in range(offset, offset + size, step)
                ]
                units.append(_Unit(passes, [_Run(0, size, 1, labels[offset : offset + size])]))
            else:
                if group and group[-1][0] + group[-1][1] - group[0][0] + size > limit:
                    close_group()
                group.append((offset, size))
            offset += size
        close_group()
        self._plans = {samples: units}  # only the plan in use stays alive
        return units

    def _batch_units(self) -> list[_Unit]:
        """One unit per user batch (train mode, network-computed loss, ragged batches)."""
        if 0 not in self._plans:
            units = []
            for element in self.objective.batches:
                if self.objective.loss_fn is None:
                    units.append(_Unit([element], []))
                else:
                    units.append(_Unit([element[:-1]], [_Run(0, len(element[-1]), 1, element[-1])]))
            self._plans = {0: units}
        return self._plans[0]

    def _units(self, points: int) -> list[_Unit]:
        if self._joined is None:
            return self._batch_units()
        samples = self._samples_per_pass(points)
        if samples not in self._plans:
            self._settle_allocator(samples, points)
        return self._plan(samples)

    def _loop_units(self) -> list[_Unit]:
        """The point-by-point plan, its passes as oneDNN tensors in that mode (made once)."""
        units = self._units(1)
        if not self._onednn:
            return units
        if self._onednn_units is None or self._onednn_units[0] is not units:
            converted = [
                _Unit([onednn.to_onednn(inputs) for inputs in unit.passes], unit.runs)
                for unit in units
            ]
            self._onednn_units = (units, converted)
        return self._onednn_units[1]

    def _stem_outputs(self, units: list[_Unit]) -> StemOutputs | None:
        """The first layer's outputs for the plane and ``units``' passes (see ``stem``),
        computed on first use; None when the network has no such layer or they do not fit."""
        if self._joined is None:
            return None  # the user's own batches: no fixed passes to keep outputs for
        if self._stem_for[0] == self.plane_key and self._stem_for[1] is units:
            return self._stem
        self._stem_for, self._stem = (self.plane_key, units), None
        if self._stem_place is False:
            self.network.eval()
            probe = tuple(t[:PROBE_SAMPLES] for t in self._joined[0])
            self._stem_place = find_stem(self.network, probe)
        if isinstance(self._stem_place, tuple):
            stem = StemOutputs(*self._stem_place)
            passes = [inputs for unit in units for inputs in unit.passes]
            if stem.compute(self.network, passes, self._base, self._v, self._w):
                self._stem = stem
        return self._stem

    def _onednn_network(self, replica: _Replica) -> torch.nn.Module:
        """What runs a oneDNN pass: the replica's network with its ReLUs fused (made on
        first use, on the calling thread: tracing is not thread-safe), or as it is."""
        if not replica.fusion_tried:
            replica.fusion_tried = True
            assert self._joined is not None  # oneDNN passes are regrouped samples
            probe = onednn.to_onednn(tuple(t[:PROBE_SAMPLES] for t in self._joined[0]))
            keep = {self._stem_place[0]} if isinstance(self._stem_place, tuple) else set()
            replica.fused = fuse_relus(replica.network, probe, keep)
        return replica.fused or replica.network

    # ---------------------------------------------------------------- losses

    def _unit_losses(
        self, replica: _Replica, unit: _Unit, outputs: Any, one_call: bool = False
    ) -> list[torch.Tensor]:
        """Per-batch losses (0-d or (count,) tensors) of one unit's joined outputs;
        ``one_call``: a run's losses from one loss call where the loss allows it (point by
        point only: under vmap its last bits would depend on how points are grouped)."""
        loss_fn = replica.loss_fn
        if loss_fn is None:
            return [_first(outputs).reshape(())]
        losses = []
        for run in unit.runs:
            rows = slice(run.offset, run.offset + run.size * run.count)
            piece = tree_map(operator.itemgetter(rows), outputs)
            if run.count == 1:
                losses.append(loss_fn(piece, run.labels).reshape(()))
                continue
            together = self._one_call(replica, run, piece) if one_call else None
            if together is not None:
                losses.append(together)
                continue
            stacked = tree_map(
                functools.partial(_split_rows, count=run.count, size=run.size), piece
            )
            if self._loss_vmap and run.count >= LOSS_VMAP_MIN_BATCHES:
                try:
                    losses.append(vmap(loss_fn)(stacked, run.labels))
                    continue
                except (RuntimeError, NotImplementedError, ValueError, TypeError) as err:
                    self._loss_vmap = False
                    logger.info("landscape: the loss is computed batch by batch (%s)", err)
            for i in range(run.count):
                one = tree_map(operator.itemgetter(i), stacked)
                losses.append(loss_fn(one, run.labels[i]).reshape(()))
        return losses

    @staticmethod
    def _one_call(replica: _Replica, run: _Run, piece: Any) -> torch.Tensor | None:
        """A run's batch losses from one loss call, where the loss allows it."""
        batch_losses = replica.batch_losses
        if batch_losses is None or not isinstance(piece, torch.Tensor):
            return None
        if run.one_call is None:
            run.one_call = batch_losses.accepts(run.flat_labels)
        return batch_losses(piece, run.flat_labels, run.count) if run.one_call else None

    @staticmethod
    def _mean(losses: list[torch.Tensor]) -> float:
        flat = torch.cat([loss.detach().reshape(-1) for loss in losses])
        return float(flat.to(torch.float64).mean())

    def _perturbed(self, a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
        """``base + a*v + b*w`` for K coordinate pairs: each entry gets a leading K axis."""
        out = {}
        for name, base in self._base.items():
            shape = (len(a),) + (1,) * base.dim()
            out[name] = base + a.view(shape) * self._v[name] + b.view(shape) * self._w[name]
        return out

    @contextlib.contextmanager
    def _point_rng(self, index: int) -> Iterator[None]:
        devices = [self.device] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(self.options.seed * 1_000_003 + index)
            yield

    def _loop(self, replica: _Replica, coords: torch.Tensor, first_index: int) -> list[float]:
        """Point by point: the weights written into the network in place, then every unit."""
        units = self._loop_units()
        train = self.options.train_mode
        network, targets = replica.network, replica.targets
        run = _onednn_forward if self._onednn else _forward
        network.train(train)
        stem = self._stem_outputs(units)
        point = [0.0, 0.0]  # the stem's (a, b)
        layer = stem.install(network, point) if stem is not None else None
        if self._onednn:  # the fused copy shares the network's modules, the stem included
            network = self._onednn_network(replica)
        moved = [targets[name] for name in self._base]
        bases, vs, ws = list(self._base.values()), list(self._v.values()), list(self._w.values())
        heights = []
        try:
            for k, (a, b) in enumerate(coords.tolist()):
                point[0], point[1] = a, b
                torch._foreach_copy_(moved, bases)  # three calls per point, not three per tensor
                torch._foreach_add_(moved, vs, alpha=a)
                torch._foreach_add_(moved, ws, alpha=b)
                if train:
                    for name, value in self._buffers.items():
                        targets[name].copy_(value)
                context = self._point_rng(first_index + k) if train else contextlib.nullcontext()
                with context:
                    losses = []
                    for unit in units:
                        outputs = _cat([run(network, inputs) for inputs in unit.passes])
                        losses.extend(self._unit_losses(replica, unit, outputs, one_call=True))
                heights.append(self._mean(losses))
        finally:
            if layer is not None:
                StemOutputs.uninstall(layer)
        return heights

    def _vmapped(self, replica: _Replica, coords: torch.Tensor) -> list[float]:
        """K points per pass: stacked weights through ``vmap(functional_call)``."""
        units = self._units(len(coords))
        network = replica.network
        network.eval()
        weights = self._perturbed(coords[:, 0], coords[:, 1])
        per_point: list[list[torch.Tensor]] = [[] for _ in range(len(coords))]
        for unit in units:
            parts = [
                vmap(functools.partial(functional_call, network, args=inputs))(weights)
                for inputs in unit.passes
            ]
            joined = _cat(parts, dim=1)
            for k in range(len(coords)):
                outputs = tree_map(operator.itemgetter(k), joined)
                per_point[k].extend(self._unit_losses(replica, unit, outputs))
        return [self._mean(losses) for losses in per_point]

    def _run(self, replica: _Replica, coords: torch.Tensor, first_index: int) -> list[float]:
        if self.strategy == "loop":
            return self._loop(replica, coords, first_index)
        heights: list[float] = []
        for start in range(0, len(coords), self._points):
            heights.extend(self._vmapped(replica, coords[start : start + self._points]))
        return heights

    def _choose_layout(self, coords: torch.Tensor) -> float | None:
        """Point by point on oneDNN tensors where that runs, agrees and is faster (see
        ``onednn``); returns the loop's best time per point in the layout kept, if timed.

        Each layout is timed as ``_best`` says. ``EvalOptions.onednn`` True or False
        skips the comparison.
        """
        replica, probe = self._replicas[0], coords[:1]

        def loop() -> tuple[float, list[float]]:
            return _timed(lambda: self._loop(replica, probe, 0), 1)

        wanted = self.options.onednn
        possible = self._joined is not None and onednn.usable(self.device, self._joined[0])
        if wanted is False or not possible:
            return None
        plain_time, plain = (None, []) if wanted else _best(loop)
        self._onednn = True
        try:
            onednn_time, heights = _best(loop)
        except Exception as err:  # an operator without oneDNN tensors: the plain way runs
            self._onednn, self._onednn_units = False, None
            logger.info("landscape: oneDNN tensors do not run this model (%s)", err)
            return plain_time
        if plain_time is None:
            return onednn_time
        agrees = abs(heights[0] - plain[0]) <= ONEDNN_AGREEMENT * abs(plain[0])
        self._onednn = agrees and onednn_time < ONEDNN_ADVANTAGE * plain_time
        logger.info(
            "landscape: %.3g ms per point, %.3g ms on oneDNN tensors (height %s): %s",
            plain_time * 1e3,
            onednn_time * 1e3,
            "agrees" if agrees else f"{heights[0]!r} instead of {plain[0]!r}",
            "oneDNN tensors" if self._onednn else "plain tensors",
        )
        if not self._onednn:
            self._onednn_units = None
            return plain_time
        return onednn_time

    def _choose(self, coords: torch.Tensor, loop_time: float | None) -> str:
        """Point by point (``loop_time`` per point; None: timed here) against vmap on
        probe points: the faster way wins. The loop is timed as ``_best`` says; vmap once,
        and twice more unless that first pass was over twice as slow per point as the
        loop, its best time counting."""
        wanted = self.options.points_per_pass
        self._points = wanted if wanted is not None else AUTO_POINTS_PER_PASS
        probe = coords[:1].repeat(self._points, 1)
        replica = self._replicas[0]

        def vmapped() -> float:
            return _timed(lambda: self._vmapped(replica, probe), self._points)[0]

        if loop_time is None:
            loop_time = _best(lambda: _timed(lambda: self._loop(replica, probe[:1], 0), 1))[0]
        if wanted is None and loop_time > SLOW_POINT_SECONDS:
            return "loop"
        try:
            vmap_time = vmapped()
        except Exception as err:  # whatever vmap cannot run, the loop can
            logger.info(
                "landscape: vmap cannot run this model (%s: %s); evaluating point by point",
                type(err).__name__,
                err,
            )
            return "loop"
        if wanted is not None:
            return "vmap"
        for _ in range(2 if vmap_time < 2 * loop_time else 0):
            vmap_time = min(vmap_time, vmapped())
        choice = "vmap" if vmap_time < VMAP_ADVANTAGE * loop_time else "loop"
        logger.info(
            "landscape: %.3g ms per point by point, %.3g ms with vmap over %d points: %s",
            loop_time * 1e3,
            vmap_time * 1e3,
            self._points,
            choice,
        )
        return choice

    def losses(self, coords: np.ndarray, first_index: int = 0) -> np.ndarray:
        """Heights at ``coords`` (P x 2 plane coordinates); ``first_index`` seeds train mode."""
        if self.plane_key is None:
            raise RuntimeError("set_plane() must be called before losses()")
        points = torch.as_tensor(np.asarray(coords), dtype=torch.float32, device=self.device)
        threads = torch.get_num_threads()
        if len(self._replicas) > 1:
            torch.set_num_threads(1)  # each replica's thread runs its points alone
        try:
            with torch.inference_mode():
                loop_time = None
                if not self._layout_chosen:
                    loop_time = self._choose_layout(points)
                    self._layout_chosen = True
                if self.strategy is None:
                    self.strategy = self._choose(points, loop_time)
                if self.strategy == "loop":  # plan once, before the threads share it
                    self._stem_outputs(self._loop_units())
                    if self._onednn:
                        for replica in self._replicas:
                            self._onednn_network(replica)
                else:
                    self._units(self._points)
                heights = self._fan_out(points, first_index)
        finally:
            torch.set_num_threads(threads)
        return np.asarray(heights, dtype=np.float64)

    def _fan_out(self, points: torch.Tensor, first_index: int) -> list[float]:
        """The points split in contiguous shares, one per replica, each on its own thread."""
        shares = min(len(self._replicas), len(points))
        if shares <= 1:
            return self._run(self._replicas[0], points, first_index)
        bounds = np.linspace(0, len(points), shares + 1).astype(int)

        def share(i: int) -> list[float]:
            with torch.inference_mode():
                start, stop = bounds[i], bounds[i + 1]
                return self._run(self._replicas[i], points[start:stop], first_index + start)

        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(len(self._replicas) - 1)
        # this thread takes the first share, the pool's threads the others
        rest = [self._pool.submit(share, i) for i in range(1, shares)]
        first = share(0)
        return first + [h for future in rest for h in future.result()]

    def close(self) -> None:
        """Stop the threads of the extra replicas (the evaluator still works, on one thread)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def _best(run: Callable[[], tuple[float, list[float]]]) -> tuple[float, list[float]]:
    """The best of two timed runs after a warm-up (the warm-up alone when it took over
    ``SLOW_POINT_SECONDS``): a busy machine only ever makes a run slower."""
    warm = run()
    return warm if warm[0] > SLOW_POINT_SECONDS else min(run(), run())


def _timed(run: Callable[[], list[float]], points: int) -> tuple[float, list[float]]:
    """Seconds per point of ``run()``, and what it returned."""
    start = time.perf_counter()
    result = run()
    return (time.perf_counter() - start) / points, result


def _forward(network: torch.nn.Module, inputs: tuple[Any, ...]) -> Any:
    return network(*inputs)


def _onednn_forward(network: torch.nn.Module, inputs: tuple[Any, ...]) -> Any:
    """``network`` on a pass of oneDNN tensors, its outputs as ordinary tensors."""
    return tree_map(onednn.dense, network(*inputs))


def _channels_last(network: torch.nn.Module) -> bool:
    """Lay out the weights of ``network``'s 2-D convolutions channels-last; False if none.

    A convolution reading a single channel per group stays as it is: on one channel the
    channels-last kernels are slower, and its output then feeds the next convolution in
    the usual layout, which converts it once.
    """
    found = False
    for module in network.modules():
        if isinstance(module, torch.nn.Conv2d):
            found = True
            if module.in_channels // module.groups > 1:
                module.weight.data = module.weight.data.contiguous(
                    memory_format=torch.channels_last
                )
    return found


def _tensor(array: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    """``array`` (possibly read-only, e.g. from Ray's object store) as a copy shaped, typed,
    placed and laid out like ``like``."""
    return torch.empty_like(like).copy_(torch.from_numpy(np.array(array)))
