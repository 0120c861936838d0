"""Embeddings view speed: from navigation to 100,000 points on screen, in headless Chromium.

One run written by torch's ``SummaryWriter.add_embedding``: 100,000 vectors of 16 numbers
with a label each (``metadata.tsv``, 10 classes). ``sumlens serve`` serves it; the page
``#/embeddings`` is opened ``--opens`` times in a fresh browser context (Chromium launched
as the browser tests do), timing from ``page.goto`` until the card says
``data-state="ready"`` with every point drawn (the 2-D canvas scatter is on screen). The
server projects the newest runs' embeddings once its first loading pass is done and keeps
the answer, so each open reads the files and is answered from that. Also printed: an
answer made afresh (another number of points: read, parsed and projected; time and
bytes), and the machine's load average.

Run: ``.venv/bin/python -m benchmarks.bench_embedding_view [--opens 5]``. Target: < 2 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

import httpx
import numpy as np
import torch
from playwright.sync_api import sync_playwright
from torch.utils.tensorboard import SummaryWriter

from benchmarks.harness.browser import open_chromium
from benchmarks.harness.clock import now, timed
from benchmarks.harness.http import fetch_bytes, get_body, local
from benchmarks.harness.servers import free_port, serve_args, server_until

POINTS, DIMENSION = 100_000, 16
WAIT_MS = 120_000
CARD = ".embedding-card[data-state='ready'][data-points='100000']"


def write_run(base: Path) -> None:
    """The run: 100,000 16-D vectors around 10 centres, labelled by their centre."""
    rng = np.random.default_rng(0)
    classes = rng.integers(0, 10, POINTS)
    vectors = rng.normal(size=(10, DIMENSION))[classes] * 3 + rng.normal(size=(POINTS, DIMENSION))
    with SummaryWriter(str(base / "emb")) as writer:
        writer.add_scalar("loss", 1.0, 0)
        writer.add_embedding(torch.from_numpy(vectors.astype(np.float32)),
                             metadata=[f"class{c}" for c in classes], tag="big")  # fmt: skip


def embedding_listed(http: httpx.Client) -> bool:
    """Whether the server lists the embedding."""
    return b'"embedding"' in (get_body(http, "/api/v1/runs") or b"")


def time_opens(url: str, opens: int) -> list[float]:
    """Seconds from navigation to the scatter of every point, per open."""
    times = []
    with sync_playwright() as playwright:
        browser = open_chromium(playwright)
        for _ in range(opens):
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            page = context.new_page()
            started = now()
            page.goto(f"{url}/#/embeddings")
            page.wait_for_selector(CARD, timeout=WAIT_MS)
            times.append(now() - started)
            context.close()
        browser.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opens", type=int, default=5, help="page opens")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "base"
        write_run(base)
        port = free_port()
        command = serve_args(base, port, Path(scratch) / "ws")
        with server_until("sumlens", command, dict(os.environ), port, embedding_listed, 0.1, 120):
            url = local(port)
            # points=99,999: not the answer the server made after its first pass
            answer = f"{url}/api/v1/embedding?run=./emb&tag=big:00000&points=99999"
            answer_s, body = timed(lambda: fetch_bytes(answer))
            times = time_opens(url, args.opens)
    load = os.getloadavg()
    machine = f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} CPUs"
    print(f"embeddings view: navigation -> {POINTS:,} points drawn, {args.opens} opens ({machine})")
    print(f"{'embedding':<22}{'median s':>10}{'min s':>8}{'max s':>8}")
    print(f"{'100k x 16, 2-D':<22}{statistics.median(times):>10.3f}{min(times):>8.3f}"
          f"{max(times):>8.3f}")  # fmt: skip
    print(f"/api/v1/embedding made afresh (read, parsed, projected): {answer_s:.3f} s, "
          f"{len(body) / 1e6:.2f} MB")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
