"""SummaryLandscape end to end on a SummaryCollector run of the digits CNN, and its checks."""

from __future__ import annotations

import ast
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from helpers.digits import DigitsCNN, batches, digits
from helpers.landscape import (
    BATCH,
    EPOCHS,
    SAMPLES,
    TRAIN_SAMPLES,
    collector_run,
    digit_batches,
    mindspore_style,
    plain,
    trained_states,
)
from torch import nn

import sumlens
from sumlens.io import iter_events
from sumlens.landscape import BlockDone, LossLandscape, SummaryLandscape, compute_landscape

SIZE = 5


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return collector_run(tmp_path_factory.mktemp("landscape") / "run", SIZE)


def written(directory: Path) -> dict[str, tuple[int, LossLandscape]]:
    return {
        e.tag: (e.step, LossLandscape.from_proto(e.value))
        for e in iter_events(directory)
        if e.plugin == "landscape"
    }


def final_loss(state: dict[str, torch.Tensor]) -> float:
    network = DigitsCNN()
    network.load_state_dict(state)
    network.eval()
    with torch.no_grad():
        return float(
            np.mean([float(nn.functional.cross_entropy(network(x), y)) for x, y in digit_batches()])
        )


def test_both_landscapes_are_written_and_read_back(run: Path, tmp_path: Path) -> None:
    metadata = run / "ckpt_dir" / "train_metadata.json"
    before = metadata.read_bytes()
    mode = stat.S_IMODE(metadata.stat().st_mode)
    landscapes = SummaryLandscape(run).gen_landscapes_with_multi_process(
        mindspore_style, output=tmp_path, progress=False
    )
    found = written(tmp_path)
    assert list(found) == ["landscape_[1, 4]", "landscape_[4]"]
    for (step, read), made in zip(found.values(), landscapes, strict=True):
        assert step == 0
        assert read.z.shape == (SIZE, SIZE) and read.x.shape == read.y.shape == (SIZE,)
        np.testing.assert_allclose(read.z, made.z, rtol=1e-6)  # stored as float32
        assert (read.unit, read.step_per_epoch) == ("epoch", TRAIN_SAMPLES // BATCH)
    (_, train), (_, result) = found.values()
    assert train.decomposition == "PCA" and train.intervals == [1, 2, 3, 4]
    assert train.path is not None and all(len(p) == 4 for p in train.path)
    assert train.convergence_point == (0.0, 0.0, pytest.approx(float(train.path[2][-1])))
    assert result.decomposition == "Random" and result.path is None
    assert result.convergence_point == pytest.approx(
        (0.0, 0.0, float(result.z[SIZE // 2, SIZE // 2])), rel=1e-6
    )
    # the path ends at the final weights; so does the result landscape's centre
    from sumlens.train.checkpoint import load_checkpoint

    final = load_checkpoint(run / "ckpt_dir" / f"DigitsCNN_{EPOCHS}_epoch.ckpt")
    loss = final_loss(final)
    assert float(train.path[2][-1]) == pytest.approx(loss, rel=1e-5)
    assert float(result.z[SIZE // 2, SIZE // 2]) == pytest.approx(loss, rel=1e-5)
    assert metadata.read_bytes() == before
    assert stat.S_IMODE(metadata.stat().st_mode) == mode  # never rewritten


def test_overrides_stay_in_memory_and_the_cache_answers_again(run: Path, tmp_path: Path) -> None:
    metadata = run / "ckpt_dir" / "train_metadata.json"
    before = metadata.read_bytes()
    overrides = {
        "landscape_size": 3,
        "create_landscape": {"train": True, "result": False},
        "intervals": [[2, 3, 4]],
        "num_samples": 64,
    }
    events: list[BlockDone] = []
    landscape = SummaryLandscape(run)
    first = landscape.gen_landscapes_with_multi_process(
        plain, overrides, output=tmp_path / "a", on_block=events.append, progress=False
    )
    assert [e.cached for e in events] == [False] * len(events)
    assert list(written(tmp_path / "a")) == ["landscape_[2, 4]"]
    assert first[0].z.shape == (3, 3) and first[0].intervals == [2, 3, 4]
    assert metadata.read_bytes() == before
    events.clear()
    again = landscape.gen_landscapes_with_multi_process(
        plain, overrides, output=tmp_path / "b", on_block=events.append, progress=False
    )
    assert events and all(e.cached for e in events)
    np.testing.assert_array_equal(again[0].z, first[0].z)
    events.clear()
    landscape.gen_landscapes_with_multi_process(
        plain,
        {**overrides, "num_samples": 96},  # other samples: another cache entry
        output=tmp_path / "c",
        on_block=events.append,
        progress=False,
    )
    assert events and not any(e.cached for e in events)


def test_compute_landscape_from_kept_state_dicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    states = trained_states(5)
    train = compute_landscape(states, plain, landscape_size=4, intervals=[10, 20, 30, 40, 50])
    blocks = 4 * 4 + 5  # one point per block: fewer than 64 points
    assert f"{blocks}/{blocks}" in capsys.readouterr().out  # landscape_[10, 50]'s progress bar
    assert train.intervals == [10, 20, 30, 40, 50] and train.z.shape == (4, 4)
    assert train.path is not None and train.path[0][-1] == train.path[1][-1] == 0.0
    assert float(train.path[2][-1]) == pytest.approx(final_loss(states[-1]), rel=1e-5)
    result = compute_landscape(
        states, plain(), kind="result", landscape_size=3, num_samples=SAMPLES, progress=False
    )
    assert result.is_final and result.z[1, 1] == pytest.approx(final_loss(states[-1]), rel=1e-5)
    numpy_states = [{k: v.numpy() for k, v in s.items()} for s in states]
    same = compute_landscape(
        numpy_states, plain, kind="result", landscape_size=3, cache_dir=tmp_path, progress=False
    )
    np.testing.assert_allclose(same.z, result.z, rtol=1e-6)
    with pytest.raises(ValueError, match="at least 3 states"):
        compute_landscape(states[:2], plain, progress=False)
    with pytest.raises(ValueError, match="kind"):
        compute_landscape(states, plain, kind="final", progress=False)
    with pytest.raises(ValueError, match="intervals has 2 entries"):
        compute_landscape(states, plain, intervals=[1, 2], progress=False)


def test_clean_ckpt(tmp_path: Path) -> None:
    landscape = SummaryLandscape(tmp_path / "fresh")
    assert (tmp_path / "fresh" / "ckpt_dir").is_dir()
    (tmp_path / "fresh" / "ckpt_dir" / "w.ckpt").write_bytes(b"x")
    landscape.clean_ckpt()
    assert not (tmp_path / "fresh" / "ckpt_dir").exists()
    landscape.clean_ckpt()  # nothing left: no error


# ---------------------------------------------------------------- validation


def copy_run(run: Path, tmp_path: Path, metadata: dict[str, Any] | None = None) -> Path:
    """A run directory whose metadata (pointing at ``run``'s weights) we may change."""
    ckpt = tmp_path / "copy" / "ckpt_dir"
    ckpt.mkdir(parents=True)
    data = json.loads((run / "ckpt_dir" / "train_metadata.json").read_text())
    data.update(metadata or {})
    (ckpt / "train_metadata.json").write_text(json.dumps(data))
    return tmp_path / "copy"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"collect_landscape": {"landscape_size": 2}}, ValueError, r"\[3, 256\], got 2"),
        ({"collect_landscape": {"landscape_size": 257}}, ValueError, r"\[3, 256\], got 257"),
        ({"collect_landscape": {"landscape_size": 4.0}}, TypeError, "must be an int"),
        ({"collect_landscape": {"unit": "batch"}}, ValueError, r"\('step', 'epoch'\)"),
        ({"collect_landscape": {"num_samples": "all"}}, TypeError, "num_samples.*int"),
        ({"collect_landscape": {"num_samples": 0}}, ValueError, ">= 1, got 0"),
        ({"collect_landscape": {"create_landscape": {"train": True}}}, ValueError, "exactly"),
        (
            {"collect_landscape": {"create_landscape": {"train": 1, "result": True}}},
            TypeError,
            "bool",
        ),
        ({"collect_landscape": {"intervals": [[1, 2]]}}, ValueError, "at least 3"),
        ({"collect_landscape": {"intervals": [[1, 2, "3"]]}}, TypeError, "lists of ints"),
        ({"collect_landscape": {"intervals": [[1, 2, 9]]}}, ValueError, "3th checkpoint"),
        ({"collect_landscape": {"step": 1}}, ValueError, r"\['step'\] are not supported"),
        ({"collect_landscape": [1]}, TypeError, "dict or None"),
        ({"device_ids": 0}, TypeError, "list of ints"),
        ({"device_ids": [0, "1"]}, TypeError, "must hold ints"),
        ({"device_ids": [-1]}, ValueError, ">= 0, got -1"),
        # ids that exist on any machine (none, one or more GPUs), so that these rules, not
        # "device_ids [1] do not exist" on a one-GPU machine, are what fires
        ({"device_ids": [0, 0]}, ValueError, "repeat"),
        ({"device_ids": [0], "num_workers": 2}, ValueError, "not both"),
        ({"num_workers": 0}, ValueError, ">= 1, got 0"),
        ({"device_ids": [0], "ray_address": "auto"}, ValueError, "ray_address"),
        ({"normalization": "layer"}, ValueError, "normalization"),
        ({"seed": -1}, ValueError, "seed"),
        ({"train_mode": "yes"}, TypeError, "train_mode"),
        ({"points_per_pass": 0}, ValueError, "points_per_pass"),
        ({"onednn": "yes"}, TypeError, "onednn must be None .timed choice., True or False"),
        ({"block_points": 0}, ValueError, "block_points"),
        ({"output": 3}, TypeError, "output"),
    ],
)
def test_invalid_arguments(
    run: Path, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        SummaryLandscape(run).gen_landscapes_with_multi_process(plain, progress=False, **kwargs)


@pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="needs a CUDA device: only there do device ids name devices that can be missing",
)
def test_device_ids_beyond_the_gpus(run: Path) -> None:
    count = torch.cuda.device_count()
    with pytest.raises(ValueError, match=rf"device_ids \[{count}\] do not exist.*{count} CUDA"):
        SummaryLandscape(run).gen_landscapes_with_multi_process(
            plain, device_ids=[0, count], progress=False
        )


@pytest.mark.parametrize(
    ("metadata", "match"),
    [
        ({"extra": 1}, "unknown keys"),
        ({"epoch_group": {"0": [1, 2]}}, "at least 3"),
        ({"epoch_group": {"0": [1, 2, 7]}}, "3th checkpoint"),
        ({"step_per_epoch": "16"}, "step_per_epoch"),
        ({"unit": "batch"}, "unit"),
        ({"landscape_size": 1000}, "landscape_size"),
        ({"create_landscape": {"train": True}}, "create_landscape"),
    ],
)
def test_invalid_metadata(run: Path, tmp_path: Path, metadata: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        SummaryLandscape(copy_run(run, tmp_path, metadata)).gen_landscapes_with_multi_process(
            plain, progress=False
        )


def test_a_default_collector_run_says_how_to_collect_landscapes(tmp_path: Path) -> None:
    """collect_landscape is off by default (MindSpore's is on): the landscape says so and
    gives settings that a collector takes as they are."""
    x, y = digits(0)
    network = DigitsCNN()
    model = sumlens.Model(network, nn.CrossEntropyLoss(), torch.optim.SGD(network.parameters()))
    model.train(
        1,
        batches(x[:BATCH], y[:BATCH], BATCH),
        callbacks=[sumlens.SummaryCollector(tmp_path / "run")],
    )
    with pytest.raises(FileNotFoundError, match="off by default") as raised:
        SummaryLandscape(tmp_path / "run").gen_landscapes_with_multi_process(plain)
    message = str(raised.value)
    assert "MindSpore turns it on" in message
    settings = message[message.index("{'collect_landscape'") : message.rindex("})") + 1]
    sumlens.SummaryCollector(tmp_path / "next", collect_specified_data=ast.literal_eval(settings))


def test_missing_or_broken_metadata_and_bad_directories(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="collect_landscape"):
        SummaryLandscape(tmp_path / "empty").gen_landscapes_with_multi_process(plain)
    (tmp_path / "broken" / "ckpt_dir").mkdir(parents=True)
    (tmp_path / "broken" / "ckpt_dir" / "train_metadata.json").write_text("{")
    with pytest.raises(ValueError, match="not valid JSON"):
        SummaryLandscape(tmp_path / "broken").gen_landscapes_with_multi_process(plain)
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="summary_dir"):
        SummaryLandscape(tmp_path / "file")
    with pytest.raises(ValueError, match="empty or blank"):
        SummaryLandscape("  ")
    with pytest.raises(TypeError, match="summary_dir"):
        SummaryLandscape(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callback_fn must be a function"):
        SummaryLandscape(tmp_path / "empty").gen_landscapes_with_multi_process(plain())  # type: ignore[arg-type]


def test_workers_need_a_module_level_callback_fn(run: Path) -> None:
    def nested() -> tuple[Any, ...]:
        return plain()

    landscape = SummaryLandscape(run)
    for callback in (nested, lambda: plain()):
        with pytest.raises(TypeError, match=r"top level of an importable \.py file"):
            landscape.gen_landscapes_with_multi_process(callback, num_workers=2, progress=False)
    # one worker runs in this process: any callable will do
    landscape.gen_landscapes_with_multi_process(
        nested,
        {"landscape_size": 3, "create_landscape": {"train": False, "result": True}},
        output=run / "nested",
        progress=False,
    )
    assert list(written(run / "nested")) == ["landscape_[4]"]


HERE = Path(__file__).resolve().parent

SCRIPT_HEAD = """
import multiprocessing
import sys

from helpers.landscape import plain

from sumlens.landscape import SummaryLandscape

RESULT_ONLY = {"landscape_size": 3, "create_landscape": {"train": False, "result": True}}


def landscape():
    SummaryLandscape(sys.argv[1]).gen_landscapes_with_multi_process(
        callback_fn, RESULT_ONLY, num_workers=2, output=sys.argv[2], progress=False
    )
"""

SCRIPTS = {
    # the usual mistake: workers re-run the script as __mp_main__, without this block
    "guarded": """
if __name__ == "__main__":
    def callback_fn():
        return plain()

    landscape()
""",
    # defined at the top level, but only in the parent: only a worker can tell
    "parent_only": """
if multiprocessing.current_process().name == "MainProcess":
    def callback_fn():
        return plain()

if __name__ == "__main__":
    landscape()
""",
    # no guard at all: each worker starts the landscape again while it starts, and dies
    "unguarded": """
def callback_fn():
    return plain()

landscape()
""",
}


def run_python(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python *args`` in ``cwd``, able to import this directory's helpers and tests/helpers
    (whose digits come from the repository's benchmarks/digits.py)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (HERE, *HERE.parents[:2])))}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=240
    )


def run_script(
    kind: str, run: Path, tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run one of ``SCRIPTS`` as a real main script; returns it and its output directory."""
    script = tmp_path / f"{kind}.py"
    script.write_text(textwrap.dedent(SCRIPT_HEAD) + textwrap.dedent(SCRIPTS[kind]))
    output = tmp_path / "out"
    return run_python([str(script), str(run), str(output)], tmp_path), output


def last_line(stderr: str) -> str:
    return stderr.strip().splitlines()[-1]


def test_workers_refuse_a_callback_fn_under_the_main_guard_up_front(
    run: Path, tmp_path: Path
) -> None:
    done, output = run_script("guarded", run, tmp_path)
    assert done.returncode == 1
    error = last_line(done.stderr)
    assert error.startswith("TypeError: callback_fn 'callback_fn' must be importable by worker")
    assert f"{tmp_path / 'guarded.py'} defines 'callback_fn' only under" in error
    assert 'if __name__ == "__main__":' in error and "num_workers=None or 1" in error
    assert "BrokenProcessPool" not in done.stderr
    assert "_RemoteTraceback" not in done.stderr  # refused before any worker started
    assert not output.exists()


def test_workers_refuse_a_callback_fn_of_a_package_main(run: Path, tmp_path: Path) -> None:
    package = tmp_path / "landscape_job"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(
        textwrap.dedent(SCRIPT_HEAD)
        + "\n\ndef callback_fn():\n    return plain()\n\n\nlandscape()\n"
    )
    done = run_python(["-m", "landscape_job", str(run), str(tmp_path / "out")], tmp_path)
    assert done.returncode == 1
    error = last_line(done.stderr)
    assert error.startswith("TypeError: callback_fn 'callback_fn' must be importable by worker")
    assert "'landscape_job.__main__', which worker processes do not import" in error
    assert "_RemoteTraceback" not in done.stderr


def test_a_worker_that_cannot_find_callback_fn_says_so(run: Path, tmp_path: Path) -> None:
    done, output = run_script("parent_only", run, tmp_path)
    assert done.returncode == 1
    error = last_line(done.stderr)
    assert error.startswith("TypeError: callback_fn 'callback_fn' must be importable by worker")
    assert "could not find it" in error and "__mp_main__" in error
    assert "BrokenProcessPool" not in done.stderr
    assert not output.exists()


def test_a_worker_that_dies_while_starting_is_explained(run: Path, tmp_path: Path) -> None:
    done, output = run_script("unguarded", run, tmp_path)
    assert done.returncode == 1
    error = last_line(done.stderr)
    assert error.startswith("concurrent.futures.process.BrokenProcessPool: a landscape worker")
    assert f"re-running {tmp_path / 'unguarded.py'} as __mp_main__" in error
    assert 'under `if __name__ == "__main__":`' in error
    assert not output.exists()


def test_nothing_to_create(run: Path, caplog: pytest.LogCaptureFixture) -> None:
    none = {"create_landscape": {"train": False, "result": False}}
    assert SummaryLandscape(run).gen_landscapes_with_multi_process(plain, none) == []
    assert "neither" in caplog.text
