"""When a server over ``bench_remote``'s bucket has served first data, and every run.

A :class:`Probe` is asked by :func:`benchmarks.harness.servers.server_until` at every poll;
it notes the moment of first data (a listed run with a scalar series served) and answers
True once every run is listed with all its tags and one tag's series of every run is
served in full, fetched the way each dashboard's page fetches many runs at once, 100 runs
a request: sumlens' ``/api/v1/scalars`` (``points`` at least the steps, so nothing is
downsampled), TensorBoard's ``/data/plugin/scalars/scalars_multirun``. Both fetch every
point of that tag of every run.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from benchmarks.harness.clock import now
from benchmarks.harness.http import get_json
from benchmarks.scale_workloads import Workload

TB_KEPT = 1_000
"""Scalar points per series TensorBoard keeps by default (its reservoir)."""
BATCH = 100
"""Runs per request for the series of every run (a URL of 1,000 run ids is too long)."""


def batches(runs: list[str]) -> list[list[str]]:
    """``runs`` in groups of :data:`BATCH`."""
    return [runs[i : i + BATCH] for i in range(0, len(runs), BATCH)]


class Probe:
    """Polls one server: at most every ``pause_s`` (quicker until first data)."""

    def __init__(self, workload: Workload, pause_s: float) -> None:
        self.workload = workload
        self.pause_s = pause_s
        self.first_at: float | None = None
        self.first_run: str | None = None
        self._due = 0.0

    @property
    def tag(self) -> str:
        """The tag whose series is fetched for every run."""
        return self.workload.tag_name(0)

    def __call__(self, client: httpx.Client) -> bool:
        moment = now()
        if moment < self._due:
            return False
        self._due = moment + (self.pause_s if self.first_at is not None else self.pause_s / 5)
        listed = self.listed(client)
        if self.first_at is None:
            run = next((run for run, tags in listed.items() if tags), None)
            if run is not None and self.served(client, run):
                self.first_at, self.first_run = now(), run
        return self.first_at is not None and self.everything(client, listed)

    def listed(self, client: httpx.Client) -> dict[str, int]:
        """Run -> scalar tags listed."""
        raise NotImplementedError

    def served(self, client: httpx.Client, run: str) -> bool:
        """Whether a point of ``run``'s series of :attr:`tag` is served."""
        raise NotImplementedError

    def everything(self, client: httpx.Client, listed: dict[str, int]) -> bool:
        """Every run listed with every tag, and its series of :attr:`tag` served whole."""
        raise NotImplementedError


class SumlensProbe(Probe):
    """sumlens' run list (with its entity tag: an unchanged list costs a 304) and scalars."""

    def __init__(self, workload: Workload, pause_s: float) -> None:
        super().__init__(workload, pause_s)
        self._etag: str | None = None
        self._runs: list[dict[str, Any]] = []

    def listed(self, client: httpx.Client) -> dict[str, int]:
        headers = {"If-None-Match": self._etag} if self._etag else {}
        try:
            response = client.get("/api/v1/runs", headers=headers)
        except httpx.TransportError:
            return {}
        if response.status_code == 200:
            self._runs = orjson.loads(response.content)["runs"]
            self._etag = response.headers.get("etag")
        return {run["id"]: len(run["tags"].get("scalar", ())) for run in self._runs}

    def served(self, client: httpx.Client, run: str) -> bool:
        got = get_json(client, "/api/v1/scalars", {"run": run, "tag": self.tag, "points": 2})
        return bool(got) and any(s["total"] > 0 for s in got["series"])

    def everything(self, client: httpx.Client, listed: dict[str, int]) -> bool:
        w = self.workload
        points = w.tags * w.steps
        if len(self._runs) != w.runs or any(
            run["status"] != "ready" or run["points"] != points for run in self._runs
        ):
            return False
        if any(count != w.tags for count in listed.values()):
            return False
        series = []
        for runs in batches(sorted(listed)):
            params = {"run": runs, "tag": self.tag, "points": max(w.steps, 2)}
            got = get_json(client, "/api/v1/scalars", params)
            series += got["series"] if got else []
        return len(series) == w.runs and all(
            s["total"] == w.steps and len(s["step"]) == w.steps and s["step"][-1] == w.steps - 1
            for s in series
        )


class TensorBoardProbe(Probe):
    """TensorBoard's scalars plugin: its tag index and its many-runs route."""

    def listed(self, client: httpx.Client) -> dict[str, int]:
        body = get_json(client, "/data/plugin/scalars/tags") or {}
        return {run: len(tags) for run, tags in body.items()}

    def served(self, client: httpx.Client, run: str) -> bool:
        rows = get_json(client, "/data/plugin/scalars/scalars", {"run": run, "tag": self.tag})
        return bool(rows)

    def everything(self, client: httpx.Client, listed: dict[str, int]) -> bool:
        w = self.workload
        if len(listed) != w.runs or any(count != w.tags for count in listed.values()):
            return False
        body = {}
        for runs in batches(sorted(listed)):
            try:
                response = client.post(
                    "/data/plugin/scalars/scalars_multirun", data={"tag": self.tag, "runs": runs}
                )
            except httpx.TransportError:
                return False
            body |= orjson.loads(response.content) if response.status_code == 200 else {}
        kept = min(w.steps, TB_KEPT)
        return len(body) == w.runs and all(
            len(rows) == kept and rows[-1][1] == w.steps - 1 for rows in body.values()
        )
