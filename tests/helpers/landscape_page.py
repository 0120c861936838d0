"""The loss landscape view in a browser page, and the runs its tests draw.

``write_landscape_base`` fills a base directory with the golden MindSpore run ``landscape``
and runs ``SummaryRecord`` wrote: ``./ours`` (two train intervals and a result landscape
on a 6 x 5 grid, so rows and columns cannot be swapped unnoticed), ``./bad`` (messages
that cannot be drawn) and a run and tag named like markup. ``LandscapePage`` finds a run's
column by its data attributes, waits on conditions in the page (never sleeps) and reads
what plotly draws from its graph divs (``div.data``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np

from helpers.board_page import WAIT_MS, BoardPage
from sumlens import SummaryRecord
from sumlens._proto import summary_pb2
from sumlens.landscape import LossLandscape

MARKUP = "<img src=x onerror=alert(1)>"
OURS_X = np.linspace(-1.0, 1.0, 6)
OURS_Y = np.linspace(-0.5, 0.5, 5)
OURS_INTERVALS = ([1, 2, 3], [3, 4, 5])
STEP_PER_EPOCH = 10
LANDSCAPE_RUNS = ["./landscape", "./ours", "./bad", f"./{MARKUP}"]
"""Every run ``write_landscape_base`` makes, as the server names them."""


def bowl(x: np.ndarray, y: np.ndarray, shift: float) -> np.ndarray:
    """Losses on the grid ``x`` by ``y``: rows follow ``y``, columns ``x`` (shape (y, x))."""
    return 1.0 + shift + (x[None, :] - shift) ** 2 + 3.0 * y[:, None] ** 2


def ours(interval: list[int] | None) -> LossLandscape:
    """A landscape of ``./ours``: a train one over ``interval``, or the result one."""
    shift = 0.1 * (interval[0] if interval else 0)
    z = bowl(OURS_X, OURS_Y, shift)
    if interval is None:
        return LossLandscape(
            OURS_X, OURS_Y, z, convergence_point=(shift, 0.0, 1.0 + shift),
            decomposition="Random", unit="epoch", step_per_epoch=STEP_PER_EPOCH,
        )  # fmt: skip
    path_x = np.linspace(0.8, shift, len(interval))
    path_y = np.linspace(0.4, 0.0, len(interval))
    path_z = 1.0 + shift + (path_x - shift) ** 2 + 3.0 * path_y**2
    return LossLandscape(
        OURS_X, OURS_Y, z, intervals=interval, path=(path_x, path_y, path_z),
        convergence_point=(float(path_x[-1]), float(path_y[-1]), float(path_z[-1])),
        decomposition="PCA", unit="epoch", step_per_epoch=STEP_PER_EPOCH,
    )  # fmt: skip


def mismatched() -> summary_pb2.LossLandscape:
    """A train landscape whose z (3 x 3) does not fit its 4 x and 4 y values."""
    message = ours([1, 2]).to_proto()
    message.landscape.z.dims[:] = [3, 3]
    del message.landscape.z.float_data[9:]
    message.landscape.x.dims[:] = [4]
    del message.landscape.x.float_data[4:]
    message.landscape.y.dims[:] = [4]
    del message.landscape.y.float_data[4:]
    return message


def pathless() -> summary_pb2.LossLandscape:
    """A train landscape of interval [4, 5] whose loss path has no points."""
    message = ours([4, 5]).to_proto()
    message.loss_path.ClearField("points")
    return message


def marked_up() -> summary_pb2.LossLandscape:
    """A result landscape whose decomposition is markup (it names the axes)."""
    message = ours(None).to_proto()
    message.metadata.decomposition = MARKUP
    return message


def write_landscapes(directory: Path, values: list[tuple[str, Any]]) -> None:
    """One run holding ``(tag, landscape)`` values, each recorded at step 0 as MindSpore does."""
    with SummaryRecord(directory) as record:
        for tag, value in values:
            record.add_value("landscape", tag, value)
            record.record(0)


def write_landscape_base(base: Path, golden_dir: Path) -> None:
    """The runs of ``LANDSCAPE_RUNS`` under ``base``."""
    shutil.copytree(golden_dir / "landscape", base / "landscape")
    values = [ours(interval) for interval in OURS_INTERVALS] + [ours(None)]
    write_landscapes(base / "ours", [(v.default_tag(5), v) for v in values])
    write_landscapes(base / "bad", [("mismatch", mismatched()), ("no_path", pathless())])
    write_landscapes(base / MARKUP, [(MARKUP, marked_up())])


_PANEL = """(run) => [...document.querySelectorAll('#landscape-view .land-panel')]
    .find((p) => p.dataset.run === run)"""


class LandscapePage(BoardPage):
    """The landscape view in a page (see BoardPage for navigation and screenshots)."""

    def wait_panel(self, run: str, state: str = "ready", after: int = 0) -> int:
        """Until the column of ``run`` is in ``state`` (and, when ready, drawn more than
        ``after`` times, every chart shown holding data): its draw count."""
        self.page.wait_for_function(
            f"""([run, state, after]) => {{ const panel = ({_PANEL})(run);
                if (!panel || panel.dataset.state !== state) return false;
                if (state !== 'ready') return true;
                const charts = [...panel.querySelectorAll('.plot')].filter((p) => !p.hidden);
                return Number(panel.dataset.draws) > after
                    && charts.every((p) => p.data && p.data.length); }}""",
            arg=[run, state, after],
            timeout=WAIT_MS,
        )
        return self.draws_of(run)

    def draws_of(self, run: str) -> int:
        """How many times the column of ``run`` has been drawn."""
        return int(self.page.evaluate(f"(run) => ({_PANEL})(run)?.dataset.draws ?? '0'", run))

    def panel(self, run: str) -> dict[str, Any]:
        """What the column of ``run`` shows: its texts, data attributes and which charts."""
        return self.page.evaluate(
            f"""(run) => {{ const panel = ({_PANEL})(run);
                const shown = (cls) => {{ const div = panel.querySelector(cls);
                    return !div.hidden && Boolean(div.data); }};
                return {{
                    heading: panel.querySelector('.land-run').textContent,
                    what: panel.querySelector('.land-what').textContent,
                    caption: panel.querySelector('.land-caption').textContent,
                    note: panel.querySelector('.land-note').textContent,
                    state: panel.dataset.state, tag: panel.dataset.tag ?? null,
                    kind: panel.dataset.kind ?? null, interval: panel.dataset.interval ?? null,
                    surface: shown('.land-surface'), contour: shown('.land-contour'),
                    canvases: panel.querySelectorAll('.land-surface canvas').length,
                    images: panel.querySelectorAll('img').length,
                }}; }}""",
            run,
        )

    def chart_traces(self, run: str, chart: str) -> list[dict[str, Any]]:
        """The traces of the ``surface`` or ``contour`` chart of ``run``'s column."""
        return self.page.evaluate(
            f"""([run, chart]) => ({_PANEL})(run).querySelector(`.land-${{chart}}`).data
                .map((t) => ({{ type: t.type, kind: t.meta.kind, run: t.meta.run,
                    tag: t.meta.tag, x: Array.from(t.x), y: Array.from(t.y),
                    z: t.z ? Array.from(t.z, (row) => Array.isArray(row) ? Array.from(row) : row)
                        : null,
                    text: t.text ? Array.from(t.text) : null,
                    hover: t.customdata ? Array.from(t.customdata) : null }}))""",
            [run, chart],
        )

    def chart_layout(self, run: str, chart: str) -> dict[str, Any]:
        """The axis titles of the ``surface`` or ``contour`` chart of ``run``'s column."""
        return self.page.evaluate(
            f"""([run, chart]) => {{ const l = ({_PANEL})(run)
                    .querySelector(`.land-${{chart}}`).layout;
                const axes = chart === 'surface'
                    ? [l.scene.xaxis, l.scene.yaxis, l.scene.zaxis] : [l.xaxis, l.yaxis];
                return {{ titles: axes.map((a) => a.title.text),
                    eye: chart === 'surface' ? l.scene.camera.eye : null }}; }}""",
            [run, chart],
        )

    def controls(self) -> dict[str, Any]:
        """The toolbar: which kind and drawing are pressed, the interval options and value."""
        return self.page.evaluate(
            """() => { const view = document.getElementById('landscape-view');
                const pressed = (attr) => view.querySelector(
                    `[data-${attr}][aria-pressed="true"]`)?.textContent ?? null;
                const select = view.querySelector('.land-interval');
                return { kind: pressed('land-kind'), show: pressed('land-show'),
                    intervals: [...select.options].map((o) => [o.value, o.textContent]),
                    interval: select.value, message: view.querySelector('.land-message')
                        .hidden ? '' : view.querySelector('.land-message').textContent }; }"""
        )

    def turn(self, run: str, eye: tuple[float, float, float]) -> None:
        """Turn the surface of ``run``'s column to look from ``eye``, as a drag ends doing."""
        self.page.evaluate(
            f"""([run, eye]) => Plotly.relayout(({_PANEL})(run).querySelector('.land-surface'),
                {{ 'scene.camera': {{ eye: {{ x: eye[0], y: eye[1], z: eye[2] }},
                    up: {{ x: 0, y: 0, z: 1 }}, center: {{ x: 0, y: 0, z: 0 }} }} }})""",
            [run, list(eye)],
        )

    def click_kind(self, label: str) -> None:
        """Press the Train or Result button."""
        self.page.click(f"#landscape-view [data-land-kind]:text-is('{label}')")

    def click_show(self, label: str) -> None:
        """Press Both, Surface or Contour."""
        self.page.click(f"#landscape-view [data-land-show]:text-is('{label}')")

    def pick_interval(self, key: str) -> None:
        """Choose the interval ``key`` (e.g. ``3-4-5``) in the interval list."""
        self.page.select_option("#landscape-view .land-interval", key)

    def options(self) -> dict[str, Any]:
        """The view's settings as the URL keeps them."""
        return self.page.evaluate(
            """() => JSON.parse(new URLSearchParams(location.hash.split('?')[1] ?? '')
                .get('land') ?? '{}')"""
        )
