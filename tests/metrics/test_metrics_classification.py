"""Accuracy, top-k, Precision, Recall and F1 against straightforward numpy computations."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics as skm  # a test dependency: the reference for the classification metrics
import torch

from sumlens.metrics import (
    F1,
    Accuracy,
    Fbeta,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
    TopKCategoricalAccuracy,
)

X = np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]])
Y = np.array([1, 0, 1])


def _random_batch(rng: np.random.Generator, n: int = 40, c: int = 4):
    return rng.random((n, c)), rng.integers(0, c, size=n)


def _ref_counts(y_pred: np.ndarray, y: np.ndarray, c: int):
    pred = y_pred.argmax(axis=1)
    tp = np.array([np.sum((pred == k) & (y == k)) for k in range(c)], dtype=float)
    fp = np.array([np.sum((pred == k) & (y != k)) for k in range(c)], dtype=float)
    fn = np.array([np.sum((pred != k) & (y == k)) for k in range(c)], dtype=float)
    return tp, fp, fn


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array([x / z if z else 0.0 for x, z in zip(a, b, strict=True)])


# -- MindSpore's documented examples ------------------------------------------------------


def test_mindspore_doc_examples():
    assert Accuracy("classification")(X, Y.astype(np.float32)) == pytest.approx(2 / 3)
    np.testing.assert_allclose(Precision()(X, Y), [0.5, 1.0])
    np.testing.assert_allclose(Recall()(X, Y), [1.0, 0.5])
    np.testing.assert_allclose(F1()(X, Y), [2 / 3, 2 / 3])
    x5 = np.array(
        [[0.2, 0.5, 0.3, 0.6, 0.2], [0.1, 0.35, 0.5, 0.2, 0.0], [0.9, 0.6, 0.2, 0.01, 0.3]]
    )
    y5 = np.array([2, 0, 1], dtype=np.float32)
    assert TopKCategoricalAccuracy(3)(x5, y5) == pytest.approx(2 / 3)
    assert Top1CategoricalAccuracy()(x5, y5) == 0.0
    assert Top5CategoricalAccuracy()(x5, y5) == 1.0


# -- Accuracy ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_accuracy_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    y_pred, y = _random_batch(rng)
    metric = Accuracy()
    metric.update(y_pred, y)
    result = metric.eval()
    assert isinstance(result, float)
    assert result == pytest.approx(np.mean(y_pred.argmax(axis=1) == y))
    assert result == pytest.approx(skm.accuracy_score(y, y_pred.argmax(axis=1)))


def test_accuracy_onehot_labels_equal_indices():
    rng = np.random.default_rng(1)
    y_pred, y = _random_batch(rng)
    onehot = np.eye(4)[y]
    assert Accuracy()(y_pred, onehot) == Accuracy()(y_pred, y)


def test_accuracy_inputs_torch_numpy_list_alike():
    results = [
        Accuracy()(X, Y),
        Accuracy()(X.tolist(), Y.tolist()),
        Accuracy()(tuple(map(tuple, X)), tuple(Y)),
        Accuracy()(torch.tensor(X, requires_grad=True), torch.tensor(Y)),
        Accuracy()(torch.tensor(X, dtype=torch.bfloat16), torch.tensor(Y)),
    ]
    assert results == [pytest.approx(2 / 3)] * len(results)


def test_accuracy_spatial_class_axis_is_1():
    rng = np.random.default_rng(2)
    y_pred = rng.random((3, 5, 4, 2))  # (N, C, H, W)
    y = rng.integers(0, 5, size=(3, 4, 2))
    assert Accuracy()(y_pred, y) == pytest.approx(np.mean(y_pred.argmax(axis=1) == y))


def test_accuracy_multilabel():
    y_pred = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 0]])
    y = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 1], [1, 0, 0]])
    assert Accuracy("multilabel")(y_pred, y) == pytest.approx(0.5)
    assert skm.accuracy_score(y, y_pred) == pytest.approx(0.5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_accuracy_cuda_tensors():
    assert Accuracy()(torch.tensor(X).cuda(), torch.tensor(Y).cuda()) == pytest.approx(2 / 3)


# -- top-k ------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_topk_matches_numpy(k):
    rng = np.random.default_rng(k)
    y_pred, y = _random_batch(rng, n=50, c=6)
    ranks = (y_pred > y_pred[np.arange(50), y][:, None]).sum(axis=1)
    metric = TopKCategoricalAccuracy(k)
    metric.update(y_pred[:20], y[:20])
    metric.update(y_pred[20:], np.eye(6)[y[20:]])
    assert metric.eval() == pytest.approx(np.mean(ranks < k))
    if k < 6:
        assert metric.eval() == pytest.approx(
            skm.top_k_accuracy_score(y, y_pred, k=k, labels=range(6))
        )


def test_top1_equals_accuracy():
    rng = np.random.default_rng(3)
    y_pred, y = _random_batch(rng)
    assert Top1CategoricalAccuracy()(y_pred, y) == Accuracy()(y_pred, y)


@pytest.mark.parametrize(("k", "error"), [(0, ValueError), (1.5, TypeError), (True, TypeError)])
def test_topk_bad_k(k, error):
    with pytest.raises(error, match="'k'"):
        TopKCategoricalAccuracy(k)


# -- Precision / Recall / F1 --------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_precision_recall_f1_match_numpy(seed):
    rng = np.random.default_rng(seed)
    c = 5
    batches = [_random_batch(rng, n=n, c=c) for n in (7, 30, 1)]
    metrics = {"p": Precision(), "r": Recall(), "f": F1(), "f2": Fbeta(2)}
    for y_pred, y in batches:
        for metric in metrics.values():
            metric.update(torch.from_numpy(y_pred), y)
    y_pred = np.concatenate([b[0] for b in batches])
    y = np.concatenate([b[1] for b in batches])
    tp, fp, fn = _ref_counts(y_pred, y, c)
    ref = {
        "p": _div(tp, tp + fp),
        "r": _div(tp, tp + fn),
        "f": _div(2 * tp, 2 * tp + fp + fn),
        "f2": _div(5 * tp, 5 * tp + 4 * fn + fp),
    }
    for key, metric in metrics.items():
        per_class = metric.eval()
        assert isinstance(per_class, np.ndarray) and per_class.dtype == np.float64
        np.testing.assert_allclose(per_class, ref[key])
        mean = metric.eval(average=True)
        assert isinstance(mean, float)
        assert mean == pytest.approx(ref[key].mean())
    pred = y_pred.argmax(axis=1)
    kw = {"labels": list(range(c)), "zero_division": 0}
    np.testing.assert_allclose(
        metrics["p"].eval(), skm.precision_score(y, pred, average=None, **kw)
    )
    np.testing.assert_allclose(metrics["r"].eval(), skm.recall_score(y, pred, average=None, **kw))
    np.testing.assert_allclose(metrics["f"].eval(), skm.f1_score(y, pred, average=None, **kw))
    assert metrics["p"].eval(True) == pytest.approx(
        skm.precision_score(y, pred, average="macro", **kw)
    )


def test_precision_recall_multilabel_per_class():
    rng = np.random.default_rng(7)
    y_pred = rng.integers(0, 2, size=(60, 4))
    y = rng.integers(0, 2, size=(60, 4))
    tp = (y_pred & y).sum(axis=0)
    p, r, f = Precision("multilabel"), Recall("multilabel"), F1("multilabel")
    for metric in (p, r, f):
        metric.update(y_pred[:25], y[:25])
        metric.update(torch.tensor(y_pred[25:]), y[25:].tolist())
    np.testing.assert_allclose(p.eval(), _div(tp, y_pred.sum(axis=0)))
    np.testing.assert_allclose(r.eval(), _div(tp, y.sum(axis=0)))
    np.testing.assert_allclose(f.eval(), _div(2 * tp, y_pred.sum(axis=0) + y.sum(axis=0)))
    np.testing.assert_allclose(p.eval(), skm.precision_score(y, y_pred, average=None))
    np.testing.assert_allclose(r.eval(), skm.recall_score(y, y_pred, average=None))


def test_zero_division_gives_zero():
    # class 2 is never predicted nor present
    y_pred = np.array([[0.9, 0.1, 0.0], [0.1, 0.9, 0.0]])
    y = np.array([0, 0])
    np.testing.assert_allclose(Precision()(y_pred, y), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(Recall()(y_pred, y), [0.5, 0.0, 0.0])


def test_clear_resets():
    metric = Precision()
    metric.update(X, Y)
    metric.clear()
    with pytest.raises(RuntimeError, match="Precision"):
        metric.eval()
    metric.update(X[:1], Y[:1])
    np.testing.assert_allclose(metric.eval(), [0.0, 1.0])


def test_set_indexes():
    metric = Accuracy().set_indexes([2, 1])
    metric.update("ignored", Y, X)
    assert metric.eval() == pytest.approx(2 / 3)
