"""Importing numba with a writable compile cache, and its registries loaded in time.

numba caches compiled kernels next to the source by default, which fails on read-only
installs; sumlens points ``NUMBA_CACHE_DIR`` at ``~/.cache/sumlens/numba`` (or
``$XDG_CACHE_HOME/sumlens/numba``) unless the user set it. Modules holding kernels
import ``numba`` from here, never directly, so the setting always comes first.

numba also fills its table of built-in functions lazily, at the first compile or cache
load in the process, keyed by the objects it finds in ``math`` at that moment. A
``torch.export`` capture (non-strict) swaps ``math.pow`` for a stand-in while it runs; a
writer thread that loaded its first kernel during such a capture took the stand-in into
that table and could then neither load nor compile the kernel, and the values it was to
write were lost. :func:`prepare` loads the table up front; whatever owns threads that
run kernels calls it before those threads start.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def default_cache_dir() -> Path:
    """Where compiled kernels are cached unless ``NUMBA_CACHE_DIR`` says otherwise."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sumlens" / "numba"


os.environ.setdefault("NUMBA_CACHE_DIR", str(default_cache_dir()))

import numba  # noqa: E402
from numba.core.registry import cpu_target  # noqa: E402

if not numba.config.CACHE_DIR:  # numba was imported before us and read its config already
    numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]

_prepared = False
_prepare_lock = threading.Lock()


def prepare() -> None:
    """Load numba's registries of built-in functions now (once per process; ~0.5 s).

    Costs nothing extra: the first kernel would load them anyway, on whichever thread
    ran it, at whatever moment (see the module docstring).
    """
    global _prepared
    if _prepared:
        return
    with _prepare_lock:
        if not _prepared:
            cpu_target.typing_context.refresh()
            cpu_target.target_context.refresh()
            _prepared = True


__all__ = ["numba", "prepare"]
