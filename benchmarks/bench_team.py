"""A team's dashboard under load: replicas behind nginx over one bucket and one database.

The topology of ``docs/team.md`` (:mod:`benchmarks.team.topology`): moto's S3 server holding
``--runs`` runs x ``--tags`` tags x ``--steps`` steps (TensorBoard files written by
``SummaryRecord``), one PostgreSQL cluster, two ``sumlens serve`` replicas configured by
``deploy/sumlens.env`` (``SUMLENS_STATE`` the database, ``SUMLENS_LOGDIR`` the bucket,
``SUMLENS_AUTH=token``), nginx with ``deploy/nginx/sumlens.conf`` in front (TLS, as
shipped). ``--clients`` users (:mod:`benchmarks.team.load`) read the run list, tags and
scalars and write their run's note (5% of requests) for ``--duration`` seconds in each of
three configurations, once per round, in a rotated order:

* ``2 replicas``: nginx over both replicas;
* ``1 replica``: the same load through an nginx whose upstream names replica ``a`` alone
  (throughput ratio 2 replicas / 1 replica, per round);
* ``2 replicas, b killed``: half way through, replica ``b`` gets SIGKILL and is started
  again at once; failed requests (and why), retried writes, and how long ``b`` took to
  listen and to load the bucket again.

After each configuration the database is read afresh: the note of every run's last write
answered 2xx must be there (a missing one is a lost write). Targets: no failed request in
the steady configurations, no lost write in any.

Usage: ``.venv/bin/python -m benchmarks.bench_team [--quick] [--duration S] [--clients N]``
(``make bench-team``). Raw results: ``benchmarks/results/bench_team.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.harness.clock import cpu_now
from benchmarks.harness.machine import commit_facts, cpu_seconds, foreign_cpu, machine_facts
from benchmarks.harness.paths import RESULTS_DIR
from benchmarks.harness.report import MeasureTable, fmt_duration, fmt_x
from benchmarks.harness.rounds import Result, Table, Unit, run_rounds
from benchmarks.harness.stats import percentile, same_round_pairs
from benchmarks.scale_workloads import Workload
from benchmarks.team.load import READS, WRITE_RETRIES, Outcome, Plan, missing_writes, run_load
from benchmarks.team.nginx import Nginx
from benchmarks.team.topology import Team, client_name, running_team

CONFIGS = ("2 replicas", "1 replica", "2 replicas, b killed")
BUSY_SHARE = 0.9
"""The share of a configuration's duration over which the machine's busy cores are read."""
PACKAGES = ("sumlens", "httpx", "uvicorn", "fastapi", "psycopg", "moto", "s3fs")
"""Whose versions the results JSON records."""


def check_args(args: argparse.Namespace) -> None:
    """Refuse options the load cannot run with, naming the option and the value."""
    positive = {
        "--clients": args.clients,
        "--duration": args.duration,
        "--rounds": args.rounds,
        "--tags": args.tags,
        "--steps": args.steps,
        "--timeout": args.timeout,
        "--max-requests": args.max_requests,
    }
    for name, value in positive.items():
        if value <= 0:
            raise SystemExit(f"{name}={value} is not allowed: it must be above 0")
    if args.runs < args.clients:
        raise SystemExit(
            f"--runs={args.runs} is not allowed: each of the --clients={args.clients} clients "
            "writes a run of its own, so --runs must be at least --clients"
        )


def plan_for(team: Team, nginx: Nginx, args: argparse.Namespace, label: str, seed: int) -> Plan:
    """The load of one configuration through ``nginx``."""
    workload = team.workload
    return Plan(
        base_url=nginx.url,
        certificate=nginx.certificate,
        tokens=[team.tokens[client_name(i)] for i in range(args.clients)],
        runs=team.run_ids,
        tags=[workload.tag_name(i) for i in range(workload.tags)],
        duration_s=args.duration,
        max_requests=args.max_requests,
        timeout_s=args.timeout,
        label=label,
        seed=seed,
    )


def replica_cpu(team: Team) -> dict[str, float]:
    """CPU seconds so far of each replica's current process."""
    return {
        name: cpu_seconds(replica.process.pid)
        for name, replica in team.replicas.items()
        if replica.process is not None and replica.process.poll() is None
    }


def as_result(outcome: Outcome, check: dict[str, Any], extra: dict[str, Any]) -> Result:
    """One configuration's round as a result of the rounds' table."""
    answered = sum(len(v) for v in outcome.latencies.values())
    return {
        "seconds": outcome.elapsed_s,
        "requests": outcome.requests,
        "answered": answered,
        "throughput": answered / outcome.elapsed_s if outcome.elapsed_s else 0.0,
        "failed": outcome.failed,
        "failures": dict(outcome.failures),
        "examples": outcome.examples,
        "retries": outcome.retries,
        "given_up": outcome.given_up,
        "capped": outcome.capped,
        "events": outcome.events,
        "reads_s": [s for kind in READS for s in outcome.latencies[kind]],
        "writes_s": outcome.latencies["write"],
        "writes_acked": len(outcome.latencies["write"]),
        "check": check,
        **extra,
    }


def one_config(
    team: Team, config: str, args: argparse.Namespace, counter: list[int]
) -> Callable[[], dict[str, Result]]:
    """The unit of ``config``: wait until both replicas have loaded the bucket (untimed),
    drive the load, then look for every acknowledged write in the database."""

    def run() -> dict[str, Result]:
        for name in team.replicas:
            team.wait_loaded(name)
        counter[0] += 1
        label = f"r{counter[0]}-{config.replace(' ', '').replace(',', '-')}"
        nginx = team.one if config == "1 replica" else team.two
        assert nginx is not None
        plan = plan_for(team, nginx, args, label, seed=counter[0])
        errors_at = nginx.error_log_size()
        cpu_before, replicas_before = cpu_now(), replica_cpu(team)
        with ThreadPoolExecutor(max_workers=1) as side:
            # every process's load over the round (ours too): is the machine saturated?
            machine = side.submit(foreign_cpu, args.duration * BUSY_SHARE)
            if config == "2 replicas, b killed":
                outcome = run_load(plan, lambda stamp: crash_b(team, stamp), args.duration / 2)
            else:
                outcome = run_load(plan)
            busy = machine.result()
        used = {
            name: (seconds - replicas_before[name]) / outcome.elapsed_s
            for name, seconds in replica_cpu(team).items()
            if name in replicas_before and "killed" not in config
        }
        extra = {
            "client_cores": (cpu_now() - cpu_before) / outcome.elapsed_s,
            "replica_cores": used,
            "machine_cores": busy,
            "nginx_errors": [line for line in nginx.errors_since(errors_at) if "upstream" in line],
        }
        with tempfile.TemporaryDirectory(prefix="bench-team-check-") as workspace:
            check = missing_writes(outcome, plan, team.cluster.url, team.base_dir, Path(workspace))
        return {config: as_result(outcome, check, extra)}

    return run


def crash_b(team: Team, stamp: Callable[[str], None]) -> None:
    """SIGKILL replica ``b``, start it again at once, wait until it has loaded the bucket."""
    team.kill("b")
    stamp("killed")
    team.start("b")
    stamp("listening")
    team.wait_loaded("b")
    stamp("loaded")


def brief(result: Result) -> str:
    """A result for the progress line."""
    return (
        f"{result['answered']:,} answered, {result['throughput']:.0f}/s, "
        f"{result['failed']} failed, {len(result['check']['missing'])} lost"
    )


def latency_cell(values: list[float]) -> str:
    """``p50 / p99`` of seconds (``-`` for none)."""
    if not values:
        return "-"
    return f"{fmt_duration(percentile(values, 50))} / {fmt_duration(percentile(values, 99))}"


def throughput_cell(throughput: float, results: list[Result]) -> str:
    """Requests per second, and the cores the clients and each replica kept busy (medians
    over ``results``)."""
    cores = statistics.median(r["client_cores"] for r in results)
    names = sorted({name for r in results for name in r["replica_cores"]})
    busy = ", ".join(
        f"{name} {statistics.median(r['replica_cores'].get(name, 0.0) for r in results):.2f}"
        for name in names
    )
    replicas = f"; replicas {busy}" if busy else ""
    machine = statistics.median(r["machine_cores"] for r in results)
    return (
        f"{throughput:,.0f} requests/s (cores busy: clients {cores:.2f}{replicas}; "
        f"the machine {machine:.2f} of {os.cpu_count()})"
    )


def reasons(results: list[Result]) -> str:
    """Every failure's count and reason over ``results`` (``none``)."""
    total: dict[str, int] = {}
    for result in results:
        for reason, count in result["failures"].items():
            total[reason] = total.get(reason, 0) + count
    return "; ".join(f"{n} x {reason}" for reason, n in sorted(total.items())) or "none"


def report(table: Table, args: argparse.Namespace) -> dict[str, Any]:
    """Print the table of measures (and why each failure failed); return it for the JSON."""
    measures = MeasureTable()
    print(
        f"\nbench_team: {args.clients} clients, {args.duration:g} s per configuration, "
        f"{args.runs} runs x {args.tags} tags x {args.steps:,} steps in moto's S3\n"
    )
    print("| measure | target | measured | |")
    print("|---|---|---|---|")
    for config in CONFIGS:
        results = table.results.get(config, [])
        if not results:
            why = table.unavailable.get(config) or "; ".join(table.failures.get(config, ["-"]))
            measures.row(f"{config}: unavailable", "-", why, False, None)
            continue
        reads = [s for r in results for s in r["reads_s"]]
        writes = [s for r in results for s in r["writes_s"]]
        requests = sum(r["requests"] for r in results)
        failed = sum(r["failed"] for r in results)
        lost = sum(len(r["check"]["missing"]) for r in results)
        checked = sum(r["check"]["checked"] for r in results)
        throughput = statistics.median(r["throughput"] for r in results)
        steady = "killed" not in config
        measures.row(
            f"{config}: requests (failed)",
            "0 failed" if steady else "-",
            f"{requests:,} ({failed} failed)",
            failed == 0 if steady else None,
            {"requests": requests, "failed": failed},
        )
        for kind, values in (("reads", reads), ("writes", writes)):
            quantiles = [percentile(values, q) for q in (50, 99)] if values else None
            measures.row(f"{config}: {kind} p50 / p99", "-", latency_cell(values), None, quantiles)
        measures.row(
            f"{config}: throughput", "-", throughput_cell(throughput, results), None, throughput
        )
        measures.row(
            f"{config}: acknowledged writes missing in the database",
            "0",
            f"{lost} of {checked} runs' last notes",
            lost == 0,
            lost,
        )
        if not steady:
            retries = sum(r["retries"] for r in results)
            given_up = sum(r["given_up"] for r in results)
            measures.row(
                f"{config}: write attempts retried (writes given up after {WRITE_RETRIES} retries)",
                "-",
                f"{retries} ({given_up})",
                None,
                {"retries": retries, "given_up": given_up},
            )
            errors = [line for r in results for line in r["nginx_errors"] if "[error]" in line]
            measures.row(
                f"{config}: requests nginx sent on to the other replica",
                "-",
                f"{len(errors)} (its error log: upstream refused, reset or timed out)",
                None,
                len(errors),
            )
            events = results[-1]["events"]
            restart = (
                f"listening {fmt_duration(events['listening'] - events['killed'])}, "
                f"bucket loaded {fmt_duration(events['loaded'] - events['killed'])} after the kill"
                if {"killed", "listening", "loaded"} <= set(events)
                else f"steps seen: {events}"
            )
            measures.row(f"{config}: replica b restarted", "-", restart, None, events)
    pairs = same_round_pairs(
        table.results.get("1 replica", []), table.results.get("2 replicas", [])
    )
    if pairs:
        ratios = [two["throughput"] / one["throughput"] for one, two in pairs if one["throughput"]]
        measures.row(
            "throughput 2 replicas / 1 replica (per round)",
            "-",
            f"{fmt_x(statistics.median(ratios))} ({fmt_x(min(ratios))} - {fmt_x(max(ratios))})",
            None,
            ratios,
        )
    print("\nfailures by reason:")
    for config in CONFIGS:
        print(f"- {config}: {reasons(table.results.get(config, []))}")
    return {"measures": measures.rows}


def tool_version(args: list[str]) -> str:
    """The first line a program prints about its version (nginx prints it on stderr)."""
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    return (done.stdout or done.stderr).strip().splitlines()[0] if done.returncode == 0 else "?"


def machine_line(facts: dict[str, Any], load: float) -> str:
    """One line on the machine that measured."""
    dirty = " (+ uncommitted src)" if facts["src_uncommitted"] else ""
    nginx = tool_version(["/usr/sbin/nginx", "-v"]).split("/")[-1]
    postgres = tool_version(["postgres", "--version"]).split()[-3]
    return (
        f"machine: {facts['cpus']} CPUs, {facts['platform']}, Python {facts['python']}, "
        f"sumlens {facts['versions']['sumlens']}, nginx {nginx}, PostgreSQL {postgres}; "
        f"other load at start {load:.1f} cores; commit {facts['commit'][:12]}{dirty}; "
        f"{facts['date']}"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The options (``--quick``: 10 s per configuration)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 s per configuration")
    parser.add_argument("--duration", type=float, help="seconds per configuration (120)")
    parser.add_argument("--clients", type=int, default=100, help="concurrent users (100)")
    parser.add_argument("--runs", type=int, help="runs in the bucket (default: --clients)")
    parser.add_argument("--tags", type=int, default=10, help="scalar tags per run (10)")
    parser.add_argument("--steps", type=int, default=1_000, help="steps per tag (1,000)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of the three (1)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request (30)")
    parser.add_argument(
        "--max-requests",
        type=int,
        default=1_000_000,
        help="requests per configuration at most (1,000,000)",
    )
    args = parser.parse_args(argv)
    if args.duration is None:
        args.duration = 10.0 if args.quick else 120.0
    if args.runs is None:
        args.runs = args.clients
    check_args(args)
    return args


def main(argv: list[str] | None = None) -> int:
    """Start the topology, run the rounds, print and save the report."""
    args = parse_args(argv)
    # a terminated benchmark still stops its servers (``finally`` in running_team)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    load = foreign_cpu()
    workload = Workload("team", args.runs, args.tags, args.steps, poll_s=0.2)
    table = Table()
    counter = [0]
    with running_team(workload, args.clients) as team:
        units = [
            Unit(c, one_config(team, c, args, counter), set(range(args.rounds))) for c in CONFIGS
        ]
        run_rounds(units, args.rounds, table, brief=brief, retry_failed=False)
    facts = {**machine_facts(PACKAGES), **commit_facts()}
    out = {"args": vars(args), **report(table, args), "machine": facts}
    print("\n" + machine_line(facts, load))
    for results in table.results.values():
        for result in results:
            result.pop("reads_s")
            result.pop("writes_s")
    out["results"] = table.results
    out["failures"] = table.failures
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / ("bench_team_quick.json" if args.quick else "bench_team.json")
    path.write_text(json.dumps(out, indent=2, default=str) + "\n")
    print(f"raw results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
