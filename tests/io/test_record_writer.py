"""``RecordWriter`` across ``os.fork()``: a child never writes its parent's records again."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from sumlens.io import RecordFile

FORKING_WRITER = """
import os, sys
from sumlens.io import RecordWriter

writer = RecordWriter(sys.argv[1])
for index in range(10):
    writer.write(b"record %d" % index)  # buffered, not yet flushed
child = os.fork()
if child == 0:
    writer.write(b"from the child")
    writer.close()  # the child's own record, and nothing of the parent's
    sys.exit(0)
os.waitpid(child, 0)
writer.write(b"after the fork")
writer.close()
"""


def test_a_forked_child_does_not_write_the_parents_buffered_records(tmp_path: Path) -> None:
    path = tmp_path / "events.out.tfevents.1.host"
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(FORKING_WRITER), str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=os.environ,
    )
    assert done.returncode == 0, done.stderr
    records = list(RecordFile(path).read_payloads())
    assert records == [
        *(b"record %d" % index for index in range(10)),
        b"from the child",
        b"after the fork",
    ]
