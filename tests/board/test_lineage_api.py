"""The lineage view's API end to end: ``/api/v1/lineage`` and ``/api/v1/dataset-graph`` of the
real server over the golden MindSpore runs and runs our ``SummaryRecord`` wrote at three
learning rates (``helpers/lineage_data.py``), their lineage files read through the loader.

What the routes make of lineage records (columns, kinds, types, problems, keys, bad
parameters) is tested on an in-memory read surface: ``api/test_lineage_routes.py``.
"""

from __future__ import annotations

from pathlib import Path

from helpers.board import free_port, get_json, running_server, wait_until
from helpers.lineage_data import (
    EVAL_SIZE,
    GOLDEN,
    TRAIN_SIZE,
    WRITTEN,
    XSS_RUN,
    lineage_ready,
    write_lineage_base,
)

from sumlens import SummaryRecord
from sumlens.board.settings import BoardSettings


def test_every_run_with_lineage_is_a_row_with_its_values(tmp_path: Path, golden_dir: Path) -> None:
    base = tmp_path / "base"
    write_lineage_base(base, golden_dir)
    with SummaryRecord(base / "plain") as record:
        record.add_value("scalar", "loss", 1.0)
        record.record(1)
    runs = [*GOLDEN, *WRITTEN, XSS_RUN]
    settings = BoardSettings.create(base, port=free_port(), workspace=tmp_path / "ws")
    with running_server(settings) as url:
        table = wait_until(lambda: lineage_ready(url, runs), timeout=60)
        graphs = get_json(f"{url}/api/v1/dataset-graph?run=./collector&run=./sweep/lr_0.1")
    assert set(table["runs"]) == set(runs) and table["problems"] == []
    columns = {
        c["id"]: dict(zip(table["runs"], c["values"], strict=True)) for c in table["columns"]
    }
    for run, (lr, acc, train, evaluation) in GOLDEN.items():
        assert columns["learning_rate"][run] == lr and columns["metric/accuracy"][run] == acc
        assert columns["train_dataset_size"][run] == train
        assert columns["valid_dataset_size"][run] == evaluation
    for run, (lr, acc, _) in WRITTEN.items():
        assert columns["learning_rate"][run] == lr  # float32 on disk, shown as written
        assert columns["metric/accuracy"][run] == acc
        assert columns["train_dataset_size"][run] == TRAIN_SIZE
        assert columns["valid_dataset_size"][run] == EVAL_SIZE
    assert columns["pipeline"]["./sweep/lr_0.1"] == "MnistDataset → Shuffle → Batch"
    assert graphs is not None
    assert [(g["run"], g["graph"]["op_type"]) for g in graphs["graphs"]] == [
        ("./collector", "Batch"),
        ("./sweep/lr_0.1", "Batch"),
    ]
