"""Writing summaries: ``SummaryRecord``, its value encoders and its background writer."""

from sumlens.summary.record import SummaryRecord

__all__ = ["SummaryRecord"]
