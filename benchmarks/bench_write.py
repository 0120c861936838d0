"""Writing speed of ``sumlens.SummaryRecord`` against the anchors, measured in one run.

Contenders (see ``benchmarks/README.md`` for what each row means):

* ``sumlens``: ``SummaryRecord(log_dir)`` (MindSpore format, ``num_process=32``, the default);
* ``sumlens_tb``: the same with ``file_format="tensorboard"`` (info: same format as torch);
* ``sumlens_writer``: ``sumlens.SummaryWriter``, torch's API (TensorBoard format), called
  exactly as torch's writer is (each call its own ``global_step``);
* ``torch``: ``torch.utils.tensorboard.SummaryWriter``;
* ``tbx``: ``tensorboardX.SummaryWriter``;
* ``ms``: real MindSpore 2.10's ``SummaryRecord``, from the venv ``make bench-anchors`` makes;
* ``sumlens[np=N]``: sumlens with ``num_process=N`` (N = 1, 2, 4) on the image workloads.

Every contender runs in a long-lived worker process of its own (``benchmarks/_anchors/``:
``py_write`` under the project's .venv, ``ms_write`` under the MindSpore venv), which
imports its library once, builds the same data from the same seeds and warms up with 2
untimed steps; this process only hands out jobs and waits. Each round runs every
contender once per workload, in an order rotated by one place per round. Per run it
measures the total time (constructor + steps + ``close()``, i.e. until everything is
handed to the OS) and the caller time (the sum of the time spent inside the logging
calls: ``add_value`` + ``record``, ``add_scalar``, ``add_histogram``, ``add_images``).
Ratios are anchor time / sumlens time taken per round, summarised by median and range.

Usage: ``.venv/bin/python -m benchmarks.bench_write [--rounds 9] [--scale 1] [--only W]
[--quick] [--profile W]``. Raw results go to ``benchmarks/results/bench_write.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from benchmarks._anchors.workloads import (
    IMAGE_SHAPE,
    RESULT_MARKER,
    WORKLOADS,
    Workload,
    natural_batches,
    noise_batches,
    scaled_steps,
)
from benchmarks.harness.clock import now
from benchmarks.harness.machine import dist, wait_for_idle
from benchmarks.harness.paths import REPO_ROOT, RESULTS_DIR
from benchmarks.harness.report import fmt_duration, fmt_range, fmt_x
from benchmarks.harness.rounds import rotated
from benchmarks.harness.stats import NOISE_TIE, spread, verdict
from benchmarks.harness.workers import LineWorker

MS_VENV = Path.home() / ".cache" / "sumlens" / "bench-anchors" / "mindspore-venv"
MS_PYTHON = MS_VENV / "bin" / "python"
WORKER_MODULES = {"ms": "benchmarks._anchors.ms_write", "py": "benchmarks._anchors.py_write"}
"""The worker of MindSpore (run by its venv's Python) and that of every other contender."""
NUM_PROCESS = (1, 2, 4)
BASE = ("sumlens", "sumlens_tb", "sumlens_writer")
ANCHORS = ("torch", "tbx", "ms")
LABELS = {
    "sumlens": "sumlens SummaryRecord (MS format)",
    "sumlens_tb": "sumlens SummaryRecord (TB format)",
    "sumlens_writer": "sumlens SummaryWriter (torch's API)",
    "torch": "torch SummaryWriter",
    "tbx": "tensorboardX SummaryWriter",
    "ms": "MindSpore SummaryRecord",
}
TARGETS: dict[str, dict[str, float]] = {
    "scalar1_float": {"torch": 5.0, "ms": 40.0},
    "scalar1_tensor": {"torch": 5.0, "ms": 40.0},
    "scalar10": {"torch": 5.0, "ms": 40.0},
    "histogram": {"tbx": 2.0},
    "image_noise": {"ms": 1.5, "torch": 5.0},
    "image_natural": {"ms": 1.5, "torch": 5.0},
}
CALLER_TARGET_US = {"scalar1_float": 5.0, "scalar1_tensor": 5.0, "scalar10": 5.0}
"""Microseconds per scalar on the calling thread (add_value + its share of record)."""
ANCHORS_MD = {
    "scalar1_float": "torch 8.33 s (83 us/call), tbx 14.9 s, MindSpore 62.3 s",
    "scalar10": "torch 15.0 s, tbx 27.4 s, MindSpore 26.5 s",
    "histogram": "torch 3.5 s, tbx 2.51 s, MindSpore 3.5 s",
    "image_noise": "torch 18.9 s, tbx 5.2 s, MindSpore 3.34 s (caller 6.7 ms/step)",
}
IDLE_CORES = 0.25
"""Other processes' load (cores) under which the machine counts as idle between rounds."""
PNG_TARGET = 1.2
"""Our PNG may be at most this many times the size of Pillow's default-compression PNG."""


@dataclass(frozen=True)
class Job:
    """One measurement: a contender (its worker and label) on a workload."""

    group: str  # the table it belongs to: a workload name or numproc_<variant>
    workload: Workload
    label: str  # row name
    worker: str  # which worker process runs it
    params: tuple[tuple[str, int], ...] = ()


# ---- workers ---------------------------------------------------------------------------------


def worker_args(name: str, *options: str) -> list[str]:
    """The command of contender ``name``'s worker, run from the repository root."""
    if name == "ms":
        return [str(MS_PYTHON), "-m", WORKER_MODULES["ms"], *options]
    return [sys.executable, "-m", WORKER_MODULES["py"], *options]


def start_worker(name: str, log: Path) -> LineWorker:
    """A long-lived worker process serving one contender's jobs over stdin/stdout."""
    return LineWorker(name, worker_args(name, "--serve"), log, RESULT_MARKER, cwd=REPO_ROOT)


# ---- jobs ------------------------------------------------------------------------------------


def build_jobs(only: str | None, with_ms: bool) -> list[Job]:
    jobs: list[Job] = []
    contenders = BASE + tuple(a for a in ANCHORS if with_ms or a != "ms")
    for name, workload in WORKLOADS.items():
        if only in (None, name):
            jobs += [Job(name, workload, c, c) for c in contenders]
    for variant in ("noise", "natural"):
        group = f"numproc_{variant}"
        if only in (None, group, "numproc"):
            workload = WORKLOADS[f"image_{variant}"]
            jobs += [
                Job(group, workload, f"sumlens[np={n}]", "sumlens", (("num_process", n),))
                for n in NUM_PROCESS
            ]
    return jobs


def groups_in(jobs: list[Job]) -> list[str]:
    return list(dict.fromkeys(job.group for job in jobs))


# ---- verification of what was written ----------------------------------------------------------


def count_events(log_dir: Path) -> dict[str, int]:
    """Values per plugin in every event file under ``log_dir``, read by sumlens' reader."""
    from sumlens.io import iter_events

    counts: dict[str, int] = {}
    for event in iter_events(log_dir):
        counts[event.plugin] = counts.get(event.plugin, 0) + 1
    return counts


def first_image(log_dir: Path) -> bytes | None:
    from sumlens.io import iter_events

    for event in iter_events(log_dir):
        if event.plugin == "image":
            return event.value.encoded
    return None


def verify(job: Job, steps: int, log_dir: Path) -> dict:
    """Check the written files hold every value; keep the first image's PNG size."""
    counts = count_events(log_dir)
    kind = job.workload.kind
    expected = steps * job.workload.per_step
    found = counts.get(kind, 0)
    out: dict = {"counts": counts, "ok": found == expected}
    if not out["ok"]:
        print(f"  !! {job.label} on {job.group}: {found} {kind} values on disk, {expected} written")
    if kind == "image":
        png = first_image(log_dir)
        out["png_bytes"] = len(png) if png is not None else None
        if job.worker == "sumlens" and png is not None:
            out["png_check"] = png_check(job.workload, png)
    return out


def tiled_uint8(batch: np.ndarray) -> np.ndarray:
    """Our own tiling of an NCHW [0, 1] batch into one row of pictures, scaled to uint8."""
    n, _, height, width = batch.shape
    canvas = np.zeros((height, n * width, 3), dtype=np.float32)
    for k in range(n):
        canvas[:, k * width : (k + 1) * width] = batch[k].transpose(1, 2, 0)
    return (canvas * np.float32(255)).astype(np.uint8)


def png_check(workload: Workload, ours: bytes) -> dict:
    """Our PNG of step 0 against Pillow's default-compression PNG of the same picture."""
    from PIL import Image

    batches = noise_batches() if workload.variant == "noise" else natural_batches()
    pixels = tiled_uint8(batches[0])
    buffer = io.BytesIO()
    Image.fromarray(pixels, "RGB").save(buffer, format="PNG")
    pillow = buffer.getvalue()
    decoded = np.asarray(Image.open(io.BytesIO(ours)).convert("RGB"))
    return {
        "ours": len(ours),
        "pillow_default": len(pillow),
        "ratio": len(ours) / len(pillow),
        "same_pixels": decoded.shape == pixels.shape and bool(np.array_equal(decoded, pixels)),
        "raw_bytes": int(pixels.nbytes),
    }


# ---- statistics --------------------------------------------------------------------------------


def extrapolate(run: dict, full_steps: int) -> float:
    """The total at full size: the constructor once, the rest scaled by steps."""
    return run["open"] + (run["total"] - run["open"]) * full_steps / run["steps"]


def analyse(jobs: list[Job], runs: dict[tuple[str, str], list[dict]]) -> dict:
    """Per group: per-row statistics and per-round ratios against the sumlens rows."""
    report: dict = {}
    for group in groups_in(jobs):
        rows = [job for job in jobs if job.group == group]
        workload = rows[0].workload
        values = workload.per_step
        table = {}
        for job in rows:
            ok = [r for r in runs.get((group, job.label), []) if "error" not in r]
            if not ok:
                continue
            steps = ok[0]["steps"]
            table[job.label] = {
                "rounds": len(ok),
                "steps": steps,
                "total": spread([r["total"] for r in ok]),
                "caller": spread([r["caller"] for r in ok]),
                "open": spread([r["open"] for r in ok]),
                "close": spread([r["close"] for r in ok]),
                "per_step": spread([(r["total"] - r["open"]) / steps for r in ok]),
                "caller_per_value": spread([r["caller"] / (steps * values) for r in ok]),
                "caller_per_step": spread([r["caller"] / steps for r in ok]),
                "full_total": spread([extrapolate(r, workload.full_steps) for r in ok]),
            }
        ratios = {}
        if group.startswith("numproc"):
            # speed-up of N encoder threads over one: (np=1 time) / (np=N time)
            base = f"sumlens[np={NUM_PROCESS[0]}]"
            pairs_of = [(base, label) for label in table if label != base]
        else:
            pairs_of = [(a, b) for b in BASE if b in table for a in ANCHORS if a in table]
        for slow, fast in pairs_of:
            pairs = [
                (a["total"] / b["total"], a["caller"] / b["caller"])
                for a, b in zip(runs[(group, slow)], runs[(group, fast)], strict=True)
                if "error" not in a and "error" not in b
            ]
            if pairs:
                ratios[f"{slow}/{fast}"] = {
                    "total": spread([t for t, _ in pairs]),
                    "caller": spread([c for _, c in pairs]),
                    "per_round_total": [t for t, _ in pairs],
                }
        report[group] = {"title": workload.title, "rows": table, "ratios": ratios}
    return report


def print_report(report: dict, checks: dict, scale: float) -> list[str]:
    """Print the tables; return the list of missed targets."""
    missed: list[str] = []
    for group, part in report.items():
        print(f"\n## {group}: {part['title']}  (scale {scale:g})")
        rows = part["rows"]
        if not rows:
            continue
        any_row = next(iter(rows.values()))
        print(f"   {any_row['steps']} steps per run, {any_row['rounds']} rounds")
        header = (
            f"   {'contender':<36} {'total median (min-max)':<28} {'per step':>10} "
            f"{'full-size total':>16} {'caller per step':>16} {'caller/value':>13}"
        )
        print(header)
        for label, row in rows.items():
            print(
                f"   {LABELS.get(label, label):<36} {fmt_range(row['total']):<28} "
                f"{fmt_duration(row['per_step']['median']):>10} "
                f"{fmt_duration(row['full_total']['median']):>16} "
                f"{fmt_duration(row['caller_per_step']['median']):>16} "
                f"{fmt_duration(row['caller_per_value']['median']):>13}"
            )
        targets = TARGETS.get(group, {})
        for key, ratio in part["ratios"].items():
            anchor, base = key.split("/")
            t = ratio["total"]
            text = (
                f"   {key:<28} total {fmt_x(t['median'])} ({fmt_x(t['min'])}-{fmt_x(t['max'])})"
                f"   caller {fmt_x(ratio['caller']['median'])}"
            )
            if base == "sumlens" and anchor in targets:
                goal = targets[anchor]
                result = verdict(ratio["per_round_total"], goal)
                text += f"   target >= {goal:g}x: {result}"
                if result == "NOT MET":
                    missed.append(f"{group}: {key} = {fmt_x(t['median'])} < {goal:g}x")
            elif 1 / NOISE_TIE < t["median"] < NOISE_TIE:
                text += "   (tie)"
            print(text)
        goal_us = CALLER_TARGET_US.get(group)
        if goal_us is not None and "sumlens" in rows:
            for label in ("sumlens", "sumlens_tb"):
                if label not in rows:
                    continue
                per = rows[label]["caller_per_value"]
                result = "met" if per["median"] * 1e6 <= goal_us else "MISSED"
                print(
                    f"   {label} caller per scalar {fmt_range(per)}   target <= {goal_us:g} us: "
                    f"{result}"
                )
                if result == "MISSED" and label == "sumlens":
                    missed.append(
                        f"{group}: caller {per['median'] * 1e6:.1f} us per scalar > {goal_us:g} us"
                    )
        if group in ANCHORS_MD:
            print(f"   anchors.md (full size, this machine kind): {ANCHORS_MD[group]}")
        check = checks.get(group)
        if check and group.startswith("image"):
            png = check.get("sumlens", {}).get("png_check")
            if png:
                ok = "met" if png["ratio"] <= PNG_TARGET else "MISSED"
                print(
                    f"   PNG of step 0: ours {png['ours']:,} B vs Pillow default "
                    f"{png['pillow_default']:,} B = {png['ratio']:.3f}x (target <= {PNG_TARGET}x: "
                    f"{ok}); same pixels as our own tiling: {png['same_pixels']}"
                )
                if ok == "MISSED":
                    missed.append(f"{group}: PNG {png['ratio']:.2f}x Pillow's size")
            sizes = {label: c.get("png_bytes") for label, c in check.items() if c.get("png_bytes")}
            if sizes:
                print(
                    "   first PNG written: "
                    + ", ".join(f"{label} {size:,} B" for label, size in sizes.items())
                )
    return missed


# ---- main ------------------------------------------------------------------------------------


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("sumlens", "numpy", "torch", "tensorboard", "tensorboardX", "protobuf", "Pillow"):
        out[name] = dist(name) or "absent"
    if MS_PYTHON.exists():
        code = (
            "import importlib.metadata as m; "
            "print(m.version('mindspore'), m.version('numpy'), m.version('protobuf'))"
        )
        ms = subprocess.run([str(MS_PYTHON), "-c", code], capture_output=True, text=True)
        parts = ms.stdout.split()
        if len(parts) == 3:
            out["mindspore"], out["mindspore_venv_numpy"], out["mindspore_venv_protobuf"] = parts
    return out


def profile(args: argparse.Namespace) -> None:
    """Profile the sumlens side of one workload (in-process worker under cProfile)."""
    name = args.profile
    if name not in WORKLOADS:
        raise SystemExit(f"--profile takes one of {', '.join(WORKLOADS)}")
    job = {
        "contender": args.profile_contender,
        "workload": name,
        "steps": scaled_steps(WORKLOADS[name], args.scale),
        "params": {"num_process": args.num_process} if args.num_process else {},
    }
    cmd = worker_args("py", "--profile", json.dumps(job), "--top", str(args.top))
    subprocess.run(cmd, check=True, cwd=REPO_ROOT)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    groups = [*WORKLOADS, "numproc", "numproc_noise", "numproc_natural"]
    parser.add_argument("--rounds", type=int, default=9, help="rounds (default 9)")
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="fraction of the full step counts to run (per-step times and totals "
        "extrapolated to full size are reported); default 1",
    )
    parser.add_argument("--only", choices=groups, help="run one workload (or numproc)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 rounds at scale 0.01")
    parser.add_argument("--no-ms", action="store_true", help="leave MindSpore out")
    parser.add_argument(
        "--profile", metavar="WORKLOAD", help="profile sumlens on WORKLOAD and stop"
    )
    parser.add_argument("--profile-contender", default="sumlens", choices=BASE)
    parser.add_argument("--num-process", type=int, help="num_process for --profile")
    parser.add_argument("--top", type=int, default=20, help="rows per thread for --profile")
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=120.0,
        help="before each round wait up to this many seconds for other processes' CPU load "
        "to drop (default 120)",
    )
    parser.add_argument("--keep-logs", action="store_true", help="keep the written files")
    parser.add_argument("--out", type=Path, help="results JSON (default under results/)")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds = min(args.rounds, 3)
        args.scale = min(args.scale, 0.01)
    if args.rounds < 1 or not 0 < args.scale <= 1:
        parser.error("--rounds must be >= 1 and --scale in (0, 1]")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.profile:
        profile(args)
        return 0
    with_ms = not args.no_ms
    if with_ms and not MS_PYTHON.exists():
        print(f"MindSpore venv missing ({MS_VENV}): run `make bench-anchors`; leaving it out")
        with_ms = False
    jobs = build_jobs(args.only, with_ms)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    work = RESULTS_DIR / "_write_logs"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    worker_names = list(dict.fromkeys(job.worker for job in jobs))
    workers = {
        name: start_worker(name, RESULTS_DIR / f"bench_write_{name}.log") for name in worker_names
    }
    meta = {
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "argv": sys.argv[1:],
        "rounds": args.rounds,
        "scale": args.scale,
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "versions": versions(),
        "image_shape": IMAGE_SHAPE,
        "env": {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")},
    }
    print(f"bench_write: {len(jobs)} runs per round x {args.rounds} rounds, scale {args.scale:g}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()))
    runs: dict[tuple[str, str], list[dict]] = {}
    checks: dict[str, dict[str, dict]] = {}
    started = now()
    busy: list[float] = []
    try:
        for rnd in range(args.rounds):
            load, waited = wait_for_idle(IDLE_CORES, args.wait_idle)
            busy.append(load)
            if load > IDLE_CORES:
                print(f"  !! before round {rnd + 1}: {load:.2f} cores busy with other work")
            elif waited:
                print(f"  (waited {waited:.0f} s for other work on the machine to stop)")
            for group in groups_in(jobs):
                members = [job for job in jobs if job.group == group]
                for job in rotated(members, rnd):
                    steps = scaled_steps(job.workload, args.scale)
                    safe = job.label.replace("[", "_").replace("]", "").replace("=", "")
                    log_dir = work / f"r{rnd}" / group / safe
                    request = {
                        "contender": job.worker,
                        "workload": job.workload.name,
                        "steps": steps,
                        "log_dir": str(log_dir),
                        "warm_dir": str(work),
                        "params": dict(job.params),
                    }
                    result = workers[job.worker].run(request)
                    result["round"] = rnd
                    if "error" in result:
                        print(f"  !! {job.label} on {group}, round {rnd}:\n{result['error']}")
                    elif rnd == 0:
                        result["check"] = verify(job, steps, log_dir)
                        checks.setdefault(group, {})[job.label] = result["check"]
                    runs.setdefault((group, job.label), []).append(result)
                    if not args.keep_logs:
                        shutil.rmtree(log_dir, ignore_errors=True)
            elapsed = now() - started
            print(f"round {rnd + 1}/{args.rounds} done, {elapsed:.0f} s elapsed", flush=True)
    finally:
        for worker in workers.values():
            worker.close()
        if not args.keep_logs:
            shutil.rmtree(work, ignore_errors=True)
    meta["foreign_cores_busy_between_rounds"] = busy
    if busy and max(busy) > IDLE_CORES:
        print(
            f"\nWARNING: other processes kept up to {max(busy):.2f} cores busy between rounds; "
            "these timings are disturbed (rerun on an idle machine)"
        )
    report = analyse(jobs, runs)
    missed = print_report(report, checks, args.scale)
    print("\nmissed targets: " + ("; ".join(missed) if missed else "none"))
    out = args.out or RESULTS_DIR / ("bench_write_quick.json" if args.quick else "bench_write.json")
    raw = {f"{group}|{label}": value for (group, label), value in runs.items()}
    out.write_text(
        json.dumps(
            {"meta": meta, "report": report, "checks": checks, "missed": missed, "runs": raw},
            indent=1,
        )
    )
    print(f"raw results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
