"""Where a run lies: what the shared state keys a run's rows by.

A run's annotation and its state are keyed by the run's location (its directory's path,
or its URL on object storage), not by its id under the base directory, so one state
serves many base directories and a run keeps what users gave it whether it is served from
its parent, its own directory or any directory above.
"""

from __future__ import annotations


def run_location(base_dir: str, run_id: str) -> str:
    """Where run ``run_id`` (``./`` or ``./a/b``) of ``base_dir`` (a path or URL) lies:
    ``base_dir`` itself, or ``base_dir/a/b``; what a run's annotation is keyed by."""
    base = normal(base_dir)
    rest = run_id[2:] if run_id.startswith("./") else run_id
    return base if not rest else _prefix(base) + rest


def normal(base_dir: str) -> str:
    """``base_dir`` without trailing slashes (the root stays ``/``)."""
    return base_dir.rstrip("/") or "/"


def _prefix(base: str) -> str:
    """What the locations of the runs below ``base`` (normal) start with."""
    return base if base.endswith("/") else base + "/"


def run_id_at(base: str, location: str) -> str | None:
    """The id of the run at ``location`` under ``base`` (normal); None: not below it."""
    if location == base:
        return "./"
    prefix = _prefix(base)
    return "./" + location[len(prefix) :] if location.startswith(prefix) else None


def below(base: str, column: str = "location") -> tuple[str, tuple[str, str, str]]:
    """The SQL condition on ``column`` (a key compared by code point) that holds for the
    locations of ``base`` (normal) and the runs below it, and its parameters."""
    prefix = _prefix(base)
    condition = f"({column} = ? OR ({column} >= ? AND {column} < ?))"
    return condition, (base, prefix, prefix[:-1] + "0")  # "0" follows "/"
