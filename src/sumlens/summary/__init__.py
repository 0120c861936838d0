"""Writing summaries: ``SummaryRecord``, its value encoders and its background writer.

``SummaryRecord`` is imported on first use: its modules load the writer's compiled
kernels and Pillow, which the light modules here (the tensor encoders, the registry of
open records) do not need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sumlens._lazy import lazy_names

if TYPE_CHECKING:
    from sumlens.summary.record import SummaryRecord

__all__ = ["SummaryRecord"]

__getattr__ = lazy_names(__name__, {"SummaryRecord": "sumlens.summary.record"})
