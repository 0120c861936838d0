"""Groups' colours and bands, and x-axis order, asked of the real server over runs
SummaryRecord wrote (issue 40, items 9 and 18).

* ``/api/v1/runs``, polled by every page, carries no group colours, however many are kept:
  a groups answer carries those of its groups (``all_groups``: every group of the runs,
  its chosen colour and member runs, whatever tags were asked), and the run list's
  ``annotations_version`` moves when one is chosen, so a page knows to ask again.
* The ``std`` band is the sample standard deviation (``ddof=1``); at a step only one
  member has, it closes on the centre.
* An x tag that only falls with step is monotonic; one that rises and falls is not.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Iterator

import numpy as np
import pytest
from helpers.board_data import api_get, served_base

from sumlens import SummaryRecord

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
STEPS = 6
VALUES = {
    "./g/a1": [1.0, 2.0, 4.0, 8.0, 16.0, 32.0],
    "./g/a2": [3.0, 2.5, 1.0, 0.0],  # stops at step 3: steps 4 and 5 have one member
    "./g/b1": [5.0, 5.0, 5.0, 5.0, 5.0, 5.0],
    "./solo": [0.5, 0.4, 0.3, 0.2, 0.1, 0.0],
}
RUNS = list(VALUES)
REGEX = r"g/([ab])\d"
STORED_GROUPS = 200
"""Group colours kept in the workspace (of groups no run is in but one)."""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("colour-band") / "base"
    for run, values in VALUES.items():
        with SummaryRecord(base / run.removeprefix("./")) as record:
            for step, value in enumerate(values):
                record.add_value("scalar", "loss", value)
                record.add_value("scalar", "acc", -value)
                if run == "./solo":
                    record.add_value("scalar", "falls", float(100 - step * step))
                    record.add_value("scalar", "wave", float(step % 3))
                record.record(step)
    with served_base(base, tmp_path_factory.mktemp("colour-band-ws"), RUNS) as served:
        yield served


def _json(url: str, path: str, **params: object) -> dict:
    status, body = api_get(url, path, **params)
    assert status == 200, body
    return json.loads(body)


def _put_colour(url: str, group: str, colour: str | None) -> None:
    query = urllib.parse.urlencode({"group": group})
    request = urllib.request.Request(
        f"{url}/api/v1/group-colour?{query}",
        data=json.dumps({"colour": colour}).encode(),
        headers={"Content-Type": "application/json"},
        method="PUT",
    )
    with _NO_PROXY.open(request, timeout=30) as answer:
        assert answer.status == 200


def _raw_runs(url: str) -> bytes:
    with _NO_PROXY.open(f"{url}/api/v1/runs", timeout=30) as answer:
        return answer.read()


def test_the_run_list_carries_no_group_colours(url: str) -> None:
    raw = _raw_runs(url)
    before = json.loads(raw)
    assert "group_colours" not in before
    for i in range(STORED_GROUPS):
        _put_colour(url, f"unused-{i}", "#123456")
    _put_colour(url, "a", "#aa3377")
    after = _raw_runs(url)
    runs = json.loads(after)
    assert "group_colours" not in runs and b"#aa3377" not in after and b"unused-" not in after
    assert runs["annotations_version"] != before["annotations_version"]  # pages ask again
    assert len(after) - len(raw) < 20  # the version numbers' digits: not 201 colours

    body = _json(url, "scalars/groups", run=RUNS, tag="acc", group_regex=REGEX)
    assert body["all_groups"] == [
        {"name": "a", "colour": "#aa3377", "runs": ["./g/a1", "./g/a2"]},
        {"name": "b", "colour": None, "runs": ["./g/b1"]},
    ]  # the groups in use only, whatever their entries per tag
    assert body["single"] == ["./solo"]
    _put_colour(url, "a", None)


def test_the_std_band_is_the_sample_standard_deviation(url: str) -> None:
    body = _json(url, "scalars/groups", run=RUNS, tag="loss", group_regex=REGEX, band="std")
    group = next(g for g in body["groups"] if g["name"] == "a")
    a1, a2 = np.array(VALUES["./g/a1"]), np.array(VALUES["./g/a2"])
    both = np.stack([a1[: a2.size], a2])
    spread = np.concatenate([both.std(axis=0, ddof=1), np.zeros(STEPS - a2.size)])
    centre = np.concatenate([both.mean(axis=0), a1[a2.size :]])
    np.testing.assert_allclose(group["center"], centre, rtol=1e-12)
    np.testing.assert_allclose(group["low"], centre - spread, rtol=1e-12)
    np.testing.assert_allclose(group["high"], centre + spread, rtol=1e-12)
    assert group["count"] == [2, 2, 2, 2, 1, 1]


@pytest.mark.parametrize(("xtag", "monotonic"), [("falls", True), ("wave", False)])
def test_a_falling_x_tag_is_monotonic(url: str, xtag: str, monotonic: bool) -> None:
    body = _json(url, "scalars", run="./solo", tag="loss", axis=f"tag:{xtag}")
    (series,) = body["series"]
    assert series["monotonic"] is monotonic
    assert series["step"] == list(range(STEPS))  # in step order either way
