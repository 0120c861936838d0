"""TensorBoard's Rust data server as a contender: started on a logdir, polled over gRPC until
every point of every tag is read (``bench_read`` and ``bench_board``'s table (a) time it).
"""

from __future__ import annotations

import gc
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.datasets import TAGS, Spec
from benchmarks.harness.clock import now
from benchmarks.harness.servers import Waiter, launch

SERVER_TIMEOUT_S = 300.0
SERVER_POLL_S = 0.005
"""Pause between polls of the server's gRPC API."""


class Unavailable(Exception):
    """A contender that cannot run here (the reason is its message)."""


def server_binary() -> str:
    """The Rust data server's executable (:class:`Unavailable` when it has none)."""
    import tensorboard_data_server

    binary = tensorboard_data_server.server_binary()
    if binary is None:
        raise Unavailable("tensorboard_data_server.server_binary() returned None")
    return binary


def time_data_server(logdir: Path, spec: Spec, checksum: bool = False) -> dict:
    """Start the Rust data server, poll its gRPC API until every point of every tag is read.

    Command line as in anchors.md (``checksum=True`` adds ``--checksum``, which makes it
    verify every record's CRCs as sumlens does; by default it only checks records that
    fail to parse).
    """
    import grpc
    from tensorboard.data.proto import data_provider_pb2 as dp
    from tensorboard.data.proto import data_provider_pb2_grpc as dp_grpc

    binary = server_binary()
    workdir = Path(tempfile.mkdtemp(prefix="sumlens-bench-server-"))
    port_file = workdir / "port"
    args = [
        binary,
        "--logdir",
        str(logdir),
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--port-file",
        str(port_file),
        "--reload",
        "once",
        "--samples-per-plugin",
        "scalars=all,histograms=all",
        "--die-after-stdin",
    ]
    if checksum:
        args.append("--checksum")
    scalars_filter = dp.PluginFilter(plugin_name="scalars")
    last_step = spec.steps - 1
    polls = 0
    gc.collect()
    with open(workdir / "stderr", "wb") as stderr:
        started = now()
        proc = launch(args, stdin=subprocess.PIPE, stderr=stderr, new_session=False)
        waiter = Waiter(
            proc,
            "data server",
            started,
            SERVER_TIMEOUT_S,
            lambda: (workdir / "stderr").read_text(errors="replace"),
        )
        channel = None
        try:
            while True:  # the port file is written (with a newline) once the socket is bound
                text = port_file.read_text() if port_file.exists() else ""
                if text.endswith("\n"):
                    port = int(text)
                    break
                waiter.pause(SERVER_POLL_S)
            port_at = now()
            channel = grpc.insecure_channel(
                f"127.0.0.1:{port}", options=[("grpc.max_receive_message_length", -1)]
            )
            stub = dp_grpc.TensorBoardDataProviderStub(channel)
            while True:  # the run appears
                runs = stub.ListRuns(dp.ListRunsRequest(experiment_id="")).runs
                polls += 1
                if runs:
                    break
                waiter.pause(SERVER_POLL_S)
            run_at = now()
            while True:  # every tag listed, and every tag's last step loaded
                listing = stub.ListScalars(
                    dp.ListScalarsRequest(experiment_id="", plugin_filter=scalars_filter)
                )
                polls += 1
                max_steps = {
                    tag.tag_name: tag.metadata.max_step for run in listing.runs for tag in run.tags
                }
                if len(max_steps) == len(TAGS) and min(max_steps.values()) >= last_step:
                    response = stub.ReadScalars(
                        dp.ReadScalarsRequest(
                            experiment_id="",
                            plugin_filter=scalars_filter,
                            downsample=dp.Downsample(num_points=spec.points),
                        )
                    )
                    got = sum(len(tag.data.step) for run in response.runs for tag in run.tags)
                    if got == spec.points:
                        break
                waiter.pause(SERVER_POLL_S)
            seconds = now() - started
        finally:
            if channel is not None:
                channel.close()
            try:
                proc.stdin.close()  # --die-after-stdin: the server exits on EOF
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    shutil.rmtree(workdir, ignore_errors=True)
    steps = np.arange(spec.steps, dtype=np.int64)
    for run in response.runs:
        for tag in run.tags:
            if not np.array_equal(np.asarray(tag.data.step, dtype=np.int64), steps):
                raise AssertionError(f"data server: tag {tag.tag_name!r}: steps differ")
    return {
        "seconds": seconds,
        "port_s": port_at - started,
        "run_listed_s": run_at - started,
        "polls": polls,
    }
