"""The run list in Chromium says the values no view shows by name, quietly, not as damage:
a run of torch's ``SummaryWriter`` with a mesh and custom scalars (which sumlens counts and
skips) carries one "not shown" badge naming them, and no "damaged" one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import free_port, running_server
from helpers.board_data import wait_loaded
from helpers.board_page import BoardPage
from playwright.sync_api import Page

from sumlens.board.settings import BoardSettings

torch = pytest.importorskip("torch")
tensorboard = pytest.importorskip("torch.utils.tensorboard")

_BADGES = """() => Object.fromEntries([...document.querySelectorAll('.run-row:not([hidden])')]
    .map((row) => [row.querySelector('.run-link').textContent,
        [...row.querySelectorAll('.warnings .badge')]
            .map((b) => [b.textContent, b.title, b.className])]))"""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("skips")
    with tensorboard.SummaryWriter(str(root / "base" / "mesh")) as writer:
        writer.add_scalar("loss", 0.5, 1)
        faces = torch.tensor([[[0, 1, 2]]])
        writer.add_mesh("mesh", torch.rand(1, 3, 3), faces=faces, global_step=1)
        writer.add_custom_scalars({"train": {"loss": ["Multiline", ["loss"]]}})
    settings = BoardSettings.create(
        root / "base", port=free_port(), workspace=root / "ws", reload_interval=0.5
    )
    with running_server(settings) as served:
        wait_loaded(served, ["./mesh"])
        yield served


def test_skipped_values_are_said_quietly(page: Page, url: str, artifacts: Path) -> None:
    board = BoardPage(page, url, artifacts)
    board.open()
    board.wait_runs_listed(["./mesh"])
    ((label, tip, kind),) = page.evaluate(_BADGES)["./mesh"]
    assert label == "not shown" and "info" in kind.split()
    assert tip == "Values of kinds sumlens does not show: 1 custom_scalars, 2 mesh"
    board.screenshot("runs_skipped")
