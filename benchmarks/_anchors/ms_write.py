"""Worker of ``bench_write`` for real MindSpore's ``SummaryRecord`` (contender ``ms``).

Runs in the venv that ``make bench-anchors`` makes
(``~/.cache/sumlens/bench-anchors/mindspore-venv``), never in the project's .venv.
MindSpore's ``add_value`` takes only ``mindspore.Tensor`` values: the float workloads
build ``Tensor(v)`` inside the timed call (a user logging a Python float must do the
same), the tensor workload cycles 1,024 ready 0-d tensors, histograms and images are
tensors made from the shared numpy data before the clock starts. SummaryRecord starts
worker processes, so everything runs under ``if __name__ == "__main__"``.

``--check`` writes a few values of each kind to a temporary directory and prints the
versions (the last step of ``make bench-anchors``).
"""

from __future__ import annotations

import argparse
import os
import tempfile

from benchmarks._anchors.workloads import TENSOR_POOL, WORKLOADS, Writer, serve, workload_data

_DATA: dict[tuple[str, int], object] = {}


def _values(workload_name: str, steps: int):
    from mindspore import Tensor

    workload = WORKLOADS[workload_name]
    key = (workload_name, steps if workload.kind == "scalar" else 0)
    if key not in _DATA:
        raw = workload_data(workload, steps)
        if workload.kind == "scalar" and workload.variant == "tensor":
            data = [Tensor(float(v)) for v in raw[:TENSOR_POOL, 0]]
        elif workload.kind == "scalar":
            data = raw.tolist()
        else:
            data = [Tensor(a) for a in raw]
        _DATA.clear()
        _DATA[key] = data
    data = _DATA[key]
    if workload.kind == "scalar" and workload.variant != "tensor":
        return (lambda i: data[i][0]) if workload.per_step == 1 else (lambda i: data[i])
    return lambda i: data[i % len(data)]


def make_writer(job: dict, log_dir: str) -> tuple[Writer, int]:
    from mindspore import SummaryRecord, Tensor

    if job["contender"] != "ms":
        raise ValueError(f"this worker serves only 'ms', not {job['contender']!r}")
    workload = WORKLOADS[job["workload"]]
    steps = job["steps"]
    box: dict[str, object] = {}

    def open_() -> None:
        rec = box["r"] = SummaryRecord(log_dir, **job.get("params", {}))
        add, record = rec.add_value, rec.record
        if workload.kind == "scalar" and workload.per_step > 1:
            tags = [f"loss{k}" for k in range(workload.per_step)]

            def step(i: int, row: list) -> None:
                for tag, v in zip(tags, row, strict=True):
                    add("scalar", tag, Tensor(v))
                record(i)

        elif workload.kind == "scalar" and workload.variant == "float":

            def step(i: int, v: float) -> None:
                add("scalar", "loss", Tensor(v))
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


def check() -> None:
    import mindspore
    import numpy as np

    from benchmarks._anchors.workloads import dir_listing, timed_run

    with tempfile.TemporaryDirectory() as tmp:
        for name in ("scalar1_float", "scalar1_tensor", "scalar10", "histogram", "image_noise"):
            log_dir = os.path.join(tmp, name)
            writer, _ = make_writer({"contender": "ms", "workload": name, "steps": 3}, log_dir)
            timed_run(writer, 3)
            files = dir_listing(log_dir)
            if not files or not any(size > 0 for size in files.values()):
                raise SystemExit(f"MindSpore wrote nothing for {name}: {files}")
    print(f"MindSpore {mindspore.__version__} (numpy {np.__version__}) writes summaries: OK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", action="store_true", help="answer JSON jobs from stdin")
    parser.add_argument("--check", action="store_true", help="smoke-test MindSpore and exit")
    args = parser.parse_args()
    if args.check:
        check()
    elif args.serve:
        serve(make_writer)
    else:
        parser.error("give --serve or --check")


if __name__ == "__main__":
    main()
