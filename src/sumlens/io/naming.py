"""Event-file names: making them as MindSpore and TensorBoard do, and telling them apart.

MindSpore names a run's files ``<prefix>.out.events.summary.<seconds>.<rank>.<host><suffix>``
(lineage files end in ``_lineage``), and MindInsight orders a run's files by the number
after ``summary.``; TensorBoard only looks at files whose name contains ``tfevents``.
TensorBoard-format files are named as torch's writer names them,
``events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix>`` (``<seconds>`` in ten digits),
with the process's rank as ``<n>`` where torch counts its writers. A name clash is never
resolved with a counter: the writer takes the next free second instead, which keeps both
the pattern and the ordering (and a second writer of one process in one second, whose
name would otherwise be the same, a name of its own).

:func:`writer_file_kind` tells the names sumlens's writers give their files from any
other name, for what must only ever touch a writer's own files (the spool's uploads).
"""

from __future__ import annotations

import os
import platform
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from sumlens.io.storage import LOCAL_STORAGE, Storage, WriteStorage

LINEAGE_SUFFIX = "_lineage"
DEFAULT_PREFIX = "events"
DEFAULT_SUFFIX = "_MS"

_AFFIX_RE = re.compile(r"\w+[0-9a-zA-Z_.]*", re.ASCII)
_SUMMARY_RE = re.compile(r"summary\.(\d+)")
_TFEVENTS_RE = re.compile(r"tfevents\.(\d+)")
_DIGITS = re.compile(r"(\d+)")
_RANK_RE = re.compile(r"summary\.\d+\.(\d+)\.")


def check_affix(name: str, value: object) -> str:
    """Validate a file prefix or suffix the way MindSpore does; return it unchanged."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__} {value!r}")
    if not _AFFIX_RE.fullmatch(value):
        raise ValueError(
            f"{name}={value!r} is not allowed: it must start with a letter, digit or '_' "
            "and contain only ASCII letters, digits, '_' and '.'"
        )
    return value


def check_filename_suffix(value: object) -> str:
    """Validate the end of a TensorBoard event file's name (torch's ``filename_suffix``):
    printable ASCII without path separators; return it unchanged."""
    if not isinstance(value, str):
        raise TypeError(f"filename_suffix must be a str, got {type(value).__name__} {value!r}")
    if not value.isascii() or not value.isprintable() or "/" in value or "\\" in value:
        raise ValueError(
            f"filename_suffix={value!r} is not allowed: use printable ASCII without '/' or '\\'"
        )
    return value


def current_rank() -> int:
    """The process rank: torch.distributed's when initialised, else ``$RANK``, else 0."""
    dist = sys.modules.get("torch.distributed")  # a process group needs it imported already
    if dist is not None and dist.is_available() and dist.is_initialized():
        return int(dist.get_rank())
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0


def hostname() -> str:
    """The host name put into file names (``platform.node()``, as MindSpore uses)."""
    return platform.node() or "localhost"


def summary_file_name(
    seconds: int,
    prefix: str = DEFAULT_PREFIX,
    suffix: str = DEFAULT_SUFFIX,
    rank: int | None = None,
    host: str | None = None,
) -> str:
    """The summary file name MindSpore would give a record opened at ``seconds``."""
    rank = current_rank() if rank is None else rank
    host = hostname() if host is None else host
    return f"{prefix}.out.events.summary.{seconds}.{rank}.{host}{suffix}"


def lineage_file_name(
    seconds: int, prefix: str = DEFAULT_PREFIX, rank: int | None = None, host: str | None = None
) -> str:
    """The lineage file name matching :func:`summary_file_name` (suffix always ``_lineage``)."""
    return summary_file_name(seconds, prefix, LINEAGE_SUFFIX, rank, host)


def tensorboard_file_name(
    seconds: int, host: str | None = None, suffix: str = "", pid: int | None = None
) -> str:
    """A TensorBoard event-file name, torch's pattern:
    ``events.out.tfevents.<seconds, 10 digits>.<host>.<pid><suffix>`` (``pid``: this
    process's by default; sumlens's writers end ``suffix`` with ``.<rank><filename_suffix>``)."""
    host = hostname() if host is None else host
    pid = os.getpid() if pid is None else pid
    return f"events.out.tfevents.{seconds:010d}.{host}.{pid}{suffix}"


def export_dir_name(seconds: int) -> str:
    """The directory of a record's ``.npy`` exports (MindSpore's ``export_<seconds>``)."""
    return f"export_{seconds}"


def npy_file_name(quoted_tag: str, step: int) -> str:
    """An exported tensor's file in ``<export dir>/tensor``: ``<url-quoted tag>_<step>.npy``."""
    return f"{quoted_tag}_{step}.npy"


_MADE_EVENT_NAMES = (
    re.compile(r"\w[0-9a-zA-Z_.]*\.out\.events\.summary\.\d+\.-?\d+\..+", re.ASCII),
    re.compile(r"events\.out\.tfevents\.\d+\..+"),
)
_MADE_EXPORT = re.compile(r"export_\d+/tensor/[0-9A-Za-z_.~%-]*_-?\d+\.npy", re.ASCII)
PROJECTOR_CONFIG = "projector_config.pbtxt"
"""The projector's config in a run directory (``SummaryWriter.add_embedding``)."""
_MADE_PROJECTOR = re.compile(r"-?\d+/[^/\\]+/(?:tensors\.tsv|metadata\.tsv|sprite\.png)")
"""An embedding's files, ``<step, 5 digits>/<escaped tag>/...``, as
:mod:`sumlens.writer.embedding` names them."""


def writer_file_kind(relative: str) -> str | None:
    """What a file of a run directory is, by the name sumlens's writers give it
    (``relative``: its ``/``-separated path inside the directory): ``"event"`` (a summary,
    lineage or TensorBoard event file: :func:`summary_file_name`,
    :func:`tensorboard_file_name`), ``"export"`` (a tensor exported below it:
    :func:`export_dir_name`, :func:`npy_file_name`, complete once it has its name),
    ``"projector"`` (an embedding's files and the projector's config, rewritten as
    embeddings are added), or None for a name no writer gives."""
    if "/" not in relative:
        if any(pattern.fullmatch(relative) for pattern in _MADE_EVENT_NAMES):
            return "event"
        return "projector" if relative == PROJECTOR_CONFIG else None
    if _MADE_EXPORT.fullmatch(relative):
        return "export"
    return "projector" if _MADE_PROJECTOR.fullmatch(relative) else None


def claim_free_name(
    directory: str | os.PathLike[str],
    make_name: Callable[[int], str],
    seconds: int | None = None,
    storage: WriteStorage = LOCAL_STORAGE,
) -> tuple[Path, int]:
    """Create an empty file named ``make_name(t)`` for the first free ``t >= seconds``.

    ``make_name`` maps a timestamp to a file name. The file is created exclusively
    (:meth:`~sumlens.io.storage.WriteStorage.create`: ``O_EXCL``, mode 0600 on a local
    disk), so two writers in one directory and second — in one process or several — never
    share a name; the loser moves on to the next second. Returns ``(path, t)``.
    """
    directory = Path(directory)
    t = int(time.time()) if seconds is None else int(seconds)
    while True:
        path = directory / make_name(t)
        try:
            storage.create(os.fspath(path))
        except FileExistsError:
            t += 1
            continue
        return path, t


def file_kind(name: str) -> str | None:
    """``"summary"``, ``"lineage"``, ``"tensorboard"`` or None for a file of another kind.

    Follows MindInsight's and TensorBoard's own choice: a name containing ``summary.<n>``
    is a lineage file when it ends in ``_lineage`` and a summary file otherwise; a name
    containing ``tfevents`` is a TensorBoard event file.
    """
    if "tfevents" in name:
        return "tensorboard"
    if _SUMMARY_RE.search(name):
        return "lineage" if name.endswith(LINEAGE_SUFFIX) else "summary"
    return None


def file_rank(name: str) -> int | None:
    """The rank a MindSpore file name carries (``summary.<seconds>.<rank>.``), else None."""
    match = _RANK_RE.search(name)
    return int(match.group(1)) if match else None


def tensorboard_file_rank(name: str) -> int | None:
    """The rank sumlens puts at the end of its TensorBoard file names (``SummaryRecord``
    names them ``tensorboard_file_name(seconds, host, f".{rank}")``, after the process id;
    older ones had no process id), else None."""
    last = name.rsplit(".", 1)[-1]
    return int(last) if last.isdigit() else None


def file_order_key(name: str) -> tuple[int, tuple[str | int, ...]]:
    """Sort key putting a run's files in the order their writers opened them: by the
    timestamp in the name, then by the rest with its numbers compared as numbers. One
    process opening several files in one second numbers them (torch's writer:
    ``tfevents.<time>.<host>.<pid>.<n>``), and its tenth file must come after its ninth."""
    match = _SUMMARY_RE.search(name) or _TFEVENTS_RE.search(name)
    parts = _DIGITS.split(name)  # text, number, text, ...: positions compare alike
    natural = tuple(int(part) if index % 2 else part for index, part in enumerate(parts))
    return (int(match.group(1)) if match else -1, natural)


def event_files(directory: str | os.PathLike[str], storage: Storage = LOCAL_STORAGE) -> list[Path]:
    """The event files of one run directory (not its subdirectories), in reading order."""
    directory = Path(directory)
    names = [
        info.name
        for info in storage.list_dir(os.fspath(directory), keep=is_event_file_name, dirs=False)
    ]
    return [directory / name for name in sorted(names, key=file_order_key)]


def is_event_file_name(name: str) -> bool:
    """Whether ``name`` is an event file's (:func:`file_kind` knows its kind)."""
    return file_kind(name) is not None


_SUMMARY_NUMBER = re.compile(r"summary\.(\d+)")


def summary_number(name: str) -> str:
    """The digits after ``summary.`` in a file name (compared as text, as MindInsight)."""
    match = _SUMMARY_NUMBER.search(name)
    return match.group(1) if match else ""


def mindinsight_order(names: list[str]) -> list[str]:
    """File names in MindInsight's reading order: by number, then by name descending."""
    by_name = sorted(names, reverse=True)
    return sorted(by_name, key=lambda name: int(summary_number(name) or -1))
