"""Every view shows data with nothing selected, in Chromium, and says what it shows.

Over a base holding every kind of data (``helpers/every_kind.py``), each view opened with
no run selected shows the most recently updated runs holding its kind of data (the views
of one run at a time, Graph, Landscape and the run dashboard, the most recent one) and a
line saying so, with a link to the Runs page; nothing gets selected for the user. A view
of one run keeps the run it shows when another gets newer (two live runs do not take
turns); a reload shows the newer one. One server for the module (its last test adds a
run); the browser is the session's. Screenshots of the Graph and Landscape views go to
the artifacts (``default-graph.png``, ``default-landscape.png``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import free_port, running_server
from helpers.board_data import get_json, wait_loaded
from helpers.board_page import WAIT_MS, BoardPage
from helpers.every_kind import EVERY_KIND_RUNS, NEWEST, write_every_kind
from helpers.landscape_page import ours, write_landscapes
from playwright.sync_api import Page

from sumlens.board.settings import BoardSettings

VIEWS = [
    # view, the plugins it shows, the noun its line names them by, what shows data
    ("scalars", ["scalar"], "scalars", ".card[data-state=ready]"),
    ("images", ["image"], "images", ".image-panel[data-state=ready]"),
    ("histograms", ["histogram"], "histograms", ".histogram-card[data-state=ready]"),
    ("tensors", ["tensor"], "tensors", ".tensor-panel[data-state=ready]"),
    ("text", ["text"], "texts", ".text-panel[data-state=ready]"),
    ("audio", ["audio"], "audio clips", ".audio-panel[data-state=ready]"),
    ("pr_curves", ["pr_curve"], "PR curves", ".pr_curve-card[data-state=ready]"),
    ("embeddings", ["embedding"], "embeddings", ".embedding-card[data-state=ready]"),
]
ONE_RUN_VIEWS = [
    # view, the plugins it shows (None: any), noun, what shows data, the run's name on it
    ("graph", ["graph", "dataset_graph"], "graphs", "#graph-view[data-state=drawn]",
     ".graph-run", "graph"),
    ("landscape", ["landscape"], "loss landscapes", ".land-panel[data-state=ready]",
     ".land-panel h3.land-run", "landscape"),
    ("run", None, "data", ".dash-card[data-state=ready]", ".dash-run", "data"),
]  # fmt: skip


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> Path:
    """A base directory holding every kind of data."""
    base = tmp_path_factory.mktemp("every-kind") / "base"
    write_every_kind(base, golden_dir)
    return base


@pytest.fixture(scope="module")
def url(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real server over ``base``, reloading every 0.5 s."""
    workspace = tmp_path_factory.mktemp("every-kind-ws")
    settings = BoardSettings.create(
        base, port=free_port(), reload_interval=0.5, workspace=workspace
    )
    with running_server(settings) as served:
        wait_loaded(served, EVERY_KIND_RUNS)
        yield served


def holding(url: str, plugins: list[str] | None) -> list[str]:
    """The runs /runs lists with data of any of ``plugins`` (None: any data), by name."""
    runs = get_json(f"{url}/api/v1/runs")["runs"]
    return sorted(
        run["id"]
        for run in runs
        if any(tags for name, tags in run["tags"].items() if plugins is None or name in plugins)
    )


def open_unselected(page: Page, url: str, view: str, ready: str) -> str:
    """Open ``view`` with no run selected; wait until it shows data (``ready`` in its
    section) and its line; that line's text."""
    page.goto(f"{url}/#/{view}")
    page.wait_for_selector(f"#{view}-view {ready}".replace(f"#{view}-view #", "#"))
    note = page.locator(f"#{view}-view .shown-note")
    note.wait_for(state="visible", timeout=WAIT_MS)
    assert page.get_attribute(f"#{view}-view .shown-note a", "href") == "#/runs"
    assert "run=" not in page.evaluate("location.hash")  # nothing selected for the user
    return note.inner_text()


@pytest.mark.parametrize(("view", "plugins", "noun", "ready"), VIEWS, ids=[v[0] for v in VIEWS])
def test_views_of_several_runs_show_the_most_recent(
    page: Page, url: str, view: str, plugins: list[str], noun: str, ready: str
) -> None:
    expected = holding(url, plugins)
    assert expected  # the base holds this kind
    note = open_unselected(page, url, view, ready)
    among = "the only run" if len(expected) == 1 else f"all {len(expected)} runs"
    assert f"No runs selected: showing {among} with {noun}." in note
    legend = page.eval_on_selector_all(
        f"#{view}-view .sidebar li :is(.run-name, .legend-name)",
        "(all) => all.map((name) => name.textContent)",
    )
    assert sorted(legend) == expected


@pytest.mark.parametrize(
    ("view", "plugins", "noun", "ready", "name", "kind"),
    ONE_RUN_VIEWS,
    ids=[v[0] for v in ONE_RUN_VIEWS],
)
def test_views_of_one_run_show_the_most_recent_holding_their_data(
    page: Page,
    url: str,
    artifacts: Path,
    view: str,
    plugins: list[str] | None,
    noun: str,
    ready: str,
    name: str,
    kind: str,
) -> None:
    among = holding(url, plugins)
    assert len(among) > 1 and NEWEST[kind] in among  # older runs hold it too
    note = open_unselected(page, url, view, ready)
    assert (
        f"No runs selected: showing the most recently updated of {len(among)} runs with {noun}."
        in note
    )
    shown = page.input_value(name) if name.startswith(".graph") else page.inner_text(name)
    assert shown == NEWEST[kind]
    if view in ("graph", "landscape"):
        board = BoardPage(page, url, artifacts)
        board.screenshot(f"default-{view}")


def test_a_view_of_one_run_keeps_its_run_when_another_gets_newer(
    page: Page, url: str, base: Path
) -> None:
    """Runs last: it adds a run to the module's base."""
    shown = ".land-panel[data-state=ready]"
    open_unselected(page, url, "landscape", shown)
    assert page.inner_text(".land-panel h3.land-run") == NEWEST["landscape"]
    version = page.evaluate("document.documentElement.dataset.runsVersion")
    newer = "./recent/newer"
    write_landscapes(base / newer, [(ours(None).default_tag(5), ours(None))])
    wait_loaded(url, [newer])
    page.wait_for_function(
        """(before) => document.documentElement.dataset.runsVersion !== before
            && document.querySelector('#landscape-view .shown-note').textContent
                .includes('when this view first showed it')""",
        arg=version,
        timeout=WAIT_MS,
    )
    note = page.inner_text("#landscape-view .shown-note")
    assert f"showing {NEWEST['landscape']}, the most recently updated run with loss" in note
    drawn = page.eval_on_selector_all(".land-panel", "(all) => all.map((p) => p.dataset.run)")
    assert drawn == [NEWEST["landscape"]]

    page.reload()
    page.wait_for_selector(f"#landscape-view {shown}")
    assert page.inner_text(".land-panel h3.land-run") == newer
    assert "the most recently updated of 3 runs" in page.inner_text("#landscape-view .shown-note")
