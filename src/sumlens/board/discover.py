"""Finding the runs under a base directory: every directory that holds event files.

A run is named as MindInsight names a train job: its directory relative to the base
directory, ``./`` for the base directory itself and ``./a/b`` below it. The walk is bounded
(depth and run count, each said once when reached, never silently cut), does not follow
symbolic links to directories (no loops, nothing outside the base directory), and skips
directories it cannot read. One ``os.scandir`` per directory: 10,000 runs take a fraction
of a second.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from sumlens.io.naming import file_kind, file_order_key

MAX_DEPTH = 32
"""Directory levels below the base directory that are searched."""
MAX_RUNS = 100_000
"""Runs listed at most (MindInsight stops at 999)."""

_log = logging.getLogger("sumlens.board")


@dataclass(frozen=True, slots=True)
class FoundFile:
    """An event file as the walk saw it."""

    name: str
    kind: str
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class FoundRun:
    """A run directory and its event files in reading order."""

    id: str
    path: Path
    files: tuple[FoundFile, ...]


@dataclass(slots=True)
class Discovery:
    """The runs found, and whether a bound cut the walk short."""

    runs: dict[str, FoundRun]
    truncated: bool = False


def run_id(base_dir: Path, directory: Path) -> str:
    """``./`` for the base directory, ``./a/b`` for a directory below it."""
    relative = directory.relative_to(base_dir).as_posix()
    return "./" if relative == "." else f"./{relative}"


def discover(base_dir: Path, max_runs: int = MAX_RUNS, max_depth: int = MAX_DEPTH) -> Discovery:
    """Walk ``base_dir`` breadth-first and return its runs (at most ``max_runs``)."""
    found = Discovery({})
    level = [base_dir]
    for depth in range(max_depth + 1):
        below: list[Path] = []
        for directory in level:
            files, subdirs = _list(directory)
            if files:
                if len(found.runs) >= max_runs:
                    found.truncated = True
                    return found
                files.sort(key=lambda f: file_order_key(f.name))
                name = run_id(base_dir, directory)
                found.runs[name] = FoundRun(name, directory, tuple(files))
            if depth < max_depth:
                below.extend(sorted(subdirs))
            elif subdirs:
                found.truncated = True
        if not below:
            break
        level = below
    return found


def _list(directory: Path) -> tuple[list[FoundFile], list[Path]]:
    files: list[FoundFile] = []
    subdirs: list[Path] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        subdirs.append(Path(entry.path))
                        continue
                    kind = file_kind(entry.name)
                    if kind is None or not entry.is_file():
                        continue
                    stat = entry.stat()
                except OSError:  # vanished or unreadable while listed
                    continue
                files.append(FoundFile(entry.name, kind, stat.st_size, stat.st_mtime_ns))
    except OSError as err:
        _log.debug("cannot list %s: %s", directory, err)
    return files, subdirs
