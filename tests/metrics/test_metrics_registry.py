"""get_metric_fn / get_metrics name resolution and the torchmetrics adapter."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import sumlens.metrics as sm
from sumlens.metrics import (
    F1,
    MAE,
    MSE,
    Accuracy,
    Loss,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
    TorchMetricAdapter,
    UnknownMetricError,
    get_metric_fn,
    get_metrics,
)

X = np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]])
Y = np.array([1, 0, 1])


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("acc", Accuracy),
        ("accuracy", Accuracy),
        ("loss", Loss),
        ("top_1_accuracy", Top1CategoricalAccuracy),
        ("top_5_accuracy", Top5CategoricalAccuracy),
        ("precision", Precision),
        ("recall", Recall),
        ("f1", F1),
        ("F1", F1),
        ("mae", MAE),
        ("mse", MSE),
        ("Accuracy", Accuracy),
    ],
)
def test_get_metric_fn_names(name, cls):
    assert type(get_metric_fn(name)) is cls


def test_get_metric_fn_passes_arguments():
    assert get_metric_fn("precision", eval_type="multilabel").eval_type == "multilabel"
    assert get_metric_fn("topk", 3).k == 3


def test_unknown_name_lists_allowed():
    with pytest.raises(ValueError, match=r"'foo'.*allowed names.*'acc'.*'top_5_accuracy'"):
        get_metric_fn("foo")
    with pytest.raises(KeyError):  # what MindSpore raises
        get_metric_fn("foo")
    assert issubclass(UnknownMetricError, ValueError)
    with pytest.raises(TypeError, match="'name'"):
        get_metric_fn(3)


def test_names_sorted_and_complete():
    names = sm.names()
    assert names == sorted(names)
    for name in ("acc", "accuracy", "loss", "top_1_accuracy", "top_5_accuracy", "precision"):
        assert name in names


def test_get_metrics_set_and_dict():
    assert get_metrics(None) is None
    resolved = get_metrics({"acc", "loss"})
    assert set(resolved) == {"acc", "loss"}
    assert isinstance(resolved["acc"], Accuracy) and isinstance(resolved["loss"], Loss)
    acc = Accuracy()
    resolved = get_metrics({"Accuracy": acc, "r": "recall"})
    assert resolved["Accuracy"] is acc
    assert isinstance(resolved["r"], Recall)


def test_get_metrics_errors():
    with pytest.raises(TypeError, match=r"did you mean \{'acc'\}"):
        get_metrics("acc")
    with pytest.raises(TypeError, match="keys of 'metrics' must be str"):
        get_metrics({1: Accuracy()})
    with pytest.raises(TypeError, match=r"value for 'x'.*int"):
        get_metrics({"x": 5})
    with pytest.raises(ValueError, match="allowed names"):
        get_metrics({"nope"})


class _TinyTorchMetric:
    """Duck-typed stand-in for a torchmetrics Metric (update/compute/reset)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.correct = torch.tensor(0)
        self.total = torch.tensor(0)

    def update(self, preds, target):
        assert isinstance(preds, torch.Tensor) and isinstance(target, torch.Tensor)
        self.correct += (preds.argmax(dim=-1) == target).sum()
        self.total += target.numel()

    def compute(self):
        return self.correct.float() / self.total


class _DictResultMetric(_TinyTorchMetric):
    def compute(self):
        return {"acc": super().compute(), "counts": torch.stack([self.correct, self.total])}


def test_torchmetrics_adapter_in_dict():
    tiny = _TinyTorchMetric()
    resolved = get_metrics({"tm": tiny, "acc": Accuracy()})
    adapter = resolved["tm"]
    assert isinstance(adapter, TorchMetricAdapter) and adapter.metric is tiny
    with pytest.raises(RuntimeError, match="_TinyTorchMetric"):
        adapter.eval()
    for metric in resolved.values():
        metric.clear()
        metric.update(torch.tensor(X[:2]), torch.tensor(Y[:2]))
        metric.update(X[2:], Y[2:].tolist())  # numpy/list become tensors for torchmetrics
    result = adapter.eval()
    assert isinstance(result, float)
    assert result == pytest.approx(resolved["acc"].eval())
    adapter.clear()
    assert int(tiny.total) == 0


def test_torchmetrics_adapter_structured_result_and_call():
    adapter = TorchMetricAdapter(_DictResultMetric())
    out = adapter(torch.tensor(X), torch.tensor(Y))
    assert out["acc"] == pytest.approx(2 / 3)
    np.testing.assert_array_equal(out["counts"], [2, 3])


def test_adapter_rejects_non_metric():
    with pytest.raises(TypeError, match="update\\(\\), compute\\(\\) and reset\\(\\)"):
        TorchMetricAdapter(object())


class _MindSporeStyle:
    def clear(self): ...
    def update(self, *inputs): ...
    def eval(self):
        return 1.0


def test_mindspore_style_object_kept_as_is():
    obj = _MindSporeStyle()
    assert get_metrics({"custom": obj})["custom"] is obj
