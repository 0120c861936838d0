"""Running the real MindInsight over summary directories and comparing what it shows.

The MindInsight-parity tests (``tests/compat``) start MindInsight through
:data:`PROBE` (``mindinsight_probe.py``, a copy of ``shared/tools/mindinsight_probe.py``),
found through ``$MINDINSIGHT_BIN`` (:func:`mindinsight_bin` skips the test without it),
and compare its normalized JSON with a golden run or a committed file
(:func:`assert_matches_committed`; ``SUMLENS_UPDATE_MINDINSIGHT_EXPECTED=1`` rewrites
it). Numbers that come out of training are compared coarsely (:func:`coarse`,
:func:`within_training_noise`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

PROBE = Path(__file__).resolve().parent / "mindinsight_probe.py"
PROBE_TIMEOUT = 240
"""Seconds one probe (MindInsight's start, load and every route) may take."""
IMAGE_BYTES_KEYS = ("sha256", "num_bytes")
"""PNG bytes depend on Pillow's zlib settings; the decoded pixels are compared instead."""
UPDATE_ENV = "SUMLENS_UPDATE_MINDINSIGHT_EXPECTED"
"""Set: :func:`assert_matches_committed` writes the fresh view first (review the diff)."""
SIGNIFICANT_DIGITS = 4
"""Of the numbers that come out of training, in the committed file."""
FLOAT_TOLERANCE = 1e-2, 1e-4
"""Relative and absolute, for floats out of training: 50 SGD steps magnify another CPU's
rounding (an accuracy over 297 digits moves by 0.34% per digit)."""
BUCKET_COUNT_TOLERANCE = 2, 0.02
"""Absolute and relative, for MindInsight's bucket counts: a value that lies near a
bucket edge may land on either side of it (seen: +-1 on 24 of 1,000 buckets, on one
machine, between one pytest process and another)."""
BUCKET_COUNT = re.compile(r'\["buckets"\]\[\d+\]\[2\]$')


def run_dir(base: Path, train_id: str) -> Path:
    """The directory of MindInsight's train job ``train_id`` (``./name``) under ``base``."""
    return base / train_id.removeprefix("./")


def event_file_names(directory: Path, kind: str) -> list[str]:
    """Summary or lineage file names of a run, in MindInsight's order (by the seconds)."""
    names = []
    for path in directory.iterdir():
        match = re.search(r"summary\.(\d+)", path.name)
        if match and path.name.endswith("_lineage") == (kind == "lineage"):
            names.append((int(match.group(1)), path.name))
    return [name for _, name in sorted(names)]


@dataclasses.dataclass
class Probe:
    """One run of the probe over ``base``: its JSON at ``out``, MindInsight's ``workspace``."""

    base: Path
    out: Path
    workspace: Path
    returncode: int
    output: str

    @property
    def data(self) -> dict[str, Any]:
        return json.loads(self.out.read_text(encoding="utf-8"))

    def explain(self) -> str:
        """The probe's own messages, MindInsight's logged errors and where its logs are."""
        text = f"mindinsight_probe.py exited {self.returncode} for {self.base}:\n{self.output}"
        if self.out.exists():
            log = self.data.get("mindinsight_log", {})
            text += "\nMindInsight errors:\n  " + "\n  ".join(log.get("errors", []) or ["-"])
            text += "\nMindInsight warnings:\n  " + "\n  ".join(log.get("warnings", []) or ["-"])
        return text + f"\nMindInsight's logs: {self.workspace / 'log'}"


def mindinsight_bin() -> str:
    """The real MindInsight's executable (``$MINDINSIGHT_BIN``); skips the test without it."""
    exe = os.environ.get("MINDINSIGHT_BIN")
    hint = (
        "`make test` installs MindInsight 2.3.1 into ~/.cache/sumlens/mindinsight-venv and "
        "sets MINDINSIGHT_BIN=<that venv>/bin/mindinsight"
    )
    if not exe:
        pytest.skip(f"MINDINSIGHT_BIN is not set, so the real MindInsight can't be run; {hint}")
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        pytest.skip(f"MINDINSIGHT_BIN={exe!r} is not an executable file; {hint}")
    return exe


def free_ports(count: int) -> list[int]:
    """Distinct free ports (all bound at once, so no two are the same)."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def run_probes(exe: str, bases: list[Path], tmp: Path) -> list[Probe]:
    """Probe each base dir with its own MindInsight, all at the same time."""
    started = []
    for i, (base, port) in enumerate(zip(bases, free_ports(len(bases)), strict=True)):
        out, workspace = tmp / f"probe{i}.json", tmp / f"workspace{i}"
        workspace.mkdir()
        cmd = [sys.executable, str(PROBE), str(base), str(out), "--mindinsight", exe]
        cmd += ["--port", str(port), "--workspace", str(workspace), "--timeout", "90"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        started.append((base, out, workspace, proc))
    probes = []
    for base, out, workspace, proc in started:
        try:
            output, _ = proc.communicate(timeout=PROBE_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()  # the probe's finally-block could not stop MindInsight; say so
            output, _ = proc.communicate()
            output += f"\n(probe killed after {PROBE_TIMEOUT}s; MindInsight may still run)"
        probes.append(Probe(base, out, workspace, proc.returncode, output))
    return probes


def replace_strings(obj: Any, mapping: dict[str, str]) -> Any:
    """``obj`` with every string (dict keys too) rewritten by ``mapping`` (substrings)."""
    if isinstance(obj, dict):
        return {replace_strings(k, mapping): replace_strings(v, mapping) for k, v in obj.items()}
    if isinstance(obj, list):
        return [replace_strings(v, mapping) for v in obj]
    if isinstance(obj, str):
        for old, new in mapping.items():
            obj = obj.replace(old, new)
    return obj


def without_keys(obj: Any, keys: tuple[str, ...]) -> Any:
    """``obj`` without the dict entries named by ``keys``, at every depth."""
    if isinstance(obj, dict):
        return {k: without_keys(v, keys) for k, v in obj.items() if k not in keys}
    if isinstance(obj, list):
        return [without_keys(v, keys) for v in obj]
    return obj


Agree = Callable[[str, Any, Any], bool]
"""Whether two leaf values at a JSON path count as the same (path, expected, actual)."""


def _equal(path: str, expected: Any, actual: Any) -> bool:
    return expected == actual


def differences(expected: Any, actual: Any, path: str = "", agree: Agree = _equal) -> Iterator[str]:
    """Human-readable differences between two JSON values, by JSON path; leaves are
    compared by ``agree``."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            where = f"{path}[{json.dumps(key)}]"
            if key not in actual:
                yield f"{where}: missing (expected {json.dumps(expected[key])[:200]})"
            elif key not in expected:
                yield f"{where}: unexpected {json.dumps(actual[key])[:200]}"
            else:
                yield from differences(expected[key], actual[key], where, agree)
    elif isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for i, (exp, act) in enumerate(zip(expected, actual, strict=True)):
            yield from differences(exp, act, f"{path}[{i}]", agree)
    elif not agree(path, expected, actual):
        exp, act = json.dumps(expected)[:200], json.dumps(actual)[:200]
        yield f"{path or '(top)'}: expected {exp}, got {act}"


def assert_same(expected: Any, actual: Any, what: str, agree: Agree = _equal) -> None:
    """Fails listing the :func:`differences` (the first 30) of two JSON values."""
    diffs = list(differences(expected, actual, agree=agree))
    assert not diffs, f"{what} differ in {len(diffs)} place(s):\n  " + "\n  ".join(diffs[:30])


def assert_matches_committed(fresh: Any, path: Path, what: str, agree: Agree = _equal) -> None:
    """``fresh`` equals the committed JSON at ``path`` (leaves compared by ``agree``); with
    ``UPDATE_ENV`` set, it is written there first (review the diff)."""
    if os.environ.get(UPDATE_ENV):
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(fresh, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing; make it with {UPDATE_ENV}=1"
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert_same(expected, fresh, f"MindInsight's view of {what} and {path.name}", agree)


def coarse(obj: Any) -> Any:
    """Floats to SIGNIFICANT_DIGITS significant digits (numbers out of training)."""
    if isinstance(obj, dict):
        return {k: coarse(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [coarse(v) for v in obj]
    if isinstance(obj, float) and obj != 0 and math.isfinite(obj):
        return float(f"{obj:.{SIGNIFICANT_DIGITS}g}")
    return obj


def within_training_noise(path: str, expected: Any, actual: Any) -> bool:
    """Whether a leaf of the committed view agrees, allowing for how training rounds.

    Training is seeded and single-threaded, yet its last bits differ between CPUs (and
    even between processes on one CPU: oneDNN and MKL pick kernels by instruction set and
    by alignment), so floats agree within ``FLOAT_TOLERANCE`` and bucket counts within
    ``BUCKET_COUNT_TOLERANCE``; everything else (steps, tags, shapes, ints) exactly.
    """
    if expected == actual:
        return True
    if isinstance(expected, bool) or isinstance(actual, bool):
        return False
    if isinstance(expected, int) and isinstance(actual, int) and BUCKET_COUNT.search(path):
        absolute, relative = BUCKET_COUNT_TOLERANCE
        return abs(expected - actual) <= max(absolute, relative * abs(expected))
    if isinstance(expected, float | int) and isinstance(actual, float | int):
        relative, absolute = FLOAT_TOLERANCE
        return (isinstance(expected, float) or isinstance(actual, float)) and math.isclose(
            expected, actual, rel_tol=relative, abs_tol=absolute
        )
    return False
