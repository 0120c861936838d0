"""Run colours in real Chromium: a run keeps its colour whatever else is selected, in any
order, after a reload; two runs preferring one colour are told apart; a colour picked in the
runs sidebar is stored as the run's annotation and wins everywhere until reset.

The colours are read where a user sees them: the sidebar's swatches and the lines the charts
draw (plotly's traces), which must agree.
"""

from __future__ import annotations

from urllib.parse import urlencode

from helpers.board_page import WAIT_MS, BoardPage

# ./long and ./ours/tb prefer the same palette colour (widgets/colours.js hashes their ids);
# ./ours/ms and ./damaged prefer two others.
_COLOURS = """() => {
    const hex = (css) => '#' + css.match(/\\d+/g).slice(0, 3)
        .map((c) => Number(c).toString(16).padStart(2, '0')).join('');
    const swatches = {};
    for (const li of document.querySelectorAll('#scalars-view .run-legend li')) {
        swatches[li.querySelector('.run-name').textContent] =
            hex(getComputedStyle(li.querySelector('.swatch')).backgroundColor);
    }
    const lines = {};
    for (const plot of document.querySelectorAll('#scalars-view .card .plot')) {
        for (const t of plot.data ?? []) if (t.meta.kind === 'smoothed') {
            (lines[t.meta.run] ??= new Set()).add(t.line.color.toLowerCase());
        }
    }
    return { swatches, lines: Object.fromEntries(
        Object.entries(lines).map(([run, set]) => [run, [...set]])) };
}"""


def _show(board: BoardPage, runs: list[str]) -> dict[str, str]:
    """Open the Scalars view of ``runs`` (tag loss); each run's colour (swatch = lines)."""
    board.open("/scalars?" + urlencode([("run", run) for run in runs] + [("tags", "^loss$")]))
    board.wait_drawn("loss")
    return _colours(board, runs)


def _colours(board: BoardPage, runs: list[str]) -> dict[str, str]:
    seen = board.page.evaluate(_COLOURS)
    assert sorted(seen["swatches"]) == sorted(runs)
    for run in runs:
        assert seen["lines"][run] == [seen["swatches"][run]], run
    return seen["swatches"]


def test_a_run_keeps_its_colour_whatever_the_selection_and_after_a_reload(
    board: BoardPage,
) -> None:
    first = _show(board, ["./long", "./ours/ms"])
    assert first["./long"] != first["./ours/ms"]
    assert _show(board, ["./ours/ms", "./long"]) == first  # the order picked does not matter
    wider = _show(board, ["./damaged", "./ours/ms", "./long"])
    assert {run: wider[run] for run in first} == first
    assert len(set(wider.values())) == 3
    assert _show(board, ["./long"]) == {"./long": first["./long"]}

    board.page.reload()
    board.wait_drawn("loss")
    assert _colours(board, ["./long"]) == {"./long": first["./long"]}

    # Two runs preferring one colour are told apart, the same way in either order.
    pair = _show(board, ["./long", "./ours/tb"])
    assert pair["./long"] != pair["./ours/tb"]
    assert _show(board, ["./ours/tb", "./long"]) == pair


def test_a_colour_picked_in_the_sidebar_is_stored_and_wins_until_reset(board: BoardPage) -> None:
    page = board.page
    automatic = _show(board, ["./long", "./twice"])
    picker = page.get_by_label("Colour of ./twice")
    with page.expect_request(
        lambda r: r.method == "PUT" and "/api/v1/annotation?" in r.url, timeout=WAIT_MS
    ) as sent:
        picker.fill("#123456")
    assert sent.value.post_data_json == {"tags": [], "note": "", "colour": "#123456"}
    assert "run=.%2Ftwice" in sent.value.url
    try:
        page.wait_for_function(
            """() => [...document.querySelectorAll('#scalars-view .card .plot')].some((p) =>
                (p.data ?? []).some((t) => t.meta.run === './twice'
                                           && t.line.color === '#123456'))""",
            timeout=WAIT_MS,
        )
        picked = _colours(board, ["./long", "./twice"])
        assert picked == {"./long": automatic["./long"], "./twice": "#123456"}

        page.reload()  # stored in the workspace, not in the page
        board.wait_drawn("loss")
        assert _colours(board, ["./long", "./twice"]) == picked
    finally:
        page.get_by_label("Automatic colour for ./twice").click()  # the shared server's state
    page.wait_for_function(
        "() => !document.querySelector('#scalars-view .colour-reset')", timeout=WAIT_MS
    )
    board.wait_drawn("loss")
    assert _colours(board, ["./long", "./twice"]) == automatic
