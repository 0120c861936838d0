"""The loss-landscape settings are one contract: refused by ``SummaryCollector(...)`` with
the message the landscape gives, and ``train_metadata.json`` read as it was written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.landscape import plain

from sumlens import SummaryCollector, SummaryLandscape
from sumlens._landscape_settings import (
    METADATA_FILE,
    check_collect_landscape,
    load_settings,
    metadata,
)

BAD_SETTINGS = [
    {"intervals": [[1, 2, 3]], "num_samples": -5},
    {"intervals": [[1, 2, 3]], "num_samples": "all"},
    {"intervals": [[1, 2, 3]], "landscape_size": 2},
    {"intervals": [[1, 2, 3]], "landscape_size": 257},
    {"intervals": [[1, 2, 3]], "landscape_size": 4.0},
    {"intervals": [[1, 2, 3]], "unit": "batch"},
    {"intervals": [[1, 2, 3]], "create_landscape": {"train": 1, "result": True}},
    {"intervals": [[1, 2, 3]], "create_landscape": {"train": True, "result": True, "x": 1}},
    {"intervals": [[1, 2]]},
    {"intervals": [[1, 2, "3"]]},
    {"intervals": []},
    {"intervals": [[1, 2, 3]], "step": 1},
]


def _error(call: Any) -> BaseException:
    with pytest.raises((TypeError, ValueError)) as caught:
        call()
    return caught.value


@pytest.mark.parametrize("settings", BAD_SETTINGS, ids=lambda s: repr(s)[:60])
def test_the_collector_refuses_what_the_landscape_refuses(
    settings: dict[str, Any], tmp_path: Path
) -> None:
    collector = _error(
        lambda: SummaryCollector(
            tmp_path / "run", collect_specified_data={"collect_landscape": settings}
        )
    )
    landscape = _error(
        lambda: SummaryLandscape(tmp_path / "run").gen_landscapes_with_multi_process(
            plain, collect_landscape=settings, progress=False
        )
    )
    assert (type(collector), str(collector)) == (type(landscape), str(landscape))


def test_a_bad_setting_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=r"collect_landscape\['num_samples'\] must be >= 1, got -5"
    ):
        SummaryCollector(
            tmp_path,
            collect_specified_data={
                "collect_landscape": {"intervals": [[1, 2, 3]], "num_samples": -5}
            },
        )
    assert not (tmp_path / "ckpt_dir").exists()


def test_the_collector_needs_intervals_and_fills_the_rest() -> None:
    with pytest.raises(TypeError, match="needs 'intervals'"):
        check_collect_landscape({"unit": "step"})
    assert check_collect_landscape(None) is None
    assert check_collect_landscape({}) is None  # MindSpore crashes on it; here it is off
    # One key of create_landscape: the other is True, as in MindSpore's collector (the
    # landscape's own override must name both, as MindSpore's must).
    settings = check_collect_landscape(
        {"intervals": ((1, 2, 3),), "create_landscape": {"result": False}}
    )
    assert settings == {
        "landscape_size": 40,
        "unit": "step",
        "num_samples": 2048,
        "create_landscape": {"train": True, "result": False},
        "intervals": [[1, 2, 3]],
    }


def test_metadata_reads_back_as_written(tmp_path: Path) -> None:
    settings = check_collect_landscape(
        {"intervals": [[1, 2, 3], [3, 4, 5]], "unit": "epoch", "landscape_size": 7}
    )
    assert settings is not None
    files = {n: str(tmp_path / f"Net_{n}_epoch.ckpt") for n in range(1, 6)}
    data = metadata(settings, files, step_per_epoch=16)
    (tmp_path / METADATA_FILE).write_text(json.dumps(data))
    loaded = load_settings(str(tmp_path), {})
    assert loaded.intervals == [[1, 2, 3], [3, 4, 5]]
    assert loaded.files == files
    assert (loaded.unit, loaded.landscape_size, loaded.num_samples) == ("epoch", 7, 2048)
    assert (loaded.step_per_epoch, loaded.create_train, loaded.create_result) == (16, True, True)
