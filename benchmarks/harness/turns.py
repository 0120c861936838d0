"""Turn-taking between processes: only one of several runs works at any time.

This machine's speed drifts by tens of percent for seconds at a time, so runs compared
with each other must share the same seconds. Each run is a process of its own (training on
its main thread, as usual); a conductor in the parent lets one run work at a time: a run
works a turn (a segment of its steps), hands the machine on and waits for its next turn,
until it is done (``benchmarks/bench_collector.py`` says how its rows use it).
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from benchmarks.harness.clock import now

SETTLE_SECONDS = 0.03
"""Pause before a run hands over its turn: libgomp's idle workers spin for milliseconds
after a parallel region, which would slow the next run."""


class Turn:
    """A run's side of the turn-taking: wait for "go", work, report "yield" or "done"."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def wait(self) -> None:
        """Until the conductor says "go"."""
        message = self.conn.recv()
        if message != "go":
            raise RuntimeError(f"expected 'go' from the conductor, got {message!r}")

    def pass_on(self) -> None:
        """Hand the machine to the next run and wait for this one's next turn."""
        time.sleep(SETTLE_SECONDS)  # untimed: our idle OpenMP workers stop spinning first
        self.conn.send("yield")
        self.wait()


class StepTimer:
    """Times one run's steps, hands over its turn every ``segment`` steps (after ``flush``).

    The run calls :meth:`start` before building its writer, sets :attr:`mark` (:func:`now`)
    once the writer is up, and :meth:`step_done` after every step; a step that ends a turn
    is timed until the writer's ``flush`` returns, so its writer's work is charged to it.
    """

    def __init__(self, turn: Turn, total: int, segment: int) -> None:
        self.turn, self.total, self.segment = turn, total, segment
        self.flush: Callable[[], None] | None = None
        self.steps: list[float] = []
        self.mark = 0.0

    def start(self) -> None:
        """Wait for this run's first turn."""
        self.turn.wait()

    def step_done(self) -> None:
        """One more step: its time, and the turn handed on at the end of a segment."""
        done = len(self.steps) + 1
        if done % self.segment == 0 and done < self.total:
            if self.flush is not None:
                self.flush()
            self.steps.append(now() - self.mark)
            self.turn.pass_on()
            self.mark = now()
        else:
            moment = now()
            self.steps.append(moment - self.mark)
            self.mark = moment


def start_processes(
    target: Callable[[Connection, Any, str], None], args: Any, names: list[str]
) -> dict[str, Connection]:
    """One fresh (spawned) process per name running ``target(conn, args, name)``; their
    connections once each has said "ready"."""
    spawn = multiprocessing.get_context("spawn")
    conns: dict[str, Connection] = {}
    for name in names:
        parent, child = spawn.Pipe()
        spawn.Process(target=target, args=(child, args, name), daemon=True).start()
        conns[name] = parent
    for name in names:
        if conns[name].recv() != "ready":
            raise RuntimeError(f"row {name} failed to start")
    return conns


def conduct(conns: dict[str, Connection], order: list[str], base: Path) -> dict[str, Any]:
    """The timed runs of ``order`` (each in ``base / name``), taking turns; what each
    returned, by name."""
    for name in order:
        conns[name].send(("timed", base / name))
    results: dict[str, Any] = {}
    waiting = list(order)
    while waiting:
        name = waiting.pop(0)
        conns[name].send("go")
        message = conns[name].recv()
        if message == "yield":
            waiting.append(name)
        else:
            results[name] = message[1]
    return results


def first_runs(conns: dict[str, Connection], order: list[str], base: Path) -> dict[str, Any]:
    """Each process's untimed first run, one process at a time (alone on the machine)."""
    results: dict[str, Any] = {}
    for name in order:
        conns[name].send(("first", base / f"{name}-first"))
        conns[name].send("go")
        results[name] = conns[name].recv()[1]
    return results
