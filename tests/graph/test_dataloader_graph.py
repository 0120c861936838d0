"""``sumlens.graph.from_dataloader``: a DataLoader's data lineage as a DatasetGraph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import ConcatDataset, DataLoader, Dataset, Subset, TensorDataset

from sumlens import SummaryRecord
from sumlens.graph import from_dataloader
from sumlens.io import iter_events


class Normalize:
    def __init__(self, mean: float, std: float) -> None:
        self.mean, self.std = mean, std

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std


class Compose:
    def __init__(self, transforms: list[Any]) -> None:
        self.transforms = transforms

    def __call__(self, x: Any) -> Any:
        for t in self.transforms:
            x = t(x)
        return x


def flip(x: torch.Tensor) -> torch.Tensor:
    return x.flip(-1)


class Transformed(Dataset):
    """A TensorDataset with a transform applied to its inputs."""

    def __init__(self, base: TensorDataset, transform: Any) -> None:
        self.base, self.transform = base, transform

    def __len__(self) -> int:
        return len(self.base)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        x, y = self.base[i]
        return self.transform(x), y


def _base(n: int = 10) -> TensorDataset:
    return TensorDataset(torch.randn(n, 1, 4, 4), torch.arange(n))


def _params(node: Any) -> dict[str, Any]:
    p = node.parameter
    return {**dict(p.mapStr), **dict(p.mapInt), **dict(p.mapBool), **dict(p.mapDouble)}


def test_tensor_dataset_with_transforms() -> None:
    data = Transformed(_base(), Compose([Normalize(0.5, 0.25), flip]))
    loader = DataLoader(data, batch_size=4, shuffle=True, drop_last=True)
    graph = from_dataloader(loader)
    root = _params(graph)
    assert root["op_type"] == "Batch"
    assert (root["batch_size"], root["drop_last"], root["shuffle"]) == (4, True, True)
    assert (root["num_workers"], root["collate_fn"]) == (0, "default_collate")
    sampler = dict(graph.sampler.operationParam.mapStr)
    assert sampler["sampler_name"] == "RandomSampler"
    assert graph.sampler.operationParam.mapInt["num_samples"] == 10
    (mapped,) = graph.children
    assert _params(mapped)["op_type"] == "Map"
    ops = [dict(op.operationParam.mapStr) for op in mapped.operations]
    assert [op["tensor_op_name"] for op in ops] == ["Normalize", "flip"]
    assert dict(mapped.operations[0].operationParam.mapDouble) == {"mean": 0.5, "std": 0.25}
    (wrapper,) = mapped.children
    assert _params(wrapper)["op_type"] == "Transformed"
    assert _params(wrapper)["num_samples"] == 10
    (tensors,) = wrapper.children
    assert _params(tensors)["op_type"] == "TensorDataset"
    assert _params(tensors)["tensors"] == "float32[10, 1, 4, 4], int64[10]"


def test_sequential_loader_with_workers_and_wrappers() -> None:
    data = ConcatDataset([Subset(_base(), [0, 1, 2]), _base(5)])
    loader = DataLoader(data, batch_size=2, num_workers=2, collate_fn=lambda b: b)
    graph = from_dataloader(loader)
    root = _params(graph)
    assert (root["shuffle"], root["num_workers"], root["collate_fn"]) == (False, 2, "lambda")
    assert root["prefetch_factor"] == 2
    assert graph.sampler.operationParam.mapStr["sampler_name"] == "SequentialSampler"
    (concat,) = graph.children
    assert _params(concat)["op_type"] == "ConcatDataset"
    assert [_params(c)["op_type"] for c in concat.children] == ["Subset", "TensorDataset"]
    assert _params(concat.children[0])["num_indices"] == 3


def test_rejects_other_objects() -> None:
    with pytest.raises(TypeError, match="DataLoader"):
        from_dataloader([1, 2, 3])  # type: ignore[arg-type]


def test_written_as_lineage(tmp_path: Path) -> None:
    loader = DataLoader(Transformed(_base(), Normalize(0.0, 1.0)), batch_size=5)
    with SummaryRecord(tmp_path) as record:
        record.add_value("dataset_graph", "data", from_dataloader(loader))
        record.record(0)
    (event,) = [e for e in iter_events(tmp_path) if e.plugin == "dataset_graph"]
    assert event.value.parameter.mapStr["op_type"] == "Batch"
