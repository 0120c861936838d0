"""``ModelCheckpoint``: save the training network (and optimizer) during training.

Files are ``{directory}/{prefix}-{epoch}_{step_in_epoch}.ckpt`` -- safetensors files
written by :func:`sumlens.train.save_checkpoint` (atomic, mode ``0o400`` whatever the
umask: the checkpoint rule, as MindSpore; unlike event files, which follow the umask). The
directory, when made, gets the mode the umask leaves, as ``os.makedirs``. If files of
an earlier run with the same prefix are in the directory, the prefix becomes
``{prefix}_1``, ``{prefix}_2`` ... (MindSpore's collision rule, decided once at
construction).

Retention runs *after* a file has been written completely, never before: MindSpore
deletes the oldest file before writing the new one, so a failed write could leave no
checkpoint at all; here the newest good file is never deleted, and the final set of files
is the same as MindSpore's. With ``async_save`` the write happens on a background thread;
the callback waits for it before the next save (and at the end of the run), then prunes.

Times come from ``clock`` (default :func:`time.time`, so they compare with file
modification times); pass another clock to test the seconds-based trigger and the
per-n-minutes retention without sleeping. Files this instance wrote are ordered by when
it saved them, other matching files by their modification time (they count as older).

Under torch.distributed (initialised, world size > 1) only rank 0 saves, unless
``CheckpointConfig(save_on_all_ranks=True)`` -- then give each rank its own directory
(e.g. a callable ``directory``).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch

from sumlens._checks import check_directory
from sumlens._log import logger
from sumlens.train.callback import Callback, RunContext, RunParams
from sumlens.train.callbacks._common import get_param, is_rank_zero, step_in_epoch
from sumlens.train.callbacks.checkpoint_config import CheckpointConfig
from sumlens.train.checkpoint import CheckpointSaveHandle, save_checkpoint

__all__ = ["ModelCheckpoint"]

_CWD = os.getcwd()  # MindSpore: the working directory when the package was imported
_EXT = ".ckpt"
_BREAKPOINT = "_breakpoint.ckpt"
_PATH_MAX = 4096  # Linux's limit: a checkpoint directory has no shorter one of its own

Prefix = str | Callable[[Mapping[str, Any]], str]
Directory = str | os.PathLike[str] | Callable[[Mapping[str, Any]], str] | None


def _check_prefix_value(prefix: object, argname: str) -> str:
    if not isinstance(prefix, str) or not prefix or "/" in prefix or os.sep in prefix:
        raise ValueError(
            f"{argname} must be a non-empty str without '/' (or a callable), got {prefix!r}"
        )
    return prefix


def _make_directory(directory: object, name: str) -> str:
    """``directory`` (``~`` expanded) as a real path, checked by
    :func:`sumlens._checks.check_directory` and created (the umask's mode) if missing."""
    if isinstance(directory, str | os.PathLike):
        directory = os.path.expanduser(directory)
    path = check_directory(directory, name, "ModelCheckpoint", max_length=_PATH_MAX)
    os.makedirs(path, exist_ok=True)
    return path


def unique_prefix(prefix: str, names: Iterable[str]) -> str:
    """MindSpore's collision rule: ``prefix``, or ``prefix_N`` past the files in ``names``.

    A name ``prefix-...`` asks for suffix 1, a name ``prefix_n-...`` for ``n + 1``; a name
    where a letter follows the prefix (``network-1_1.ckpt`` for ``net``) does not collide.
    """
    best = 0
    for name in names:
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix) :]
        if not rest or rest[0].isalpha():
            continue
        if rest[0] == "-":
            best = max(best, 1)
            continue
        dash = rest.find("-")
        number = rest[1:dash] if dash > 1 else ""
        if number.isascii() and number.isdigit():
            best = max(best, int(number) + 1)
    return f"{prefix}_{best}" if best else prefix


def _listdir(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def _remove(path: str) -> None:
    """Delete a (read-only) checkpoint; write permission first, for Windows."""
    with contextlib.suppress(OSError):
        os.chmod(path, 0o600)
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        logger.warning("ModelCheckpoint could not delete %s: %s", path, exc)


class ModelCheckpoint(Callback):
    """Save checkpoints by the policy of a :class:`CheckpointConfig`.

    ``prefix``: file name prefix (str without ``/``), or a callable ``f(cb_params) -> str``
    evaluated at every step (then the file is just ``{prefix}.ckpt``). ``directory``:
    ``None`` (the working directory at import time), a path (created with the mode the
    umask leaves), or a callable ``f(cb_params) -> path``. Checkpoints are mode ``0o400``
    whatever the umask (the checkpoint rule, as MindSpore). ``latest_ckpt_file_name`` is the
    last file written (``""`` before any).

    The content is ``cb_params.train_network``'s state (``network`` when there is no
    ``train_network``) plus ``cb_params.optimizer``'s state, or ``saved_network``'s state
    alone; ``append_info`` entries are stored with them. Everything is readable with
    ``load_checkpoint(path, net, optimizer=opt)``.

    It saves after training steps and at the end of training, and -- given to ``eval``,
    as MindSpore's does -- after evaluation steps and at the end of the evaluation too;
    ``fit``'s evaluation does not call it.
    """

    runs_in_fit_eval = False

    def __init__(
        self,
        prefix: Prefix = "CKP",
        directory: Directory = None,
        config: CheckpointConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not callable(prefix):
            _check_prefix_value(prefix, "prefix")
        if config is None:
            config = CheckpointConfig()
        elif not isinstance(config, CheckpointConfig):
            raise TypeError(
                f"config must be a CheckpointConfig or None, got {type(config).__name__}"
            )
        if not callable(clock):
            raise TypeError(f"clock must be a callable returning seconds, got {clock!r}")
        self._prefix_arg = prefix
        self._directory_arg = directory
        self._config = config
        self.clock = clock

        self._prefix: str | None = None if callable(prefix) else prefix
        if directory is None:
            self._directory: str | None = _CWD
        elif callable(directory):
            self._directory = None
        else:
            self._directory = _make_directory(directory, "directory")
        if self._prefix is not None and self._directory is not None:
            names = [
                n
                for n in _listdir(self._directory)
                if n.endswith((_EXT, ".safetensors")) and not n.endswith(_BREAKPOINT)
            ]
            self._prefix = unique_prefix(self._prefix, names)

        self._append = config.append_dict
        self._append_epoch = int(self._append.get("epoch_num", 0)) if self._append else 0
        self._append_step = int(self._append.get("step_num", 0)) if self._append else 0
        self._last_saved_step = 0
        self._last_save_time = clock()
        self._latest = ""
        self._seq = 0
        self._saved: dict[str, tuple[int, float]] = {}  # path -> (order, clock time)
        self._last_record_time: float | None = None
        self._pending: tuple[CheckpointSaveHandle, str, str, str, float] | None = None
        self._params: Mapping[str, Any] | None = None

    # ------------------------------------------------------------------ public views
    @property
    def latest_ckpt_file_name(self) -> str:
        """Full path of the last checkpoint written by this callback, ``""`` before any."""
        return self._latest

    @property
    def config(self) -> CheckpointConfig:
        return self._config

    @property
    def prefix(self) -> str | None:
        """The (collision-resolved) prefix; for a callable prefix, its last value."""
        return self._prefix

    @property
    def directory(self) -> str | None:
        """The directory; for a callable directory, its last value."""
        return self._directory

    # ------------------------------------------------------------------ hooks
    def _saves_here(self) -> bool:
        return self._config.save_on_all_ranks or is_rank_zero()

    def on_train_begin(self, run_context: RunContext) -> None:
        params = run_context.original_args()
        self._params = params
        # A second run with this instance restarts the step counter: let it save again.
        start = get_param(params, "cur_step_num", 0)
        if isinstance(start, int) and start < self._last_saved_step:
            self._last_saved_step = start

    def on_train_step_end(self, run_context: RunContext) -> None:
        self._step_end(run_context.original_args())

    def on_eval_step_end(self, run_context: RunContext) -> None:
        self._step_end(run_context.original_args())

    def on_train_end(self, run_context: RunContext) -> None:
        self._end(run_context.original_args())

    def on_eval_end(self, run_context: RunContext) -> None:
        self._end(run_context.original_args())

    def _step_end(self, params: RunParams) -> None:
        self._params = params
        if not self._saves_here():
            return
        self._resolve(params)
        self._save(params, force=False)

    def _end(self, params: RunParams) -> None:
        self._params = params
        if not self._saves_here():
            return
        if self._prefix is None or self._directory is None:
            self._resolve(params)
        self._save(params, force=True)
        self._finish_pending()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if (
                exc_type is not None
                and not issubclass(exc_type, GeneratorExit)
                and self._config.exception_save
                and self._params is not None
                and self._saves_here()
            ):
                self._save_breakpoint(self._params)
        finally:
            if exc_type is None:
                self._finish_pending()
            else:
                try:
                    self._finish_pending()
                except Exception as error:  # don't hide the run's own exception
                    logger.error("ModelCheckpoint: pending checkpoint save failed: %s", error)

    # ------------------------------------------------------------------ saving
    def _resolve(self, params: Mapping[str, Any]) -> None:
        if callable(self._prefix_arg):
            self._prefix = _check_prefix_value(
                self._prefix_arg(params), "the value returned by the callable prefix"
            )
        if callable(self._directory_arg):
            self._directory = _make_directory(
                self._directory_arg(params), "directory (the callable's result)"
            )

    def _content(self, params: Mapping[str, Any]) -> tuple[torch.nn.Module, Any]:
        saved = self._config.saved_network
        if saved is not None:
            return saved, None
        network = get_param(params, "train_network") or get_param(params, "network")
        if not isinstance(network, torch.nn.Module):
            raise ValueError(
                "ModelCheckpoint needs cb_params.train_network (or network) to be a "
                f"torch.nn.Module, got {type(network).__name__}"
            )
        optimizer = params.get("optimizer")
        if not isinstance(optimizer, torch.optim.Optimizer):
            optimizer = None
        return network, optimizer

    def _append_values(self, params: Mapping[str, Any]) -> dict[str, Any] | None:
        if not self._append:
            return None
        values = dict(self._append)
        if "epoch_num" in values:
            values["epoch_num"] = self._append_epoch + int(get_param(params, "cur_epoch_num", 0))
        if "step_num" in values:
            values["step_num"] = self._append_step + int(get_param(params, "cur_step_num", 0))
        return values

    @staticmethod
    def _position(params: Mapping[str, Any]) -> tuple[int, int, int]:
        step = int(get_param(params, "cur_step_num", 0))
        epoch = int(get_param(params, "cur_epoch_num", 1))
        return step, epoch, step_in_epoch(params)

    def _write(self, params: Mapping[str, Any], path: str, *, is_async: bool):
        network, optimizer = self._content(params)
        cfg = self._config
        return save_checkpoint(
            network,
            path,
            integrated_save=cfg.integrated_save,
            async_save=is_async,
            append_dict=self._append_values(params),
            enc_key=cfg.enc_key,
            enc_mode=cfg.enc_mode,
            optimizer=optimizer,
        )

    def _save(self, params: Mapping[str, Any], *, force: bool) -> None:
        step, epoch, in_epoch = self._position(params)
        if step == self._last_saved_step:
            return
        now = self.clock()
        cfg = self._config
        if not force:
            if cfg.save_checkpoint_steps:
                if step < self._last_saved_step + cfg.save_checkpoint_steps:
                    return
            elif cfg.save_checkpoint_seconds:
                if not now - self._last_save_time > cfg.save_checkpoint_seconds:
                    return
            else:
                return
        assert self._prefix is not None and self._directory is not None
        if callable(self._prefix_arg):
            name = f"{self._prefix}{_EXT}"
        else:
            name = f"{self._prefix}-{epoch}_{in_epoch}{_EXT}"
        path = os.path.join(self._directory, name)

        self._finish_pending()  # one write in flight at a time; prunes after it
        is_async = bool(cfg.async_save)
        handle = self._write(params, path, is_async=is_async)
        self._last_saved_step = step
        self._last_save_time = now
        self._latest = path
        if isinstance(params, dict):
            params["latest_ckpt_file"] = path
            params["last_save_ckpt_step"] = step
        if is_async:
            self._pending = (handle, path, self._prefix, self._directory, now)
        else:
            self._record(path, self._prefix, self._directory, now)

    def _finish_pending(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            handle, path, prefix, directory, now = pending
            handle.wait()
            self._record(path, prefix, directory, now)

    def _save_breakpoint(self, params: Mapping[str, Any]) -> None:
        if callable(self._prefix_arg) or self._prefix is None:
            base = self._prefix or "CKP"
        else:
            base = self._prefix_arg if isinstance(self._prefix_arg, str) else self._prefix
        directory = self._directory or _CWD
        names = [n for n in _listdir(directory) if n.endswith(_BREAKPOINT)]
        prefix = unique_prefix(base, names)
        _, epoch, in_epoch = self._position(params)
        path = os.path.join(directory, f"{prefix}-{epoch}_{in_epoch}{_BREAKPOINT}")
        try:
            self._finish_pending()
        except Exception as error:
            logger.error("ModelCheckpoint: pending checkpoint save failed: %s", error)
        self._write(params, path, is_async=False)
        logger.warning("ModelCheckpoint: the run failed; saved %s", path)

    # ------------------------------------------------------------------ retention
    def _record(self, path: str, prefix: str, directory: str, now: float) -> None:
        previous = self._last_record_time
        self._seq += 1
        self._saved[path] = (self._seq, now)
        self._last_record_time = now
        self._prune(prefix, directory, path, now, previous)

    def _managed_files(self, prefix: str, directory: str) -> list[str]:
        head = prefix + "-"
        out = []
        for name in _listdir(directory):
            if not (name.startswith(head) and name.endswith(_EXT)):
                continue
            middle = name[len(head) : -len(_EXT)]
            if any(c.isalpha() for c in middle):
                continue  # another prefix, or a *_breakpoint file
            out.append(os.path.join(directory, name))
        return out

    def _age_key(self, path: str) -> tuple[int, float]:
        """Sort key, oldest first: foreign files by mtime, then ours by save order."""
        if path in self._saved:
            return (1, float(self._saved[path][0]))
        try:
            return (0, os.path.getmtime(path))
        except OSError:
            return (0, 0.0)

    def _saved_at(self, path: str, now: float) -> float:
        if path in self._saved:
            return self._saved[path][1]
        try:  # a file from elsewhere: place it on our clock by its age
            return now - (time.time() - os.path.getmtime(path))
        except OSError:
            return float("-inf")

    def _prune(
        self, prefix: str, directory: str, newest: str, now: float, previous: float | None
    ) -> None:
        files = self._managed_files(prefix, directory)
        others = sorted((f for f in files if f != newest), key=self._age_key)
        keep_max = self._config.keep_checkpoint_max
        per_n_min = self._config.keep_checkpoint_per_n_minutes
        doomed: list[str] = []
        if keep_max:
            excess = len(others) + 1 - keep_max
            doomed = others[: max(excess, 0)]
        elif per_n_min and previous is not None and now - previous < per_n_min * 60:
            window = [f for f in others if now - self._saved_at(f, now) < per_n_min * 60]
            doomed = window[1:]  # keep the oldest file of the window (and the newest)
        for path in doomed:
            _remove(path)
            self._saved.pop(path, None)
