"""The ``sumlens`` command line.

Subcommands grow with the project (the dashboard adds ``start``/``stop``/``serve``);
today: ``--version``, ``demo`` (write a small run and read it back) and ``read`` (print
what an event file or run directory holds, with any damage found).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from sumlens._version import __version__


def _read(path: str) -> int:
    from sumlens.io import iter_events

    stream = iter_events(path)
    counts: dict[tuple[str, str], int] = {}
    for event in stream:
        key = (event.plugin, event.tag)
        counts[key] = counts.get(key, 0) + 1
    for (plugin, tag), count in sorted(counts.items()):
        print(f"{plugin:<20} {tag:<40} {count:>8}")
    print(
        f"records: {stream.stats.records}, corrupt: {stream.stats.corrupt_records}, "
        f"skipped bytes: {stream.stats.skipped_bytes}, "
        f"torn tail bytes: {stream.stats.torn_tail_bytes}"
    )
    for plugin, count in sorted(stream.stats.skipped_plugins.items()):
        print(f"not shown: {count} value(s) of kind {plugin!r}")
    return 0


def _demo(logdir: str | None) -> int:
    examples = Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"
    if not examples.is_file():
        print(
            "the demo runs from a source checkout: examples/quickstart.py not found",
            file=sys.stderr,
        )
        return 2
    import runpy

    sys.argv = [str(examples)] + ([logdir] if logdir else [])
    runpy.run_path(str(examples), run_name="__main__")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sumlens`` command."""
    parser = argparse.ArgumentParser(prog="sumlens", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"sumlens {__version__}")
    commands = parser.add_subparsers(dest="command")
    read = commands.add_parser("read", help="list the values in an event file or run directory")
    read.add_argument("path")
    demo = commands.add_parser("demo", help="write a small run and read it back")
    demo.add_argument("logdir", nargs="?", default=None)
    args = parser.parse_args(argv)
    if args.command == "read":
        return _read(args.path)
    if args.command == "demo":
        return _demo(args.logdir)
    parser.print_help()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
