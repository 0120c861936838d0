"""The team benchmark's load: concurrent dashboard users as asyncio tasks over httpx.

Each client is a closed loop (the next request as soon as the last one answered), with its
own bearer token and its own TLS connection to nginx, as a teammate's browser has. Each
request is drawn from :data:`MIX`: mostly reads (the run list, polled with its ETag as the
page does; the tags of a run; the scalars of one tag of a run) and a share of writes.
Client ``i`` owns run ``i`` and is the only one that writes it: a write is a PUT of that
run's annotation whose note is ``"<label> <client> <counter>"``, the counter rising by one
per write, so the note of the last write answered 2xx per run is known exactly and can be
looked for in the database afterwards (:func:`missing_writes`).

A PUT sets a value, so a failed one is sent again, at most :data:`WRITE_RETRIES` times,
each failed attempt counted; reads are not retried. The load is bounded: it stops at its
duration or at a total request cap, every request has a timeout, and the clients as a
whole have a deadline past the duration.
"""

from __future__ import annotations

import asyncio
import random
import ssl
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.harness.clock import now
from sumlens.board.state import open_state

MIX = {"runs": 0.30, "tags": 0.25, "scalars": 0.40, "write": 0.05}
"""Each request's kind and its share of the requests."""
READS = ("runs", "tags", "scalars")
WRITE_RETRIES = 3
"""Times a failed annotation PUT is sent again before the client gives that write up."""
RETRY_PAUSE_S = 0.2
"""Pause before a retry, times the attempt's number (the client backs off)."""


@dataclass(frozen=True)
class Plan:
    """What one load round does: where, who, how long, how bounded."""

    base_url: str
    certificate: Path
    tokens: list[str]
    """One bearer token per client."""
    runs: list[str]
    """The run ids; client ``i`` writes ``runs[i]``, every client reads any of them."""
    tags: list[str]
    duration_s: float
    max_requests: int
    timeout_s: float
    label: str
    """Starts every note of the round, so its writes are told from earlier rounds'."""
    seed: int
    write_share: float = MIX["write"]


@dataclass
class Outcome:
    """What a round measured."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in MIX})
    """Seconds of every request answered as it should be, by kind."""
    requests: int = 0
    """Requests that ended (answered or failed), retries included."""
    failures: Counter[str] = field(default_factory=Counter)
    """Failed requests by ``kind: status or error``."""
    examples: dict[str, str] = field(default_factory=dict)
    """The first answer or error seen for each kind of failure."""
    retries: int = 0
    given_up: int = 0
    """Writes that failed on every attempt."""
    acked: dict[str, int] = field(default_factory=dict)
    """Per run, the counter of the last write answered 2xx."""
    elapsed_s: float = 0.0
    capped: bool = False
    events: dict[str, float] = field(default_factory=dict)
    """Seconds from the start of the load at which the disruption's steps happened."""

    @property
    def failed(self) -> int:
        """Requests that failed (each failed attempt of a write included)."""
        return sum(self.failures.values())

    def fail(self, kind: str, reason: str, example: str) -> None:
        """Count one failed request of ``kind``."""
        key = f"{kind}: {reason}"
        self.failures[key] += 1
        self.examples.setdefault(key, example[:300])


Disruption = Callable[[Callable[[str], None]], None]
"""Run in a thread during the load; it calls its argument with the name of each step it
takes (``killed``, ``listening``, ``loaded``), which the round stamps."""


def note(label: str, client: int, counter: int) -> str:
    """The note of write ``counter`` of ``client`` in the round ``label``."""
    return f"{label} client{client:03d} {counter}"


def counter_in(text: str, label: str, client: int) -> int | None:
    """The counter of a note :func:`note` wrote for ``client`` in round ``label`` (None for
    any other note)."""
    head = f"{label} client{client:03d} "
    if not text.startswith(head):
        return None
    tail = text[len(head) :]
    return int(tail) if tail.isdigit() else None


class Client:
    """One user: its token, its run, its random draws and its last ETag of the run list."""

    def __init__(self, index: int, plan: Plan, outcome: Outcome, context: ssl.SSLContext) -> None:
        self.index, self.plan, self.outcome = index, plan, outcome
        self.own = plan.runs[index]
        self.rng = random.Random(plan.seed * 1_000_003 + index)
        self.etag: str | None = None
        self.counter = 0
        self.http = httpx.AsyncClient(
            base_url=plan.base_url,
            verify=context,
            headers={"Authorization": f"Bearer {plan.tokens[index]}"},
            timeout=plan.timeout_s,
            limits=httpx.Limits(max_connections=1),
            trust_env=False,
        )

    def kind(self) -> str:
        """The next request's kind, drawn from :data:`MIX` (writes at ``write_share``)."""
        if self.rng.random() < self.plan.write_share:
            return "write"
        weights = [MIX[k] for k in READS]
        return self.rng.choices(READS, weights)[0]

    async def send(self, kind: str, method: str, path: str, **kwargs: Any) -> httpx.Response | None:
        """Send one request; its answer, or None (counted as failed) when none came."""
        started = now()
        try:
            answer = await self.http.request(method, path, **kwargs)
        except httpx.HTTPError as err:
            self.outcome.requests += 1
            self.outcome.fail(kind, type(err).__name__, repr(err))
            return None
        self.outcome.requests += 1
        expected = answer.status_code < 300 or (kind == "runs" and answer.status_code == 304)
        if not expected:
            self.outcome.fail(kind, f"HTTP {answer.status_code}", answer.text)
            return None
        self.outcome.latencies[kind].append(now() - started)
        return answer

    async def read(self, kind: str) -> None:
        """One read of ``kind`` about a run (and a tag) drawn at random."""
        run = self.rng.choice(self.plan.runs)
        if kind == "runs":
            headers = {"If-None-Match": self.etag} if self.etag else {}
            answer = await self.send(kind, "GET", "/api/v1/runs", headers=headers)
            if answer is not None and answer.status_code == 200:
                self.etag = answer.headers.get("etag")
        elif kind == "tags":
            await self.send(kind, "GET", "/api/v1/tags", params={"run": run})
        else:
            tag = self.rng.choice(self.plan.tags)
            await self.send(kind, "GET", "/api/v1/scalars", params={"run": run, "tag": tag})

    async def write(self) -> None:
        """The next note on this client's run; a failed PUT is sent again (bounded)."""
        self.counter += 1
        body = {"tags": [], "note": note(self.plan.label, self.index, self.counter), "colour": None}
        for attempt in range(WRITE_RETRIES + 1):
            if attempt:
                self.outcome.retries += 1
                await asyncio.sleep(RETRY_PAUSE_S * attempt)
            params = {"run": self.own}
            answer = await self.send("write", "PUT", "/api/v1/annotation", params=params, json=body)
            if answer is not None:
                self.outcome.acked[self.own] = self.counter
                return
        self.outcome.given_up += 1

    async def run(self, deadline: float) -> None:
        """Requests until ``deadline`` (:func:`now`) or the round's cap."""
        async with self.http:
            while now() < deadline:
                if self.outcome.requests >= self.plan.max_requests:
                    self.outcome.capped = True
                    return
                kind = self.kind()
                await (self.write() if kind == "write" else self.read(kind))


async def _load(plan: Plan, disruption: Disruption | None, disrupt_at_s: float) -> Outcome:
    outcome = Outcome()
    context = ssl.create_default_context(cafile=str(plan.certificate))
    clients = [Client(i, plan, outcome, context) for i in range(len(plan.tokens))]
    started = now()
    deadline = started + plan.duration_s

    def stamp(step: str) -> None:
        outcome.events[step] = now() - started

    async def disrupt() -> None:
        if disruption is not None:
            await asyncio.sleep(disrupt_at_s)
            await asyncio.to_thread(disruption, stamp)

    side = asyncio.ensure_future(disrupt())
    bound = plan.duration_s + (WRITE_RETRIES + 1) * (plan.timeout_s + RETRY_PAUSE_S * WRITE_RETRIES)
    await asyncio.wait_for(asyncio.gather(*(c.run(deadline) for c in clients)), bound)
    outcome.elapsed_s = now() - started
    await side
    return outcome


def run_load(
    plan: Plan, disruption: Disruption | None = None, disrupt_at_s: float = 0.0
) -> Outcome:
    """Drive ``plan``'s load; ``disruption`` (if any) runs in a thread from ``disrupt_at_s``
    seconds in, and the round waits for it to end too."""
    if len(plan.runs) < len(plan.tokens):
        raise ValueError(
            f"runs={len(plan.runs)} is too few: each of the {len(plan.tokens)} clients owns a run"
        )
    return asyncio.run(_load(plan, disruption, disrupt_at_s))


def missing_writes(
    outcome: Outcome, plan: Plan, state_url: str, base_dir: str, workspace: Path
) -> dict[str, Any]:
    """Read the database (a fresh reader: no replica's cache) and compare each run's note
    with the last write answered 2xx: ``missing`` lists the runs whose note is older (a
    lost write), ``ahead`` those whose note is newer (a write that was applied although
    its client saw it fail)."""
    missing, ahead = [], []
    with open_state(workspace, base_dir, state_url) as state:
        for run, acked in sorted(outcome.acked.items()):
            client = plan.runs.index(run)
            found = counter_in(state.annotations.get(run).note, plan.label, client)
            if found is None or found < acked:
                missing.append({"run": run, "acked": acked, "in_database": found})
            elif found > acked:
                ahead.append({"run": run, "acked": acked, "in_database": found})
    return {"checked": len(outcome.acked), "missing": missing, "ahead": ahead}
