"""``describe``: a plain-text account of what an event file or run directory holds.

One table a person can read at a glance (the files read, values per plugin and tag, and
what reading skipped); ``sumlens read PATH`` prints it, and the examples end with it.
"""

from __future__ import annotations

import os
from collections import Counter

from sumlens.io.reader import iter_events, resolve_files
from sumlens.io.storage import LOCAL_STORAGE, Storage


def describe(path: str | os.PathLike[str], storage: Storage = LOCAL_STORAGE) -> str:
    """The event files under ``path``, the number of values per (plugin, tag), and the damage
    (listed and read through ``storage``)."""
    lines = [
        f"{file.name}  ({storage.stat(os.fspath(file)).size} bytes)"
        for file in resolve_files(path, storage)
    ]
    stream = iter_events(path, storage)
    counts = Counter((event.plugin, event.tag) for event in stream)
    lines += [
        f"{plugin:<20} {tag:<40} {count:>8}" for (plugin, tag), count in sorted(counts.items())
    ]
    stats = stream.stats
    lines.append(
        f"records: {stats.records}, corrupt: {stats.corrupt_records}, skipped bytes: "
        f"{stats.skipped_bytes}, torn tail bytes: {stats.torn_tail_bytes}"
    )
    lines += [
        f"not shown: {n} value(s) of kind {kind!r}"
        for kind, n in sorted(stats.skipped_plugins.items())
    ]
    lines += [f"unreadable: {name}" for name in stats.unreadable_files]
    return "\n".join(lines)
