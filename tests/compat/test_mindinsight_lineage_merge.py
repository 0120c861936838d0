"""MindInsight's lineage API, ours and the real MindInsight 2.3.1's, over the same files.

The runs of ``helpers/lineage_cases.py`` (one per rule of merging lineage files on which
the dashboard's two faces once differed; each with a summary file, without which
MindInsight never finishes loading a job) are probed in the real MindInsight and in
``sumlens``' MindInsight face: the two ``lineagemgr/lineages`` answers must be equal, and
MindInsight's must show what the cases expect, which ``tests/board/test_lineage_merge.py``
checks both of our faces pick. MindInsight logs an error for each file holding custom
lineage only (it refuses such a file); no other error may be logged.

MindInsight is found through ``$MINDINSIGHT_BIN``, which ``make test`` sets.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.board import free_port, running_server
from helpers.lineage_cases import CASES, Picked, write_case
from helpers.mindinsight import PROBE, PROBE_TIMEOUT, assert_same, mindinsight_bin, run_probes

from sumlens import SummaryRecord
from sumlens.board.settings import BoardSettings

pytestmark = pytest.mark.mindinsight

REFUSED_FILE = "LineageEventNotExistException"
"""What MindInsight logs for a lineage file holding no train or evaluation lineage."""


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lineage_merge") / "runs"
    for name, case in CASES.items():
        write_case(root / name, case)
        with SummaryRecord(root / name) as record:
            record.add_value("scalar", "loss", 1.0)
            record.record(1)
    return root.resolve()


@pytest.fixture(scope="module")
def answers(base: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The probe's output for MindInsight (``mindinsight``) and for us (``sumlens``)."""
    exe = mindinsight_bin()
    tmp = tmp_path_factory.mktemp("probe")
    (probe,) = run_probes(exe, [base], tmp)
    assert probe.returncode in (0, 2), probe.explain()
    errors = probe.data.get("mindinsight_log", {}).get("errors", [])
    assert all(REFUSED_FILE in line for line in errors), probe.explain()
    settings = BoardSettings.create(base, port=free_port(), workspace=tmp / "workspace")
    out = tmp / "sumlens.json"
    with running_server(settings) as url:
        command = [sys.executable, str(PROBE), str(base), str(out), "--url", url]
        done = subprocess.run(
            [*command, "--timeout", "90"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return {"mindinsight": probe.data, "sumlens": json.loads(out.read_text(encoding="utf-8"))}


def _picked(row: dict[str, Any]) -> Picked:
    lineage = row["model_lineage"]
    graph = row["dataset_graph"]
    return Picked(
        learning_rate=lineage["learning_rate"],
        valid_path=lineage["test_dataset_path"],
        valid_size=lineage["test_dataset_count"],
        metrics=lineage["metric"],
        custom=lineage["user_defined"],
        pipeline=graph.get("op_type"),  # the cases' graphs are one operation
    )


def test_mindinsight_shows_what_the_cases_expect(answers: dict[str, dict[str, Any]]) -> None:
    rows = {row["summary_dir"]: row for row in answers["mindinsight"]["lineage"]["object"]}
    listed = {f"./{name}" for name, case in CASES.items() if case.mindinsight_lists}
    assert set(rows) == listed
    for name, case in CASES.items():
        if case.mindinsight_lists:
            assert _picked(rows[f"./{name}"]) == case.picked, name


@pytest.mark.parametrize("answer", ["lineage", "lineage_sorted_by_summary_dir"])
def test_our_face_answers_as_mindinsight(answers: dict[str, dict[str, Any]], answer: str) -> None:
    assert_same(answers["mindinsight"][answer], answers["sumlens"][answer], answer)
