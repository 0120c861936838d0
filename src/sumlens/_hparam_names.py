"""The hyper-parameter names that mean one of MindSpore's train lineage fields.

``SummaryWriter.add_hparams`` fills a :class:`~sumlens.lineage.TrainLineage` field from the
first of its names a user gave (:mod:`sumlens.writer.hparams_lineage`), and the dashboard's
lineage table folds those names into one column per quantity
(:mod:`sumlens.board.query.lineage_fold`): one table, so the two always agree.
"""

from __future__ import annotations

TRAIN_FIELDS: dict[str, tuple[str, ...]] = {
    "learning_rate": ("learning_rate", "lr"),
    "optimizer": ("optimizer", "optim", "opt"),
    "loss_function": ("loss_function", "loss_fn", "criterion"),
    "epoch": ("epoch", "epochs", "max_epochs", "num_train_epochs"),
    "batch_size": ("batch_size", "bs", "per_device_train_batch_size", "train_batch_size"),
    "device_num": ("device_num", "num_devices", "world_size", "devices"),
    "network": ("network", "model", "arch", "architecture"),
}
"""TrainLineage fields, and the hyper-parameter names (lower case) that fill them, first
found first."""
