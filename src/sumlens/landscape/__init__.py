"""Loss landscapes: the ``LossLandscape`` value, ``SummaryLandscape`` and ``compute_landscape``.

``LossLandscape`` needs only numpy and the tensor encoders (SummaryRecord writes it and
readers turn its message back into one); the rest needs torch and is imported on first
use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sumlens._lazy import lazy_names
from sumlens.landscape.builder import LossLandscape

if TYPE_CHECKING:
    from sumlens.landscape.compute import BlockDone, compute_landscape
    from sumlens.landscape.summary_landscape import SummaryLandscape

__all__ = ["BlockDone", "LossLandscape", "SummaryLandscape", "compute_landscape"]

__getattr__ = lazy_names(
    __name__,
    {
        "BlockDone": "sumlens.landscape.compute",
        "compute_landscape": "sumlens.landscape.compute",
        "SummaryLandscape": "sumlens.landscape.summary_landscape",
    },
)
