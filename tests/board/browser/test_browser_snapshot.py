"""A snapshot made with the Scalars view's "Snapshot" button, opened from disk in real
Chromium with the server stopped and the network blocked: the charts draw the points the
runs recorded in the colours the dashboard gave them, smoothed and enveloped as the view
was (the raw points and the min-max band faint beneath), the images are the bytes written,
the runs' tags and notes are shown, and the page asks for nothing but its own file."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from helpers.board import free_port, running_server
from helpers.board_data import wait_loaded
from helpers.board_page import WAIT_MS, BoardPage
from helpers.snapshot_runs import IMAGE_TAG, loss, write_runs, written_images
from playwright.sync_api import Browser, Route

from sumlens.board.query.curves import smooth
from sumlens.board.settings import BoardSettings

RUNS = ["seed0", "seed1"]
IDS = [f"./{run}" for run in RUNS]
STEPS = 300  # under the snapshot's points per series: every point is in the file
NOTE = {"tags": ["baseline", "lr=0.1"], "note": "the first seed", "colour": None}
SMOOTHING = 0.6

_SWATCHES = """() => {
    const hex = (css) => '#' + css.match(/\\d+/g).slice(0, 3)
        .map((c) => Number(c).toString(16).padStart(2, '0')).join('');
    return Object.fromEntries([...document.querySelectorAll('#scalars-view .run-legend li')]
        .map((li) => [li.querySelector('.run-name').textContent,
                      hex(getComputedStyle(li.querySelector('.swatch')).backgroundColor)]));
}"""
_TRACES = """(tag) => document.querySelector(`.chart[data-tag="${tag}"]`).data.map(
    (t) => ({ name: t.name, x: [...t.x], y: [...t.y], colour: t.line.color,
              kind: t.meta.kind, run: t.meta.run }))"""
_FIGURES = """(tag) => [...document.querySelectorAll(`.card[data-tag="${tag}"] figure`)].map(
    (f) => ({ run: f.dataset.run, step: Number(f.dataset.step),
              src: f.querySelector('img').src, shown: f.querySelector('img').naturalWidth }))"""


def _download_snapshot(
    browser: Browser,
    base: Path,
    workspace: Path,
    out: Path,
    artifacts: Path,
    view: str = "",
    envelope: bool = False,
) -> dict[str, str]:
    """Annotate ./seed0, click "Snapshot" in the Scalars view of both runs (smoothed, with
    the view's settings ``view``, and with the envelope toggled on if ``envelope``) and save
    the file to ``out``; the server is stopped on return. Returns the page's run colours."""
    settings = BoardSettings.create(base, port=free_port(), workspace=workspace)
    with running_server(settings) as url:
        wait_loaded(url, IDS)
        put = urllib.request.Request(
            f"{url}/api/v1/annotation?run=./seed0", data=json.dumps(NOTE).encode(),
            headers={"Content-Type": "application/json"}, method="PUT",
        )  # fmt: skip
        urllib.request.urlopen(put, timeout=30).close()
        context = browser.new_context(
            viewport={"width": 1440, "height": 900}, accept_downloads=True
        )
        context.set_default_timeout(WAIT_MS)
        board = BoardPage(context.new_page(), url, artifacts)
        runs = "&".join(f"run={run}" for run in IDS)
        board.open(f"/scalars?smoothing={SMOOTHING}&{runs}{view}")
        draws = board.wait_drawn("loss")
        if envelope:
            board.page.click(".envelope-toggle")
            board.wait_drawn("loss", draws)
            assert any(t["kind"] == "max" for t in board.traces("loss"))
        colours = board.page.evaluate(_SWATCHES)
        with board.page.expect_download() as download:
            board.page.get_by_role("link", name="Snapshot").click()
        download.value.save_as(out)
        context.close()
    with pytest.raises(urllib.error.URLError):  # the server is gone
        urllib.request.urlopen(f"{url}/api/v1/runs", timeout=5)
    return colours


def test_a_snapshot_opens_from_disk_offline(
    browser: Browser, tmp_path: Path, artifacts: Path
) -> None:
    base = tmp_path / "base"
    write_runs(base, RUNS, STEPS, image_every=50)
    out = tmp_path / "report.html"
    colours = _download_snapshot(browser, base, tmp_path / "ws", out, artifacts, envelope=True)
    assert sorted(colours) == IDS

    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(WAIT_MS)
    asked: list[str] = []

    def only_the_file(route: Route) -> None:
        asked.append(route.request.url)
        if route.request.url == out.as_uri():
            route.continue_()
        else:
            route.abort()

    context.route("**/*", only_the_file)
    context.set_offline(True)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("requestfailed", lambda request: problems.append(f"failed: {request.url}"))
    page.goto(out.as_uri())
    page.wait_for_selector("html[data-ready=true]", state="attached")
    for tag in ("loss", "lr"):
        page.wait_for_selector(f'.chart[data-tag="{tag}"] .main-svg')

    steps = np.arange(STEPS)
    drawn = page.evaluate(_TRACES, "loss")
    raw = {t["name"]: t for t in drawn if t["kind"] == "raw"}
    smoothed = {t["name"]: t for t in drawn if t["kind"] == "smoothed"}
    highs = {t["run"]: t for t in drawn if t["kind"] == "max"}
    assert sorted(raw) == sorted(smoothed) == sorted(highs) == IDS
    for seed, run in enumerate(IDS):
        values = loss(steps, seed).astype(np.float64)
        assert raw[run]["x"] == smoothed[run]["x"] == steps.tolist()
        assert raw[run]["y"] == values.tolist()
        np.testing.assert_allclose(smoothed[run]["y"], smooth(values, SMOOTHING), rtol=1e-12)
        assert raw[run]["colour"] == smoothed[run]["colour"] == colours[run]  # as shown
        assert set(highs[run]["y"]) == set(values.tolist())  # buckets of one point each
    lr = {t["name"]: t["y"] for t in page.evaluate(_TRACES, "lr") if t["kind"] == "raw"}
    assert lr["./seed1"][:101] == [np.float32(0.1).item()] * 100 + [np.float32(0.05).item()]
    assert f"weight {SMOOTHING:g} on every point" in page.inner_text("footer")
    assert "min-max envelope" in page.inner_text("footer")

    written = {run: written_images(base / run.removeprefix("./")) for run in IDS}
    figures = page.evaluate(_FIGURES, IMAGE_TAG)
    assert [f["run"] for f in figures] == IDS
    for figure in figures:
        assert figure["step"] == 250 and figure["shown"] == 8
        encoded = base64.b64decode(figure["src"].partition(",")[2])
        assert encoded == written[figure["run"]][250]
    slider = page.get_by_label(f"Step of {IMAGE_TAG}")
    slider.fill("0")
    page.wait_for_function(
        "(tag) => [...document.querySelectorAll(`.card[data-tag='${tag}'] figure`)]"
        ".every((f) => f.dataset.step === '0')",
        arg=IMAGE_TAG,
    )
    for figure in page.evaluate(_FIGURES, IMAGE_TAG):
        assert base64.b64decode(figure["src"].partition(",")[2]) == written[figure["run"]][0]

    row = page.locator('li[data-run="./seed0"]')
    assert row.locator(".chip").all_inner_texts() == NOTE["tags"]
    assert row.locator(".note").inner_text() == NOTE["note"]
    page.screenshot(path=str(artifacts / "snapshot_offline.png"), full_page=True)
    context.close()
    assert asked == [out.as_uri()]
    assert problems == []


def _opened(browser: Browser, out: Path) -> tuple[object, object]:
    """The snapshot ``out`` opened from disk with the network off: (context, page)."""
    context = browser.new_context(viewport={"width": 1440, "height": 900}, offline=True)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    page.goto(out.as_uri())
    page.wait_for_selector("html[data-ready=true]", state="attached")
    return context, page


def test_a_snapshot_keeps_the_views_groups(
    browser: Browser, tmp_path: Path, artifacts: Path
) -> None:
    """Runs grouped in the Scalars view (a regex naming one group of both seeds) are grouped
    in the snapshot: the group's centre line is the mean of the smoothed seeds over a band,
    and the seeds are drawn faint in the group's colour."""
    base = tmp_path / "base"
    write_runs(base, RUNS, STEPS, image_every=50)
    out = tmp_path / "grouped.html"
    grouping = json.dumps({"by": "regex", "re": "(seed)\\d", "stat": "mean", "band": "minmax"})
    view = "&group=" + urllib.parse.quote(grouping)
    _download_snapshot(browser, base, tmp_path / "ws", out, artifacts, view)
    context, page = _opened(browser, out)
    page.wait_for_selector('.chart[data-tag="loss"] .main-svg')
    kinds = page.evaluate(
        """() => document.querySelector('.chart[data-tag="loss"]').data.map(
            (t) => ({ kind: t.meta?.kind ?? 'run', y: [...t.y], colour: t.line.color,
                      opacity: t.opacity ?? 1 }))"""
    )
    by_kind: dict[str, list[dict]] = {}
    for trace in kinds:
        by_kind.setdefault(trace["kind"], []).append(trace)
    assert sorted(by_kind) == ["group-center", "group-high", "group-low", "member"]
    steps = np.arange(STEPS)
    smoothed = [smooth(loss(steps, seed).astype(np.float64), SMOOTHING) for seed in (0, 1)]
    (centre,) = by_kind["group-center"]
    np.testing.assert_allclose(centre["y"], (smoothed[0] + smoothed[1]) / 2, rtol=1e-9)
    np.testing.assert_allclose(by_kind["group-high"][0]["y"], np.maximum(*smoothed), rtol=1e-9)
    members = by_kind["member"]
    assert len(members) == 2 and all(m["opacity"] < 1 for m in members)
    assert {m["colour"] for m in members} == {centre["colour"]}
    assert "Runs grouped by the regular expression “(seed)\\d”" in page.inner_text("footer")
    group = page.locator('li[data-group="seed"]')
    assert group.locator(".note").inner_text() == "group of 2 runs"
    page.screenshot(path=str(artifacts / "snapshot_grouped.png"), full_page=True)
    context.close()
