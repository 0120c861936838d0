"""The base directories of ``bench_board``'s tables (a) to (c), generated once under
``benchmarks/data/board/`` and rebuilt only when what they should hold changed."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.board.common import BOARD_DATA, GENERATOR_VERSION, SEED
from benchmarks.board.plugin_run import PluginShape, write_plugin_run
from benchmarks.datasets import (
    FILE_NAMES,
    LOSS_TAG,
    TAGS,
    Progress,
    Spec,
    cached_dir,
    ensure_data,
    write_one_tag,
    write_ten_tags,
)
from benchmarks.datasets import KINDS as FORMATS


@dataclass(frozen=True)
class Anchor:
    """One file of table (a), alone in its base directory, and what it holds."""

    key: str
    base_dir: Path
    kind: str
    tags: tuple[str, ...]
    steps: int
    spec: Spec | None = None
    """``bench_read``'s spec of the TensorBoard file (what its data-server timing checks)."""

    @property
    def points(self) -> int:
        """Scalar points in the file."""
        return self.steps * len(self.tags)

    @property
    def last_step(self) -> int:
        """The step every series ends at."""
        return self.steps - 1

    @property
    def label(self) -> str:
        """What the file is, for the report."""
        size = sum(p.stat().st_size for p in self.base_dir.iterdir()) / 1e6
        what = "TensorBoard" if self.kind == "tensorboard" else "MindSpore"
        extra = (
            f" + {self.spec.histograms} histograms" if self.spec and self.spec.histograms else ""
        )
        return f"{what} {size:.2f} MB: {len(self.tags)} tag(s) x {self.steps:,} steps{extra}"


def anchors(quick: bool) -> list[Anchor]:
    """The three files of table (a), generated if missing (``--quick``: 2,000 steps)."""
    spec = Spec(steps=2_000, histograms=4) if quick else Spec()
    data = ensure_data("quick" if quick else "full", spec)
    steps = spec.steps

    def build(staging: Path) -> None:
        (staging / "ms1").mkdir()
        write_one_tag(staging / "ms1" / FILE_NAMES["summary"], "summary", steps, SEED)
        (staging / "ms10").mkdir()
        write_ten_tags(staging / "ms10" / FILE_NAMES["summary"], "summary", Spec(steps, 0))

    root = cached_dir(
        BOARD_DATA / f"anchors-{steps}", {"generator": GENERATOR_VERSION, "steps": steps}, build
    )
    return [
        Anchor("tb", data.tb_logdir, "tensorboard", TAGS, steps, spec),
        Anchor("ms1", root / "ms1", "summary", (LOSS_TAG,), steps),
        Anchor("ms10", root / "ms10", "summary", TAGS, steps),
    ]


@dataclass(frozen=True)
class Shape:
    """Sizes of table (b)'s base directories; half the runs of each kind are TensorBoard."""

    small_runs: int = 500
    """Runs per format of ``len(TAGS)`` tags x ``small_steps``."""
    small_steps: int = 1_000
    big_runs: int = 5
    """Runs per format of one series of ``big_steps`` points."""
    big_steps: int = 1_000_000
    browser_runs: int = 10_000
    """Runs (all formats) of the browser's base directory, one tag x ``browser_steps``."""
    browser_steps: int = 10

    def scale_points(self) -> dict[str, int]:
        """Run id -> points, for every run of the scale base directory."""
        points = {}
        for fmt in FORMATS:
            for i in range(self.small_runs):
                points[f"./small/{fmt}/r{i:04d}"] = len(TAGS) * self.small_steps
            for i in range(self.big_runs):
                points[f"./big/{fmt}/r{i}"] = self.big_steps
        return points

    def browser_name(self, i: int) -> str:
        """The directory name of the browser base directory's ``i``-th run."""
        return f"r{i:05d}"

    def big_ids(self) -> list[str]:
        """The runs holding one ``big_steps``-point series, TB and MindSpore alternating."""
        return [f"./big/{fmt}/r{i}" for i in range(self.big_runs) for fmt in FORMATS]


FULL_SHAPE = Shape()
QUICK_SHAPE = Shape(small_runs=10, small_steps=100, big_runs=1, big_steps=20_000, browser_runs=300)


def scale_dir(shape: Shape) -> Path:
    """The scale base directory (``small/{tb,ms}/rNNNN``, ``big/{tb,ms}/rN``), cached."""

    def build(staging: Path) -> None:
        runs = 2 * (shape.small_runs + shape.big_runs)
        progress = Progress(runs, "scale runs written")
        for fmt, kind in FORMATS.items():
            for i in range(shape.small_runs):
                run = staging / "small" / fmt / f"r{i:04d}"
                run.mkdir(parents=True)
                write_ten_tags(run / FILE_NAMES[kind], kind, Spec(shape.small_steps, 0, seed=i))
                progress.step(len(TAGS) * shape.small_steps)
        for fmt, kind in FORMATS.items():
            for i in range(shape.big_runs):
                run = staging / "big" / fmt / f"r{i}"
                run.mkdir(parents=True)
                write_one_tag(run / FILE_NAMES[kind], kind, shape.big_steps, SEED + i)
                progress.step(shape.big_steps)

    wanted = {"generator": GENERATOR_VERSION, "shape": asdict(shape), "what": "scale"}
    name = f"scale-{shape.small_runs}x{shape.small_steps}-{shape.big_runs}x{shape.big_steps}"
    return cached_dir(BOARD_DATA / name, wanted, build)


def browser_dir(shape: Shape) -> Path:
    """The browser's base directory: ``rNNNNN`` runs of one tag, TB and MindSpore alternating."""

    def build(staging: Path) -> None:
        progress = Progress(shape.browser_runs, "browser runs written")
        for i in range(shape.browser_runs):
            kind = "tensorboard" if i % 2 == 0 else "summary"
            run = staging / shape.browser_name(i)
            run.mkdir()
            write_one_tag(run / FILE_NAMES[kind], kind, shape.browser_steps, SEED + i)
            progress.step(shape.browser_steps)

    wanted = {"generator": GENERATOR_VERSION, "shape": asdict(shape), "what": "browser"}
    return cached_dir(
        BOARD_DATA / f"browser-{shape.browser_runs}x{shape.browser_steps}", wanted, build
    )


PLUGIN_RUN = "plugins"
"""The plugin run's directory (and run id ``./plugins``) in its base directories."""
FULL_PLUGINS = PluginShape()
QUICK_PLUGINS = PluginShape(steps=50, image_tags=4, histogram_tags=20)


def plugin_dir(plugins: PluginShape) -> Path:
    """A base directory holding only the plugin run (``./plugins``, one MindSpore file)."""

    def build(staging: Path) -> None:
        run = staging / PLUGIN_RUN
        run.mkdir()
        print(f"  writing {plugins} ...", flush=True)
        write_plugin_run(str(run / FILE_NAMES["summary"]), plugins, SEED)

    wanted = {"generator": GENERATOR_VERSION, "shape": asdict(plugins), "what": "plugins"}
    name = f"plugins-{plugins.steps}x{plugins.image_tags}x{plugins.histogram_tags}"
    return cached_dir(BOARD_DATA / name, wanted, build)


def scale_plugins_dir(shape: Shape, plugins: PluginShape) -> Path:
    """Table (b)'s scale base directory with the plugin run added (hard links, no copies)."""
    sources = [scale_dir(shape), plugin_dir(plugins)]

    def build(staging: Path) -> None:
        for source in sources:
            for path in source.rglob("*"):
                if path.is_file() and path.name != "manifest.json":
                    target = staging / path.relative_to(source)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.link(path, target)

    wanted = {
        "generator": GENERATOR_VERSION,
        "what": "scale+plugins",
        "sources": {s.name: json.loads((s / "manifest.json").read_text()) for s in sources},
    }
    return cached_dir(BOARD_DATA / f"{sources[0].name}+{sources[1].name}", wanted, build)
