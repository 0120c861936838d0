"""The values of kinds sumlens does not show are said by name in the run list, not as damage;
MindInsight's routes list none of the TensorBoard plugins sumlens reads beside its own.

Runs written by torch's ``SummaryWriter`` (every method, beside a MindSpore summary so that
MindInsight has a train job of the run) and Lightning's ``TensorBoardLogger``, read by the
real loader and asked through the real app."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import route_client
from helpers.memory_surface import MemorySurface
from helpers.tb_logs import lightning_tensorboard_run, torch_every_method
from starlette.testclient import TestClient

from sumlens import SummaryRecord
from sumlens.board.data.loader import Loader
from sumlens.board.mindinsight.jobs import PLUGINS as MINDINSIGHT_PLUGINS
from sumlens.board.mindinsight.routes import PREFIX
from sumlens.board.settings import BoardSettings

pytest.importorskip("torch")

NO_DAMAGE = {
    "corrupt_records": 0,
    "skipped_bytes": 0,
    "unreadable_files": 0,
    "damaged_values": 0,
    "unreadable_directory": None,
    "unreadable_projector_config": None,
}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    base = tmp_path_factory.mktemp("base")
    with SummaryRecord(torch_every_method(base / "torch")) as record:
        record.add_value("scalar", "ms_loss", 0.5)
        record.record(1)
    lightning_tensorboard_run(base / "lightning")
    loader = Loader(base, tmp_path_factory.mktemp("workspace"), reload_interval=0.1)
    loader.poll()
    with route_client(loader, BoardSettings(base_dir=base)) as found:  # stops the loader
        yield found


def _runs(client: TestClient) -> dict[str, dict]:
    response = client.get("/api/v1/runs")
    assert response.status_code == 200, response.text
    return {run["id"]: run for run in response.json()["runs"]}


def test_skipped_plugins_are_said_by_name(client: TestClient) -> None:
    runs = _runs(client)
    torch = runs["./torch"]
    assert torch["skipped"] == {"custom_scalars": 1, "mesh": 2}  # mesh: vertices and faces
    assert torch["damage"] == NO_DAMAGE
    for plugin in ("text", "audio", "pr_curve", "graph", "run_metadata"):
        assert torch["tags"][plugin], plugin
    (lightning,) = [run for name, run in runs.items() if name.startswith("./lightning")]
    assert (lightning["skipped"], lightning["damage"]) == ({}, NO_DAMAGE)
    (hparams,) = [run for name, run in runs.items() if name.startswith("./torch/17")]  # a time
    assert hparams["skipped"] == {} and hparams["tags"]["hparams"]


def test_mindinsight_lists_none_of_the_tensorboard_plugins(client: TestClient) -> None:
    """MindInsight shows what its MindSpore summaries hold, no TensorBoard value."""
    asked = {"train_id": "./torch", "manual_update": "true"}  # load the job
    response = client.get(f"{PREFIX}/datavisual/plugins", params=asked)
    assert response.status_code == 200, response.text
    plugins = response.json()["plugins"]
    assert list(plugins) == list(MINDINSIGHT_PLUGINS)
    assert {name: tags for name, tags in plugins.items() if tags} == {"scalar": ["ms_loss/scalar"]}
    response = client.get(f"{PREFIX}/datavisual/plugins", params={"train_id": "./lightning"})
    assert response.status_code == 400, response.text  # no MindSpore summary: no train job
    response = client.get(f"{PREFIX}/datavisual/single-job",
                          params={"train_id": "./torch", "plugin_name": "text"})  # fmt: skip
    assert response.status_code == 400, response.text


def test_the_memory_surface_lists_skips_as_the_loader() -> None:
    surface = MemorySurface()
    surface.add_run("./a", skipped_plugins={"mesh": 3, "custom_scalars": 1})
    surface.add_run("./b")
    with route_client(surface) as client:
        runs = _runs(client)
    assert runs["./a"]["skipped"] == {"custom_scalars": 1, "mesh": 3}
    assert runs["./a"]["damage"] == NO_DAMAGE
    assert runs["./b"]["skipped"] == {}


def test_skips_are_kept_when_the_board_opens_again(tmp_path: Path) -> None:
    """The counts are saved with the loader's state: a board opened again on its cache
    (which reads only what grew) says them still."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path / "base" / "mesh")) as writer:
        writer.add_scalar("loss", 0.5, 1)
        writer.add_mesh("mesh", torch.rand(1, 3, 3), faces=torch.tensor([[[0, 1, 2]]]))
    said = []
    for _ in range(2):
        loader = Loader(tmp_path / "base", tmp_path / "workspace", reload_interval=0.1)
        loader.poll()
        said.append({run["id"]: run["skipped"] for run in loader.runs()})
        loader.stop()
    assert said == [{"./mesh": {"mesh": 2}}] * 2
