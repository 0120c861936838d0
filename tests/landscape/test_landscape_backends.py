"""One process, two worker processes and Ray give the same landscapes."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from helpers.landscape import collector_run, mindspore_style

from sumlens.landscape import BlockDone, LossLandscape, SummaryLandscape
from sumlens.landscape.summary_landscape import CACHE_DIR

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return collector_run(tmp_path_factory.mktemp("backends") / "run", landscape_size=6)


@pytest.fixture(scope="module")
def in_process(run: Path) -> list[LossLandscape]:
    return SummaryLandscape(run).gen_landscapes_with_multi_process(
        mindspore_style, output=run / "in_process", progress=False
    )


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(
        num_cpus=2,
        num_gpus=0,  # CPU actors on any machine: compared with the CPU run exactly
        include_dashboard=False,
        log_to_driver=False,
        # the actors import this directory's helpers, tests/helpers and benchmarks/digits.py
        runtime_env={
            "env_vars": {"PYTHONPATH": os.pathsep.join(map(str, (HERE, *HERE.parents[:2])))}
        },
    )
    try:
        yield ray
    finally:
        ray.shutdown()


def assert_same(ours: list[LossLandscape], reference: list[LossLandscape]) -> None:
    assert [landscape.intervals for landscape in ours] == [[1, 2, 3, 4], None]
    assert len(ours) == len(reference)
    for a, b in zip(ours, reference, strict=True):
        np.testing.assert_allclose(a.z, b.z, rtol=1e-6, atol=0)
        np.testing.assert_array_equal(a.x, b.x)
        if a.path is not None:
            assert b.path is not None
            np.testing.assert_allclose(a.path[2], b.path[2], rtol=1e-6, atol=0)


def recompute(run: Path, output: str, **kwargs: Any) -> list[LossLandscape]:
    """The landscapes again, every block evaluated (the cache emptied first)."""
    shutil.rmtree(run / "ckpt_dir" / CACHE_DIR)
    events: list[BlockDone] = []
    landscapes = SummaryLandscape(run).gen_landscapes_with_multi_process(
        mindspore_style, output=run / output, on_block=events.append, progress=False, **kwargs
    )
    assert events and not any(event.cached for event in events)
    return landscapes


@pytest.mark.slow
def test_two_cpu_worker_processes(
    run: Path, in_process: list[LossLandscape], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On CPU, 2 device ids mean 2 worker processes: CUDA is hidden from this process, so
    the ids take the CPU path (and the workers stay on CPU) on a GPU machine too."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert_same(recompute(run, "two", device_ids=[0, 1]), in_process)


@pytest.mark.slow
def test_ray_tasks(run: Path, in_process: list[LossLandscape], local_ray: Any) -> None:
    assert_same(recompute(run, "ray", ray_address="auto", num_workers=2), in_process)
    assert local_ray.is_initialized()  # a Ray we did not start is left running
