"""Long-lived worker processes that run timed jobs handed to them one at a time.

A worker reads one job per line on its stdin (a JSON object) and answers each with one
line on its stdout: ``marker`` then a JSON object. Other lines (libraries print to stdout
too) are ignored; what it writes to stderr goes to its log file.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from benchmarks.harness.servers import launch


class LineWorker:
    """One worker process, started on construction and ended by :meth:`close`."""

    def __init__(
        self, name: str, args: list[str], log: Path, marker: str, cwd: Path | None = None
    ) -> None:
        self.name, self.marker = name, marker
        self._log = open(log, "ab")  # noqa: SIM115 (closed in close())
        self._proc = launch(
            args,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            new_session=False,
        )

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        """Hand ``job`` to the worker and wait for its answer."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(job) + "\n")
        self._proc.stdin.flush()
        for line in self._proc.stdout:
            if line.startswith(self.marker):
                answer: dict[str, Any] = json.loads(line[len(self.marker) :])
                return answer
        raise RuntimeError(f"worker {self.name} exited (code {self._proc.wait()}); see its log")

    def close(self) -> None:
        """Close its stdin (it exits when its jobs end), wait up to 120 s, then kill it."""
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._log.close()
