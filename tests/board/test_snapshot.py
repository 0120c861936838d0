"""The snapshot builder (``board/snapshot``) and ``sumlens snapshot``: what goes in the file
(the server's downsampling, evenly spread images, annotations), its bounds stated in the
footer, nothing in it that reaches the network, and the command's exit codes and errors."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import orjson
import pytest
from helpers.snapshot_runs import IMAGE_TAG, loss, write_runs, written_images

from sumlens.board.data.loader import Loader
from sumlens.board.errors import NotFound, PatternError, QueryError
from sumlens.board.query.curves import envelope as curves_envelope
from sumlens.board.query.curves import pick, smooth
from sumlens.board.server.app import plotly_js
from sumlens.board.snapshot.build import build
from sumlens.board.snapshot.content import Grouping, Limits, collect
from sumlens.board.snapshot.page import footer, theme_css
from sumlens.board.state.annotation_checks import Annotation
from sumlens.cli import main

RUNS = ["seed0", "seed1", "other"]
STEPS = 1500
IMAGE_EVERY = 100  # 15 images per run


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("snapshot") / "base"
    write_runs(path, RUNS, STEPS, IMAGE_EVERY)
    return path


@pytest.fixture(scope="module")
def loader(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loader]:
    found = Loader(base, tmp_path_factory.mktemp("ws"))
    found.poll()
    yield found
    found.stop()


def _data(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="snapshot-data">(.*?)</script>', page)
    assert found is not None
    return orjson.loads(found.group(1))


class _Links(HTMLParser):
    """The attributes of the page's elements that load or link something."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "srcset", "action", "poster", "data", "background"):
                self.found.append((tag, name, value))


def _linked(page: str) -> list[tuple[str, str, str | None]]:
    parser = _Links()
    parser.feed(page)
    return parser.found


def test_series_are_downsampled_as_the_server_does(loader: Loader) -> None:
    data = collect(loader, {}, run_regex="seed", tag_regex="^loss$", limits=Limits(points=100))
    assert [run["id"] for run in data["runs"]] == ["./seed0", "./seed1"]
    (tag,) = data["scalars"]
    steps = np.arange(STEPS)
    for seed, series in enumerate(tag["series"]):
        values = loss(steps, seed)
        chosen = pick(steps, values, 100)
        assert series["total"] == STEPS and series["shown"] == chosen.size <= 100
        assert np.array_equal(series["step"], steps[chosen])
        assert np.array_equal(series["value"], values[chosen].astype(np.float64))


@pytest.mark.parametrize("method", ["ema", "average"])
def test_smoothing_is_the_scalars_views_on_every_point(loader: Loader, method: str) -> None:
    """With a weight, each series holds its values smoothed on every point (as the Scalars
    view smooths them), then picked at the downsampled steps; the footer says so."""
    data = collect(loader, {}, runs=["./seed1"], tags=["loss"], limits=Limits(points=100),
                   smoothing=0.9, method=method)  # fmt: skip
    (series,) = data["scalars"][0]["series"]
    steps = np.arange(STEPS)
    values = loss(steps, 1).astype(np.float64)
    chosen = pick(steps, values, 100)
    np.testing.assert_allclose(series["smoothed"], smooth(values, 0.9, method)[chosen])
    assert np.array_equal(series["value"], values[chosen])
    assert data["smoothing"] == {"weight": 0.9, "method": method}
    words = {"ema": "exponential moving average", "average": "moving average"}[method]
    assert f"Smoothed by {words} with weight 0.9 on every point" in footer(data)
    plain = collect(loader, {}, runs=["./seed1"], tags=["loss"])
    assert "smoothed" not in plain["scalars"][0]["series"][0]
    assert "Smoothed" not in footer(plain)


def test_the_envelope_is_the_scalars_views(loader: Loader) -> None:
    """With ``envelope``, each series holds the min and max of each of its buckets on full
    resolution, as the scalars route's envelope; the footer says it is drawn."""
    data = collect(loader, {}, runs=["./seed0"], tags=["loss"], limits=Limits(points=100),
                   envelope=True)  # fmt: skip
    (series,) = data["scalars"][0]["series"]
    steps = np.arange(STEPS)
    at, low, high = curves_envelope(loss(steps, 0).astype(np.float64), 100)
    assert np.array_equal(series["envelope"]["step"], steps[at])
    assert np.array_equal(series["envelope"]["min"], low)
    assert np.array_equal(series["envelope"]["max"], high)
    assert data["envelope"] is True and "min-max envelope" in footer(data)
    assert "envelope" not in collect(loader, {}, runs=["./seed0"])["scalars"][0]["series"][0]


def test_groups_are_the_scalars_views(loader: Loader) -> None:
    """Grouped by a regex, the two seeds are one group whose centre is their mean at each
    step, in the colour chosen for it; the run in no group stays single; the members keep
    their (smoothed) values to be drawn faint; the footer says how the runs were grouped."""
    grouping = Grouping("regex", r"(seed)\d", members="hidden")
    data = collect(loader, {}, tags=["loss"], limits=Limits(points=100), grouping=grouping,
                   group_colours={"seed": "#123456"})  # fmt: skip
    grouped = data["groups"]
    assert (grouped["by"], grouped["group_regex"], grouped["members"]) == (
        "regex",
        r"(seed)\d",
        "hidden",
    )
    assert grouped["single"] == ["./other"]
    (group,) = grouped["groups"]
    assert (group["name"], group["tag"], group["colour"]) == ("seed", "loss", "#123456")
    assert [m["run"] for m in group["members"]] == ["./seed0", "./seed1"]
    steps = np.asarray(group["step"])
    mean = (loss(steps, 0).astype(np.float64) + loss(steps, 1).astype(np.float64)) / 2
    np.testing.assert_allclose(group["center"], mean)
    assert group["shown"] <= 100 and group["total"] == STEPS
    assert all("smoothed" in series for series in data["scalars"][0]["series"])
    said = html.unescape(footer(data))
    assert "Runs grouped by the regular expression “(seed)\\d” over run ids: 1 group" in said
    assert "1 run in no group drawn alone" in said


@pytest.mark.parametrize(
    ("grouping", "said"),
    [
        (Grouping("colour"), "by='colour' is not one of regex, tag, field"),
        (Grouping("regex"), "group_regex='' is empty"),
        (Grouping("regex", "(a"), "group_regex='(a'"),
        (Grouping("field"), "field='' is empty"),
        (Grouping("tag", band="p90-10"), "band='p90-10' is not one of"),
        (Grouping("tag", members="dim"), "members='dim' is not one of faint, hidden"),
    ],
)
def test_a_grouping_not_allowed_is_refused_by_name(
    loader: Loader, grouping: Grouping, said: str
) -> None:
    with pytest.raises(QueryError, match=re.escape(said)):
        collect(loader, {}, grouping=grouping)


def test_images_are_spread_over_the_kept_steps_and_bounded(loader: Loader, base: Path) -> None:
    data = collect(loader, {}, runs=["./seed0"], tags=[IMAGE_TAG], limits=Limits(images=4))
    (tag,) = data["images"]
    (series,) = tag["series"]
    kept = loader.samples("./seed0", "image", IMAGE_TAG)[0].items["step"]
    steps = [item["step"] for item in series["items"]]
    assert len(kept) > 4 and len(steps) == 4 and steps == sorted(set(steps))
    assert steps[0] == kept[0] and steps[-1] == kept[-1] and set(steps) <= set(kept.tolist())
    written = written_images(base / "seed0")
    for item in series["items"]:
        head, _, body = item["src"].partition(",")
        assert head == "data:image/png;base64"
        assert base64.b64decode(body) == written[item["step"]]
    assert data["left_out"]["images"]["past_limit"] == len(kept) - 4

    one = len(written[0])
    tight = collect(
        loader, {}, runs=["./seed0"], tags=[IMAGE_TAG], limits=Limits(image_bytes=3 * one)
    )
    assert len(tight["images"][0]["series"][0]["items"]) == 3
    assert tight["left_out"]["images"]["over_bytes"] == min(10, len(kept)) - 3


def test_the_footer_states_the_limits_and_what_they_left_out(loader: Loader) -> None:
    page = build(
        loader,
        {"./seed1": Annotation(("baseline",), "first try", "#123456")},
        plotly_js(),
        run_regex="seed1",
        limits=Limits(points=50, images=3, image_bytes=10**6),
    )
    footer = re.search(r"<footer[^>]*>(.*?)</footer>", page, re.S).group(1)
    assert "at most 50 points per scalar series" in footer
    assert "2 series cut to it" in footer
    assert "at most 3 images per image series" in footer
    assert "1,000,000 bytes of images in all" in footer
    kept = loader.samples("./seed1", "image", IMAGE_TAG)[0].items.size
    assert f"{kept - 3} kept images past the per-series limit left out" in footer
    assert _data(page)["runs"] == [
        {"id": "./seed1", "ranks": [0],
         "annotation": {"tags": ["baseline"], "note": "first try", "colour": "#123456"}}
    ]  # fmt: skip


def test_nothing_in_the_file_reaches_the_network(loader: Loader) -> None:
    """Only plotly.js's own text holds URLs (XML namespaces, map tile servers of trace types
    never drawn here); the rest of the file has none, no element loads one, and the page's
    Content-Security-Policy forbids every fetch (the browser test also counts requests)."""
    page = build(loader, {}, plotly_js(), run_regex="seed0")
    bundle = plotly_js().read_text(encoding="utf-8")
    assert page.count(bundle) == 1
    rest = page.replace(bundle, "")
    assert re.findall(r"(?i)(?:https?:|ftp:|wss?:)//", rest) == []
    assert _linked(page) == []
    assert re.findall(r"(?i)url\(\s*[\"']?(?!data:)", rest) == []
    assert "default-src 'none'; img-src data:" in page
    assert "@media (prefers-color-scheme: dark)" in theme_css()


def test_bad_selections_are_refused_by_name(loader: Loader) -> None:
    with pytest.raises(PatternError, match=r"tag_regex='\(a'"):
        collect(loader, {}, tag_regex="(a")
    with pytest.raises(NotFound, match=r"run='./nope'"):
        collect(loader, {}, runs=["./nope"])
    said = r"no scalar or image tag of the 3 run\(s\) chosen matches 'zzz'"
    with pytest.raises(QueryError, match=said):
        collect(loader, {}, tag_regex="zzz")
    with pytest.raises(QueryError, match=r"holds 6 scalar series: a snapshot holds at most 3"):
        collect(loader, {}, limits=Limits(series=3))
    with pytest.raises(QueryError, match=r"smoothing=1.0 is not a weight in \[0, 1\)"):
        collect(loader, {}, smoothing=1.0)
    with pytest.raises(QueryError, match=r"method='median' is not one of ema, average"):
        collect(loader, {}, smoothing=0.5, method="median")  # type: ignore[arg-type]


def test_the_command_writes_one_file(
    base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    argv = ["snapshot", "--summary-base-dir", str(base), "--workspace", str(tmp_path / "ws")]
    assert main([*argv, "--runs", "seed", "--tags", "loss|digit", "-o", str(out)]) == 0
    assert f"to {out}" in capsys.readouterr().out
    data = _data(out.read_text(encoding="utf-8"))
    assert [tag["tag"] for tag in data["scalars"]] == ["loss"]
    assert [tag["tag"] for tag in data["images"]] == [IMAGE_TAG]
    assert {s["run"] for s in data["images"][0]["series"]} == {"./seed0", "./seed1"}
    assert (
        main([*argv, "--tags", "^loss$", "--smoothing", "0.6", "--envelope", "-o", str(out)]) == 0
    )
    smoothed = _data(out.read_text(encoding="utf-8"))
    assert smoothed["smoothing"] == {"weight": 0.6, "method": "ema"} and smoothed["envelope"]
    assert all("smoothed" in series for series in smoothed["scalars"][0]["series"])
    grouped = [*argv, "--tags", "^loss$", "--group-regex", r"(seed)\d", "--hide-members"]
    assert main([*grouped, "--stat", "median", "--band", "minmax", "-o", str(out)]) == 0
    groups = _data(out.read_text(encoding="utf-8"))["groups"]
    assert (groups["stat"], groups["band"], groups["members"]) == ("median", "minmax", "hidden")
    assert [g["name"] for g in groups["groups"]] == ["seed"]

    for extra, said in (
        (["--tags", "(a", "-o", str(out)], "--tags='(a' is not a regular expression"),
        (["--runs", "nothing", "-o", str(out)], "no run id matches 'nothing'"),
        (["-o", str(tmp_path / "no" / "r.html")], "does not exist"),
        (["--smoothing", "1.5", "-o", str(out)], "smoothing=1.5 is not a weight in [0, 1)"),
        (["--group-by-tag", "--stat", "mode", "-o", str(out)], "stat='mode' is not one of"),
    ):
        assert main([*argv, *extra]) == 1
        err = capsys.readouterr().err
        assert err.startswith("sumlens snapshot: error: ") and said in err
        assert err.count("\n") == 1
