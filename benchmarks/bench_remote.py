"""Serving from object storage: sumlens against TensorBoard's own S3 reader, on one bucket.

moto's S3 server runs on 127.0.0.1 behind the harness's latency proxy, which delays every request
by ``--latency-ms`` (20 ms: a same-region object store). The bucket holds ``--runs`` runs x
``--tags`` scalar tags x ``--steps`` steps in TensorBoard's format (written once by
sumlens' ``SummaryRecord``, ``scale_workloads.py``, cached; uploaded to moto at the start,
untimed). Each round starts each contender cold, in a rotating order:

* ``sumlens serve --summary-base-dir s3://bench/logs --storage-option ...`` (a new
  workspace);
* ``tensorboard --logdir s3://bench/logs`` with ``S3_ENDPOINT`` at the proxy: without
  TensorFlow it reads S3 through its ``tensorflow_stub`` file system and boto3 (its Rust
  data server takes local and ``gs://`` logdirs only, so ``--load_fast`` falls back to the
  Python reader by itself).

Timed from the launch: *first data* (a run listed and a point of one of its series served)
and *every run loaded* (every run listed with all its tags and one tag's series of every run
served in full; ``benchmarks/remote/probes.py``). Then, with the server left alone, the proxy's log
gives the requests and bytes of the next reload of the unchanged bucket (both servers
reload every ``--reload-interval`` seconds); sumlens' own count of it (``/api/v1/health``)
is reported beside. Medians over rounds; ratios TensorBoard / sumlens per round.

Usage: ``.venv/bin/python -m benchmarks.bench_remote [--runs 20 --steps 100] [--rounds 3]``
(``make bench-remote``). Raw results go to ``benchmarks/results/bench_remote.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import scale_workloads
from benchmarks.harness.clock import now, timed
from benchmarks.harness.http import connect, get_json, local
from benchmarks.harness.machine import commit_facts, machine_facts
from benchmarks.harness.paths import RESULTS_DIR
from benchmarks.harness.report import fmt_s, fmt_span, fmt_x
from benchmarks.harness.rounds import Result, Table, Unit, run_rounds, spread_rounds
from benchmarks.harness.servers import free_port, prime_numba, server_until, tensorboard_args
from benchmarks.harness.stats import median_of, present, same_round_pairs, verdict
from benchmarks.remote.probes import Probe, SumlensProbe, TensorBoardProbe
from benchmarks.remote.store import KEY, SECRET, Store, object_store, tally, upload
from benchmarks.scale_workloads import Workload

URL = "s3://bench/logs"
TARGETS = {"first_data_s": 5.0, "all_loaded_ratio": 10.0, "reload_listings": 1}
PACKAGES = ("sumlens", "moto", "s3fs", "boto3", "botocore", "tensorboard")
"""Whose versions the results JSON records."""
POLL_S = 0.02
"""How often ``server_until`` asks a probe; a probe polls at most every ``--pause`` s."""


def sumlens_args(store: Store, port: int, workspace: Path, interval: float) -> list[str]:
    """``python -m sumlens serve`` over the bucket, as a user types it (the harness's
    ``serve_args`` takes a local directory)."""
    options = [f"endpoint_url={store.proxied}", f"key={KEY}", f"secret={SECRET}"]
    args = [sys.executable, "-m", "sumlens", "serve", "--summary-base-dir", URL]
    args += ["--workspace", str(workspace), "--port", str(port)]
    args += ["--reload-interval", f"{interval:g}"]
    for option in options:
        args += ["--storage-option", option]
    return args


def tensorboard_over_bucket(port: int, interval: float) -> list[str]:
    """``tensorboard --logdir s3://...`` (its defaults otherwise)."""
    return [*tensorboard_args(URL, port), "--reload_interval", f"{interval:g}"]


def time_server(
    name: str,
    args: list[str],
    store: Store,
    port: int,
    probe: Probe,
    args_ns: argparse.Namespace,
    timeout_s: float,
) -> Result:
    """Launch a server, wait for first data and every run (bounded by ``timeout_s``), then
    measure one reload of the unchanged bucket. A server not done in time gives a result
    with ``capped`` set and ``seconds`` the bound (a lower bound)."""
    quiet_s = args_ns.reload_interval / 2
    started = now()
    try:
        with server_until(name, args, store.env(), port, probe, POLL_S, timeout_s) as (_, secs):
            assert probe.first_at is not None  # the probe is done only after first data
            result: Result = {"seconds": secs, "first_s": probe.first_at - started}
            result["first_run"] = probe.first_run
            load_end = store.settle(quiet_s, timeout_s)
            burst = store.burst(load_end, quiet_s, timeout_s)
            result["reload"] = tally(burst)
            result["reload_s"] = max(r.end or 0 for r in burst) - burst[0].start
            with connect(local(port), timeout=5) as http:
                health = get_json(http, "/api/v1/health") if name == "sumlens" else None
            result["server_count"] = (health or {}).get("requests")
            result["load_requests"] = tally(store.log()[:load_end])
            return result
    except TimeoutError as err:
        first = None if probe.first_at is None else probe.first_at - started
        return {"seconds": timeout_s, "first_s": first, "capped": True, "why": str(err)}


def units(store: Store, workload: Workload, args: argparse.Namespace) -> list[Unit]:
    """sumlens in every round, TensorBoard in ``--tb-rounds`` of them (spread)."""

    def run_sumlens() -> dict[str, Result]:
        workspace = Path(tempfile.mkdtemp(prefix="bench-remote-ws-"))
        try:
            port = free_port()
            argv = sumlens_args(store, port, workspace, args.reload_interval)
            probe = SumlensProbe(workload, args.pause)
            return {"sumlens": time_server("sumlens", argv, store, port, probe, args, 600)}
        finally:
            shutil.rmtree(workspace, ignore_errors=True)

    def run_tensorboard() -> dict[str, Result]:
        port = free_port()
        argv = tensorboard_over_bucket(port, args.reload_interval)
        probe = TensorBoardProbe(workload, args.pause)
        result = time_server("tensorboard", argv, store, port, probe, args, args.tb_timeout)
        return {"tensorboard": result}

    every = set(range(args.rounds))
    return [
        Unit("sumlens", run_sumlens, every),
        Unit("tensorboard", run_tensorboard, spread_rounds(args.tb_rounds, args.rounds)),
    ]


def brief(result: Result) -> str:
    """A result for the progress line."""
    first = "-" if result.get("first_s") is None else fmt_s(result["first_s"])
    loaded = ("> " if result.get("capped") else "") + fmt_s(result["seconds"])
    reload = result.get("reload")
    asked = f", reload {reload['requests']} req" if reload else ""
    return f"first {first} s, all {loaded} s{asked}"


def reload_cell(results: list[Result]) -> str:
    """The median reload's requests by kind and the bytes received."""
    reloads = [r["reload"] for r in results if r.get("reload")]
    if not reloads:
        return "-"
    mid = sorted(reloads, key=lambda t: t["requests"])[len(reloads) // 2]
    kinds = ", ".join(f"{mid[k]} {k}" for k in ("listing", "get", "head", "other") if mid[k])
    return f"{mid['requests']} ({kinds}); {mid['bytes_received'] / 1e3:,.1f} kB received"


def report(table: Table, workload: Workload, args: argparse.Namespace) -> dict[str, Any]:
    """Print the table and the verdicts; return them for the JSON."""
    sums = table.results.get("sumlens", [])
    tbs = table.results.get("tensorboard", [])
    size = f"{workload.runs:,} runs x {workload.tags} tags x {workload.steps:,} steps"
    print(f"\nbench_remote: {size}, moto + {args.latency_ms:g} ms per request")
    print("| contender | rounds | first data s | every run loaded s | unchanged reload |")
    print("|---|---:|---:|---:|---|")
    rows = {}
    for name, results in (("sumlens", sums), ("tensorboard", tbs)):
        if not results:
            why = table.unavailable.get(name) or "; ".join(table.failures.get(name, ["no run"]))
            print(f"| {name} | 0 | unavailable: {why} | | |")
            rows[name] = {"unavailable": why}
            continue
        first, loaded = median_of(results, "first_s"), median_of(results, "seconds")
        capped = "> " if any(r.get("capped") for r in results) else ""
        print(
            f"| {name} | {len(results)} | {fmt_s(first) if first is not None else '-'}"
            f" ({fmt_span(present(results, 'first_s'))}) | {capped}{fmt_s(loaded or 0.0)}"
            f" ({fmt_span(present(results, 'seconds'))}) | {reload_cell(results)} |"
        )
        rows[name] = {"first_s": first, "all_loaded_s": loaded, "capped": bool(capped)}
    verdicts = {}
    firsts = [r["first_s"] for r in sums if r.get("first_s") is not None]
    if firsts:
        ok = max(firsts) < TARGETS["first_data_s"]
        verdicts["first_data"] = "MET (every round)" if ok else "NOT MET"
        print(f"\nsumlens first data < 5 s: {verdicts['first_data']}")
    pairs = same_round_pairs(tbs, sums)
    if pairs:
        ratios = [tb["seconds"] / s["seconds"] for tb, s in pairs]
        capped = any(tb.get("capped") for tb, _ in pairs)
        verdicts["all_loaded"] = verdict(ratios, TARGETS["all_loaded_ratio"])
        if capped and verdicts["all_loaded"] == "NOT MET":
            verdicts["all_loaded"] = "undetermined (TensorBoard hit the bound)"
        print(
            f"every run loaded, TensorBoard / sumlens (per round): median "
            f"{'> ' if capped else ''}{fmt_x(statistics.median(ratios))} "
            f"({fmt_x(min(ratios))} - {fmt_x(max(ratios))}), target >= 10x: "
            f"{verdicts['all_loaded']}"
        )
        first_ratios = [tb["first_s"] / s["first_s"] for tb, s in pairs if tb.get("first_s")]
        if first_ratios:
            print(f"first data, TensorBoard / sumlens: {fmt_x(statistics.median(first_ratios))}")
    reloads = [r["reload"] for r in sums if r.get("reload")]
    if reloads:
        ok = all(t["requests"] == t["listing"] == 1 for t in reloads)
        verdicts["reload"] = "MET (every round)" if ok else "NOT MET"
        counted = [r["server_count"]["last_reload"] for r in sums if r.get("server_count")]
        own = counted[-1] if counted else None
        print(f"sumlens unchanged reload = 1 listing: {verdicts['reload']}; its own count: {own}")
    return {"rows": rows, "verdicts": verdicts}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The options (full size by default)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1_000)
    parser.add_argument("--tags", type=int, default=10)
    parser.add_argument("--steps", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--tb-rounds",
        type=int,
        default=1,
        help="rounds TensorBoard runs in, spread (default 1: it takes ~20 min at full size)",
    )
    parser.add_argument(
        "--tb-timeout", type=float, default=1_200.0, help="seconds TensorBoard gets per round"
    )
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument(
        "--reload-interval", type=float, default=5.0, help="of both servers (TensorBoard's default)"
    )
    parser.add_argument(
        "--pause", type=float, default=0.5, help="seconds between polls once first data is in"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Generate (once) and upload the bucket, run the rounds, print and save the report."""
    args = parse_args(argv)
    # a terminated benchmark still stops its servers, moto and the proxy (``finally``)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    workload = Workload("remote", args.runs, args.tags, args.steps, poll_s=args.pause)
    root = scale_workloads.ensure(workload)
    prime_numba()
    table = Table()
    with object_store(args.latency_ms) as store:
        took, (objects, size) = timed(lambda: upload(store, root, URL))
        print(f"uploaded {objects:,} objects, {size / 1e6:,.1f} MB to moto in {took:.0f} s")
        run_rounds(units(store, workload, args), args.rounds, table, brief=brief)
    out = {
        "args": vars(args),
        "objects": objects,
        "bytes": size,
        "results": table.results,
        "failures": table.failures,
        **report(table, workload, args),
        "machine": {**machine_facts(PACKAGES), **commit_facts()},
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / "bench_remote.json"
    path.write_text(json.dumps(out, indent=2, default=str) + "\n")
    print(f"raw results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
