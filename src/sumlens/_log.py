"""The package logger and once-per-cause warnings.

Everything sumlens reports goes through ``logging.getLogger("sumlens")``; its level can
be set with the ``SUMLENS_LOG_LEVEL`` environment variable (``DEBUG``, ``INFO`` ...).
Warnings that could repeat on every step (a bad value, a skipped plugin) are issued once
per cause so a long run does not drown its own log.
"""

from __future__ import annotations

import logging
import os
import threading

logger = logging.getLogger("sumlens")

_level = os.environ.get("SUMLENS_LOG_LEVEL")
if _level:
    logger.setLevel(_level.strip().upper())

_warned: set[str] = set()
_warned_lock = threading.Lock()


def log_once(cause: str, level: int, message: str, *args: object) -> bool:
    """Log ``message`` at ``level`` the first time ``cause`` is seen; True if it was logged."""
    with _warned_lock:
        if cause in _warned:
            return False
        _warned.add(cause)
    logger.log(level, message, *args)
    return True


def warn_once(cause: str, message: str, *args: object) -> bool:
    """Log ``message`` as a warning the first time ``cause`` is seen; True if it was logged."""
    return log_once(cause, logging.WARNING, message, *args)
