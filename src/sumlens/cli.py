"""The ``sumlens`` command line.

``--version``; ``demo`` (write a small run and read it back); ``read`` (print what an event
file or run directory holds, with any damage found); the dashboard's ``start`` (in the
background), ``stop`` and ``serve`` (in the foreground), ``export`` (the scalars of
many runs to one CSV, JSON or Parquet file), ``snapshot`` (one self-contained HTML file of
runs' charts and images), and ``upload`` (what a writer to object
storage left in its spool). The dashboard's modules are
imported inside the subcommands, but for its light settings (the help strings show their
defaults), so ``sumlens --version`` stays instant.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sumlens._version import __version__

if TYPE_CHECKING:
    from sumlens.board.data.loader import Loader
    from sumlens.board.settings import BoardSettings
    from sumlens.board.snapshot.content import Grouping
    from sumlens.board.state.annotation_checks import Annotation
    from sumlens.io.spool import UploadTarget
    from sumlens.io.storage import Storage


RUNS_LISTED = 20
"""Runs ``sumlens read BASE_DIR`` names before it says how many more there are."""


def _read(path: str, storage_options: list[str] | None) -> int:
    """Print what ``path`` (a local path or a URL) holds; a path that can't be read is one
    line on stderr, exit 1.

    A base directory whose runs are in sub-directories gets the list of its runs and how
    to read one.
    """
    from sumlens.io.describe import describe  # keep `sumlens --version` instant
    from sumlens.io.reader import resolve_files
    from sumlens.io.remote import open_storage, parse_storage_options

    try:
        storage, inner = open_storage(path, parse_storage_options(storage_options or []))
        if not resolve_files(inner, storage):
            return _list_runs(path, storage, inner)
        text = describe(inner, storage)
    except ValueError as err:  # not an event file; a bad --storage-option
        return _fail(str(err))
    except OSError as err:
        return _fail(_os_error_text(err))
    print(text)
    return 0


def _list_runs(path: str, storage: Storage, inner: str) -> int:
    """Name the runs below a directory that holds no event file itself (exit 1 if none);
    ``inner`` is ``path`` inside ``storage``."""
    from sumlens.board.data.discover import discover

    runs = list(discover(Path(inner), storage=storage).runs.values())
    if not runs:
        return _fail(
            f"{path!r} is a directory with no event files (MindSpore summary/lineage "
            "files, or TensorBoard tfevents files), nor any below it"
        )
    print(f"{path!r} holds no event files itself; {len(runs)} runs below it:")
    for run in runs[:RUNS_LISTED]:
        print(f"  {run.id}  ({len(run.files)} event file{'s' if len(run.files) != 1 else ''})")
    if len(runs) > RUNS_LISTED:
        print(f"  ... and {len(runs) - RUNS_LISTED} more")
    print(f"read one with: sumlens read {shlex.quote(os.path.join(path, runs[0].id[2:]))}")
    return 0


def _storage_option_flag(parser: argparse.ArgumentParser) -> None:
    """``--storage-option KEY=VALUE`` (repeatable): fsspec options for a URL."""
    parser.add_argument(
        "--storage-option",
        dest="storage_options",
        metavar="KEY=VALUE",
        action="append",
        help="an option of a URL's file system (repeatable; JSON values), e.g. "
        "endpoint_url=http://127.0.0.1:9000, profile=NAME or anon=true",
    )


def _os_error_text(err: OSError) -> str:
    """An OSError in one line: the file and the cause, or its own message (a remote one)."""
    if err.filename is None or err.strerror is None:
        return str(err)
    return f"{os.fspath(err.filename)!r}: {err.strerror}"


def _fail(message: str, command: str = "read") -> int:
    """Say what went wrong on stderr, in one line, and return the exit status 1."""
    print(f"sumlens {command}: error: {message}", file=sys.stderr)
    return 1


def _say(kind: str, message: str, command: str) -> None:
    print(f"sumlens {command}: {kind}: {message}", file=sys.stderr)


def _board_options(parser: argparse.ArgumentParser, *, serve: bool = False) -> None:
    """The options of ``start`` and ``serve``; their defaults, shown in the help, are
    BoardSettings' (``serve`` also takes the checked settings ``start`` hands its server)."""
    from sumlens.board.plugins import DEFAULT_CAPS
    from sumlens.board.settings import SETTINGS_ON_STDIN
    from sumlens.board.settings import BoardSettings as Defaults  # light: no web framework

    base = parser.add_mutually_exclusive_group()
    base.add_argument(
        "--summary-base-dir",
        dest="base_dir",
        metavar="DIR",
        help="the folder whose runs (directories of event files, at any depth) are shown; "
        "or a URL: s3://bucket/path, gs://..., az://... (pip install 'sumlens[s3]'); "
        "required, here or as $SUMLENS_LOGDIR",
    )
    base.add_argument(
        "--logdir", dest="base_dir", metavar="DIR", help="the same, as TensorBoard names it"
    )
    parser.add_argument("--port", help=f"port to listen on (default {Defaults.port})")
    parser.add_argument(
        "--host", help=f"address to listen on (default {Defaults.host}: this machine only)"
    )
    parser.add_argument(
        "--reload-interval",
        metavar="SECONDS",
        help=f"seconds between looks for new data (default {Defaults.reload_interval:g})",
    )
    parser.add_argument(
        "--no-watch",
        dest="watch",
        action="store_const",
        const=False,
        help="walk the folder at every reload interval instead of watching it for changes "
        "(watching is used on local file systems; default: watch)",
    )
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help=f"pid files, logs and caches (default {Defaults.workspace})",
    )
    parser.add_argument(
        "--url-path-prefix",
        metavar="PREFIX",
        help="serve under this path, e.g. /sumlens behind a reverse proxy",
    )
    caps = ", ".join(f"{plugin}={cap}" for plugin, cap in DEFAULT_CAPS.items())
    parser.add_argument(
        "--samples-per-plugin",
        metavar="P=N,...",
        help=f"values kept per series, e.g. images=20,histograms=100 (default {caps})",
    )
    parser.add_argument(
        "--allowed-hosts",
        metavar="H1,H2",
        help="Host header names accepted besides the bound address and localhost",
    )
    parser.add_argument(
        "--frame-ancestors",
        metavar="O1,O2",
        help="origins besides the dashboard's own whose pages may show it in a frame, e.g. "
        "http://localhost:* for a notebook on another port (default: none; also "
        "$SUMLENS_FRAME_ANCESTORS)",
    )
    _storage_option_flag(parser)
    _team_options(parser)
    if serve:
        parser.add_argument(SETTINGS_ON_STDIN, action="store_true", help=argparse.SUPPRESS)


def _team_options(parser: argparse.ArgumentParser) -> None:
    """The options of a dashboard a team shares: who may see and write, the shared state."""
    from sumlens.board.settings import AUTH_MODES
    from sumlens.board.settings import BoardSettings as Defaults

    team = parser.add_argument_group(
        "serving a team",
        "each option may also be given as the environment variable SUMLENS_<NAME> "
        "(SUMLENS_AUTH, SUMLENS_TOKEN_FILE, ...; the option wins)",
    )
    team.add_argument(
        "--auth",
        metavar="MODE",
        help=f"who may use the dashboard: {', '.join(AUTH_MODES)} (default {Defaults.auth}: "
        "anyone who reaches it; a non-local --host then allows reading only)",
    )
    team.add_argument(
        "--token-file",
        metavar="FILE",
        help="--auth token: lines of name:token (never give a token on the command line)",
    )
    team.add_argument(
        "--roles-file",
        metavar="FILE",
        help="TOML mapping [tokens], [users] and [groups] to viewer, editor or admin "
        '(default = "editor" for anyone not listed)',
    )
    team.add_argument(
        "--trusted-proxies",
        metavar="A,B",
        help="--auth proxy: addresses or CIDR networks whose user headers are believed",
    )
    for what in ("user", "email", "groups"):
        default = getattr(Defaults, f"proxy_{what}_header")
        team.add_argument(
            f"--proxy-{what}-header",
            metavar="NAME",
            help=f"--auth proxy: the header naming the {what} (default {default})",
        )
    team.add_argument(
        "--read-only",
        action="store_const",
        const=True,
        help="refuse every write (notes, colours, views, run states) for everyone",
    )
    team.add_argument(
        "--allow-anonymous-writes",
        action="store_const",
        const=True,
        help="--auth none on a non-local --host: let anyone write (default: read only)",
    )
    team.add_argument(
        "--state",
        metavar="URL",
        help="keep notes, views and the audit log in PostgreSQL (postgresql://user:pw@host/db; "
        "default: SQLite in the workspace); replicas sharing one database share them",
    )
    team.add_argument(
        "--trash-retention-days",
        metavar="DAYS",
        help=f"days a deleted run stays restorable (default {Defaults.trash_retention_days:g})",
    )
    team.add_argument(
        "--replica-name",
        dest="replica",
        metavar="NAME",
        help="this replica's name in the audit log (default host:port)",
    )


ENVIRONMENT_NAMES = {"base_dir": "SUMLENS_LOGDIR", "replica": "SUMLENS_REPLICA_NAME"}
"""Environment variables whose names are not ``SUMLENS_<FIELD>``."""
NOT_FROM_ENVIRONMENT = frozenset({"watch"})
ENVIRONMENT_FLAGS = frozenset({"read_only", "allow_anonymous_writes"})
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def environment_name(field: str) -> str:
    """The environment variable of setting ``field`` (``auth`` -> ``SUMLENS_AUTH``)."""
    if field == "storage_options":
        return "SUMLENS_STORAGE_OPTION"
    return ENVIRONMENT_NAMES.get(field, f"SUMLENS_{field.upper()}")


def _from_environment(
    given: dict[str, Any], environ: Mapping[str, str]
) -> tuple[dict[str, Any], list[str]]:
    """``given`` with each setting no option gave taken from its environment variable;
    and the names of the variables used."""
    from sumlens.board.settings import BoardSettingsError

    merged = dict(given)
    used = []
    for field, value in given.items():
        name = environment_name(field)
        if value is not None or field in NOT_FROM_ENVIRONMENT or name not in environ:
            continue
        text = environ[name]
        used.append(name)
        if field in ENVIRONMENT_FLAGS:
            if text.strip().lower() not in (*_TRUE, *_FALSE):
                raise BoardSettingsError(
                    f"{name}={text!r} is not allowed: use 1, true or yes (or 0, false, no)"
                )
            merged[field] = text.strip().lower() in _TRUE or None
        elif field == "storage_options":
            merged[field] = [item for item in text.split(",") if item.strip()]
        else:
            merged[field] = text
    return merged, used


def _settings_given(args: argparse.Namespace) -> dict[str, Any]:
    """Each setting of BoardSettings as its option gave it (None: not given); an option's
    ``dest`` is its field's name."""
    from dataclasses import fields

    from sumlens.board.settings import BoardSettings

    return {field.name: getattr(args, field.name) for field in fields(BoardSettings)}


def _board_settings(args: argparse.Namespace) -> BoardSettings:
    """Checked settings from the options given (BoardSettings.create raises on bad values)."""
    from sumlens.board.settings import BoardSettings, BoardSettingsError

    given, used = _from_environment(_settings_given(args), os.environ)
    if given["base_dir"] is None:
        raise BoardSettingsError(
            "--summary-base-dir (or --logdir, or $SUMLENS_LOGDIR) is required: the folder "
            "or URL whose runs are shown"
        )
    if given["port"] is not None:
        given["port"] = _integer(given["port"])
    try:
        if given["storage_options"] is not None:
            given["storage_options"] = _storage_options(given["storage_options"])
        return BoardSettings.create(**given)
    except BoardSettingsError as err:
        if not used:
            raise
        raise BoardSettingsError(f"{err} (from the environment: {', '.join(used)})") from None


def _storage_options(items: list[str]) -> dict[str, Any]:
    """``--storage-option KEY=VALUE`` items as fsspec options (a bad one fails as a setting)."""
    from sumlens.board.settings import BoardSettingsError
    from sumlens.io.remote import parse_storage_options

    try:
        return parse_storage_options(items)
    except ValueError as err:
        raise BoardSettingsError(str(err)) from None


def _handed_settings(args: argparse.Namespace, parser: argparse.ArgumentParser) -> BoardSettings:
    """The settings ``sumlens start`` wrote to our stdin; besides them only ``--port`` (the
    same port: it names the server in ``ps`` and in the stale pid file check) is taken."""
    from sumlens.board.settings import SETTINGS_ON_STDIN, BoardSettings

    given = [
        name
        for name, value in _settings_given(args).items()
        if value is not None and name != "port"
    ]
    if given:
        parser.error(f"{SETTINGS_ON_STDIN} takes no other setting than --port (given: {given})")
    settings = BoardSettings.from_json(sys.stdin.read())
    if args.port != str(settings.port):
        parser.error(
            f"{SETTINGS_ON_STDIN}: --port {args.port!r} is not the port of the settings "
            f"handed over ({settings.port})"
        )
    return settings


def _integer(text: str) -> int | str:
    """``text`` as an int when it is one; else as given, for the caller's check to name."""
    try:
        return int(text)
    except ValueError:
        return text


def _start(args: argparse.Namespace) -> int:
    """Start the dashboard in the background; print its address once it answers."""
    from sumlens.board.server import daemon
    from sumlens.board.settings import DEFAULT_WORKSPACE, BoardSettingsError

    try:
        settings = _board_settings(args)
        outcome = daemon.start(settings)
    except (BoardSettingsError, daemon.DaemonError) as err:
        return _fail(str(err), "start")
    except KeyboardInterrupt:
        return _fail("interrupted before the server answered; it was stopped", "start")
    for note in outcome.notes:
        _say("note", note, "start")
    server = outcome.server
    workspace = settings.workspace.resolve()
    where = (
        "" if workspace == DEFAULT_WORKSPACE.expanduser().resolve() else f" --workspace {workspace}"
    )
    print(f"sumlens dashboard: {server.url}")
    print(f"  serving {server.base_dir} (pid {server.pid}, log {server.log})")
    print(f"  stop it with: sumlens stop --port {server.port}{where}")
    warning = daemon.exposure_warning(settings)
    if warning:
        _say("warning", warning, "start")
    return 0


def _stop(args: argparse.Namespace) -> int:
    """Stop the dashboard on ``--port`` (or the only one running)."""
    from sumlens.board.server import daemon
    from sumlens.board.settings import DEFAULT_WORKSPACE

    port = None if args.port is None else _integer(args.port)
    if isinstance(port, str) or (port is not None and not 1 <= port <= 65535):
        return _fail(f"--port {args.port!r} is not allowed: use 1 to 65535", "stop")
    try:
        outcome = daemon.stop(Path(args.workspace or DEFAULT_WORKSPACE), port)
    except daemon.DaemonError as err:
        return _fail(str(err), "stop")
    for note in outcome.notes:
        _say("note", note, "stop")
    server = outcome.server
    how = (
        f" (it had not ended {daemon.STOP_WAIT:g} s after SIGTERM: killed with SIGKILL)"
        if outcome.killed
        else ""
    )
    print(f"stopped the sumlens dashboard on port {server.port} (pid {server.pid}){how}")
    return 0


def _serve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run the dashboard in the foreground until Ctrl+C or SIGTERM."""
    from sumlens.board.server import daemon
    from sumlens.board.settings import BoardSettingsError

    try:
        if args.settings_on_stdin:
            settings = _handed_settings(args, parser)
        else:
            settings = _board_settings(args)
        daemon.check_port_free(settings)
    except (BoardSettingsError, daemon.DaemonError) as err:
        return _fail(str(err), "serve")
    from sumlens.board.server.serve import serve  # warns itself when the host is not local

    print(f"sumlens dashboard: {settings.url()} (Ctrl+C stops it)", flush=True)
    serve(settings, exit_when_done=True)
    return 0


def _selection_options(parser: argparse.ArgumentParser, workspace: Path) -> None:
    """The options ``export`` and ``snapshot`` share: the base directory, the runs and tags
    chosen, ``-o``, storage options and the workspace (``workspace``: its default)."""
    base = parser.add_mutually_exclusive_group(required=True)
    base.add_argument("--summary-base-dir", dest="base_dir", metavar="DIR")
    base.add_argument("--logdir", dest="base_dir", metavar="DIR", help="the same")
    parser.add_argument("--runs", metavar="REGEX", help="runs whose id matches (default: all)")
    parser.add_argument("--tags", metavar="REGEX", help="tags that match (default: all)")
    parser.add_argument("-o", "--output", metavar="FILE", required=True)
    _storage_option_flag(parser)
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help=f"where the column cache and annotations live (default {workspace})",
    )


def _checked_output(args: argparse.Namespace) -> Path:
    """``-o`` of ``export`` and ``snapshot`` (its folder must exist), with ``--runs`` and
    ``--tags`` checked too: bad input fails before any run is read."""
    from sumlens.board.query.selection import compile_pattern
    from sumlens.board.settings import BoardSettingsError

    out = Path(args.output)
    if not out.parent.is_dir():
        raise BoardSettingsError(
            f"-o {args.output!r}: the folder {str(out.parent)!r} does not exist"
        )
    compile_pattern("--runs", args.runs)  # checked here, named as the user typed them
    compile_pattern("--tags", args.tags)
    return out


@contextlib.contextmanager
def _read_base(
    args: argparse.Namespace,
) -> Iterator[tuple[Loader, dict[str, Annotation], dict[str, str]]]:
    """The base directory of ``export`` and ``snapshot`` read once, through the workspace's
    column cache (a second command reads only what was added since), the runs' annotations
    and the colours chosen for groups."""
    from sumlens.board.data.loader import Loader
    from sumlens.board.settings import BoardSettings
    from sumlens.board.state import open_state

    settings = BoardSettings.create(
        base_dir=args.base_dir,
        workspace=args.workspace,
        storage_options=_storage_options(args.storage_options or []),
    )
    loader = Loader(
        settings.base_dir, settings.workspace, storage_options=dict(settings.storage_options)
    )
    try:
        loader.poll()
        with open_state(settings.workspace, loader.location, settings.state) as shared:
            store = shared.annotations
            yield loader, store.all(), store.group_colours()
    finally:
        loader.stop()


def _export(args: argparse.Namespace) -> int:
    """Write the scalars of many runs to one CSV, JSON or Parquet file."""
    from sumlens.board.errors import QueryError
    from sumlens.board.query.export import FORMATS, SUFFIXES, export_runs, format_of
    from sumlens.board.settings import BoardSettingsError

    try:
        out = _checked_output(args)
        fmt = args.format or format_of(out)
        if fmt is None:
            raise BoardSettingsError(
                f"-o {args.output!r}: its suffix does not say the format (known: "
                f"{', '.join(SUFFIXES)}); add --format {' or '.join(FORMATS)}"
            )
        with _read_base(args) as (loader, notes, _):
            runs, series = export_runs(loader, out, fmt, args.runs, args.tags, notes)
    except (BoardSettingsError, QueryError) as err:
        return _fail(str(err), "export")
    except OSError as err:
        return _fail(_os_error_text(err), "export")
    print(f"wrote {series} series of {runs} runs to {out}")
    return 0


def _grouping(args: argparse.Namespace) -> Grouping | None:
    """The grouping ``snapshot`` was asked for (None: the runs are not grouped), checked."""
    from sumlens.board.snapshot.content import Grouping

    if args.group_regex is not None:
        by, regex, field = "regex", args.group_regex, None
    elif args.group_by_tag:
        by, regex, field = "tag", None, None
    elif args.group_field is not None:
        by, regex, field = "field", None, args.group_field
    else:
        return None
    members = "hidden" if args.hide_members else "faint"
    grouping = Grouping(by, regex, field, args.stat, args.band, members)
    grouping.check()
    return grouping


def _snapshot(args: argparse.Namespace) -> int:
    """Write one self-contained HTML file of some runs' scalars and images."""
    from sumlens.board.errors import BoardError
    from sumlens.board.server.app import plotly_js
    from sumlens.board.settings import BoardSettingsError
    from sumlens.board.snapshot.build import build
    from sumlens.board.snapshot.content import check_smoothing

    try:
        out = _checked_output(args)
        check_smoothing(args.smoothing, args.smoothing_method)
        grouping = _grouping(args)
        with _read_base(args) as (loader, notes, group_colours):
            page = build(
                loader,
                notes,
                plotly_js(),
                run_regex=args.runs,
                tag_regex=args.tags,
                smoothing=args.smoothing,
                method=args.smoothing_method,
                grouping=grouping,
                group_colours=group_colours,
                envelope=args.envelope,
            )
        out.write_text(page, encoding="utf-8")
    except (BoardSettingsError, BoardError) as err:
        return _fail(str(err), "snapshot")
    except OSError as err:
        return _fail(_os_error_text(err), "snapshot")
    print(f"wrote a snapshot of {len(page):,} bytes to {out}")
    return 0


def _upload(location: str, storage_options: list[str] | None, to: str | None) -> int:
    """Upload what writers to object storage left in their spools (killed, or the store
    down when they closed); a spool whose writer still runs is left to it.

    Only the files a writer makes are sent (no link, no other name: :meth:`Spool.refused`
    names the rest), and only where the user agreed: each spool's destination is shown and
    asked for on a terminal, unless ``--to`` names it (:meth:`UploadTarget.matches`).
    Without a terminal and a matching ``--to``, nothing is sent, and no store is even
    opened (a manifest is anyone's writing: it must not make this command connect).
    """
    from sumlens.io.remote import parse_storage_options
    from sumlens.io.spool import left_spools

    try:
        options = parse_storage_options(storage_options or [])
        found = left_spools(location)
    except ValueError as err:
        return _fail(str(err), "upload")
    if not found:
        return _fail(f"{location!r} holds no spool left by a writer", "upload")
    failed = 0
    for directory in found:
        try:
            failed += not _upload_spool(directory, options, to)
        except Exception as err:  # any client library's error: one spool's, said in a line
            failed += 1
            _say("error", f"{directory}: {err or type(err).__name__}", "upload")
    return 1 if failed else 0


def _upload_spool(directory: Path, options: dict[str, Any], to: str | None) -> bool:
    """Upload one left spool where the user agreed; whether all went well (else said)."""
    from sumlens.io.spool import (
        left_files,
        open_left,
        read_manifest,
        refused_files,
        remove_if_empty,
        upload_target,
        writer_alive,
    )

    manifest = read_manifest(directory)
    if writer_alive(manifest):
        _say("skipped", f"{directory}: its writer (pid {manifest['pid']}) still runs and "
             "uploads it", "upload")  # fmt: skip
        return True
    target = upload_target(manifest, options)
    files = left_files(directory)
    if files and not _upload_agreed(directory, target, to, files):
        return False
    refused = refused_files(directory)
    if refused:
        shown = ", ".join(f"{name} ({why})" for name, why in refused[:3])
        more = f" and {len(refused) - 3} more" if len(refused) > 3 else ""
        _say("error", f"{directory}: {len(refused)} file(s) no sumlens writer makes are not "
             f"uploaded and the spool is kept: {shown}{more}", "upload")  # fmt: skip
    if not files:
        remove_if_empty(directory)
        return not refused
    spool = open_left(directory, options)
    result = spool.sync(finished=True)
    if result.failed:
        name, err = next(iter(result.failed.items()))
        _say("error", f"{directory}: {len(result.failed)} file(s) not uploaded to "
             f"{spool.url} (first {name}: {err}); run this again", "upload")  # fmt: skip
        return False
    spool.remove_if_done()
    print(f"uploaded {result.puts} file(s), {result.bytes} bytes, to {spool.url}")
    return not refused


def _upload_agreed(
    directory: Path, target: UploadTarget, to: str | None, files: dict[str, int]
) -> bool:
    """Whether the user agreed to send ``files`` of spool ``directory`` to ``target``:
    ``--to`` names it, or they answered yes on a terminal. Said on stderr when not."""
    where = target.url
    if target.from_manifest:
        chosen = ", ".join(f"{key}={value!r}" for key, value in target.from_manifest.items())
        where += f" ({chosen}, from the spool's manifest)"
    if target.ignored:
        _say("warning", f"{directory}: its manifest's options {', '.join(target.ignored)} are "
             "not ones a writer keeps: not used", "upload")  # fmt: skip
    if target.left_out:
        _say("note", f"{directory}: the writer's options {', '.join(target.left_out)} were not "
             "written down (secrets never are): give them with --storage-option if the store "
             "needs them", "upload")  # fmt: skip
    if to is not None and target.matches(to):
        return True
    confirm = f"--to {shlex.quote(target.url)}" + "".join(
        f" --storage-option {shlex.quote(_option_flag(key, value))}"
        for key, value in target.from_manifest.items()
    )
    if to is not None:
        _say("error", f"{directory}: its files go to {where}, which --to {to} does not name; "
             f"nothing uploaded (to send them there: {confirm})", "upload")  # fmt: skip
        return False
    if not sys.stdin.isatty():
        _say("error", f"{directory}: its files would go to {where}; nothing uploaded without "
             f"a yes on a terminal or the destination on the command line: {confirm}",
             "upload")  # fmt: skip
        return False
    print(f"sumlens upload: {directory}: {len(files)} file(s), {sum(files.values())} bytes, "
          f"go to {where}. Upload them? [y/N] ", end="", file=sys.stderr, flush=True)  # fmt: skip
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _option_flag(dotted: str, value: Any) -> str:
    """The ``--storage-option`` ``KEY=VALUE`` setting option ``dotted`` (``a.b``:
    ``a={"b": ...}``)."""
    import json

    key, _, inner = dotted.partition(".")
    if not inner:
        return f"{key}={value if isinstance(value, str) else json.dumps(value)}"
    nested: Any = value
    for part in reversed(inner.split(".")):
        nested = {part: nested}
    return f"{key}={json.dumps(nested)}"


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
    from sumlens.board.settings import DEFAULT_WORKSPACE  # light: no web framework

    parser = argparse.ArgumentParser(prog="sumlens", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"sumlens {__version__}")
    commands = parser.add_subparsers(dest="command")
    read = commands.add_parser("read", help="list the values in an event file or run directory")
    read.add_argument("path", help="an event file or run directory: a path or a URL (s3://...)")
    _storage_option_flag(read)
    demo = commands.add_parser("demo", help="write a small run and read it back")
    demo.add_argument("logdir", nargs="?", default=None)
    start = commands.add_parser("start", help="start the dashboard in the background")
    _board_options(start)
    stop = commands.add_parser("stop", help="stop a dashboard started with `sumlens start`")
    stop.add_argument("--port", help="the dashboard's port (needed when several run)")
    stop.add_argument(
        "--workspace", metavar="DIR", help=f"as given to start (default {DEFAULT_WORKSPACE})"
    )
    serve = commands.add_parser("serve", help="run the dashboard in the foreground")
    _board_options(serve, serve=True)
    export = commands.add_parser("export", help="write the scalars of many runs to one file")
    _selection_options(export, DEFAULT_WORKSPACE)
    export.add_argument(
        "--format",
        choices=("csv", "json", "parquet"),
        help="default: from the suffix of -o (.csv, .json, .parquet or .pq)",
    )
    snapshot = commands.add_parser(
        "snapshot", help="write one self-contained HTML file of runs' charts and images"
    )
    _selection_options(snapshot, DEFAULT_WORKSPACE)
    snapshot.add_argument(
        "--smoothing",
        type=float,
        default=0.0,
        metavar="W",
        help="smooth the charts as the Scalars view does, weight in [0, 1) (default 0: none)",
    )
    snapshot.add_argument("--smoothing-method", choices=("ema", "average"), default="ema")
    snapshot.add_argument(
        "--envelope", action="store_true", help="draw each series' min-max envelope, faint"
    )
    grouped = snapshot.add_mutually_exclusive_group()
    grouped.add_argument(
        "--group-regex",
        metavar="RE",
        help="group the runs as the Scalars view does, by a regex over their ids whose capture "
        "groups name the group, e.g. 'lr([0-9.]+)/'",
    )
    grouped.add_argument("--group-by-tag", action="store_true", help="a group per run tag")
    grouped.add_argument(
        "--group-field", metavar="FIELD", help="a group per value of a lineage field (hparam/lr)"
    )
    snapshot.add_argument("--stat", default="mean", help="a group's centre: mean or median")
    snapshot.add_argument("--band", default="std", help="std, minmax or p<lo>-<hi> (p25-75)")
    snapshot.add_argument(
        "--hide-members", action="store_true", help="draw the groups without their members"
    )
    upload = commands.add_parser(
        "upload", help="upload the spool a writer to object storage left (killed, store down)"
    )
    upload.add_argument(
        "spool", help="a spool directory (named in the writer's error), or a folder of them"
    )
    upload.add_argument(
        "--to",
        metavar="URL",
        help="where the files are meant to go (the spool's URL, or a directory above it): "
        "uploads without asking when it matches the spool's manifest and every option "
        "choosing the endpoint is given with --storage-option; else each spool's destination "
        "is shown and asked for (on a terminal only)",
    )
    _storage_option_flag(upload)
    args = parser.parse_args(argv)
    if args.command == "upload":
        return _upload(args.spool, args.storage_options, args.to)
    if args.command == "read":
        return _read(args.path, args.storage_options)
    if args.command == "demo":
        return _demo(args.logdir)
    if args.command == "start":
        return _start(args)
    if args.command == "stop":
        return _stop(args)
    if args.command == "serve":
        return _serve(args, serve)
    if args.command == "export":
        return _export(args)
    if args.command == "snapshot":
        return _snapshot(args)
    parser.print_help()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
