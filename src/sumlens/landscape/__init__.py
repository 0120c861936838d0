"""Loss landscapes: the ``LossLandscape`` value builder."""

from sumlens.landscape.builder import LossLandscape

__all__ = ["LossLandscape"]
