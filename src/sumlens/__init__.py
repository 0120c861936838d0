"""sumlens: record what training does, in MindSpore's summary format or TensorBoard's, and see it."""

from sumlens._log import logger
from sumlens._version import __version__

__all__ = ["__version__", "logger"]
