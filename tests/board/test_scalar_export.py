"""``sumlens export``: many runs to one file, holding what the API serves."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers.board import route_client, wait_until, write_run

from sumlens.board.settings import BoardSettings
from sumlens.cli import main

FORMULA_TAG = '=HYPERLINK("http://evil.example","click")'


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> Path:
    path = tmp_path_factory.mktemp("export") / "base"
    write_run(path / "exp" / "a", range(1, 301), tags=("loss", "acc"))
    write_run(path / "exp" / "b", range(1, 201), fmt="tensorboard", tags=("loss", "lr"))
    write_run(path / 'other, "quoted"', range(1, 4))
    write_run(path / "@formula", range(1, 4), tags=(FORMULA_TAG,), value=lambda tag, step: -0.5)
    shutil.copytree(golden_dir / "collector", path / "golden")
    return path


def _api_rows(base: Path, tmp_path: Path, runs: list[str], tag_regex: str) -> list[tuple]:
    """Every point the API serves for the selection (the app over a loader of ``base``,
    asked in process), as export rows."""
    settings = BoardSettings.create(base, workspace=tmp_path / "api-ws")
    with route_client(settings=settings) as client:
        wait_until(lambda: not client.get("/api/v1/runs").json()["loading"])
        query = {"run": runs, "tag_regex": tag_regex, "points": 20000}
        series = client.get("/api/v1/scalars", params=query).json()["series"]
    return [
        (s["run"], s["rank"], s["tag"], step, wall, value)
        for s in series
        for step, wall, value in zip(s["step"], s["wall"], s["value"], strict=True)
    ]


def test_every_format_holds_what_the_api_serves(base: Path, tmp_path: Path) -> None:
    expected = _api_rows(base, tmp_path, ["./exp/a", "./exp/b"], "^(loss|lr)$")
    assert len(expected) == 300 + 200 + 200
    for fmt in ("csv", "json", "parquet"):
        out = tmp_path / f"out.{fmt}"
        code = main(
            [
                "export",
                "--summary-base-dir",
                str(base),
                "--runs",
                "^\\./exp/",
                "--tags",
                "^(loss|lr)$",
                "--format",
                fmt,
                "-o",
                str(out),
                "--workspace",
                str(tmp_path / "ws"),
            ]
        )
        assert code == 0
        if fmt == "csv":
            with open(out, newline="") as handle:
                rows = [
                    (r["run"], int(r["rank"]) if r["rank"] else None, r["tag"], int(r["step"]),
                     float(r["wall_time"]), float(r["value"]))
                    for r in csv.DictReader(handle)
                ]  # fmt: skip
        elif fmt == "json":
            rows = [
                (s["run"], s["rank"], s["tag"], *point)
                for s in json.loads(out.read_text())["series"]
                for point in zip(s["step"], s["wall_time"], s["value"], strict=True)
            ]
        else:
            rows = [tuple(r.values()) for r in pq.read_table(out).to_pylist()]
        assert rows == expected, fmt


def test_names_that_need_quoting_survive_csv(base: Path, tmp_path: Path) -> None:
    out = tmp_path / "quoted.csv"
    assert main(["export", "--logdir", str(base), "--runs", "other", "--format", "csv",
                 "-o", str(out), "--workspace", str(tmp_path / "ws")]) == 0  # fmt: skip
    with open(out, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["run"] for r in rows} == {'./other, "quoted"'} and len(rows) == 3


def _formula_rows(text: str) -> list[dict[str, str]]:
    rows = list(csv.DictReader(text.splitlines()))
    assert rows and all(row["run"] == "./@formula" for row in rows)  # ids start with ./
    assert all(row["tag"] == "'" + FORMULA_TAG for row in rows)
    assert all(row["value"] == "-0.5" for row in rows)  # numbers stay numbers
    return rows


def test_csv_text_cells_are_never_formulas(base: Path, tmp_path: Path) -> None:
    """Tags (and any text cell) starting with = + - @ get a leading ' (OWASP); values do not."""
    out = tmp_path / "formula.csv"
    assert main(["export", "--logdir", str(base), "--runs", "formula", "--format", "csv",
                 "-o", str(out), "--workspace", str(tmp_path / "ws")]) == 0  # fmt: skip
    assert len(_formula_rows(out.read_text())) == 3  # the download: api/test_runs_routes.py


def test_the_format_comes_from_the_suffix(base: Path, tmp_path: Path) -> None:
    for suffix, check in ((".csv", "run,rank,tag"), (".JSON", '{"columns"'), (".pq", "PAR1")):
        out = tmp_path / f"out{suffix}"
        assert main(["export", "--logdir", str(base), "--runs", "exp/a", "-o", str(out),
                     "--workspace", str(tmp_path / "ws")]) == 0  # fmt: skip
        assert out.read_bytes().startswith(check.encode()), suffix


def test_an_unknown_suffix_asks_for_the_format(base: Path, tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "sumlens", "export", "--logdir", str(base), "-o",
            str(tmp_path / "out.txt"), "--workspace", str(tmp_path / "ws")]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "out.txt" in done.stderr and "--format csv or json or parquet" in done.stderr


def test_a_backtracking_pattern_exports_in_bounded_time(base: Path, tmp_path: Path) -> None:
    """Python's re would take hours on this pattern against these tags; RE2 is linear."""
    out = tmp_path / "none.csv"
    argv = [sys.executable, "-m", "sumlens", "export", "--logdir", str(base), "--tags",
            "(.*)*(.*)*(.*)*(.*)*(.*)*(.*)*$x", "-o", str(out), "--workspace",
            str(tmp_path / "ws"), "--runs", "formula", "--format", "csv"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "run,rank,tag,step,wall_time,value\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--summary-base-dir", "/nonexistent/dir"], "does not exist"),
        (["--runs", "(unclosed"], "--runs='(unclosed'"),
        (["--tags", "*bad"], "--tags='*bad'"),
        (["--tags", r"(a)\1"], "--tags='(a)\\\\1'"),
        (["-o", "/nonexistent/dir/out.csv"], "does not exist"),
    ],
)
def test_bad_arguments_fail_in_one_line(
    base: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    defaults = {"--summary-base-dir": str(base), "-o": str(tmp_path / "o.csv")}
    for flag in args[::2]:
        defaults.pop(flag, None)
    argv = [sys.executable, "-m", "sumlens", "export", "--format", "csv", "--workspace",
            str(tmp_path / "ws"), *[x for kv in defaults.items() for x in kv], *args]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert done.stderr.startswith("sumlens export: error:")
