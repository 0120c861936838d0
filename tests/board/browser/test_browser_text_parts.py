"""A 10 MB text in the Text view, in Chromium: the page shows its first part and a line
saying how much is shown, with "Show more" and "Show all"; more adds the next part after
the first, and the parts shown stay when the run gets new data but the text is the same;
all adds the parts one after another until stopped, none lost or twice.

The text is ~11 MB of log lines in paragraphs (torch's real ``SummaryWriter.add_text``).
Before the text came in parts, the page put all of it in its DOM (and the server rendered
all of it for each request); the bound checked is the DOM's size, never a time. A
screenshot goes to the artifacts (``text-parts.png``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import free_port, running_server
from helpers.board_data import wait_loaded
from helpers.board_page import WAIT_MS, BoardPage
from playwright.sync_api import Page, Response

from sumlens.board.settings import BoardSettings

PART = 100_000  # characters a part holds at most (board/api/text.py's default)
LINES = 250_000
PARAGRAPH = 40  # lines
LONG = "\n\n".join(
    "\n".join(f"line {i}: epoch {i // 1000} step {i} loss 0.{i:06d} ok" for i in range(start, end))
    for start, end in ((s, min(s + PARAGRAPH, LINES)) for s in range(0, LINES, PARAGRAPH))
)
PANEL = ".text-panel"
BODY = f"{PANEL} .text-body"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run holding the long text (tag ``log/text_summary``), in a base of its own."""
    from torch.utils.tensorboard import SummaryWriter

    run = tmp_path_factory.mktemp("text-parts") / "base" / "long"
    with SummaryWriter(str(run)) as writer:
        writer.add_text("log", LONG, 0)
    return run


@pytest.fixture(scope="module")
def url(run: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server over the run's base, reloading every 0.5 s."""
    workspace = tmp_path_factory.mktemp("text-parts-ws")
    settings = BoardSettings.create(
        run.parent, port=free_port(), reload_interval=0.5, workspace=workspace
    )
    with running_server(settings) as served:
        wait_loaded(served, ["./long"])
        yield served


def shown_lines(page: Page) -> list[int]:
    """The numbers of the log lines in the panel, in page order."""
    text = page.inner_text(BODY)
    return [int(n) for n in re.findall(r"\bline (\d+):", text)]


def dom_size(page: Page) -> dict[str, int]:
    """The characters and elements the text's panel holds."""
    return page.eval_on_selector(
        BODY, "(b) => ({ chars: b.textContent.length, nodes: b.querySelectorAll('*').length })"
    )


def wait_parts(page: Page, parts: int) -> None:
    """Until the text's panel is ready and shows ``parts`` parts (0: ready is enough)."""
    page.wait_for_function(
        f"""(n) => {{ const p = document.querySelector('{PANEL}');
            return p?.dataset.state === 'ready' && Number(p.dataset.parts ?? 0) >= n; }}""",
        arg=parts,
        timeout=WAIT_MS,
    )


def test_a_long_text_shows_its_first_part_then_more(
    page: Page, url: str, run: Path, artifacts: Path
) -> None:
    assert len(LONG) > 10_000_000
    page.goto(f"{url}/#/text?run=./long")
    wait_parts(page, 0)
    size = dom_size(page)
    assert size["chars"] <= PART and size["nodes"] < 1_000  # not 11 MB of text
    first = shown_lines(page)
    assert first == list(range(len(first))) and 1_000 < len(first) < LINES // 50
    line = page.inner_text(f"{PANEL} .text-more")
    assert re.search(r"Shown: \d+\.\d KiB of 1\d\.\d MiB\.", line), line
    assert page.locator(f"{PANEL} .text-all-parts").inner_text().startswith("Show all (1")
    BoardPage(page, url, artifacts).screenshot("text-parts")

    page.locator(f"{PANEL} .text-more-part").click()
    wait_parts(page, 2)
    both = shown_lines(page)
    assert both[: len(first)] == first  # the first part stays
    assert both == list(range(len(both))) and len(both) > 1.5 * len(first)  # the next follows
    assert dom_size(page)["chars"] <= 2 * PART

    # the run gets a new value: the text is read again, and as it is the same, the parts stay
    from torch.utils.tensorboard import SummaryWriter

    def first_part(response: Response) -> bool:
        return "/api/v1/text?" in response.url and "offset=0" in response.url

    with page.expect_response(first_part, timeout=WAIT_MS), SummaryWriter(str(run)) as writer:
        writer.add_scalar("loss", 0.5, 1)
    wait_parts(page, 2)
    assert shown_lines(page) == both


def test_show_all_adds_every_part_in_order_until_stopped(page: Page, url: str) -> None:
    page.goto(f"{url}/#/text?run=./long")
    wait_parts(page, 1)
    every = page.locator(f"{PANEL} .text-all-parts")
    every.click()
    wait_parts(page, 4)
    assert every.inner_text().startswith("Stop (")
    every.click()
    page.wait_for_function(
        f"""() => document.querySelector('{PANEL} .text-all-parts').textContent
            .startsWith('Show all')""",
        timeout=WAIT_MS,
    )
    parts = int(page.get_attribute(PANEL, "data-parts") or 0)
    assert 4 <= parts < len(LONG) // PART  # stopped before the end (~110 parts)
    lines = shown_lines(page)
    assert lines == list(range(len(lines)))  # none lost, none twice
    assert dom_size(page)["chars"] <= parts * PART
