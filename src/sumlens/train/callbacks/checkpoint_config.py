"""``CheckpointConfig``: when ``ModelCheckpoint`` saves, how many files it keeps, and how.

Every MindSpore 2.10 parameter is accepted and validated; the checkpoint format itself
follows the design's one checkpoint rule: a safetensors file named ``*.ckpt`` written by
:func:`sumlens.train.save_checkpoint`. Hence ``format="safetensors"`` is an alias of
``"ckpt"`` (the file is safetensors either way) and may be combined with encryption,
``crc_check`` is accepted but always on (every file carries a CRC32), and the key length
is checked here rather than at the first save. ``save_on_all_ranks`` (beyond MindSpore)
lets every torch.distributed rank save; by default only rank 0 does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from sumlens._checks import check_bool, check_int
from sumlens._readonly import ReadOnly
from sumlens.train import crypto
from sumlens.train.checkpoint import check_async_save

__all__ = ["CheckpointConfig"]

_APPEND_NAMES = ("epoch_num", "step_num")
_FORMATS = ("ckpt", "safetensors")
_POLICY = (
    "save_checkpoint_steps",
    "save_checkpoint_seconds",
    "keep_checkpoint_max",
    "keep_checkpoint_per_n_minutes",
    "saved_network",
)
"""The settings :meth:`CheckpointConfig.get_checkpoint_policy` returns, in its order."""


def _check_append_info(append_info: object) -> dict[str, Any] | None:
    if append_info is None:
        return None
    if not isinstance(append_info, list):
        raise TypeError(
            "append_info must be None or a list of 'epoch_num', 'step_num' and at most one "
            f"dict, got {type(append_info).__name__}"
        )
    if not append_info:
        return None
    result: dict[str, Any] = {}
    user: dict[str, Any] | None = None
    for index, element in enumerate(append_info):
        if isinstance(element, str):
            if element not in _APPEND_NAMES:
                raise ValueError(
                    f"append_info[{index}] must be one of {_APPEND_NAMES} when a str, "
                    f"got {element!r}"
                )
            result[element] = 0
        elif isinstance(element, dict):
            if user is not None:
                raise TypeError(f"append_info[{index}]: append_info may hold only one dict")
            for key, value in element.items():
                if not isinstance(key, str) or not key:
                    raise TypeError(f"append_info[{index}] keys must be non-empty str, got {key!r}")
                if not isinstance(value, bool | int | float | str | torch.Tensor | np.ndarray):
                    raise TypeError(
                        f"append_info[{index}][{key!r}] must be int, float, bool, str or a "
                        f"tensor, got {type(value).__name__}"
                    )
            user = dict(element)
        else:
            raise TypeError(
                f"append_info[{index}] must be 'epoch_num', 'step_num' or a dict, "
                f"got {element!r} ({type(element).__name__})"
            )
    if user:
        result.update(user)
    return result


class CheckpointConfig:
    """The checkpoint policy of :class:`ModelCheckpoint`.

    Save trigger: every ``save_checkpoint_steps`` global steps, or -- only when that is
    0/None -- every ``save_checkpoint_seconds`` seconds. Retention: keep the newest
    ``keep_checkpoint_max`` files, or -- only when that is 0/None -- at most one file per
    ``keep_checkpoint_per_n_minutes`` window (plus the newest); if both are 0/None
    ``keep_checkpoint_max`` becomes 1. The resolved values are in
    :meth:`get_checkpoint_policy`.

    ``append_info``: a list of ``"epoch_num"``, ``"step_num"`` and at most one dict of
    extra entries stored in every file. ``saved_network``: save this module's parameters
    instead of the training network and optimizer. ``async_save`` (``True``/``"thread"``,
    ``"process"`` is an alias) writes on a background thread. ``enc_key`` (16/24/32 bytes)
    and ``enc_mode`` (``"AES-GCM"`` or ``"AES-CBC"``) encrypt the file.
    ``exception_save`` writes ``{prefix}-{epoch}_{step}_breakpoint.ckpt`` when the run
    raises. ``integrated_save``/``remove_redundancy`` concern sharded distributed saves:
    validated, no effect here.
    """

    def __init__(
        self,
        save_checkpoint_steps: int | None = 1,
        save_checkpoint_seconds: int | None = 0,
        keep_checkpoint_max: int | None = 5,
        keep_checkpoint_per_n_minutes: int | None = 0,
        integrated_save: bool = True,
        async_save: bool | str = False,
        saved_network: torch.nn.Module | None = None,
        append_info: list[Any] | None = None,
        enc_key: bytes | None = None,
        enc_mode: str = "AES-GCM",
        exception_save: bool = False,
        crc_check: bool = False,
        remove_redundancy: bool = False,
        format: str = "ckpt",
        *,
        save_on_all_ranks: bool = False,
    ) -> None:
        owner = "CheckpointConfig"
        steps = check_int(save_checkpoint_steps, "save_checkpoint_steps", owner, 0, allow_none=True)
        seconds = check_int(
            save_checkpoint_seconds, "save_checkpoint_seconds", owner, 0, allow_none=True
        )
        keep_max = check_int(keep_checkpoint_max, "keep_checkpoint_max", owner, 0, allow_none=True)
        per_n_min = check_int(
            keep_checkpoint_per_n_minutes,
            "keep_checkpoint_per_n_minutes",
            owner,
            0,
            allow_none=True,
        )
        if not (steps or seconds or keep_max or per_n_min):
            raise ValueError(
                "save_checkpoint_steps, save_checkpoint_seconds, keep_checkpoint_max and "
                "keep_checkpoint_per_n_minutes can't be all None or 0, got "
                f"{save_checkpoint_steps!r}, {save_checkpoint_seconds!r}, "
                f"{keep_checkpoint_max!r} and {keep_checkpoint_per_n_minutes!r}"
            )
        if steps:
            seconds = None
        if keep_max:
            per_n_min = None
        elif not per_n_min:
            keep_max = 1
        self._save_checkpoint_steps = steps
        self._save_checkpoint_seconds = seconds
        self._keep_checkpoint_max = keep_max
        self._keep_checkpoint_per_n_minutes = per_n_min

        if saved_network is not None and not isinstance(saved_network, torch.nn.Module):
            raise TypeError(
                "saved_network must be a torch.nn.Module or None, got "
                f"{type(saved_network).__name__}"
            )
        self._saved_network = saved_network
        self._integrated_save = check_bool(integrated_save, "integrated_save", owner)
        self._exception_save = check_bool(exception_save, "exception_save", owner)
        self._crc_check = check_bool(crc_check, "crc_check", owner)
        self._remove_redundancy = check_bool(remove_redundancy, "remove_redundancy", owner)
        self._save_on_all_ranks = check_bool(save_on_all_ranks, "save_on_all_ranks", owner)

        is_async = check_async_save(async_save, owner)
        self._async_save: bool | str = "thread" if isinstance(async_save, str) else is_async

        self._enc_key = None if enc_key is None else crypto.validate_key(enc_key, "enc_key")
        self._enc_mode = crypto.validate_mode(enc_mode, "enc_mode")
        if not isinstance(format, str) or format not in _FORMATS:
            raise ValueError(f"format must be one of {_FORMATS}, got {format!r}")
        self._format = format
        self._append_dict = _check_append_info(append_info)

    # read-only views -------------------------------------------------------------------
    save_checkpoint_steps = ReadOnly[int | None]()
    save_checkpoint_seconds = ReadOnly[int | None]()
    keep_checkpoint_max = ReadOnly[int | None]()
    keep_checkpoint_per_n_minutes = ReadOnly[int | None]()
    integrated_save = ReadOnly[bool]()
    async_save = ReadOnly[bool | str]()
    saved_network = ReadOnly[torch.nn.Module | None]()
    enc_key = ReadOnly[bytes | None]()
    enc_mode = ReadOnly[str]()
    exception_save = ReadOnly[bool]()
    crc_check = ReadOnly[bool]()
    remove_redundancy = ReadOnly[bool]()
    format = ReadOnly[str]()
    save_on_all_ranks = ReadOnly[bool]()

    @property
    def append_dict(self) -> dict[str, Any] | None:
        return None if self._append_dict is None else dict(self._append_dict)

    def get_checkpoint_policy(self) -> dict[str, Any]:
        """The resolved trigger and retention values (and ``saved_network``)."""
        return {name: getattr(self, f"_{name}") for name in _POLICY}

    def __repr__(self) -> str:
        policy = {k: v for k, v in self.get_checkpoint_policy().items() if k != "saved_network"}
        args = ", ".join(f"{k}={v!r}" for k, v in policy.items())
        return f"CheckpointConfig({args}, async_save={self._async_save!r})"
