"""Finding the runs under a base directory: every directory that holds event files.

A run is named as MindInsight names a train job: its directory relative to the base
directory, ``./`` for the base directory itself and ``./a/b`` below it. The walk is bounded
(depth and run count, each said once when reached, never silently cut). One
``os.scandir`` per directory: 10,000 runs take a fraction of a second.

Symbolic links are followed, to files and to directories (a folder of links to the runs
one compares, as TensorBoard users build), wherever they lead. Each real directory is
walked once: a link back to an ancestor ends there (no loop), and a directory reached by
several names is listed under the first one the walk meets, which goes breadth-first in
name order (the shallowest name; of names at one depth, the first in sorted order).

A directory that cannot be listed (permissions, I/O errors) is reported in
:attr:`Discovery.unlisted` with the reason, so a run in it is said to be unreadable
rather than vanishing.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
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
    ctime_ns: int
    """Changes with the contents and with permissions (a file made unreadable)."""


@dataclass(frozen=True, slots=True)
class FoundRun:
    """A run directory and its event files in reading order."""

    id: str
    path: Path
    files: tuple[FoundFile, ...]


@dataclass(slots=True)
class Discovery:
    """The runs found, whether a bound cut the walk short, and the directories (by run id)
    that could not be listed, with the reason."""

    runs: dict[str, FoundRun]
    truncated: bool = False
    unlisted: dict[str, str] = field(default_factory=dict)


def run_id(base_dir: Path, directory: Path) -> str:
    """``./`` for the base directory, ``./a/b`` for a directory below it."""
    relative = directory.relative_to(base_dir).as_posix()
    return "./" if relative == "." else f"./{relative}"


def discover(base_dir: Path, max_runs: int = MAX_RUNS, max_depth: int = MAX_DEPTH) -> Discovery:
    """Walk ``base_dir`` breadth-first and return its runs (at most ``max_runs``)."""
    found = Discovery({})
    try:
        base_stat = os.stat(base_dir)
    except OSError as err:
        found.unlisted["./"] = _reason(err)
        return found
    seen = {(base_stat.st_dev, base_stat.st_ino)}  # real directories walked
    level = [base_dir]
    for depth in range(max_depth + 1):
        below: list[Path] = []
        for directory in level:
            try:
                files, subdirs = _list(directory, seen)
            except OSError as err:
                found.unlisted[run_id(base_dir, directory)] = _reason(err)
                continue
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


def _reason(err: OSError) -> str:
    return err.strerror or str(err)


def _list(directory: Path, seen: set[tuple[int, int]]) -> tuple[list[FoundFile], list[Path]]:
    """The event files and the not yet walked sub-directories of ``directory`` (links
    followed; each real directory is added to ``seen`` when first met)."""
    files: list[FoundFile] = []
    subdirs: list[Path] = []
    with os.scandir(directory) as entries:
        for entry in sorted(entries, key=lambda e: e.name):  # the first name of a directory wins
            try:
                if entry.is_dir():
                    stat = entry.stat()
                    if (stat.st_dev, stat.st_ino) not in seen:
                        seen.add((stat.st_dev, stat.st_ino))
                        subdirs.append(Path(entry.path))
                    continue
                kind = file_kind(entry.name)
                if kind is None or not entry.is_file():
                    continue
                stat = entry.stat()
            except OSError:  # vanished, or a broken link, while listed
                continue
            files.append(
                FoundFile(entry.name, kind, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
            )
    return files, subdirs
