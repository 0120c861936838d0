"""Error messages: eval() before update, bad shapes, bad eval_type, bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from sumlens.metrics import (
    F1,
    MAE,
    MSE,
    Accuracy,
    Fbeta,
    Loss,
    Precision,
    Recall,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
)

X = np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]])
Y = np.array([1, 0, 1])


@pytest.mark.parametrize(
    ("cls", "name"),
    [
        (Accuracy, "Accuracy"),
        (Precision, "Precision"),
        (Recall, "Recall"),
        (F1, "F1"),
        (Top1CategoricalAccuracy, "Top1CategoricalAccuracy"),
        (Top5CategoricalAccuracy, "Top5CategoricalAccuracy"),
        (MAE, "MAE"),
        (MSE, "MSE"),
        (Loss, "Loss"),
    ],
)
def test_eval_before_update_names_metric(cls, name):
    with pytest.raises(RuntimeError, match=f"'{name}'"):
        cls().eval()


@pytest.mark.parametrize("cls", [Accuracy, Precision, Recall, F1])
def test_bad_eval_type(cls):
    with pytest.raises(ValueError, match=r"'eval_type'.*classification.*multilabel.*'binary'"):
        cls(eval_type="binary")
    with pytest.raises(TypeError, match="'eval_type'"):
        cls(eval_type=1)


def test_wrong_number_of_inputs():
    with pytest.raises(ValueError, match=r"Accuracy\.update.*2 input.*got 1"):
        Accuracy().update(X)
    with pytest.raises(ValueError, match=r"Loss\.update.*1 input.*got 2"):
        Loss().update(1.0, 2.0)


def test_classification_shape_mismatch():
    with pytest.raises(ValueError, match=r"y \(class indices\) must have shape \(3,\).*\(4,\)"):
        Accuracy().update(X, [1, 0, 1, 1])
    with pytest.raises(ValueError, match="y_pred must have shape"):
        Accuracy().update([0.1, 0.9], [1, 0])
    with pytest.raises(ValueError, match="one-hot"):
        Accuracy().update(X, np.ones((3, 2)))


def test_label_out_of_range_or_not_integer():
    with pytest.raises(ValueError, match=r"\[0, 2\).*2"):
        Precision().update(X, [0, 1, 2])
    with pytest.raises(ValueError, match="non-integral"):
        Accuracy().update(X, [0.5, 1, 0])


def test_class_count_change_rejected():
    metric = Recall()
    metric.update(X, Y)
    with pytest.raises(ValueError, match=r"3 classes.*had 2"):
        metric.update(np.ones((2, 3)), [0, 1])


def test_multilabel_needs_zeros_and_ones():
    with pytest.raises(ValueError, match=r"y_pred.*0 or 1"):
        Accuracy("multilabel").update([[0.3, 0.7]], [[0, 1]])
    with pytest.raises(ValueError, match=r"shape of y_pred \(1, 2\).*\(1, 3\)"):
        Precision("multilabel").update([[0, 1]], [[0, 1, 1]])


def test_bad_input_type():
    with pytest.raises(TypeError, match=r"y_pred must be a torch.Tensor.*got str"):
        MAE().update("abc", [1.0])
    with pytest.raises(TypeError, match=r"y must be a torch.Tensor.*got dict"):
        Accuracy().update(X, {"a": 1})


def test_average_must_be_bool():
    m = Recall()
    m.update(X, Y)
    with pytest.raises(TypeError, match=r"'average'.*str"):
        m.eval(average="yes")


def test_no_classes():
    with pytest.raises(ValueError, match=r"at least one class.*\(2, 0\)"):
        Accuracy().update(np.zeros((2, 0)), [0, 0])


def test_regression_shape_mismatch():
    with pytest.raises(ValueError, match=r"shape of y_pred \(2, 2\).*\(3,\)"):
        MSE().update(np.zeros((2, 2)), np.zeros(3))


def test_loss_dimensions():
    with pytest.raises(ValueError, match=r"scalar or 1-d.*\(2, 2\)"):
        Loss().update(np.zeros((2, 2)))


def test_fbeta_beta():
    with pytest.raises(ValueError, match=r"'beta'.*0"):
        Fbeta(0)
    with pytest.raises(TypeError, match="'beta'"):
        Fbeta("1")
