"""sumlens' benchmarks: each ``bench_*`` module measures one part of sumlens against its
anchors, run from the repository root as ``python -m benchmarks.bench_<name>``.

How they measure is :mod:`benchmarks.harness`'s alone; ``benchmarks/README.md`` says what
each one measures, how, and what it found. Imports nothing: the anchors' workers
(``benchmarks/_anchors``) load this package under MindSpore's own interpreter.
"""
