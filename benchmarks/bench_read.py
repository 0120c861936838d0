"""Reading speed of ``sumlens.io.read_scalars`` against the anchors, measured in one run.

Contenders (see ``benchmarks/README.md`` for what each row means):

* sumlens ``read_scalars(engine="numba")``, warm (compiled, in this process), TB and MS files;
* sumlens in a fresh process (interpreter start + imports + read), numba cache present;
* sumlens in a fresh process with an EMPTY numba cache (compile cost, reported apart);
* sumlens ``read_scalars(engine="python")`` (the protobuf reference path), TB and MS files;
* TensorBoard's ``EventAccumulator`` (keep everything), Reload() + all scalars;
* tensorboard-data-server (Rust), fresh process until all points are read over gRPC;
* the ceiling: read the file bytes and ``crc32c`` over them.

The contenders run interleaved, once per round, in a rotating order; ratios are taken per
round (anchor time / sumlens time in the same round) and summarised by median and range.

Usage: ``.venv/bin/python -m benchmarks.bench_read [--rounds 9] [--ea-rounds 3] [--quick]``.
Test data is generated on first use under ``benchmarks/data/`` and reused afterwards.
Raw timings go to ``benchmarks/results/bench_read.json``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import crc32c
import numpy as np

from benchmarks.data_server import SERVER_POLL_S, Unavailable, server_binary, time_data_server
from benchmarks.datasets import TAGS, DataSet, Spec, ensure_data
from benchmarks.harness.clock import now
from benchmarks.harness.machine import machine_facts, module_fingerprint
from benchmarks.harness.paths import DATA_DIR, RESULTS_DIR
from benchmarks.harness.report import fmt_s, fmt_x
from benchmarks.harness.rounds import Table, Unit, run_rounds, spread_rounds
from benchmarks.harness.stats import same_round_pairs, summary, verdict
from sumlens.io import read_scalars

FASTSCAN = "sumlens.io._fastscan"
"""The reader's numba module: a change during the run means fresh processes compiled."""

TARGETS = {
    "ea_over_numba": 30.0,
    "server_over_fresh": 2.0,
    "server_over_numba": 10.0,
}


# --------------------------------------------------------------------------------------
# Correctness
# --------------------------------------------------------------------------------------


def check_scalars(scalars: dict, spec: Spec, kind: str, what: str) -> None:
    """Raise AssertionError unless ``scalars`` holds exactly what the generator wrote."""
    values = spec.values().astype(np.float64)
    walls = spec.wall_times()
    if kind == "summary":  # MindSpore: one event (one wall time) per step
        walls = np.repeat(walls[:, :1], len(TAGS), axis=1)
    steps = np.arange(spec.steps, dtype=np.int64)
    if sorted(scalars) != sorted(TAGS):
        raise AssertionError(f"{what}: tags {sorted(scalars)} != {sorted(TAGS)}")
    for j, tag in enumerate(TAGS):
        got_steps, got_walls, got_values = (np.asarray(c) for c in scalars[tag])
        if not (len(got_steps) == len(got_walls) == len(got_values) == spec.steps):
            raise AssertionError(f"{what}: tag {tag!r} has {len(got_steps)} points")
        if not np.array_equal(got_steps, steps):
            raise AssertionError(f"{what}: tag {tag!r}: steps differ")
        if not np.array_equal(got_values, values[:, j]):
            raise AssertionError(f"{what}: tag {tag!r}: values differ")
        if not np.array_equal(got_walls, walls[:, j]):
            raise AssertionError(f"{what}: tag {tag!r}: wall times differ")


def check_correctness(data: DataSet, engines: list[str]) -> None:
    """read_scalars returns len(TAGS) tags x steps points, equal to what was written."""
    for engine in engines:
        for path, kind in ((data.tb_file, "tensorboard"), (data.ms_file, "summary")):
            result = read_scalars(path, engine=engine)
            what = f"read_scalars({path.name}, engine={engine!r})"
            check_scalars(result, data.spec, kind, what)
            if result.stats.damaged:
                raise AssertionError(f"{what}: reported damage {result.stats}")
            print(f"  ok: {what}: {len(result)} tags x {data.spec.steps:,} points", flush=True)


def _count(scalars: dict) -> int:
    return sum(len(columns[0]) for columns in scalars.values())


# --------------------------------------------------------------------------------------
# Contenders
# --------------------------------------------------------------------------------------


def numba_engine_status() -> str | None:
    """None when ``engine="numba"`` can run, else why not."""
    if importlib.util.find_spec("sumlens.io._fastscan") is None:
        return "src/sumlens/io/_fastscan.py does not exist yet"
    try:
        module = importlib.import_module("sumlens.io._fastscan")
    except Exception as err:  # a half-written module must not stop the other rows
        return f"importing sumlens.io._fastscan failed: {type(err).__name__}: {err}"
    missing = [name for name in ("scan_file_scalars", "warm_up") if not hasattr(module, name)]
    if missing:
        return f"sumlens.io._fastscan lacks {', '.join(missing)}"
    return None


def time_read_scalars(path: Path, engine: str, points: int) -> dict:
    gc.collect()
    started = now()
    result = read_scalars(path, engine=engine)
    seconds = now() - started
    got = _count(result)
    if got != points:
        raise AssertionError(f"read_scalars({path.name}, {engine}) returned {got} points")
    return {"seconds": seconds}


def time_ceiling(path: Path) -> dict:
    started = now()
    with open(path, "rb") as handle:
        buf = handle.read()
    read_done = now()
    crc32c.crc32c(buf)
    done = now()
    return {"seconds": done - started, "read_s": read_done - started, "crc_s": done - read_done}


FRESH_CODE = (
    "import sys, time\n"
    "t0 = time.perf_counter()\n"
    "from sumlens.io import read_scalars\n"
    "t1 = time.perf_counter()\n"
    "s = read_scalars(sys.argv[1], engine=sys.argv[2])\n"
    "t2 = time.perf_counter()\n"
    "print(sum(len(c[0]) for c in s.values()), t1 - t0, t2 - t1)\n"
)
IMPORT_CODE = "import sumlens.io\n"


def time_fresh_process(path: Path, points: int, env: dict[str, str] | None = None) -> dict:
    """A new interpreter imports sumlens and reads ``path`` with the numba engine."""
    started = now()
    proc = subprocess.run(
        [sys.executable, "-c", FRESH_CODE, str(path), "numba"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    seconds = now() - started
    if proc.returncode != 0:
        raise RuntimeError(f"fresh process failed ({proc.returncode}):\n{proc.stderr}")
    count, import_s, read_s = proc.stdout.split()
    if int(count) != points:
        raise AssertionError(f"fresh process read {count} points, expected {points}")
    return {"seconds": seconds, "import_s": float(import_s), "read_s": float(read_s)}


def cache_snapshot() -> dict[str, tuple[int, int]]:
    """Files of the numba cache directory this run uses, with their size and mtime."""
    root = Path(os.environ["NUMBA_CACHE_DIR"])
    if not root.is_dir():
        return {}
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


def time_fresh_with_cache(path: Path, points: int) -> dict:
    """:func:`time_fresh_process` with the run's cache; notes when the child had to compile."""
    before = cache_snapshot()
    result = time_fresh_process(path, points)
    result["cache_miss"] = cache_snapshot() != before
    return result


def time_import_only() -> dict:
    started = now()
    subprocess.run([sys.executable, "-c", IMPORT_CODE], check=True)
    return {"seconds": now() - started}


def time_cold_compile(path: Path, points: int) -> dict:
    """A fresh process like :func:`time_fresh_process`, with an empty numba cache directory."""
    cache = Path(tempfile.mkdtemp(prefix="sumlens-bench-numba-"))
    try:
        env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
        result = time_fresh_process(path, points, env)
        result["cache_files_written"] = sum(1 for p in cache.rglob("*") if p.is_file())
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return result


def time_event_accumulator(path: Path, points: int) -> dict:
    from tensorboard.backend.event_processing import event_accumulator

    guidance = dict.fromkeys(event_accumulator.DEFAULT_SIZE_GUIDANCE, 0)
    gc.collect()
    started = now()
    accumulator = event_accumulator.EventAccumulator(str(path), size_guidance=guidance)
    accumulator.Reload()
    got = 0
    for tag in accumulator.Tags()[event_accumulator.SCALARS]:
        got += len(accumulator.Scalars(tag))
    seconds = now() - started
    del accumulator
    gc.collect()
    if got != points:
        raise AssertionError(f"EventAccumulator returned {got} points, expected {points}")
    return {"seconds": seconds}


@dataclass
class Contender:
    key: str
    label: str
    group: str
    run: Callable[[], dict]
    rounds: set[int]
    unavailable: str | None = None
    results: list[dict] = field(default_factory=list)


def build_contenders(data: DataSet, args: argparse.Namespace, numba_status: str | None) -> list:
    spec = data.spec
    every = set(range(args.rounds))
    tb, ms = data.tb_file, data.ms_file
    n = spec.points
    ea_rounds = spread_rounds(args.ea_rounds, args.rounds)
    cold_rounds = spread_rounds(args.cold_rounds, args.rounds, offset=args.rounds // 2)
    server_checksum_rounds = every if args.server_checksum else set()
    c = [
        Contender(
            "numba_tb",
            "sumlens read_scalars numba, warm: TB file",
            "sumlens",
            lambda: time_read_scalars(tb, "numba", n),
            every,
            numba_status,
        ),
        Contender(
            "numba_ms",
            "sumlens read_scalars numba, warm: MS file",
            "sumlens",
            lambda: time_read_scalars(ms, "numba", n),
            every,
            numba_status,
        ),
        Contender(
            "fresh_tb",
            "sumlens fresh process (python -c, numba cache present): TB",
            "sumlens",
            lambda: time_fresh_with_cache(tb, n),
            every,
            numba_status,
        ),
        Contender(
            "cold_tb",
            "sumlens fresh process, EMPTY numba cache (compile): TB",
            "sumlens",
            lambda: time_cold_compile(tb, n),
            cold_rounds,
            numba_status,
        ),
        Contender(
            "python_tb",
            "sumlens read_scalars python (protobuf): TB file",
            "sumlens",
            lambda: time_read_scalars(tb, "python", n),
            every,
        ),
        Contender(
            "python_ms",
            "sumlens read_scalars python (protobuf): MS file",
            "sumlens",
            lambda: time_read_scalars(ms, "python", n),
            every,
        ),
        Contender(
            "import_only",
            "fresh process: python -c 'import sumlens.io' only",
            "info",
            time_import_only,
            every,
        ),
        Contender(
            "ea_tb",
            "TensorBoard EventAccumulator (size_guidance 0): TB",
            "anchor",
            lambda: time_event_accumulator(tb, n),
            ea_rounds,
        ),
        Contender(
            "server_tb",
            "tensorboard-data-server (Rust), fresh process: TB",
            "anchor",
            lambda: time_data_server(data.tb_logdir, spec),
            every,
        ),
        Contender(
            "server_checksum_tb",
            "tensorboard-data-server --checksum: TB",
            "anchor",
            lambda: time_data_server(data.tb_logdir, spec, checksum=True),
            server_checksum_rounds,
        ),
        Contender(
            "ceiling_tb",
            "ceiling: read bytes + crc32c: TB file",
            "ceiling",
            lambda: time_ceiling(tb),
            every,
        ),
        Contender(
            "ceiling_ms",
            "ceiling: read bytes + crc32c: MS file",
            "ceiling",
            lambda: time_ceiling(ms),
            every,
        ),
    ]
    try:
        server_binary()
    except (ImportError, Unavailable) as err:
        for contender in c:
            if contender.key.startswith("server"):
                contender.unavailable = f"no data server: {err}"
    return c


# --------------------------------------------------------------------------------------
# Running and reporting
# --------------------------------------------------------------------------------------


def warm_up(data: DataSet, contenders: list[Contender], numba_status: str | None) -> None:
    """Untimed: page cache, numba compile (and its on-disk cache), lazy imports."""
    for path in (data.tb_file, data.ms_file):
        time_ceiling(path)
    if numba_status is None:
        from sumlens.io import _fastscan

        started = now()
        _fastscan.warm_up()
        print(f"  numba warm_up() in this process: {now() - started:.2f} s")
        for path in (data.tb_file, data.ms_file):
            read_scalars(path, engine="numba")
        started = now()
        time_fresh_process(data.tb_file, data.spec.points)  # the child finds the cache full
        print(f"  priming fresh process: {now() - started:.2f} s")
    if any(c.key == "ea_tb" and c.rounds for c in contenders):
        from tensorboard.backend.event_processing import event_accumulator  # noqa: F401
    if any(c.key.startswith("server") and c.rounds and not c.unavailable for c in contenders):
        import grpc  # noqa: F401
        from tensorboard.data.proto import data_provider_pb2_grpc  # noqa: F401


def run_contenders(contenders: list[Contender], rounds: int) -> None:
    """The contenders in interleaved rounds (the harness's :func:`run_rounds`); one that fails
    is marked unavailable and not run again."""
    table = Table(unavailable={c.key: c.unavailable for c in contenders if c.unavailable})
    units = [Unit(c.key, lambda c=c: {c.key: c.run()}, c.rounds) for c in contenders]
    run_rounds(units, rounds, table, retry_failed=False)
    for contender in contenders:
        contender.results = table.results.get(contender.key, [])
        contender.unavailable = table.unavailable.get(contender.key)


RATIOS = (
    # key, numerator (anchor), denominator (sumlens), target, what
    (
        "ea_over_numba",
        "ea_tb",
        "numba_tb",
        TARGETS["ea_over_numba"],
        "EventAccumulator / read_scalars numba warm (TB)",
    ),
    ("ea_over_fresh", "ea_tb", "fresh_tb", None, "EventAccumulator / sumlens fresh process (TB)"),
    ("ea_over_python", "ea_tb", "python_tb", None, "EventAccumulator / read_scalars python (TB)"),
    (
        "server_over_fresh",
        "server_tb",
        "fresh_tb",
        TARGETS["server_over_fresh"],
        "Rust server / sumlens fresh process, cache present (TB)",
    ),
    (
        "server_over_numba",
        "server_tb",
        "numba_tb",
        TARGETS["server_over_numba"],
        "Rust server / read_scalars numba warm (TB)",
    ),
    (
        "server_checksum_over_numba",
        "server_checksum_tb",
        "numba_tb",
        None,
        "Rust server --checksum / read_scalars numba warm (TB)",
    ),
    (
        "server_over_cold",
        "server_tb",
        "cold_tb",
        None,
        "Rust server / sumlens fresh process, EMPTY cache (TB)",
    ),
    (
        "server_over_python",
        "server_tb",
        "python_tb",
        None,
        "Rust server / read_scalars python (TB)",
    ),
    ("python_over_numba_tb", "python_tb", "numba_tb", None, "read_scalars python / numba (TB)"),
    ("python_over_numba_ms", "python_ms", "numba_ms", None, "read_scalars python / numba (MS)"),
    (
        "numba_over_ceiling_tb",
        "numba_tb",
        "ceiling_tb",
        None,
        "read_scalars numba warm / ceiling read+crc32c (TB)",
    ),
)


def report(
    contenders: list[Contender], data: DataSet, args: argparse.Namespace, meta: dict
) -> dict:
    by_key = {c.key: c for c in contenders}
    rows = []
    print()
    print(
        f"Reading {data.spec.points:,} scalar points in {len(TAGS)} tags + "
        f"{data.spec.histograms} histograms: TB file {meta['tb_mb']:.1f} MB, "
        f"MS file {meta['ms_mb']:.1f} MB (warm page cache)"
    )
    print(
        f"{args.rounds} rounds, contenders interleaved in rotating order; EventAccumulator "
        f"only in {len(by_key['ea_tb'].rounds)} of them (--ea-rounds; it is slow), "
        f"empty-cache compile in {len(by_key['cold_tb'].rounds)} (--cold-rounds)."
    )
    print()
    print("| contender | runs | median s | min - max s |")
    print("|---|---:|---:|---:|")
    for c in contenders:
        stats = summary([r["seconds"] for r in c.results])
        if c.unavailable:
            print(f"| {c.label} | - | unavailable | {c.unavailable} |")
        elif stats is None:
            print(f"| {c.label} | 0 | not run | |")
        else:
            print(
                f"| {c.label} | {stats['n']} | {fmt_s(stats['median'])} | "
                f"{fmt_s(stats['min'])} - {fmt_s(stats['max'])} |"
            )
        rows.append(
            {
                "key": c.key,
                "label": c.label,
                "group": c.group,
                "unavailable": c.unavailable,
                "summary": stats,
            }
        )
    extra = []
    for key in ("fresh_tb", "cold_tb"):
        c = by_key[key]
        if c.results:
            imp = statistics.median(r["import_s"] for r in c.results)
            rd = statistics.median(r["read_s"] for r in c.results)
            extra.append(
                f"{key}: inside the process, import sumlens.io {imp:.3f} s, "
                f"first read_scalars (incl. numba load/compile) {rd:.3f} s"
            )
    cold, fresh = by_key["cold_tb"], by_key["fresh_tb"]
    misses = [r["round"] + 1 for r in fresh.results if r.get("cache_miss")]
    if misses:
        extra.append(
            f"WARNING: fresh_tb compiled (its cache changed) in round(s) {misses}: "
            "the numba source or cache changed during the run"
        )
    if cold.results and fresh.results:
        cost = statistics.median(r["seconds"] for r in cold.results) - statistics.median(
            r["seconds"] for r in fresh.results
        )
        files = [r.get("cache_files_written", 0) for r in cold.results]
        extra.append(
            f"compile cost with an empty cache ~ {cost:.2f} s (cold median - fresh "
            f"median); cache files written to the temp NUMBA_CACHE_DIR: {files}"
        )
        if not all(files):
            extra.append(
                "WARNING: the empty-cache run wrote nothing to NUMBA_CACHE_DIR; "
                "_fastscan may not honour it, so 'cold' may not have compiled"
            )
    server = by_key["server_tb"]
    if server.results:
        port = statistics.median(r["port_s"] for r in server.results)
        listed = statistics.median(r["run_listed_s"] for r in server.results)
        extra.append(
            f"data server: port file after {port:.3f} s, run listed after "
            f"{listed:.3f} s (medians); polls every {SERVER_POLL_S * 1000:.0f} ms"
        )
    ceiling = by_key["ceiling_tb"]
    if ceiling.results:
        rd = statistics.median(r["read_s"] for r in ceiling.results)
        crc = statistics.median(r["crc_s"] for r in ceiling.results)
        extra.append(f"ceiling TB: read {rd:.4f} s + crc32c {crc:.4f} s (medians)")
    for line in extra:
        print(f"  {line}")

    print()
    print("Ratios (anchor time / sumlens time, per round, same round only):")
    print("| ratio | target | median | min - max | rounds | verdict |")
    print("|---|---:|---:|---:|---:|---|")
    ratios = {}
    for key, slow, fast, target, what in RATIOS:
        a, b = by_key[slow], by_key[fast]
        unavailable = a.unavailable or b.unavailable
        pairs = [] if unavailable else same_round_pairs(a.results, b.results)
        values = [s["seconds"] / f["seconds"] for s, f in pairs]
        stats = summary(values)
        target_text = f">= {target:g}x" if target else "-"
        if stats is None:
            why = unavailable or "not run"
            print(f"| {what} | {target_text} | n/a | | 0 | {why} |")
            outcome = None
        else:
            outcome = verdict(values, target)
            print(
                f"| {what} | {target_text} | {fmt_x(stats['median'])} | "
                f"{fmt_x(stats['min'])} - {fmt_x(stats['max'])} | {stats['n']} | "
                f"{outcome} |"
            )
        ratios[key] = {
            "what": what,
            "numerator": slow,
            "denominator": fast,
            "target": target,
            "per_round": values,
            "summary": stats,
            "verdict": outcome,
            "unavailable": unavailable,
        }
    print()
    print(
        "Targets (issue): read_scalars >= 30x EventAccumulator; fresh process >= 2x faster "
        "than the Rust server (compile cache present); >= 10x the Rust server once compiled."
    )
    print(
        "Note: the Rust server checks record CRCs only when parsing fails (no --checksum); "
        "sumlens' numba engine verifies every CRC."
    )
    return {"rows": rows, "notes": extra, "ratios": ratios}


def machine_meta(data: DataSet) -> dict:
    """Versions, machine and the data set, for the JSON."""
    packages = ("sumlens", "numpy", "numba", "protobuf", "tensorboard")
    return {
        **machine_facts((*packages, "tensorboard-data-server", "grpcio")),
        "tb_file": str(data.tb_file),
        "ms_file": str(data.ms_file),
        "tb_mb": data.tb_file.stat().st_size / 1e6,
        "ms_mb": data.ms_file.stat().st_size / 1e6,
        "spec": asdict(data.spec),
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rounds",
        type=int,
        default=9,
        help="rounds; every fast contender runs once per round (default 9)",
    )
    parser.add_argument(
        "--ea-rounds",
        type=int,
        default=3,
        help="rounds that also run EventAccumulator, 13-34 s each (default 3)",
    )
    parser.add_argument(
        "--cold-rounds",
        type=int,
        default=2,
        help="rounds that also time a fresh process with an empty numba cache (default 2)",
    )
    parser.add_argument(
        "--no-server-checksum",
        dest="server_checksum",
        action="store_false",
        help="skip the informational 'data server --checksum' row",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny smoke run: 2,000 steps per tag, 2 rounds, 1 EA round",
    )
    parser.add_argument(
        "--check-only",
        action="store_true",
        help="generate the data if needed, check read_scalars, and stop",
    )
    parser.add_argument(
        "--numba-cache-dir",
        type=Path,
        default=DATA_DIR / "numba-cache",
        help="NUMBA_CACHE_DIR for this run and its fresh processes "
        "(default benchmarks/data/numba-cache)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="JSON of all raw timings (default benchmarks/results/bench_read.json)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.ea_rounds, args.cold_rounds = 2, 1, 1
    if args.rounds < 1 or args.ea_rounds < 0 or args.cold_rounds < 0:
        parser.error("--rounds must be >= 1, --ea-rounds and --cold-rounds >= 0")
    if args.output is None:
        name = "bench_read_quick.json" if args.quick else "bench_read.json"
        args.output = RESULTS_DIR / name
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Before anything imports numba: one cache directory for this process and its children,
    # private to the benchmark so that other users of the default cache cannot evict it.
    os.environ["NUMBA_CACHE_DIR"] = str(args.numba_cache_dir.resolve())
    fingerprint = module_fingerprint(FASTSCAN)
    spec = Spec(steps=2_000, histograms=4) if args.quick else Spec()
    data = ensure_data("quick" if args.quick else "full", spec)
    numba_status = numba_engine_status()
    engines = ["python"] if numba_status else ["numba", "python"]
    if numba_status:
        print(f"numba engine unavailable: {numba_status}; its rows are marked unavailable")
    print("correctness check:", flush=True)
    check_correctness(data, engines)
    if args.check_only:
        return 0

    contenders = build_contenders(data, args, numba_status)
    meta = machine_meta(data)
    meta["numba_cache_dir"] = os.environ["NUMBA_CACHE_DIR"]
    meta["load_average_before"] = os.getloadavg()
    print(f"load average (1, 5, 15 min) before: {meta['load_average_before']}")
    print("warming up (untimed):", flush=True)
    warm_up(data, contenders, numba_status)
    started = now()
    run_contenders(contenders, args.rounds)
    meta["total_s"] = now() - started
    meta["rounds"] = args.rounds
    meta["numba_engine"] = numba_status or "available"
    meta["load_average_after"] = os.getloadavg()
    meta["fastscan_changed_during_run"] = module_fingerprint(FASTSCAN) != fingerprint
    summary_ = report(contenders, data, args, meta)
    print(f"\ntimed part took {meta['total_s']:.0f} s")
    print(f"load average (1, 5, 15 min) after: {meta['load_average_after']}")
    if meta["fastscan_changed_during_run"]:
        summary_["notes"].append("_fastscan.py changed during the run")
        print(
            "WARNING: src/sumlens/io/_fastscan.py changed during the run; the numba rows mix "
            "two versions and fresh processes recompiled. Run again."
        )

    out = {
        "meta": meta,
        "timings": {
            c.key: {
                "label": c.label,
                "group": c.group,
                "unavailable": c.unavailable,
                "rounds": sorted(c.rounds),
                "results": c.results,
            }
            for c in contenders
        },
        **summary_,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(out, indent=2) + "\n")
    print(f"raw timings written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
