"""How every benchmark measures: the clock, interleaved rounds, medians, ranges and verdicts,
number formats, the machine's facts, the servers and worker processes it starts.

Imports nothing, so that a worker under another interpreter (``benchmarks/_anchors`` under
MindSpore's venv) can load :mod:`benchmarks.harness.clock` alone.
"""
