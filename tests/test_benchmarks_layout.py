"""The benchmarks' layout rules, read from their source with ``ast``.

``benchmarks/`` is a package run as ``python -m benchmarks.bench_<name>``; how it measures is
``benchmarks/harness/``'s alone (``benchmarks/README.md``, "Layout"): outside the harness no
module reads a clock, finds a port, starts a process or defines a formatter or any other
piece the harness has, no module edits ``sys.path``, and no module imports a ``bench_*``
script. Every script imports without running and times through the harness.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"
HARNESS = BENCH / "harness"
CLOCKS = {
    "perf_counter",
    "perf_counter_ns",
    "monotonic",
    "monotonic_ns",
    "time",
    "time_ns",
    "process_time",
    "process_time_ns",
}
"""The ``time`` functions that read a clock (``time.sleep`` does not)."""
PROCESS_STARTERS = {("subprocess", "Popen"), ("multiprocessing", "Process")}
"""Process starts that are the harness's alone (``subprocess.run`` of a command is not)."""
MINDSPORE_VENV = {"numpy", "mindspore"}
"""What MindSpore's venv (``make bench-anchors``) has besides the standard library."""


def sources() -> list[Path]:
    """Every Python file of the benchmarks."""
    return sorted(BENCH.rglob("*.py"))


def outside_harness() -> list[Path]:
    """The benchmarks' Python files that are not the harness's."""
    return [path for path in sources() if HARNESS not in path.parents]


def tree(path: Path) -> ast.Module:
    """The parsed source of ``path``."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def module_name(path: Path) -> str:
    """``benchmarks/board/run.py`` -> ``benchmarks.board.run`` (a package: its folder)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(module: ast.Module, path: Path) -> Iterator[tuple[str, str | None, int]]:
    """``(module, name or None, line)`` for every import in ``module`` (relative ones
    resolved against ``path``'s package)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                yield base, alias.name, node.lineno


def where(path: Path, line: int) -> str:
    """``benchmarks/x.py:12`` for a message."""
    return f"{path.relative_to(REPO)}:{line}"


def test_benchmarks_is_a_package_of_packages() -> None:
    folders = {path.parent for path in sources()}
    missing = [str(f.relative_to(REPO)) for f in folders if not (f / "__init__.py").is_file()]
    assert not missing, f"folders of benchmark modules without __init__.py: {missing}"


def test_no_benchmark_imports_another() -> None:
    found = []
    for path in sources():
        for module, name, line in imported(tree(path), path):
            targets = [module, f"{module}.{name}" if name else module]
            if any(part.startswith("bench_") for t in targets for part in t.split(".")):
                found.append(f"{where(path, line)} imports {targets[-1]}")
    assert not found, "a benchmark imports a bench_* script:\n" + "\n".join(found)


def test_no_sys_path_edits() -> None:
    found = []
    for path in sources():
        module = tree(path)
        for node in ast.walk(module):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "path"
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
            ):
                found.append(where(path, node.lineno))
        found += [
            where(path, line) for m, n, line in imported(module, path) if (m, n) == ("sys", "path")
        ]
    assert not found, "sys.path is touched at: " + ", ".join(found)


def test_clocks_only_in_the_harness() -> None:
    found = []
    for path in outside_harness():
        module = tree(path)
        for node in ast.walk(module):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in CLOCKS
                and isinstance(node.value, ast.Name)
                and node.value.id == "time"
            ):
                found.append(f"{where(path, node.lineno)} time.{node.attr}")
        for module_, name, line in imported(module, path):
            if module_ == "time" and name in CLOCKS:
                found.append(f"{where(path, line)} from time import {name}")
    assert not found, "clocks read outside benchmarks/harness/clock.py:\n" + "\n".join(found)


def test_ports_and_processes_only_in_the_harness() -> None:
    found = []
    for path in outside_harness():
        module = tree(path)
        for module_, name, line in imported(module, path):
            if module_.split(".")[0] == "socket":
                found.append(f"{where(path, line)} imports socket (ports are the harness's)")
            if (module_, name) in PROCESS_STARTERS:
                found.append(f"{where(path, line)} imports {module_}.{name}")
        for node in ast.walk(module):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and (node.value.id, node.attr) in PROCESS_STARTERS
            ):
                found.append(f"{where(path, node.lineno)} {node.value.id}.{node.attr}")
            if isinstance(node, ast.Attribute) and node.attr in ("bind", "start_server"):
                found.append(f"{where(path, node.lineno)} .{node.attr} (a port or a server)")
    assert not found, "ports or processes outside benchmarks/harness/:\n" + "\n".join(found)


def harness_names() -> dict[str, str]:
    """Public top-level functions and classes of the harness -> their module (its
    scripts' ``main`` left out)."""
    names = {}
    for path in HARNESS.glob("*.py"):
        for node in tree(path).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                names[node.name] = module_name(path)
    names.pop("main", None)
    return names


def test_no_copies_of_harness_pieces() -> None:
    pieces = harness_names()
    assert {"fmt_s", "fmt_x", "summary", "free_port", "run_rounds", "timed"} <= set(pieces)
    found = []
    for path in outside_harness():
        for node in ast.walk(tree(path)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if node.name in pieces:
                found.append(f"{where(path, node.lineno)} {node.name} is {pieces[node.name]}'s")
            elif node.name.lstrip("_").startswith("fmt"):
                found.append(f"{where(path, node.lineno)} {node.name}: formats are the harness's")
    assert not found, "harness pieces defined outside the harness:\n" + "\n".join(found)


def scripts() -> list[Path]:
    """The benchmark scripts: ``benchmarks/bench_*.py``."""
    return sorted(BENCH.glob("bench_*.py"))


def reached(path: Path, seen: set[str]) -> set[str]:
    """The ``benchmarks`` modules ``path`` imports, directly or through others."""
    for module, name, _ in imported(tree(path), path):
        for candidate in (f"{module}.{name}" if name else module, module):
            if not candidate.startswith("benchmarks") or candidate in seen:
                continue
            source = file_of(candidate)
            if source.is_file():
                seen.add(candidate)
                reached(source, seen)
    return seen


def file_of(module: str) -> Path:
    """The source file of ``benchmarks`` module ``module``."""
    target = REPO.joinpath(*module.split("."))
    return target / "__init__.py" if target.is_dir() else target.with_suffix(".py")


def test_mindspores_worker_needs_nothing_its_venv_lacks() -> None:
    """``python -m benchmarks._anchors.ms_write`` runs under MindSpore's venv: whatever it
    loads of the repository (packages' ``__init__`` included) imports nothing but the
    standard library, numpy, MindSpore and the repository's own modules."""
    worker = BENCH / "_anchors" / "ms_write.py"
    modules = {module_name(worker)} | reached(worker, set())
    loaded = {".".join(m.split(".")[: i + 1]) for m in modules for i in range(m.count(".") + 1)}
    found = []
    for module in sorted(loaded):
        path = file_of(module)
        for imported_module, _, line in imported(tree(path), path):
            top = imported_module.split(".")[0]
            allowed = sys.stdlib_module_names | MINDSPORE_VENV | {"__future__", "benchmarks"}
            if top not in allowed:
                found.append(f"{where(path, line)} imports {imported_module}")
    assert "benchmarks.harness.clock" in loaded
    assert not found, "MindSpore's worker would fail to import:\n" + "\n".join(found)


@pytest.mark.parametrize("script", scripts(), ids=lambda path: path.stem)
def test_every_script_times_through_the_harness(script: Path) -> None:
    modules = reached(script, set())
    assert any(m.startswith("benchmarks.harness.") for m in modules), modules


def test_every_script_imports_without_running() -> None:
    """Each ``bench_*`` module is imported with ``importlib`` in a fresh interpreter at the
    repository root (as ``python -m`` runs it): none fails, none prints (a script that ran
    would), each has a ``main``."""
    names = [f"benchmarks.{path.stem}" for path in scripts()]
    code = (
        "import contextlib, importlib, io, json, sys\n"
        "out = {}\n"
        "for name in sys.argv[1:]:\n"
        "    printed = io.StringIO()\n"
        "    with contextlib.redirect_stdout(printed):\n"
        "        module = importlib.import_module(name)\n"
        "    out[name] = [printed.getvalue(), callable(getattr(module, 'main', None))]\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *names],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert sorted(found) == sorted(names)
    assert {name: printed for name, (printed, _) in found.items() if printed} == {}
    assert [name for name, (_, has_main) in found.items() if not has_main] == []
