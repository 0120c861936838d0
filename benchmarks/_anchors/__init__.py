"""``bench_write``'s workers: one long-lived process per contender, run from the repository
root as ``python -m benchmarks._anchors.py_write`` (the project's .venv) or
``python -m benchmarks._anchors.ms_write`` (MindSpore's venv, which has numpy and MindSpore
only: these modules import nothing else of the repository but the harness's clock)."""
