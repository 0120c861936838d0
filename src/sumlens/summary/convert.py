"""Turning whatever the user hands us into a host numpy array we own.

``add_value`` accepts numpy arrays, Python numbers, PyTorch tensors (CPU or CUDA, with or
without grad), JAX arrays and MindSpore tensors. The caller's value is *snapshotted*:
what is written is the value at the time of the call, whatever the caller does to its
tensor afterwards. CUDA tensors are not copied synchronously (that would stall the
training stream): :func:`snapshot` starts an asynchronous copy into pinned memory (reused
buffers, see :mod:`sumlens.summary.pinned`) and returns a :class:`PendingArray` that the
writer thread resolves.

Float types MindInsight cannot show (bfloat16, float16, the float8 family) are upcast to
float32.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from sumlens.summary.pinned import POOLED_BYTES, pinned_pool

if TYPE_CHECKING:
    import torch

_UPCAST_KINDS = ("bfloat16", "float16", "float8")
_PLAIN_DTYPES = frozenset(np.dtype(code) for code in "?bBhHiIlLqQfd")


class PendingArray:
    """A device-to-host copy in flight; :meth:`result` waits for it and returns the array.

    ``buffer`` is the pooled pinned buffer the copy lands in (None for a buffer of its
    own): :meth:`result` copies the array out of it and gives it back to ``pool``.
    """

    __slots__ = ("_buffer", "_event", "_host", "_pool", "_result")

    def __init__(self, host: Any, event: Any, buffer: Any = None, pool: Any = None) -> None:
        self._host = host
        self._event = event
        self._buffer = buffer
        self._pool = pool
        self._result: np.ndarray | None = None

    @property
    def dtype(self) -> np.dtype:
        """The dtype of the array :meth:`result` will return."""
        return self._host.numpy().dtype

    @property
    def nbytes(self) -> int:
        """Bytes of the pinned host buffer the copy lands in."""
        return int(self._host.numel() * self._host.element_size())

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the array :meth:`result` will return."""
        return tuple(self._host.shape)

    def done(self) -> bool:
        """Whether the copy has finished (never waits)."""
        return self._result is not None or bool(self._event.query())

    def result(self) -> np.ndarray:
        """Wait for the copy (only this thread waits) and return the host array."""
        if self._result is None:
            self._event.synchronize()
            array = self._host.numpy()
            if self._buffer is not None:  # a pooled buffer: copy out, then give it back
                array = array.copy()
                self._pool.give_back(self._buffer)
                self._buffer = None
            self._result = array
        return self._result


def _torch_tensor(value: object) -> TypeGuard[torch.Tensor]:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def snapshot(value: object, name: str = "value") -> np.ndarray | PendingArray:
    """A private copy of ``value`` as a host numpy array (or a pending device copy).

    Raises ``TypeError`` naming ``name`` when the value is not array-like.
    """
    if isinstance(value, np.ndarray):
        return _upcast(np.array(value, copy=True))
    if isinstance(value, bool | int | float | np.generic):
        return _upcast(np.asarray(value))
    if _torch_tensor(value):
        return _snapshot_torch(value)
    if hasattr(value, "asnumpy"):  # MindSpore Tensor
        return _upcast(np.array(value.asnumpy(), copy=True))
    if hasattr(value, "__array__") and not isinstance(value, str | bytes):  # JAX and friends
        return _upcast(np.array(value, copy=True))
    raise TypeError(
        f"{name} must be a tensor or array (numpy, Python number, torch, JAX or MindSpore), "
        f"got {type(value).__module__}.{type(value).__qualname__}"
    )


def _snapshot_torch(tensor: Any) -> np.ndarray | PendingArray:
    import torch

    tensor = tensor.detach()
    if tensor.dtype in (torch.bfloat16, torch.float16) or "float8" in str(tensor.dtype):
        tensor = tensor.to(torch.float32)  # a new tensor: already a snapshot
        copied = True
    else:
        copied = False
    if tensor.is_cuda:
        return copy_to_host_async(tensor)
    if tensor.device.type != "cpu":
        return tensor.to("cpu").numpy()
    if tensor.is_conj() or tensor.is_neg():
        tensor = tensor.resolve_conj().resolve_neg()
    array = tensor.numpy()
    return array if copied else array.copy()


def host_view(value: object) -> np.ndarray | None:
    """``value``'s host memory as a numpy array, without a copy when it can be had.

    For numpy arrays and CPU torch tensors (reduced floats are upcast: a new array); None
    for anything else (device tensors, other array types), which must be snapshotted.
    The view changes when the tensor does: use it before returning to the caller. The
    common case is two torch calls: in a training step's cold caches each costs microseconds.
    """
    if isinstance(value, np.ndarray):
        return _upcast(value)
    if not _torch_tensor(value) or not value.is_cpu:
        return None
    tensor = value.detach()
    try:
        return _upcast(tensor.numpy())
    except (RuntimeError, TypeError):  # no numpy dtype (bfloat16, float8), conj or neg view
        return resolve(_snapshot_torch(tensor))


def copy_to_host_async(tensor: Any) -> PendingArray:
    """Start copying a CUDA tensor into pinned host memory; the training stream never waits.

    The copy is queued on the current stream, after the work that produced ``tensor`` and
    before any later in-place change to it, so it holds the value at the call. Small
    copies land in reused pooled buffers (:mod:`sumlens.summary.pinned`).
    """
    import torch

    nbytes = tensor.numel() * tensor.element_size()
    buffer = pool = None
    if 0 < nbytes <= POOLED_BYTES:
        pool = pinned_pool()
        buffer = pool.take(nbytes)
        host = buffer[:nbytes].view(tensor.dtype).view(tensor.shape)
    else:
        host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
    host.copy_(tensor, non_blocking=True)
    event = torch.cuda.Event()
    event.record()
    return PendingArray(host, event, buffer, pool)


def is_cuda_tensor(value: object) -> bool:
    """Whether ``value`` is a torch tensor living on a CUDA device."""
    return _torch_tensor(value) and value.is_cuda


def torch_numpy_dtype(tensor: Any) -> np.dtype:
    """The numpy dtype a torch tensor's snapshot will have (reduced floats become float32)."""
    import torch

    if tensor.dtype in (torch.bfloat16, torch.float16) or "float8" in str(tensor.dtype):
        return np.dtype(np.float32)
    return torch.empty(0, dtype=tensor.dtype).numpy().dtype


def _upcast(array: np.ndarray) -> np.ndarray:
    if array.dtype in _PLAIN_DTYPES:  # the common case, without building the dtype's name
        return array
    name = array.dtype.name
    if array.dtype == np.float16 or any(kind in name for kind in _UPCAST_KINDS):
        return array.astype(np.float32)
    return array


def resolve(value: np.ndarray | PendingArray) -> np.ndarray:
    """The host array behind a snapshot (waits for a pending device copy)."""
    return value.result() if isinstance(value, PendingArray) else value
