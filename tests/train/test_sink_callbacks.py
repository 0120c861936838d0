"""Built-in callbacks under Model's sink mode count steps within the epoch, not sinks."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from sumlens.train import CheckpointConfig, LossMonitor, Model, ModelCheckpoint


def test_sink_mode_step_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch.manual_seed(0)
    net = torch.nn.Linear(4, 2)
    data = [(torch.randn(3, 4), torch.randint(0, 2, (3,))) for _ in range(5)]
    model = Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), 0.1))
    config = CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=10)
    callbacks = [LossMonitor(), ModelCheckpoint("sink", str(tmp_path), config)]
    model.train(2, data, callbacks=callbacks, dataset_sink_mode=True, sink_size=2)
    printed = [line.split(",")[0] for line in capsys.readouterr().out.splitlines()]
    assert printed == [f"epoch: {e} step: {s}" for e in (1, 2) for s in (2, 4, 5)]
    names = {path.name for path in tmp_path.glob("*.ckpt")}
    assert {"sink-1_2.ckpt", "sink-1_4.ckpt", "sink-2_2.ckpt", "sink-2_4.ckpt"} <= names
    assert all(int(name.split("_")[1].split(".")[0]) <= 5 for name in names)
