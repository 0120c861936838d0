"""One column per hyper-parameter in the lineage table (``board/query/lineage_fold.py``).

Over real runs (:mod:`helpers.hparam_aliases`): sumlens' ``SummaryWriter.add_hparams`` and
the Lightning adapter record ``lr``, ``batch_size`` and ``optimizer`` as TensorBoard's
hparams, as custom lineage and as MindSpore's train lineage fields; torch's writer as
hparams only. ``/api/v1/lineage`` shows each quantity once, named as the user named it,
saying which fields held each run's value; a grouping by a folded field's old id still
works; MindInsight's own face answers as MindInsight does. On the fold itself: fields that
disagree somewhere, or that no run holds together, stay apart; float32 copies agree.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.board import free_port, get_json, running_server, wait_until
from helpers.hparam_aliases import ACCURACY, HPARAMS, OURS, write_alias_runs

from sumlens.board.settings import BoardSettings

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
FOLDED = {
    "hparam/lr": ["hparam/lr", "learning_rate", "custom/lr"],
    "hparam/batch_size": ["hparam/batch_size", "batch_size", "custom/batch_size"],
    "hparam/optimizer": ["hparam/optimizer", "optimizer", "custom/optimizer"],
    "hparam/seed": ["hparam/seed", "custom/seed"],
}
"""Each column of a quantity and the fields folded into it, in order."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Any]]]:
    base = tmp_path_factory.mktemp("aliases") / "base"
    runs = write_alias_runs(base)
    settings = BoardSettings.create(
        base, port=free_port(), workspace=tmp_path_factory.mktemp("aliases-ws")
    )
    with running_server(settings) as url:

        def ready() -> dict[str, Any] | None:
            table = get_json(f"{url}/api/v1/lineage")
            columns = {c["id"] for c in (table or {}).get("columns", [])}
            # every run listed, with its metric read (the sub-run of torch's writer too)
            done = table and sorted(table["runs"]) == sorted(runs) and "metric/hp/acc" in columns
            return table if done else None

        yield url, wait_until(ready, timeout=60)


def _by_run(table: dict[str, Any], column: dict[str, Any], key: str = "values") -> dict:
    return dict(zip(table["runs"], column[key], strict=True))


def test_each_hyper_parameter_is_one_column_named_as_the_user_named_it(
    served: tuple[str, dict[str, Any]],
) -> None:
    _, table = served
    columns = {c["id"]: c for c in table["columns"]}
    hyper = [c["id"] for c in table["columns"] if c["kind"] == "hyper"]
    assert sorted(hyper) == sorted(FOLDED)  # no learning_rate, custom/lr ... beside them
    assert not [name for name in columns if name.startswith("custom/")]
    assert hyper[0] == "hparam/lr"  # where "learning rate" stood: the first column
    for name, sources in FOLDED.items():
        column = columns[name]
        assert column["label"] == name.removeprefix("hparam/")
        assert [s["id"] for s in column["sources"]] == sources
        field = name.removeprefix("hparam/")
        assert _by_run(table, column) == {run: hp[field] for run, hp in HPARAMS.items()}
        # which fields held each run's value: all of them in our runs, hparams in torch's
        held = _by_run(table, column, "held")
        assert {run: held[run] for run in OURS} == dict.fromkeys(OURS, 2 ** len(sources) - 1)
        assert held["./torch/lr0.5"] == 1
    assert [(s["label"], s["from"]) for s in columns["hparam/lr"]["sources"]] == [
        ("lr", "TensorBoard hparams"),
        ("learning rate", "train lineage"),
        ("lr", "custom lineage"),
    ]
    assert _by_run(table, columns["metric/hp/acc"]) == pytest.approx(ACCURACY)


def test_a_grouping_by_a_folded_field_finds_its_column(
    served: tuple[str, dict[str, Any]],
) -> None:
    url, _ = served
    for field in ("learning_rate", "custom/lr", "hparam/lr"):
        query = "&".join(f"run={run}" for run in OURS) + f"&tag=loss&by=field&field={field}"
        body = get_json(f"{url}/api/v1/scalars/groups?{query}")
        assert body is not None, field
        assert sorted(group["name"] for group in body["all_groups"]) == [
            "lr=0.001",
            "lr=0.01",
            "lr=0.1",
        ]
    fields = get_json(f"{url}/api/v1/scalars/groups/fields?run=./ours/lr0.1")
    assert fields is not None
    ids = [field["id"] for field in fields["fields"]]
    assert "hparam/lr" in ids and "learning_rate" not in ids and "custom/lr" not in ids


def test_mindinsight_s_face_answers_as_mindinsight(served: tuple[str, dict[str, Any]]) -> None:
    url, _ = served
    asked = urllib.request.Request(f"{url}/v1/mindinsight/lineagemgr/lineages", data=b"{}")
    with _NO_PROXY.open(asked, timeout=10) as answer:
        body = json.loads(answer.read())
    lineage = {job["summary_dir"]: job["model_lineage"] for job in body["object"]}
    ours = lineage["./ours/lr0.1"]
    assert (ours["learning_rate"], ours["batch_size"], ours["optimizer"]) == (0.1, 32, "adam")
    assert ours["user_defined"]["lr"] == 0.1  # MindInsight lists the custom data as it is


def test_fields_fold_only_where_runs_hold_them_together_and_agree() -> None:
    from sumlens.board.query.lineage_fold import fold  # here: the other tests run without it

    rows = [
        # written by add_hparams: one value under three names (float32 in the train lineage)
        {"hparam/lr": 1 / 3, "learning_rate": 0.33333334, "custom/lr": 1 / 3},
        # MindSpore: the train lineage's rate, and a custom "lr" meaning something else
        {"learning_rate": 0.5, "custom/lr": 0.9, "custom/arch": "vit"},
        {"network": "LeNet5"},  # no run holds network and custom/arch together
    ]
    columns = {c.id: c for c in fold(["learning_rate", "network", "custom/arch", "custom/lr",
                                      "hparam/lr"], rows)}  # fmt: skip
    assert list(columns) == ["hparam/lr", "network", "custom/arch", "custom/lr"]
    lr = columns["hparam/lr"]
    assert lr.sources == ("hparam/lr", "learning_rate")
    assert lr.values == [1 / 3, 0.5, None] and lr.held == [0b11, 0b10, 0]
    # custom/lr disagrees in the second run: a column of its own, every value kept
    assert columns["custom/lr"].values == [1 / 3, 0.9, None] and columns["custom/lr"].held is None
    assert columns["network"].sources == ("network",)
    assert columns["custom/arch"].values == [None, "vit", None]
