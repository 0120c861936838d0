"""PR curves end where TensorBoard's end (``board/api/pr_curve.py``).

torch's ``add_pr_curve`` always ends a curve on the threshold 1.0, where no example is
predicted positive (TP = FP = 0): kept, it drew a line to precision = recall = 0 on every
curve (127 points against TensorBoard's 126). Curves written by torch's writer and by ours,
read by the real loader, are served point for point as TensorBoard's own pr_curves plugin
serves them, run in this process over the same files (``/pr_curve`` and ``/pr_curve/at``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.board import route_client
from starlette.testclient import TestClient

from sumlens.board.data.loader import Loader

STEPS = range(3)
ROWS = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives",
        "fn": "false_negatives", "precision": "precision", "recall": "recall",
        "thresholds": "thresholds"}  # fmt: skip
"""Our names of a curve's rows -> TensorBoard's plugin's."""
TAGS = ("random", "low", "nothing_positive")


def _write(writer: Any, rng: np.random.Generator) -> None:
    """The same curves through either writer (torch's or ours: the same API)."""
    for step in STEPS:
        labels = rng.integers(0, 2, 60)
        # 127 thresholds; 0.999 falls in the last bucket but one, as users' curves mostly do
        predictions = np.append(rng.uniform(size=59), 0.999)
        writer.add_pr_curve("random", labels, predictions, step)
        # every prediction under 0.4: the last ~76 thresholds have no positive
        writer.add_pr_curve("low", labels, rng.uniform(size=60) * 0.4, step, num_thresholds=51)
        zeros = [0.0] * 5
        writer.add_pr_curve_raw("nothing_positive", zeros, zeros, [3.0] * 5, [2.0] * 5,
                                zeros, zeros, step, num_thresholds=5)  # fmt: skip


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from sumlens import SummaryWriter

    base = tmp_path_factory.mktemp("pr")
    with TorchWriter(str(base / "torch")) as writer:
        _write(writer, np.random.default_rng(0))
    with SummaryWriter(str(base / "ours")) as writer:
        _write(writer, np.random.default_rng(0))
    return base


@pytest.fixture(scope="module")
def client(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    loader = Loader(base, tmp_path_factory.mktemp("ws"))
    loader.poll()
    with route_client(loader) as client:
        yield client


@pytest.fixture(scope="module")
def tensorboard(base: Path) -> Any:
    """TensorBoard's pr_curves plugin over ``base``, as ``tensorboard --logdir`` makes it."""
    from tensorboard.backend.event_processing import data_provider
    from tensorboard.backend.event_processing import plugin_event_multiplexer as multiplexer
    from tensorboard.plugins import base_plugin
    from tensorboard.plugins.pr_curve import pr_curves_plugin

    events = multiplexer.EventMultiplexer(tensor_size_guidance={"pr_curves": 0})
    events.AddRunsFromDirectory(str(base))
    events.Reload()
    provider = data_provider.MultiplexerDataProvider(events, str(base))
    return pr_curves_plugin.PrCurvesPlugin(
        base_plugin.TBContext(data_provider=provider, logdir=str(base), multiplexer=events)
    )


def _theirs(tensorboard: Any, run: str, tag: str) -> list[dict[str, Any]]:
    from tensorboard import context

    return tensorboard.pr_curves_impl(context.RequestContext(), "", [run], tag)[run]


def _same(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    assert ours["step"] == theirs["step"]
    for name, their_name in ROWS.items():
        assert len(ours[name]) == len(theirs[their_name]), name
        np.testing.assert_array_equal(ours[name], theirs[their_name], err_msg=name)


@pytest.mark.parametrize("run", ["torch", "ours"])
@pytest.mark.parametrize("tag", TAGS)
def test_every_curve_is_served_as_tensorboard_serves_it(
    client: TestClient, tensorboard: Any, run: str, tag: str
) -> None:
    answer = client.get("/api/v1/pr_curve", params={"run": f"./{run}", "tag": tag})
    assert answer.status_code == 200, answer.text
    (series,) = answer.json()["series"]
    theirs = _theirs(tensorboard, run, tag)
    assert len(series["curves"]) == len(theirs) == len(STEPS)
    for ours, their in zip(series["curves"], theirs, strict=True):
        _same(ours, their)
        at = client.get(
            "/api/v1/pr_curve/at", params={"run": f"./{run}", "tag": tag, "step": ours["step"]}
        )
        _same(at.json(), their)


def test_the_undefined_tail_is_what_is_left_out(client: TestClient) -> None:
    def curves(tag: str) -> list[dict[str, Any]]:
        answer = client.get("/api/v1/pr_curve", params={"run": "./torch", "tag": tag})
        return answer.json()["series"][0]["curves"]

    for curve in curves("random"):
        assert len(curve["thresholds"]) == 126  # torch's 127 less the threshold 1.0
        assert curve["thresholds"][-1] < 1.0
        assert curve["tp"][-1] + curve["fp"][-1] > 0
    for curve in curves("low"):
        assert 20 <= len(curve["thresholds"]) <= 21  # no prediction reaches 0.4
        assert curve["tp"][-1] + curve["fp"][-1] > 0
    for curve in curves("nothing_positive"):
        assert curve["thresholds"] == [0.0] and curve["tn"] == [3.0]  # the first stays


def test_a_weighted_point_is_kept_while_some_weight_is_positive(tmp_path: Path) -> None:
    """Fractional weights: a threshold where the positives weigh 0.3 has a precision (1.0)
    and is drawn; TensorBoard truncates the counts to integers and drops it (said in the
    module docstring of ``pr_curve.py``)."""
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    with TorchWriter(str(tmp_path / "base" / "w")) as writer:
        writer.add_pr_curve("w", np.array([1, 0, 1]), np.array([0.95, 0.2, 0.3]), 0,
                            num_thresholds=11, weights=np.array([0.3, 1.0, 1.0]))  # fmt: skip
    loader = Loader(tmp_path / "base", tmp_path / "ws")
    loader.poll()
    with route_client(loader) as client:
        answer = client.get("/api/v1/pr_curve", params={"run": "./w", "tag": "w"})
    (curve,) = answer.json()["series"][0]["curves"]
    assert curve["thresholds"] == pytest.approx([i / 10 for i in range(10)])
    assert curve["tp"][-1] == pytest.approx(0.3) and curve["fp"][-1] == 0
    assert curve["precision"][-1] == pytest.approx(1.0)
