"""Full-resolution scalar series on disk, and the loader's state beside them.

The dashboard must hold millions of points of thousands of runs without holding them in
memory, and open a base directory it has seen before without reading it again. So every
series (run, rank, tag) is an append-only file of ``(step, wall, value)`` records in the
workspace, read by slicing only when a request needs it, and the loader's state (files,
offsets read up to, series lengths, tags, damage counts) is one SQLite row per run. On a
re-open the loader resumes each file from the offset it had reached.

A series file may be longer than its row says (the server stopped between appending and
saving): :meth:`ColumnStore.fit` cuts it back. A cache directory is held with an exclusive
lock, so two servers over the same base directory never write the same files: the second
takes the next free directory.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

POINT = np.dtype([("step", "<i8"), ("wall", "<f8"), ("value", "<f8")])
"""One stored point; a series file is a flat array of these."""
SCHEMA_VERSION = 2
"""Bumped when the layout changes; a cache of another version is rebuilt."""
MAX_CACHE_DIRS = 16
"""Cache directories tried per base directory when others are locked by other servers."""


def series_key(run: str, rank: int | None, tag: str) -> str:
    """The file name stem of a series: a hash, so any run or tag text is a safe name."""
    text = f"{run}\0{'' if rank is None else rank}\0{tag}"
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


class ColumnStore:
    """Append-only series files under ``root/series`` and the state rows in ``root/state.db``."""

    def __init__(self, workspace: Path, base_dir: Path) -> None:
        self.root, self._lock_handle = _claim(workspace / "cache", base_dir)
        (self.root / "series").mkdir(exist_ok=True)
        self._series_dir = os.fspath(self.root / "series")
        self._db = sqlite3.connect(self.root / "state.db", check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        self._db.execute("CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, state TEXT)")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS samples (run TEXT, key TEXT, stride INTEGER, "
            "items BLOB, PRIMARY KEY (run, key))"
        )
        found = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if found is None or found[0] != str(SCHEMA_VERSION):
            self._db.execute("DELETE FROM runs")
            self._db.execute("DELETE FROM samples")
            self._db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
            )
            for path in (self.root / "series").glob("*/*.bin"):
                path.unlink()
        self._db.commit()

    # ------------------------------------------------------------------ state rows

    def load_states(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every saved run state, as ``(run id, state dict)``."""
        for run_id, text in self._db.execute("SELECT id, state FROM runs"):
            try:
                yield run_id, json.loads(text)
            except ValueError:
                continue

    def load_samples(self) -> Iterator[tuple[str, str, int, bytes]]:
        """Every saved sample bucket, as ``(run id, key, stride, items bytes)``."""
        yield from self._db.execute("SELECT run, key, stride, items FROM samples")

    def save_states(
        self,
        states: Iterable[tuple[str, dict[str, Any]]],
        gone: Iterable[str],
        samples: Iterable[tuple[str, str, int, bytes | None]] = (),
    ) -> None:
        """Write changed run states and sample buckets (``None`` items: the bucket is gone)
        and forget removed runs, in one transaction."""
        gone = list(gone)
        rows = list(samples)
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO runs VALUES (?, ?)",
                ((run_id, json.dumps(state)) for run_id, state in states),
            )
            self._db.executemany(
                "INSERT OR REPLACE INTO samples VALUES (?, ?, ?, ?)",
                (row for row in rows if row[3] is not None),
            )
            self._db.executemany(
                "DELETE FROM samples WHERE run = ? AND key = ?",
                ((run, key) for run, key, _, items in rows if items is None),
            )
            self._db.executemany("DELETE FROM runs WHERE id = ?", ((run_id,) for run_id in gone))
            self._db.executemany("DELETE FROM samples WHERE run = ?", ((run,) for run in gone))

    # ------------------------------------------------------------------ series files

    def path(self, key: str) -> Path:
        """The file of a series."""
        return self.root / "series" / key[:2] / f"{key}.bin"

    def append(self, key: str, points: np.ndarray) -> None:
        """Add ``points`` (a :data:`POINT` array) at the end of a series."""
        path = self.path(key)
        path.parent.mkdir(exist_ok=True)
        with open(path, "ab") as handle:
            handle.write(points.tobytes())

    def truncate(self, key: str, count: int) -> None:
        """Keep the first ``count`` points of a series (0 removes its file)."""
        path = self.path(key)
        if count == 0:
            path.unlink(missing_ok=True)
        elif path.exists():
            os.truncate(path, count * POINT.itemsize)

    def fit(self, key: str, count: int) -> bool:
        """Cut a series file back to ``count`` points; False if it holds fewer."""
        try:  # os.stat on a str: ~5x cheaper than pathlib, and a re-open checks every series
            size = os.stat(f"{self._series_dir}/{key[:2]}/{key}.bin").st_size
        except FileNotFoundError:
            return count == 0
        if size < count * POINT.itemsize:
            return False
        if size > count * POINT.itemsize:
            self.truncate(key, count)
        return True

    def read(self, key: str, count: int, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Points ``[start, stop)`` of the first ``count`` of a series, copied into memory."""
        stop = count if stop is None else min(stop, count)
        if stop <= start:
            return np.empty(0, dtype=POINT)
        with open(self.path(key), "rb") as handle:
            handle.seek(start * POINT.itemsize)
            return np.fromfile(handle, dtype=POINT, count=stop - start)

    def steps(self, key: str, count: int) -> np.ndarray:
        """The steps of the first ``count`` points, memory-mapped (for searches)."""
        if count == 0:
            return np.empty(0, dtype=np.int64)
        return np.memmap(self.path(key), dtype=POINT, mode="r", shape=(count,))["step"]

    def close(self) -> None:
        """Close the state database and let another server take this directory."""
        self._db.close()
        fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
        self._lock_handle.close()


def _claim(cache: Path, base_dir: Path) -> tuple[Path, Any]:
    """The first cache directory of ``base_dir`` no other server holds, locked."""
    digest = hashlib.sha1(os.fsencode(base_dir)).hexdigest()[:16]
    cache.mkdir(parents=True, exist_ok=True)
    for n in range(MAX_CACHE_DIRS):
        root = cache / (digest if n == 0 else f"{digest}-{n}")
        root.mkdir(exist_ok=True)
        handle = open(root / "lock", "a+b")  # noqa: SIM115 - held until close()
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        (root / "base_dir.txt").write_text(os.fsdecode(base_dir) + "\n")
        return root, handle
    raise RuntimeError(
        f"{MAX_CACHE_DIRS} servers already cache {os.fsdecode(base_dir)!r} in {cache}; "
        "stop one of them"
    )
