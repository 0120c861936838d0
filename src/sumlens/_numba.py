"""Importing numba with a writable compile cache.

numba caches compiled kernels next to the source by default, which fails on read-only
installs; sumlens points ``NUMBA_CACHE_DIR`` at ``~/.cache/sumlens/numba`` (or
``$XDG_CACHE_HOME/sumlens/numba``) unless the user set it. Modules holding kernels
import ``numba`` from here, never directly, so the setting always comes first.
"""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """Where compiled kernels are cached unless ``NUMBA_CACHE_DIR`` says otherwise."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sumlens" / "numba"


os.environ.setdefault("NUMBA_CACHE_DIR", str(default_cache_dir()))

import numba  # noqa: E402

if not numba.config.CACHE_DIR:  # numba was imported before us and read its config already
    numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]

__all__ = ["numba"]
