"""The ``sumlens`` command line.

Subcommands grow with the project (the dashboard adds ``start``/``stop``/``serve``);
today: ``--version``, ``demo`` (write a small run and read it back) and ``read`` (print
what an event file or run directory holds, with any damage found).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from sumlens._version import __version__


def _read(path: str) -> int:
    """Print what ``path`` holds; a path that can't be read is one line on stderr, exit 1."""
    from sumlens.io.describe import describe  # keep `sumlens --version` instant
    from sumlens.io.reader import NotAnEventFileError, resolve_files

    try:
        if not resolve_files(path):
            return _fail(
                f"{path!r} is a directory with no event files (MindSpore summary/lineage "
                "files, or TensorBoard tfevents files)"
            )
        text = describe(path)
    except NotAnEventFileError as err:
        return _fail(str(err))
    except OSError as err:
        if err.filename is None or err.strerror is None:
            return _fail(str(err))
        return _fail(f"{os.fspath(err.filename)!r}: {err.strerror}")
    print(text)
    return 0


def _fail(message: str) -> int:
    """Say what went wrong on stderr, in one line, and return the exit status 1."""
    print(f"sumlens read: error: {message}", file=sys.stderr)
    return 1


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
