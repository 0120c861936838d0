"""A malformed ``projector_config.pbtxt`` is damage the run list says, not a silence.

It used to list no embeddings and say so only in the server's log. Embeddings written by
torch's ``SummaryWriter``, the config then made malformed, read by the real loader and
served by the real app: the run's ``damage`` says why (``unreadable_projector_config``),
the embeddings route answers 422 naming it, a sound config beside it is untouched, and
mending the file mends the run. The in-memory surface says the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.board import route_client, wait_until
from helpers.memory_surface import MemorySurface
from starlette.testclient import TestClient

from sumlens.board.data.loader import Loader
from sumlens.board.projector_config import CONFIG_FILE

BROKEN = b'embeddings {\n  tensor_name: "words:00001"\n  tensor_path: '  # cut short


def _runs(client: TestClient) -> dict[str, dict[str, Any]]:
    return {run["id"]: run for run in client.get("/api/v1/runs").json()["runs"]}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from torch.utils.tensorboard import SummaryWriter

    base = tmp_path_factory.mktemp("projector")
    for run in ("sound", "broken"):
        with SummaryWriter(str(base / run)) as writer:
            writer.add_scalar("loss", 1.0, 1)
            writer.add_embedding(torch.rand(5, 3), metadata=list("abcde"), tag="words",
                                 global_step=1)  # fmt: skip
    return base


@pytest.fixture(scope="module")
def client(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    (base / "broken" / CONFIG_FILE).write_bytes(BROKEN)
    loader = Loader(base, tmp_path_factory.mktemp("ws"), reload_interval=0.1, watch=False)
    loader.poll()
    with route_client(loader) as client:  # the app polls it from here on
        yield client


def test_a_malformed_config_is_the_runs_damage(client: TestClient) -> None:
    runs = _runs(client)
    broken, sound = runs["./broken"], runs["./sound"]
    problem = broken["damage"]["unreadable_projector_config"]
    assert problem is not None
    assert f"{CONFIG_FILE} is not a projector config" in problem
    assert "embedding" not in broken["tags"]
    assert sound["damage"]["unreadable_projector_config"] is None
    assert sound["tags"]["embedding"] == ["words:00001"]
    answer = client.get("/api/v1/embedding", params={"run": "./broken", "tag": "words:00001"})
    assert answer.status_code == 422 and CONFIG_FILE in answer.json()["detail"]


def test_mending_the_config_mends_the_run(base: Path, client: TestClient) -> None:
    def broken() -> dict[str, Any]:
        return _runs(client)["./broken"]

    sound = (base / "sound" / CONFIG_FILE).read_bytes()
    (base / "broken" / CONFIG_FILE).write_bytes(sound + b"\n")  # a new size: read again
    wait_until(lambda: broken()["damage"]["unreadable_projector_config"] is None)
    assert broken()["tags"]["embedding"] == ["words:00001"]
    (base / "broken" / CONFIG_FILE).write_bytes(BROKEN)
    wait_until(lambda: broken()["damage"]["unreadable_projector_config"] is not None)
    assert "embedding" not in broken()["tags"]


def test_the_memory_surface_says_the_same() -> None:
    surface = MemorySurface()
    surface.add_scalars("./m", "loss", [1], [0.5])
    surface.add_beside_file("./m", CONFIG_FILE, BROKEN)
    (run,) = surface.runs()
    assert CONFIG_FILE in run["damage"]["unreadable_projector_config"]
