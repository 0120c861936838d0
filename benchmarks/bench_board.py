"""Dashboard speed: the sumlens board server against TensorBoard, its data server and MindInsight.

Tables from one run (``benchmarks/README.md``, section ``bench_board``, says what each
row times and why; each table is a module of ``benchmarks/board/``):

(a) *Time to every point* (``board/anchors.py``). On the anchors' files (the 46 MB
    TensorBoard file of ``bench_read``; MindSpore files of 100k steps x 1 tag and x 10
    tags), each alone in a base directory: from launching a server until every tag is
    listed and every point can be fetched over its API. Contenders: ``sumlens serve``
    (cold workspace, warm workspace, and an empty numba cache apart), ``tensorboard``, the
    Rust data server alone, MindInsight (capped). They run interleaved, once per round in a
    rotating order; ratios are taken per round and summarised by median and range.
(b) *Scale* (``board/scale.py``, ``board/browser.py``). A base directory of 1,000 runs x
    10 tags x 1,000 steps plus 10 runs of one 1M-point series (both formats, 20M points):
    first data served after a cold start, warm re-open, the scalars API on a 1M-point
    series, the server's peak memory; then, in Chromium driven by Playwright over 10,000
    small runs: every run listed, first paint of the run list, scrolling.
(c) *A run with images and histograms* (``board/plugins.py``) beside the scale directory:
    its training dashboard in Chromium, the plugin queries, the server's peak memory.
(d) *Many tags, many runs* (issue 26, ``board/many.py``), against TensorBoard in
    interleaved rounds: 1 run x 12,345 tags x 50 steps (every tag listed, one series
    served) and 1,000 runs x 10 tags x 200 steps (every run loaded), cold starts of both;
    10,000 tiny runs fully loaded (sumlens alone: under 5 s); and the CPU share of a server
    idling over 20,000 empty sub-directories. ``--before SRC`` adds another checkout's
    sumlens as a contender.
(e)-(g) *Comparing runs* (issue 30): (e) in Chromium, the scalars page of 1 run x 12,345
    tags x 1,000 steps until its tag groups are listed and the first screen of charts
    drawn, against TensorBoard's Time Series page on the same run, both servers loaded,
    interleaved rounds (``board/pages.py``); (f) the groups request over 100 runs in 10
    groups with std bands over 10,000 steps each, p95 < 100 ms (``board/groups.py``); (g) a
    50-run snapshot file's size and open time (``board/snapshot.py``).

Usage: ``.venv/bin/python -m benchmarks.bench_board [--quick] [--only a|efg|...] [--rounds 5]``.
Data is generated once under ``benchmarks/data/board/``; raw timings go to
``benchmarks/results/bench_board.json``.
"""

from __future__ import annotations

import sys

from benchmarks.board.run import main

if __name__ == "__main__":
    sys.exit(main())
