"""The Text and Audio views and the dashboard's text card in Chromium, over runs written by
torch's real ``SummaryWriter`` and Hugging Face's real ``Trainer``.

The text view shows HF's ``args`` rendered; texts written as markup or as a
``javascript:`` link show as text, open no dialog and load nothing (the watched page fails
on a dialog or a request outside the server); a step slider picks a text; runs are side
by side; an audio clip loads in its player (its duration is known) with its facts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from helpers.board import free_port, running_server
from helpers.board_data import wait_loaded
from helpers.board_page import WAIT_MS
from helpers.plugin_page import PluginPage, watched_page
from helpers.tb_logs import hf_tensorboard_run
from playwright.sync_api import Browser

from sumlens.board.settings import BoardSettings

ATTACKS = {"xss/img": "<img src=x onerror=alert(1)>", "xss/link": "[x](javascript:alert(1))"}
NOTES = "## Notes step {step}\n\n| lr | acc |\n|---|---|\n| 0.1 | 0.5 |\n\n![remote](http://remote/x.png)"
RATE = 8000
CLIP_FRAMES = 400
TORCH_RUNS = ("./torch/a", "./torch/b")
SUFFIX = "/text_summary"  # torch's add_text writes tag "notes" as "notes/text_summary"
_CARD = """([plugin, run, tag]) => [...document.querySelectorAll(`.${plugin}-card`)]
    .find((c) => c.dataset.run === run && c.dataset.tag === tag)"""
_PANEL = f"""(key) => ({_CARD})(key)?.querySelector(`.${{key[0]}}-panel`)"""


def _write_torch_run(directory: Path) -> None:
    import torch
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(directory)) as writer:
        for step in range(3):
            writer.add_text("notes", NOTES.format(step=step), step)
            clip = torch.sin(torch.arange(float(CLIP_FRAMES)) * (step + 1) / 10)
            writer.add_audio("clip", clip, step, sample_rate=RATE)
        for tag, text in ATTACKS.items():
            writer.add_text(tag, text, 0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The base directory and the id of the HF run in it (torch's runs: ``TORCH_RUNS``)."""
    base = tmp_path_factory.mktemp("text-audio") / "base"
    for run in TORCH_RUNS:
        _write_torch_run(base / run)
    hf = hf_tensorboard_run(base / "hf")
    return base, f"./{hf.relative_to(base).as_posix()}"


@pytest.fixture(scope="module")
def url(runs: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base, hf = runs
    settings = BoardSettings.create(
        base,
        port=free_port(),
        reload_interval=0.5,
        workspace=tmp_path_factory.mktemp("text-audio-workspace"),
    )
    with running_server(settings) as found:
        wait_loaded(found, [*TORCH_RUNS, hf])
        yield found


@pytest.fixture
def view(browser: Browser, url: str, artifacts: Path) -> Iterator[PluginPage]:
    with watched_page(browser) as (page, _):
        yield PluginPage(page, url, artifacts)


def _wait_panel(view: PluginPage, plugin: str, run: str, tag: str, step: int | None = None) -> None:
    """Until the panel of ``run``'s ``tag`` is ready (at ``step`` when given); its card is
    scrolled into view first (cards load only while on screen)."""
    card = view.page.wait_for_function(_CARD, arg=[plugin, run, tag])
    card.as_element().scroll_into_view_if_needed()  # type: ignore[union-attr]
    view.page.wait_for_function(
        f"""([plugin, run, tag, step]) => {{ const panel = ({_PANEL})([plugin, run, tag]);
            return panel && panel.dataset.state === 'ready'
                && (step === null || panel.dataset.step === String(step)); }}""",
        arg=[plugin, run, tag, step],
        timeout=WAIT_MS,
    )


def _panel(view: PluginPage, plugin: str, run: str, tag: str) -> dict[str, Any]:
    return view.page.evaluate(
        f"""(key) => {{ const panel = ({_PANEL})(key);
            const body = panel.querySelector('.text-body');
            return {{
                text: body?.innerText ?? null,
                html: body?.innerHTML ?? null,
                links: [...panel.querySelectorAll('.text-body a')].map((a) => ({{
                    href: a.getAttribute('href'), rel: a.getAttribute('rel') }})),
                tables: panel.querySelectorAll('.text-body table').length,
                facts: panel.querySelector('.audio-facts')?.textContent ?? null,
                duration: Number(panel.dataset.duration ?? NaN),
                step: panel.dataset.step,
            }}; }}""",
        [plugin, run, tag],
    )


def test_text_view_shows_hf_args_rendered(view: PluginPage, runs: tuple[Path, str]) -> None:
    _, hf = runs
    view.open("/text?" + urlencode([("run", hf)]))
    _wait_panel(view, "text", hf, "args/text_summary")
    args = json.loads(_panel(view, "text", hf, "args/text_summary")["text"])
    assert args["max_steps"] == 4 and args["report_to"] == ["tensorboard"]
    _wait_panel(view, "text", hf, "model_config/text_summary")
    config = json.loads(_panel(view, "text", hf, "model_config/text_summary")["text"])
    assert config["hidden_size"] == 8 and config["num_hidden_layers"] == 2
    view.screenshot("text-hf-args")


def test_markup_and_script_links_show_as_text(view: PluginPage) -> None:
    run = TORCH_RUNS[0]
    view.open("/text?" + urlencode([("run", run)]))
    for tag, written in ATTACKS.items():
        _wait_panel(view, "text", run, tag + SUFFIX)
        shown = _panel(view, "text", run, tag + SUFFIX)
        assert shown["text"] == written and shown["links"] == []
    assert view.page.evaluate("() => document.querySelectorAll('#text-view img').length") == 0
    view.screenshot("text-markup-as-text")


def test_markdown_is_rendered_and_the_slider_picks_a_step(view: PluginPage) -> None:
    run = TORCH_RUNS[0]
    view.open("/text?" + urlencode([("run", run), ("tags", "notes")]))
    notes = "notes" + SUFFIX
    _wait_panel(view, "text", run, notes, step=2)
    newest = _panel(view, "text", run, notes)
    assert "Notes step 2" in newest["text"] and newest["tables"] == 1
    assert newest["links"] == [{"href": "http://remote/x.png", "rel": "noopener noreferrer"}]
    view.slide_to("text", run, notes, None, 0)
    _wait_panel(view, "text", run, notes, step=0)
    assert "Notes step 0" in _panel(view, "text", run, notes)["text"]


def test_runs_are_side_by_side(view: PluginPage) -> None:
    view.open("/text?" + urlencode([("run", run) for run in TORCH_RUNS] + [("tags", "notes")]))
    for run in TORCH_RUNS:
        _wait_panel(view, "text", run, "notes" + SUFFIX)
    cards = view.page.evaluate(
        """() => [...document.querySelectorAll('#text-view .tag-group')].map((group) => [
            group.dataset.tag,
            [...group.querySelectorAll('.text-card')].map((card) => card.dataset.run)])"""
    )
    assert cards == [["notes" + SUFFIX, list(TORCH_RUNS)]]
    view.screenshot("text-side-by-side")


def test_audio_clip_is_drawn(view: PluginPage) -> None:
    view.open("/audio?" + urlencode([("run", run) for run in TORCH_RUNS]))
    for run in TORCH_RUNS:
        _wait_panel(view, "audio", run, "clip", step=2)
        shown = _panel(view, "audio", run, "clip")
        assert shown["duration"] == pytest.approx(CLIP_FRAMES / RATE, rel=0.01)
        assert shown["facts"] == f"8,000 Hz · 1 channel · {CLIP_FRAMES / RATE:.2f} s"
    view.slide_to("audio", TORCH_RUNS[0], "clip", None, 1)
    _wait_panel(view, "audio", TORCH_RUNS[0], "clip", step=1)
    view.screenshot("audio")


def test_dashboard_previews_the_text(view: PluginPage, runs: tuple[Path, str]) -> None:
    _, hf = runs
    view.open("/run?" + urlencode([("run", hf)]))
    view.wait_dashboard(hf)
    cards = {card["plugin"]: card for card in view.dashboard_cards()}
    assert cards["text"]["state"] == "ready" and '"max_steps": 4' in cards["text"]["text"]
    assert cards["text"]["link"].startswith("#/text")
    view.open("/run?" + urlencode([("run", TORCH_RUNS[0])]))
    view.wait_dashboard(TORCH_RUNS[0])
    cards = {card["plugin"]: card for card in view.dashboard_cards()}
    assert "clip" in cards["audio"]["text"] and cards["audio"]["link"].startswith("#/audio")
    view.screenshot("dashboard-text")
