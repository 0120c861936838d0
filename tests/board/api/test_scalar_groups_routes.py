"""Groups of runs (``/api/v1/scalars/groups`` and its download) over runs SummaryRecord
wrote (3 seeds x 2 learning rates, :mod:`helpers.seed_groups`), asked of the real server.

The reference is numpy on the values written: per step, over the members that have it,
``np.mean``, ``np.std(ddof=1)``, ``np.min``/``np.max``, ``np.median`` and ``np.percentile``; with
smoothing, TensorBoard's EMA of each member first (``tb_ema``), then the mean.
"""

from __future__ import annotations

import csv
import io
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from helpers.board import tb_ema
from helpers.board_data import api_get, served_base
from helpers.group_hparams import BY_LR, WITHOUT, write_hparams
from helpers.seed_groups import MEMBERS, REGEX, SINGLE, STEPS, grid, write_runs

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
RUNS = [*MEMBERS["0.1"], *MEMBERS["0.01"], SINGLE]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("groups") / "base"
    write_runs(base)
    write_hparams(base)
    with served_base(base, tmp_path_factory.mktemp("ws"), RUNS) as served:
        yield served


def _groups(url: str, **params: Any) -> dict[str, Any]:
    params = {"run": RUNS, "tag": "loss", "group_regex": REGEX, "points": 20_000, **params}
    status, body = api_get(url, "scalars/groups", **params)
    assert status == 200, body
    return json.loads(body)


def _by_name(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {group["name"]: group for group in body["groups"]}


def _floats(values: list[float | None]) -> np.ndarray:
    return np.array(values, dtype=np.float64)


def test_a_regex_makes_two_groups_whose_mean_and_std_are_numpys(url: str) -> None:
    body = _groups(url)
    assert body["single"] == [SINGLE]  # no match: drawn as a run of its own
    groups = _by_name(body)
    assert list(groups) == ["0.1", "0.01"]  # named by the capture group
    for lr, group in groups.items():
        assert [m["run"] for m in group["members"]] == MEMBERS[lr]
        steps, table = grid(MEMBERS[lr])
        assert group["step"] == steps.tolist() == list(range(1, STEPS + 1))
        has = np.isfinite(table)
        assert group["count"] == has.sum(axis=0).tolist()
        mean = np.array([np.mean(col[ok]) for col, ok in zip(table.T, has.T, strict=True)])
        # the sample standard deviation (ddof=1): every step here has two members or more
        std = np.array([np.std(col[ok], ddof=1) for col, ok in zip(table.T, has.T, strict=True)])
        np.testing.assert_allclose(_floats(group["center"]), mean, rtol=1e-12)
        np.testing.assert_allclose(_floats(group["low"]), mean - std, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(_floats(group["high"]), mean + std, rtol=1e-9, atol=1e-12)
    # the member that stops at 150 and the one lacking every third step
    assert set(groups["0.1"]["count"][150:]) == {2} and groups["0.1"]["count"][0] == 3
    assert groups["0.01"]["count"][2] == 2 and groups["0.01"]["count"][3] == 3


@pytest.mark.parametrize(
    ("stat", "band", "reduce"),
    [
        ("median", "minmax", lambda v: (np.median(v), np.min(v), np.max(v))),
        ("mean", "p25-75", lambda v: (np.mean(v), *np.percentile(v, [25, 75]))),
        ("median", "p10-90", lambda v: (np.median(v), *np.percentile(v, [10, 90]))),
    ],
)
def test_median_minmax_and_percentiles_are_numpys(
    url: str, stat: str, band: str, reduce: Any
) -> None:
    groups = _by_name(_groups(url, stat=stat, band=band))
    for lr, group in groups.items():
        _, table = grid(MEMBERS[lr])
        expected = np.array([reduce(col[np.isfinite(col)]) for col in table.T])
        got = np.column_stack([_floats(group[k]) for k in ("center", "low", "high")])
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_each_member_is_smoothed_before_the_mean(url: str) -> None:
    groups = _by_name(_groups(url, smoothing=0.9))
    for lr, group in groups.items():
        _, table = grid(MEMBERS[lr], lambda values: tb_ema(values, 0.9))
        expected = [np.mean(col[np.isfinite(col)]) for col in table.T]
        np.testing.assert_allclose(_floats(group["center"]), expected, rtol=1e-12)
        # not the smoothed mean: the two differ where a member lacks steps
        _, raw = grid(MEMBERS[lr])
        means = np.array([np.mean(col[np.isfinite(col)]) for col in raw.T])
        assert not np.allclose(_floats(group["center"]), tb_ema(means, 0.9), rtol=1e-6)


def test_groups_are_downsampled_after_aggregation_and_cut_to_a_range(url: str) -> None:
    full = _by_name(_groups(url))["0.1"]
    small = _by_name(_groups(url, points=20))["0.1"]
    assert small["total"] == STEPS and 2 < small["shown"] <= 20
    at = {step: i for i, step in enumerate(full["step"])}
    for key in ("center", "low", "high", "count"):
        assert small[key] == [full[key][at[step]] for step in small["step"]]
    ranged = _by_name(_groups(url, start=50, end=60))["0.1"]
    assert ranged["step"] == list(range(50, 61))


def test_groups_by_run_tag_from_the_annotations(url: str) -> None:
    for run, tags in ((MEMBERS["0.1"][0], ["fast"]), (MEMBERS["0.1"][1], ["fast", "mine"])):
        request = urllib.request.Request(
            f"{url}/api/v1/annotation?run={run}",
            data=json.dumps({"tags": tags, "note": "", "colour": None}).encode(),
            headers={"Content-Type": "application/json"},
            method="PUT",
        )
        with _NO_PROXY.open(request, timeout=30) as response:
            assert response.status == 200
    body = _groups(url, by="tag", group_regex="")
    groups = _by_name(body)
    assert {name: [m["run"] for m in g["members"]] for name, g in groups.items()} == {
        "fast": MEMBERS["0.1"][:2],
        "mine": MEMBERS["0.1"][1:2],
    }
    assert body["single"] == [r for r in RUNS if r not in MEMBERS["0.1"][:2]]
    _, table = grid(MEMBERS["0.1"][:2])
    expected = [np.mean(col[np.isfinite(col)]) for col in table.T]
    np.testing.assert_allclose(_floats(groups["fast"]["center"]), expected, rtol=1e-12)


def test_groups_by_a_hyper_parameter_field(url: str) -> None:
    status, body = api_get(url, "scalars/groups/fields", run=RUNS)
    assert status == 200
    fields = {field["id"]: field for field in json.loads(body)["fields"]}
    assert fields["hparam/lr"] == {"id": "hparam/lr", "label": "lr", "kind": "hyper"}
    assert {"hparam/seed", "hparam/opt"} <= set(fields)
    status, body = api_get(url, "scalars/groups/fields", run=[SINGLE])
    assert json.loads(body) == {"fields": []}  # a run without lineage has no field

    body = _groups(url, by="field", field="hparam/lr", group_regex="")
    assert body["field"] == "hparam/lr"
    groups = _by_name(body)
    assert {name: [m["run"] for m in g["members"]] for name, g in groups.items()} == BY_LR
    assert body["single"] == [WITHOUT, SINGLE]  # no value of the field: drawn as runs
    _, table = grid(BY_LR["lr=0.01"])
    expected = [np.mean(col[np.isfinite(col)]) for col in table.T]
    np.testing.assert_allclose(_floats(groups["lr=0.01"]["center"]), expected, rtol=1e-12)
    # a field every member holds a different value of: groups of one
    seeds = _by_name(_groups(url, by="field", field="hparam/seed"))
    assert set(seeds) == {"seed=1", "seed=2", "seed=3"}
    assert [m["run"] for m in seeds["seed=3"]["members"]] == [MEMBERS["0.1"][2]]


def test_the_download_carries_every_step_of_the_groups(url: str) -> None:
    params = {"run": RUNS, "tag": "loss", "group_regex": REGEX}
    status, body = api_get(url, "scalars/groups/download", **params)
    assert status == 200
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    assert list(rows[0]) == ["group", "tag", "step", "mean", "mean-std", "mean+std", "members"]
    assert len(rows) == 2 * STEPS
    full = _by_name(_groups(url))
    for row in rows:
        group = full[row["group"]]
        i = group["step"].index(int(row["step"]))
        assert float(row["mean"]) == group["center"][i]
        assert float(row["mean+std"]) == group["high"][i]
        assert int(row["members"]) == group["count"][i]
    status, body = api_get(url, "scalars/groups/download", **params, format="json", band="minmax")
    document = json.loads(body)
    assert document["band"] == "minmax" and document["single"] == [SINGLE]
    first = document["groups"][0]
    minmax = _by_name(_groups(url, band="minmax"))["0.1"]
    assert first["group"] == "0.1" and first["step"] == minmax["step"]
    assert first["min"] == minmax["low"] and first["max"] == minmax["high"]


@pytest.mark.parametrize(
    ("params", "status", "said"),
    [
        ({"group_regex": "lr(["}, 400, "group_regex='lr([' is not a regular expression"),
        ({"stat": "mode"}, 422, "stat='mode' is not one of mean, median"),
        ({"band": "iqr"}, 422, "band='iqr' is not one of std, minmax or p<lo>-<hi>"),
        ({"band": "p75-25"}, 422, "band='p75-25'"),
        ({"by": "hparam"}, 422, "by='hparam' is not one of regex, tag, field"),
        ({"by": "field"}, 422, "field='' is empty: give a hyper-parameter or lineage field"),
        (
            {"by": "field", "field": "hparam/nope"},
            422,
            "field='hparam/nope' is no hyper-parameter or lineage field of any run; "
            "the fields are: ",
        ),
        ({"group_regex": ""}, 422, "group_regex='' is empty"),
        ({"smoothing": "1"}, 422, "smoothing='1': Input should be less than 1"),
        ({"axis": "epochs"}, 422, "axis='epochs' is not one of step"),
        ({"format": "xml"}, 422, "format='xml' is not one of csv, json"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(
    url: str, params: dict[str, str], status: int, said: str
) -> None:
    path = "scalars/groups/download" if "format" in params else "scalars/groups"
    got, body = api_get(url, path, **{"run": RUNS, "tag": "loss", "group_regex": REGEX, **params})
    assert got == status, body
    assert said in json.loads(body)["detail"]
