"""Recording the way PyTorch users already log: torch's ``SummaryWriter`` API and the
dict-per-step style of wandb and trackio (``init``, ``log``, ``finish``), over
:class:`~sumlens.summary.SummaryRecord`'s writer."""

from sumlens.writer.log import finish, init, log
from sumlens.writer.summary_writer import SummaryWriter

__all__ = ["SummaryWriter", "finish", "init", "log"]
