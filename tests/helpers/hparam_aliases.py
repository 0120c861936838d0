"""Runs recording each hyper-parameter under several names, as sumlens' own writers do.

``sumlens.SummaryWriter.add_hparams`` (two runs) and the Lightning adapter's
``SumlensLogger.log_hyperparams`` (one run) write each hyper-parameter as TensorBoard's
hparams (``hparam/lr``), as custom lineage (``custom/lr``) and, for the names MindSpore's
train lineage knows, as its field (``learning_rate``, ``batch_size``, ``optimizer``);
torch's own ``SummaryWriter`` (one run) writes the hparams only.
"""

from __future__ import annotations

from pathlib import Path

HPARAMS = {
    "./ours/lr0.1": {"lr": 0.1, "batch_size": 32, "optimizer": "adam", "seed": 1},
    "./ours/lr0.01": {"lr": 0.01, "batch_size": 64, "optimizer": "adam", "seed": 1},
    "./lightning/version_0": {"lr": 0.001, "batch_size": 16, "optimizer": "sgd", "seed": 2},
    "./torch/lr0.5": {"lr": 0.5, "batch_size": 8, "optimizer": "adam", "seed": 3},
}
"""Each run's hyper-parameters."""
ACCURACY = {"./ours/lr0.1": 0.5, "./ours/lr0.01": 0.75, "./lightning/version_0": 0.625,
            "./torch/lr0.5": 0.25}  # fmt: skip
"""Each run's metric ``hp/acc`` (exact in float32, as torch's writer keeps it)."""
OURS = ["./ours/lr0.1", "./ours/lr0.01", "./lightning/version_0"]
"""The runs sumlens wrote (hparams, custom lineage and train lineage)."""


def write_alias_runs(base: Path) -> list[str]:
    """Write the runs of :data:`HPARAMS` under ``base``; their ids."""
    from torch.utils.tensorboard import SummaryWriter

    import sumlens
    from sumlens.integrations.lightning import SumlensLogger

    def path(run: str) -> str:
        return str(base / run.removeprefix("./"))

    for run in ("./ours/lr0.1", "./ours/lr0.01"):
        with sumlens.SummaryWriter(path(run)) as writer:
            writer.add_scalar("loss", 1.0, 0)
            writer.add_hparams(HPARAMS[run], {"hp/acc": ACCURACY[run]})
    logger = SumlensLogger(base / "lightning", name="", version=0)
    run = "./lightning/version_0"
    logger.log_hyperparams(HPARAMS[run], {"hp/acc": ACCURACY[run]})
    logger.finalize("success")
    with SummaryWriter(path("./torch/lr0.5")) as torch_writer:
        torch_writer.add_scalar("loss", 1.0, 0)
        torch_writer.add_hparams(HPARAMS["./torch/lr0.5"], {"hp/acc": ACCURACY["./torch/lr0.5"]})
    return list(HPARAMS)
