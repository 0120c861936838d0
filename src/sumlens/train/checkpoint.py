"""save_checkpoint / load_checkpoint / load_param_into_net (MindSpore names, PyTorch values).

A checkpoint is a plain safetensors file named ``*.ckpt`` -- loading never unpickles
anything. Besides the tensors, the safetensors header metadata holds:

* ``sumlens.append``: the ``append_dict`` entries (tensor values are stored as tensors
  named ``__append__.<key>``);
* ``sumlens.optimizer``: the structure of a torch optimizer ``state_dict()`` as JSON, its
  tensors stored under ``__optimizer__.*`` names;
* ``sumlens.crc32``: a CRC32 of the whole file (computed with this field zeroed), so a
  damaged unencrypted file is an error, not silently wrong weights. Every file sumlens
  writes also has ``sumlens.checkpoint`` and ``sumlens.names``, so a file with any
  ``sumlens.*`` key but no CRC (the key damaged or renamed) is refused; a safetensors
  file from elsewhere (no ``sumlens.*`` key) loads without a CRC. The CRC catches
  damage, not deliberate forgery: use ``enc_key`` for that.

With ``enc_key`` the whole file is wrapped by :mod:`sumlens.train.crypto` (AES-GCM, or
AES-CBC + HMAC-SHA256). Files are written to a temp file, fsynced and renamed into place
(:mod:`sumlens.train.atomic`) with mode ``0o400`` as MindSpore does, whatever the umask:
the checkpoint rule (every ``*.ckpt`` sumlens writes: ModelCheckpoint's, the exception
save's, the landscape weights), unlike event files, which get the modes the umask leaves.
A checkpoint holds the model's weights, which may be worth more than its logs: only its
owner reads it, and nothing rewrites it in place.
"""

from __future__ import annotations

import json
import os
import struct
import threading
import warnings
import zlib
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, BinaryIO

import numpy as np
import torch
from safetensors.torch import load as _st_load
from safetensors.torch import save as _st_save

from sumlens._checks import check_bool
from sumlens.train import crypto
from sumlens.train.atomic import atomic_write
from sumlens.train.checkpoint_errors import (
    CheckpointError,
    CheckpointFormatError,
    CheckpointIntegrityError,
    CheckpointMismatchError,
)

__all__ = [
    "CheckpointSaveHandle",
    "load_checkpoint",
    "load_param_into_net",
    "save_checkpoint",
    "wait_for_pending_saves",
]

OPTIMIZER_PREFIX = "__optimizer__."
APPEND_PREFIX = "__append__."
_RESERVED = (OPTIMIZER_PREFIX, APPEND_PREFIX)
_META_PREFIX = "sumlens."
_META_FORMAT = "sumlens.checkpoint"
_META_APPEND = "sumlens.append"
_META_OPTIMIZER = "sumlens.optimizer"
_META_CRC = "sumlens.crc32"
_META_NAMES = "sumlens.names"
_CRC_PLACEHOLDER = "00000000"
_FILE_MODE = 0o400
_U64 = struct.Struct("<Q")


# --------------------------------------------------------------------------- argument checks


def _check_path(path: object, argname: str) -> str:
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"{argname} must be a str or os.PathLike, got {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{argname} must be a non-empty path, got {path!r}")
    return text


def _check_prefixes(value: object, argname: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(p, str) for p in items):
        raise TypeError(f"{argname} must be None, a str or a list/tuple of str, got {value!r}")
    if any(not p for p in items):
        raise ValueError(f"{argname} must not contain empty strings, got {value!r}")
    return tuple(items)


def check_async_save(value: object, owner: str) -> bool:
    """``async_save`` (of ``save_checkpoint`` and ``CheckpointConfig``) as a bool: True,
    ``"thread"`` and ``"process"`` (an alias here, with a warning) save on the background
    thread. Call it from the function the user called: the warning points at its caller."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        if value == "thread":
            return True
        if value == "process":
            warnings.warn(
                f"For '{owner}', async_save='process' saves on a background thread in sumlens",
                stacklevel=3,
            )
            return True
        raise ValueError(
            f"For '{owner}', the argument 'async_save' must be a bool, 'thread' or 'process', "
            f"but got {value!r}"
        )
    raise TypeError(
        f"For '{owner}', the argument 'async_save' must be a bool, 'thread' or 'process', "
        f"but got {type(value).__name__} {value!r}"
    )


# --------------------------------------------------------------------------- structure <-> JSON


def _encode(obj: Any, tensors: dict[str, torch.Tensor], prefix: str, path: str) -> Any:
    """JSON-able form of ``obj``; tensors go to ``tensors`` under ``prefix + path``.

    Scalars stay as they are; a JSON object is always a tagged node:
    ``{"t": name}`` tensor, ``{"d": [[k, v], ...]}`` dict, ``{"l": [...]}`` list,
    ``{"u": [...]}`` tuple.
    """
    if isinstance(obj, torch.Tensor):
        name = prefix + path
        tensors[name] = obj
        return {"t": name}
    if isinstance(obj, np.ndarray):
        return _encode(torch.from_numpy(np.ascontiguousarray(obj)), tensors, prefix, path)
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Mapping):
        pairs = []
        for k, v in obj.items():
            if not (k is None or isinstance(k, bool | int | float | str)):
                raise TypeError(f"cannot store key {k!r} at {path or '<root>'}: not a scalar")
            pairs.append([k, _encode(v, tensors, prefix, f"{path}.{k}" if path else str(k))])
        return {"d": pairs}
    if isinstance(obj, list | tuple):
        items = [
            _encode(v, tensors, prefix, f"{path}.{i}" if path else str(i))
            for i, v in enumerate(obj)
        ]
        return {"u" if isinstance(obj, tuple) else "l": items}
    raise TypeError(
        f"cannot store {type(obj).__name__} at {path or '<root>'} in a checkpoint "
        "(allowed: tensors, numbers, bools, str, None, and dict/list/tuple of those)"
    )


def _decode(node: Any, tensors: Mapping[str, torch.Tensor]) -> Any:
    if isinstance(node, dict):
        ((tag, value),) = node.items()
        if tag == "t":
            return tensors[value]
        if tag == "d":
            return {k: _decode(v, tensors) for k, v in value}
        if tag == "l":
            return [_decode(v, tensors) for v in value]
        if tag == "u":
            return tuple(_decode(v, tensors) for v in value)
        raise ValueError(f"unknown node tag {tag!r}")
    if isinstance(node, list):
        raise ValueError("untagged list")
    return node


# --------------------------------------------------------------------------- collecting values


def _named_tensors(save_obj: object) -> dict[str, torch.Tensor]:
    if isinstance(save_obj, torch.nn.Module):
        items: Iterable[tuple[object, object]] = save_obj.state_dict().items()
    elif isinstance(save_obj, Mapping):
        items = save_obj.items()
    elif isinstance(save_obj, list):
        pairs = []
        for i, entry in enumerate(save_obj):
            if not isinstance(entry, Mapping) or "name" not in entry or "data" not in entry:
                raise TypeError(
                    f"save_obj[{i}] must be a dict with keys 'name' and 'data', got {entry!r}"
                )
            pairs.append((entry["name"], entry["data"]))
        items = pairs
    else:
        raise TypeError(
            "save_obj must be a torch.nn.Module, a state dict (name -> tensor) or a list of "
            f"{{'name': ..., 'data': ...}} dicts, got {type(save_obj).__name__}"
        )
    out: dict[str, torch.Tensor] = {}
    for name, value in items:
        if not isinstance(name, str) or not name:
            raise TypeError(f"parameter names in save_obj must be non-empty str, got {name!r}")
        if name.startswith(_RESERVED):
            raise ValueError(f"parameter name {name!r} uses a reserved prefix {_RESERVED}")
        if name in out:
            raise ValueError(f"parameter name {name!r} appears twice in save_obj")
        if isinstance(value, np.ndarray):
            value = torch.from_numpy(np.ascontiguousarray(value))
        if not isinstance(value, torch.Tensor):
            raise TypeError(
                f"value of parameter {name!r} must be a torch.Tensor or numpy array, "
                f"got {type(value).__name__}"
            )
        out[name] = value
    return out


def _check_append(append_dict: object, names: Mapping[str, object]) -> dict[str, Any]:
    if append_dict is None:
        return {}
    if not isinstance(append_dict, Mapping):
        raise TypeError(f"append_dict must be a dict or None, got {type(append_dict).__name__}")
    for key, value in append_dict.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"append_dict keys must be non-empty str, got {key!r}")
        if key in names or key.startswith(_RESERVED):
            raise ValueError(f"append_dict key {key!r} clashes with a parameter/reserved name")
        if not isinstance(value, bool | int | float | str | torch.Tensor | np.ndarray):
            raise TypeError(
                f"append_dict[{key!r}] must be int, float, bool, str or a tensor, "
                f"got {type(value).__name__}"
            )
    return dict(append_dict)


def _snapshot(tensors: dict[str, torch.Tensor], *, copy: bool) -> dict[str, torch.Tensor]:
    """CPU, contiguous, storage-unshared tensors; always fresh copies when ``copy``."""
    out: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    for name, t in tensors.items():
        t = t.detach()
        ptr = t.untyped_storage().data_ptr() if t.device.type == "cpu" else None
        must_copy = copy or t.device.type != "cpu" or (ptr in seen and t.numel() > 0)
        if must_copy:
            t = t.to("cpu", copy=True, memory_format=torch.contiguous_format)
        else:
            t = t.contiguous()
            if ptr is not None:
                seen.add(ptr)
        out[name] = t
    return out


# --------------------------------------------------------------------------- file bytes


def _serialize(tensors: dict[str, torch.Tensor], metadata: dict[str, str]) -> list[Any]:
    """The checkpoint bytes as [length+header, data]; the header carries the file's CRC32."""
    raw = _st_save(tensors, metadata=None)
    (n,) = _U64.unpack_from(raw)
    header = json.loads(raw[8 : 8 + n])
    meta = dict(header.pop("__metadata__", None) or {})
    meta.update(metadata)
    meta[_META_CRC] = _CRC_PLACEHOLDER
    header["__metadata__"] = meta
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    text += b" " * (-len(text) % 8)
    head = bytearray(_U64.pack(len(text)) + text)
    data = memoryview(raw)[8 + n :]
    crc = zlib.crc32(data, zlib.crc32(head))
    marker = f'"{_META_CRC}":"{_CRC_PLACEHOLDER}"'.encode()
    at = head.index(marker) + len(marker) - 1 - len(_CRC_PLACEHOLDER)
    head[at : at + len(_CRC_PLACEHOLDER)] = f"{crc:08x}".encode()
    return [bytes(head), data]


def _write_file(path: str, pieces: list[Any], enc_key: bytes | None, enc_mode: str) -> str:
    def write(f: BinaryIO) -> None:
        if enc_key is None:
            for piece in pieces:
                f.write(piece)
        else:
            crypto.encrypt_payload(f, pieces, enc_key, enc_mode)

    return atomic_write(path, write, mode=_FILE_MODE)


def _save_now(
    path: str,
    tensors: dict[str, torch.Tensor],
    metadata: dict[str, str],
    enc_key: bytes | None,
    enc_mode: str,
) -> str:
    pieces = _serialize(tensors, metadata)
    return _write_file(path, pieces, enc_key, enc_mode)


# --------------------------------------------------------------------------- async saves


class CheckpointSaveHandle:
    """Result of :func:`save_checkpoint`; ``wait()`` returns the path once the file is in place."""

    def __init__(self, path: str, future: Future[str]) -> None:
        self.path = path
        self._future = future

    def done(self) -> bool:
        """True once the save finished (successfully or not)."""
        return self._future.done()

    def wait(self, timeout: float | None = None) -> str:
        """Block until written; re-raise the save's error; TimeoutError after ``timeout`` s."""
        try:
            return self._future.result(timeout)
        except TimeoutError:
            if self._future.done():  # the save itself failed with a TimeoutError
                raise
            raise TimeoutError(f"checkpoint {self.path!r} not written within {timeout} s") from None

    def __repr__(self) -> str:
        state = "done" if self.done() else "pending"
        return f"CheckpointSaveHandle({self.path!r}, {state})"


class _SaveQueue:
    """The background saves of this process, in call order.

    One ``ThreadPoolExecutor(max_workers=1)`` runs them, so they never overlap and finish
    in the order they were asked for (a later save of the same file wins). A failed save
    is raised by its handle's ``wait()`` and once by :func:`wait_for_pending_saves`;
    ``ModelCheckpoint`` waits for its previous save before the next one, so there the
    error surfaces at the next save. The executor's thread is joined at interpreter exit,
    so started saves complete. A forked child gets a queue of its own (the parent's
    worker thread does not exist there) and does not wait for the parent's saves.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._pid = 0
        self._unreported: list[CheckpointSaveHandle] = []

    def submit(self, path: str, save: Callable[[], str]) -> CheckpointSaveHandle:
        with self._lock:
            if self._executor is None or self._pid != os.getpid():
                self._executor = ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="sumlens-save"
                )
                self._pid = os.getpid()
                self._unreported = []
            handle = CheckpointSaveHandle(path, self._executor.submit(save))
            self._unreported.append(handle)
        handle._future.add_done_callback(lambda future: self._forget_if_saved(handle))
        return handle

    def _forget_if_saved(self, handle: CheckpointSaveHandle) -> None:
        if handle._future.exception() is None:
            self._forget(handle)

    def _forget(self, handle: CheckpointSaveHandle) -> None:
        with self._lock:
            if handle in self._unreported:
                self._unreported.remove(handle)

    def wait_all(self, timeout: float | None) -> None:
        with self._lock:
            handles = list(self._unreported)
        first: BaseException | None = None
        for handle in handles:
            try:
                handle.wait(timeout)
            except BaseException as exc:
                if not handle.done():  # timed out (or interrupted): still pending
                    raise
                first = first or exc  # the save's own failure
            self._forget(handle)
        if first is not None:
            raise first


_saves = _SaveQueue()


def wait_for_pending_saves(timeout: float | None = None) -> None:
    """Wait for every ``async_save`` started so far; re-raise the first failure (each
    failure is raised by one call only); TimeoutError when one takes over ``timeout`` s."""
    _saves.wait_all(timeout)


# --------------------------------------------------------------------------- public API


def save_checkpoint(
    save_obj: object,
    ckpt_file_name: str | os.PathLike[str],
    integrated_save: bool = True,
    async_save: bool | str = False,
    append_dict: Mapping[str, Any] | None = None,
    enc_key: bytes | None = None,
    enc_mode: str = "AES-GCM",
    *,
    optimizer: torch.optim.Optimizer | Mapping[str, Any] | None = None,
) -> CheckpointSaveHandle:
    """Save ``save_obj`` (module, state dict or ``[{"name", "data"}]`` list) as a ``.ckpt``.

    ``.ckpt`` is appended to the name unless it ends with ``.ckpt`` or ``.safetensors``.
    ``optimizer`` (an optimizer or its ``state_dict()``) is stored alongside, restorable
    with ``load_checkpoint(..., optimizer=opt)``. ``async_save=True`` snapshots the values
    on the calling thread and writes them on a background thread; the returned handle's
    ``wait()`` (or :func:`wait_for_pending_saves`) waits for the file. Saves run in call
    order. ``integrated_save`` is accepted for MindSpore compatibility (single process:
    no effect). The file is mode ``0o400`` whatever the umask (the checkpoint rule: see the
    module's docstring).
    """
    path = _check_path(ckpt_file_name, "ckpt_file_name")
    if not path.endswith((".ckpt", ".safetensors")):
        path += ".ckpt"
    path = os.path.abspath(path)
    check_bool(integrated_save, "integrated_save", "save_checkpoint")
    is_async = check_async_save(async_save, "save_checkpoint")
    key = None if enc_key is None else crypto.validate_key(enc_key, "enc_key")
    mode = crypto.validate_mode(enc_mode, "enc_mode")
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"ckpt_file_name {path!r}: directory {directory!r} does not exist")

    tensors = _named_tensors(save_obj)
    extra: dict[str, torch.Tensor] = {}
    metadata = {_META_FORMAT: "1", "format": "pt", _META_NAMES: json.dumps(list(tensors))}
    append = _check_append(append_dict, tensors)
    if append:
        metadata[_META_APPEND] = json.dumps(_encode(append, extra, APPEND_PREFIX, ""))
    if optimizer is not None:
        if isinstance(optimizer, torch.optim.Optimizer):
            opt_state: object = optimizer.state_dict()
        elif isinstance(optimizer, Mapping):
            opt_state = optimizer
        else:
            raise TypeError(
                "optimizer must be a torch.optim.Optimizer or its state_dict(), "
                f"got {type(optimizer).__name__}"
            )
        metadata[_META_OPTIMIZER] = json.dumps(_encode(opt_state, extra, OPTIMIZER_PREFIX, ""))
    tensors.update(extra)
    snap = _snapshot(tensors, copy=is_async)

    def save() -> str:
        _save_now(path, snap, metadata, key, mode)
        return path

    if is_async:
        return _saves.submit(path, save)
    done: Future[str] = Future()
    done.set_result(save())
    return CheckpointSaveHandle(path, done)


def _read_plain(data: bytes, source: str) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    if len(data) < 8:
        raise CheckpointFormatError(f"{source!r} is not a checkpoint: only {len(data)} bytes")
    (n,) = _U64.unpack_from(data)
    if n < 2 or 8 + n > len(data):
        raise CheckpointFormatError(
            f"{source!r} is not a safetensors checkpoint (or its header is damaged): "
            f"header length {n} does not fit a {len(data)}-byte file"
        )
    head = data[8 : 8 + n]
    try:
        header = json.loads(head.decode("utf-8"))
        if not isinstance(header, dict):
            raise ValueError("header is not a JSON object")
        meta = header.get("__metadata__") or {}
        if not isinstance(meta, dict):
            raise ValueError("__metadata__ is not an object")
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise CheckpointFormatError(
            f"{source!r} is not a safetensors checkpoint (or its header is damaged): {exc}"
        ) from None
    crc_text = meta.get(_META_CRC)
    ours = sorted(str(k) for k in meta if str(k).startswith(_META_PREFIX))
    if crc_text is None and ours:
        raise CheckpointIntegrityError(
            f"checkpoint {source!r} is damaged or tampered: its metadata ({', '.join(ours)}) "
            f"says sumlens wrote it, but the {_META_CRC!r} field every sumlens checkpoint "
            "carries is missing, so its contents can't be verified"
        )
    if crc_text is not None:
        marker = f'"{_META_CRC}":"{crc_text}"'.encode()
        at = head.find(marker)
        if at < 0 or len(str(crc_text)) != 8:
            raise CheckpointIntegrityError(f"checkpoint {source!r} is damaged (bad CRC field)")
        patched = (
            head[:at] + f'"{_META_CRC}":"{_CRC_PLACEHOLDER}"'.encode() + head[at + len(marker) :]
        )
        crc = zlib.crc32(data[:8])
        crc = zlib.crc32(patched, crc)
        crc = zlib.crc32(memoryview(data)[8 + n :], crc)
        if f"{crc:08x}" != crc_text:
            raise CheckpointIntegrityError(
                f"checkpoint {source!r} is damaged: CRC32 mismatch "
                f"(stored {crc_text}, computed {crc:08x})"
            )
    try:
        tensors = _st_load(data)
    except Exception as exc:
        raise CheckpointFormatError(
            f"{source!r} is not a valid safetensors checkpoint (damaged?): {exc}"
        ) from None
    return tensors, {str(k): str(v) for k, v in meta.items()}


def _read_checkpoint(
    path: str, dec_key: bytes | None, dec_mode: str
) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    with open(path, "rb") as f:
        data = f.read()
    if crypto.is_encrypted(data):
        if dec_key is None:
            raise CheckpointError(f"checkpoint {path!r} is encrypted; pass dec_key (and dec_mode)")
        data = crypto.decrypt_payload(data, dec_key, dec_mode, source=path)
    elif dec_key is not None:
        raise CheckpointError(
            f"dec_key was given but checkpoint {path!r} is not encrypted "
            "(refusing an unauthenticated file where an encrypted one was expected)"
        )
    return _read_plain(data, path)


def _decode_meta(
    meta: dict[str, str], key: str, tensors: dict[str, torch.Tensor], path: str
) -> Any:
    try:
        return _decode(json.loads(meta[key]), tensors)
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise CheckpointFormatError(f"checkpoint {path!r}: bad {key} metadata ({exc})") from None


def _saved_order(meta: dict[str, str], tensors: dict[str, torch.Tensor]) -> list[str]:
    """Parameter names in the order they were saved (the file stores them sorted by dtype)."""
    try:
        names = json.loads(meta.get(_META_NAMES, "[]"))
    except ValueError:
        names = []
    if not isinstance(names, list):
        names = []
    order = [n for n in names if isinstance(n, str) and n in tensors]
    seen = set(order)
    return order + [n for n in tensors if n not in seen]


def load_checkpoint(
    ckpt_file_name: str | os.PathLike[str],
    net: torch.nn.Module | None = None,
    strict_load: bool = False,
    filter_prefix: str | Iterable[str] | None = None,
    dec_key: bytes | None = None,
    dec_mode: str = "AES-GCM",
    specify_prefix: str | Iterable[str] | None = None,
    choice_func: Callable[[str], bool] | None = None,
    *,
    optimizer: torch.optim.Optimizer | None = None,
) -> dict[str, Any]:
    """Read a checkpoint: ``{name: tensor}`` plus the ``append_dict`` entries.

    ``specify_prefix`` keeps only names starting with one of its prefixes,
    ``filter_prefix`` drops names starting with one of its prefixes, ``choice_func(name)``
    keeps names for which it returns True. With ``net`` the values are loaded into it
    (:func:`load_param_into_net`); with ``optimizer`` the saved optimizer state is loaded
    into it. Errors: :class:`CheckpointIntegrityError` (wrong key / damaged file),
    :class:`CheckpointFormatError` (not a checkpoint, e.g. a pickle) -- both ValueErrors.
    """
    path = os.path.abspath(_check_path(ckpt_file_name, "ckpt_file_name"))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"ckpt_file_name {path!r} does not exist or is not a file")
    if net is not None and not isinstance(net, torch.nn.Module):
        raise TypeError(f"net must be a torch.nn.Module or None, got {type(net).__name__}")
    check_bool(strict_load, "strict_load", "load_checkpoint")
    filters = _check_prefixes(filter_prefix, "filter_prefix")
    specify = _check_prefixes(specify_prefix, "specify_prefix")
    if choice_func is not None and not callable(choice_func):
        raise TypeError(f"choice_func must be callable or None, got {type(choice_func).__name__}")
    if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            f"optimizer must be a torch.optim.Optimizer or None, got {type(optimizer).__name__}"
        )
    key = None if dec_key is None else crypto.validate_key(dec_key, "dec_key")
    mode = crypto.validate_mode(dec_mode, "dec_mode")

    tensors, meta = _read_checkpoint(path, key, mode)
    order = _saved_order(meta, tensors)
    result: dict[str, Any] = {n: tensors[n] for n in order if not n.startswith(_RESERVED)}
    if _META_APPEND in meta:
        appended = _decode_meta(meta, _META_APPEND, tensors, path)
        if not isinstance(appended, dict):
            raise CheckpointFormatError(f"checkpoint {path!r}: bad {_META_APPEND} metadata")
        result.update(appended)

    def keep(name: str) -> bool:
        if specify and not name.startswith(specify):
            return False
        if filters and name.startswith(filters):
            return False
        return choice_func is None or bool(choice_func(name))

    result = {n: v for n, v in result.items() if keep(n)}
    if net is not None:
        load_param_into_net(net, result, strict_load=strict_load)
    if optimizer is not None:
        if _META_OPTIMIZER not in meta:
            raise CheckpointError(f"checkpoint {path!r} holds no optimizer state")
        optimizer.load_state_dict(_decode_meta(meta, _META_OPTIMIZER, tensors, path))
    return result


def _same_kind(a: torch.dtype, b: torch.dtype) -> bool:
    if a == torch.bool or b == torch.bool:
        return a == b
    if a.is_complex or b.is_complex:
        return a.is_complex and b.is_complex
    return a.is_floating_point == b.is_floating_point


def load_param_into_net(
    net: torch.nn.Module, parameter_dict: Mapping[str, Any], strict_load: bool = False
) -> tuple[list[str], list[str]]:
    """Copy checkpoint tensors into ``net``'s parameters and buffers, in place.

    Returns ``(param_not_load, ckpt_not_load)``: the network's state names that got no
    value, and the checkpoint's tensor names that were not used (non-tensor entries such
    as ``epoch_num`` and optimizer entries are not listed). ``strict_load=False`` also
    matches names that differ only by a leading module prefix (``"net.fc.w"`` vs
    ``"fc.w"``, when unambiguous) and converts dtypes of the same kind (float16 ->
    float32); ``strict_load=True`` needs exact names and dtypes. A shape or dtype that
    does not fit raises :class:`CheckpointMismatchError` (RuntimeError and ValueError)
    before anything is changed.
    """
    if not isinstance(net, torch.nn.Module):
        raise TypeError(f"net must be a torch.nn.Module, got {type(net).__name__}")
    if not isinstance(parameter_dict, Mapping):
        raise TypeError(f"parameter_dict must be a dict, got {type(parameter_dict).__name__}")
    check_bool(strict_load, "strict_load", "load_param_into_net")
    targets = net.state_dict(keep_vars=True)
    ckpt = {
        k: v
        for k, v in parameter_dict.items()
        if isinstance(k, str) and isinstance(v, torch.Tensor) and not k.startswith(_RESERVED)
    }
    pairs: dict[str, str] = {n: n for n in targets if n in ckpt}
    if not strict_load:
        used = set(pairs.values())
        for name in targets:
            if name in pairs:
                continue
            found = [
                k
                for k in ckpt
                if k not in used and (k.endswith("." + name) or name.endswith("." + k))
            ]
            if len(found) == 1:
                pairs[name] = found[0]
                used.add(found[0])
    for name, source in pairs.items():
        dst, src = targets[name], ckpt[source]
        if dst.shape != src.shape:
            raise CheckpointMismatchError(
                f"shape of {source!r} in the checkpoint is {tuple(src.shape)}, but network "
                f"parameter {name!r} has shape {tuple(dst.shape)}"
            )
        if dst.dtype != src.dtype and (strict_load or not _same_kind(dst.dtype, src.dtype)):
            raise CheckpointMismatchError(
                f"dtype of {source!r} in the checkpoint is {src.dtype}, but network parameter "
                f"{name!r} is {dst.dtype}"
                + ("" if strict_load else " (only same-kind conversion is allowed)")
            )
    with torch.no_grad():
        for name, source in pairs.items():
            targets[name].copy_(ckpt[source])
    param_not_load = [n for n in targets if n not in pairs]
    used_sources = set(pairs.values())
    ckpt_not_load = [k for k in ckpt if k not in used_sources]
    return param_not_load, ckpt_not_load
