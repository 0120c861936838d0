"""A training that keeps writing: the writer process of the auto-refresh browser test.

Usage: ``python append_writer.py LOG_DIR``. Each line read from stdin is a number of steps
to append to the ``loss`` tag of one open ``SummaryRecord``; once they are flushed to disk
the last step written is printed, so the test knows exactly what the page must show.
"""

from __future__ import annotations

import sys

from sumlens import SummaryRecord


def main(log_dir: str) -> None:
    step = 0
    with SummaryRecord(log_dir) as record:
        for line in sys.stdin:
            for _ in range(int(line)):
                step += 1
                record.add_value("scalar", "loss", 1.0 / step)
                record.record(step)
            record.flush()
            print(step, flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
