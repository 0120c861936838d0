"""Importing Keras 3 for :mod:`sumlens.integrations.keras` without TensorFlow.

Keras picks its backend once, when it is first imported: ``KERAS_BACKEND``, else the
``backend`` of ``keras.json`` in ``$KERAS_HOME`` (``~/.keras`` by default), else
TensorFlow. Keras writes that file itself on its first import, naming TensorFlow, so a
``keras.json`` that says ``"tensorflow"`` is taken for Keras' default, not a choice.

A user's choice (``KERAS_BACKEND``, or ``keras.json`` naming another backend) is kept; one
whose package is missing fails here in one line saying what to set. With no choice made
and TensorFlow not installed, the torch backend is chosen (``KERAS_BACKEND=torch``, which
the process's children inherit), and that is said once in the log.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from types import ModuleType

from sumlens._log import logger

DEFAULT_BACKEND = "tensorflow"
"""The backend Keras picks, and writes into a new ``keras.json``, when told none."""
FALLBACK_BACKEND = "torch"
BACKEND_MODULES = {
    "tensorflow": "tensorflow",
    "jax": "jax",
    "torch": "torch",
    "numpy": "jax",  # Keras' numpy backend runs some ops with jax
    "openvino": "openvino",
}
"""Keras' backends and the package each needs."""


def load_keras() -> ModuleType:
    """``import keras``, its backend chosen first as the module docstring says."""
    if "keras" not in sys.modules:
        choose_backend()
    return importlib.import_module("keras")


def choose_backend() -> str:
    """The backend Keras will use once imported; set to torch where nobody chose one and
    TensorFlow is not installed. Raises ``ImportError`` (one line: what to set) where the
    chosen backend's package is not installed."""
    chosen = os.environ.get("KERAS_BACKEND")
    if chosen:
        _check_installed(chosen, "KERAS_BACKEND")
        return chosen
    path = config_path()
    configured = _configured(path)
    if configured and configured != DEFAULT_BACKEND:
        _check_installed(configured, path)
        return configured
    if _installed(DEFAULT_BACKEND):
        return DEFAULT_BACKEND
    if not _installed(FALLBACK_BACKEND):
        raise ImportError(
            "Keras needs a backend and neither TensorFlow nor torch is installed: pip install "
            "torch, or set KERAS_BACKEND to one you have (jax ...)"
        )
    os.environ["KERAS_BACKEND"] = FALLBACK_BACKEND
    logger.warning(
        "Keras: no backend chosen (KERAS_BACKEND unset, %s %s) and TensorFlow is not "
        "installed: using the torch backend; set KERAS_BACKEND to choose another",
        path,
        "names Keras' default, tensorflow" if configured else "names none",
    )
    return FALLBACK_BACKEND


def config_path() -> str:
    """Where Keras reads ``keras.json``: ``$KERAS_HOME``, else ``~/.keras`` (``/tmp/.keras``
    when the home directory is not writable), as Keras finds it."""
    if "KERAS_HOME" in os.environ:
        home = os.environ["KERAS_HOME"]
    else:
        base = os.path.expanduser("~")
        home = os.path.join(base if os.access(base, os.W_OK) else "/tmp", ".keras")
    return os.path.expanduser(os.path.join(home, "keras.json"))


def _configured(path: str) -> str | None:
    """The backend ``keras.json`` names (None without the file or the key; Keras too reads
    a file it cannot parse as empty)."""
    try:
        with open(path, encoding="utf-8") as file:
            config = json.load(file)
    except (OSError, ValueError):
        return None
    backend = config.get("backend") if isinstance(config, dict) else None
    return backend if isinstance(backend, str) and backend else None


def _installed(backend: str) -> bool:
    module = BACKEND_MODULES.get(backend)
    return module is None or importlib.util.find_spec(module) is not None


def _check_installed(backend: str, source: str) -> None:
    if not _installed(backend):
        raise ImportError(
            f"Keras is set to the {backend!r} backend (by {source}), but "
            f"{BACKEND_MODULES[backend]} is not installed: install it, or set "
            f"KERAS_BACKEND={FALLBACK_BACKEND} (sumlens' Keras callback needs no TensorFlow)"
        )
