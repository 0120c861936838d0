"""MAE, MSE and Loss, and accumulation properties (several updates == one big update)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sumlens.metrics import MAE, MSE, Accuracy, Loss

_SETTINGS = settings(max_examples=60, deadline=None)
_floats = st.floats(-1e3, 1e3, allow_nan=False, width=64)


def test_mae_mse_match_numpy():
    rng = np.random.default_rng(0)
    y_pred, y = rng.normal(size=(8, 3)), rng.normal(size=(8, 3))
    assert MAE()(y_pred, y) == pytest.approx(np.mean(np.abs(y_pred - y)))
    assert MSE()(torch.tensor(y_pred), torch.tensor(y)) == pytest.approx(np.mean((y_pred - y) ** 2))
    assert isinstance(MAE()(y_pred, y), float)


def test_mindspore_doc_examples():
    x = np.array([0.1, 0.2, 0.6, 0.9], dtype=np.float32)
    assert MAE()(x, np.array([0.1, 0.25, 0.7, 0.9])) == pytest.approx(0.0375, rel=1e-5)
    assert MSE()(x, np.array([0.1, 0.25, 0.5, 0.9])) == pytest.approx(0.003125, rel=1e-5)
    assert Loss()(torch.tensor(0.2)) == pytest.approx(0.2)


def test_regression_reshapes_same_size():
    y_pred = np.array([[1.0], [2.0], [4.0]])  # (N, 1) against (N,)
    assert MAE()(y_pred, [1.0, 1.0, 1.0]) == pytest.approx(4 / 3)


def test_loss_mean_of_updates():
    metric = Loss()
    metric.update(torch.tensor(1.0, requires_grad=True))
    metric.update(np.array([2.0, 4.0]))  # a batch counts once, by its mean
    metric.update(0.5)
    assert metric.eval() == pytest.approx((1.0 + 3.0 + 0.5) / 3)


@st.composite
def _split_regression(draw):
    shape_tail = draw(st.sampled_from([(), (2,), (3, 2)]))
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=5))
    batches = []
    for n in sizes:
        shape = (n, *shape_tail)
        y_pred = draw(hnp.arrays(np.float64, shape, elements=_floats))
        y = draw(hnp.arrays(np.float64, shape, elements=_floats))
        batches.append((y_pred, y))
    return batches


@_SETTINGS
@given(_split_regression())
def test_mae_mse_accumulate_like_one_update(batches):
    whole_pred = np.concatenate([b[0] for b in batches])
    whole_y = np.concatenate([b[1] for b in batches])
    for cls, ref in ((MAE, np.abs), (MSE, np.square)):
        split = cls()
        for y_pred, y in batches:
            split.update(y_pred, y)
        one = cls()
        one.update(whole_pred, whole_y)
        assert split.eval() == pytest.approx(one.eval(), rel=1e-9, abs=1e-9)
        assert one.eval() == pytest.approx(np.mean(ref(whole_pred - whole_y)), rel=1e-9, abs=1e-9)


@st.composite
def _split_classification(draw):
    c = draw(st.integers(2, 6))
    sizes = draw(st.lists(st.integers(1, 8), min_size=1, max_size=5))
    onehot = draw(st.booleans())
    batches = []
    for n in sizes:
        y_pred = draw(hnp.arrays(np.float64, (n, c), elements=st.floats(0, 1, width=64)))
        y = np.asarray(draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)))
        batches.append((y_pred, np.eye(c, dtype=np.int64)[y] if onehot else y))
    return batches


@_SETTINGS
@given(_split_classification())
def test_accuracy_accumulates_like_one_update(batches):
    split = Accuracy()
    for y_pred, y in batches:
        split.update(y_pred, y)
    whole_pred = np.concatenate([b[0] for b in batches])
    whole_y = np.concatenate([b[1] for b in batches])
    one = Accuracy()
    one.update(whole_pred, whole_y)
    assert split.eval() == pytest.approx(one.eval())
    labels = whole_y.argmax(axis=1) if whole_y.ndim == 2 else whole_y
    assert one.eval() == pytest.approx(np.mean(whole_pred.argmax(axis=1) == labels))


@st.composite
def _split_multilabel(draw):
    c = draw(st.integers(1, 5))
    batches = []
    for n in draw(st.lists(st.integers(1, 6), min_size=1, max_size=4)):
        bits = hnp.arrays(np.int64, (n, c), elements=st.integers(0, 1))
        batches.append((draw(bits), draw(bits)))
    return batches


@_SETTINGS
@given(_split_multilabel())
def test_multilabel_accuracy_accumulates(batches):
    split = Accuracy("multilabel")
    for y_pred, y in batches:
        split.update(y_pred, y)
    whole_pred = np.concatenate([b[0] for b in batches])
    whole_y = np.concatenate([b[1] for b in batches])
    assert split.eval() == pytest.approx(np.mean((whole_pred == whole_y).all(axis=1)))
