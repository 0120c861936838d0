"""sumlens: record what training does (MindSpore summary or TensorBoard format) and see it."""

from sumlens._log import logger
from sumlens._version import __version__

__all__ = ["__version__", "logger"]
