"""Worker of ``bench_write`` for the contenders of the project's .venv.

Contenders: ``sumlens`` (``SummaryRecord``, MindSpore format, the default),
``sumlens_tb`` (the same with ``file_format="tensorboard"``), ``sumlens_writer``
(``sumlens.SummaryWriter``, torch's API, called exactly as torch's writer is), ``torch``
(``torch.utils.tensorboard.SummaryWriter``) and ``tbx`` (``tensorboardX.SummaryWriter``).
One worker process serves one contender (see :func:`workloads.serve`); values are the
same for all: Python floats, 0-d CPU torch tensors, or CPU torch tensors wrapping the
shared numpy data (float32 histograms and NCHW image batches).

``--profile`` instead runs one sumlens job in this process under cProfile, with one
profiler per thread (caller, writer, encoder threads), and prints where the time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import tempfile
import threading

from benchmarks._anchors.workloads import WORKLOADS, Writer, serve, timed_run, workload_data

_DATA: dict[tuple[str, int], object] = {}


def _data(workload_name: str, steps: int) -> object:
    """Shared data as this worker's contenders take it (cached per workload and size)."""
    workload = WORKLOADS[workload_name]
    key = (workload_name, steps if workload.kind == "scalar" else 0)
    if key not in _DATA:
        import torch

        raw = workload_data(workload, steps)
        if workload.kind == "scalar" and workload.variant == "tensor":
            from benchmarks._anchors.workloads import TENSOR_POOL

            data = [torch.tensor(float(v)) for v in raw[:TENSOR_POOL, 0]]
        elif workload.kind == "scalar":
            data = raw.tolist()  # rows of Python floats
        else:
            data = [torch.from_numpy(a) for a in raw]
        _DATA.clear()  # keep one workload's data at a time
        _DATA[key] = data
    return _DATA[key]


def _values(workload_name: str, steps: int):
    workload = WORKLOADS[workload_name]
    data = _data(workload_name, steps)
    if workload.kind == "scalar" and workload.variant == "tensor":
        return lambda i: data[i % len(data)]
    if workload.kind == "scalar":
        if workload.per_step == 1:
            return lambda i: data[i][0]
        return lambda i: data[i]
    return lambda i: data[i % len(data)]


def sumlens_writer(job: dict, log_dir: str) -> tuple[Writer, int]:
    from sumlens import SummaryRecord

    workload = WORKLOADS[job["workload"]]
    steps = job["steps"]
    params = dict(job.get("params", {}))
    if job["contender"] == "sumlens_tb":
        params["file_format"] = "tensorboard"
    box: dict[str, SummaryRecord] = {}

    def open_() -> None:
        box["r"] = SummaryRecord(log_dir, **params)
        rec = box["r"]
        add, record = rec.add_value, rec.record
        if workload.kind == "scalar" and workload.per_step > 1:
            tags = [f"loss{k}" for k in range(workload.per_step)]

            def step(i: int, row: list) -> None:
                for tag, v in zip(tags, row, strict=True):
                    add("scalar", tag, v)
                record(i)

        else:
            plugin = workload.kind
            tag = {"scalar": "loss", "histogram": "weights", "image": "images"}[plugin]

            def step(i: int, v: object) -> None:
                add(plugin, tag, v)
                record(i)

        box["step"] = step

    writer = Writer(
        open=open_,
        step=lambda i, v: box["step"](i, v),
        close=lambda: box["r"].close(),
        values=_values(job["workload"], steps),
    )
    return writer, steps


def _tb_writer(cls, job: dict, log_dir: str) -> tuple[Writer, int]:
    workload = WORKLOADS[job["workload"]]
    steps = job["steps"]
    box: dict[str, object] = {}

    def open_() -> None:
        w = box["w"] = cls(log_dir)
        if workload.kind == "scalar" and workload.per_step > 1:
            tags = [f"loss{k}" for k in range(workload.per_step)]
            add_scalar = w.add_scalar

            def step(i: int, row: list) -> None:
                for tag, v in zip(tags, row, strict=True):
                    add_scalar(tag, v, i)

        elif workload.kind == "scalar":
            add_scalar = w.add_scalar

            def step(i: int, v: object) -> None:
                add_scalar("loss", v, i)

        elif workload.kind == "histogram":
            add_histogram = w.add_histogram

            def step(i: int, v: object) -> None:
                add_histogram("weights", v, i)

        else:
            add_images = w.add_images

            def step(i: int, v: object) -> None:
                add_images("images", v, i)

        box["step"] = step

    writer = Writer(
        open=open_,
        step=lambda i, v: box["step"](i, v),
        close=lambda: box["w"].close(),
        values=_values(job["workload"], steps),
    )
    return writer, steps


def make_writer(job: dict, log_dir: str) -> tuple[Writer, int]:
    contender = job["contender"]
    if contender in ("sumlens", "sumlens_tb"):
        return sumlens_writer(job, log_dir)
    if contender == "sumlens_writer":
        from sumlens import SummaryWriter

        return _tb_writer(SummaryWriter, job, log_dir)
    if contender == "torch":
        from torch.utils.tensorboard import SummaryWriter

        return _tb_writer(SummaryWriter, job, log_dir)
    if contender == "tbx":
        from tensorboardX import SummaryWriter

        return _tb_writer(SummaryWriter, job, log_dir)
    raise ValueError(f"unknown contender {contender!r}")


# ---- profiling -------------------------------------------------------------------------------


def profile(job: dict, top: int) -> None:
    """Run ``job`` (a sumlens contender) under one cProfile per thread; print the top lines."""
    from sumlens.summary import pipeline

    profiles: dict[str, list[cProfile.Profile]] = {}
    lock = threading.Lock()

    def wrap(method, label):
        def run(self, *args, **kwargs):
            prof = cProfile.Profile()
            with lock:
                profiles.setdefault(label, []).append(prof)
            prof.enable()
            try:
                return method(self, *args, **kwargs)
            finally:
                prof.disable()

        return run

    # Only this process is patched, to see the background threads; src/ is untouched.
    pipeline.WriterPipeline._run = wrap(pipeline.WriterPipeline._run, "writer thread")
    pipeline.EncoderPool._work = wrap(pipeline.EncoderPool._work, "encoder threads")

    with tempfile.TemporaryDirectory() as tmp:
        warm, _ = make_writer({**job, "steps": 2}, os.path.join(tmp, "warm"))
        timed_run(warm, 2)
        profiles.clear()
        writer, steps = make_writer(job, os.path.join(tmp, "run"))
        caller = cProfile.Profile()
        writer_step = writer.step

        def profiled_step(i: int, v: object) -> None:
            caller.enable()
            writer_step(i, v)
            caller.disable()

        writer.step = profiled_step
        times = timed_run(writer, steps)
    print(f"# profile of {job['contender']} on {job['workload']} x {steps} steps: {times}")
    groups = [("caller thread (inside add_value/record)", [caller]), *profiles.items()]
    for label, profs in groups:
        if not profs:
            continue
        out = io.StringIO()
        stats = pstats.Stats(profs[0], stream=out)
        for extra in profs[1:]:
            stats.add(extra)
        stats.strip_dirs().sort_stats("tottime").print_stats(top)
        print(f"\n## {label}: {len(profs)} profiler(s), sorted by own time")
        print(_trim(out.getvalue()))


def _trim(text: str) -> str:
    """pstats output without its preamble lines (keep the totals line and the table)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    keep = [ln for ln in lines if "function calls" in ln or ln.lstrip()[:1].isdigit()]
    header = [ln for ln in lines if "ncalls" in ln]
    return "\n".join(keep[:1] + header[:1] + keep[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", action="store_true", help="answer JSON jobs from stdin")
    parser.add_argument("--profile", metavar="JOB_JSON", help="profile one sumlens job")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    if args.profile:
        profile(json.loads(args.profile), args.top)
    elif args.serve:
        serve(make_writer)
    else:
        parser.error("give --serve or --profile")


if __name__ == "__main__":
    main()
