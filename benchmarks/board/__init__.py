"""``bench_board``'s tables, one module per workload: (a) ``anchors`` (with
``anchors_report``), (b) ``scale`` and ``browser``, (c) ``plugins``, (d) ``many`` (with
``idle``), (e) ``pages``, (f) ``groups``, (g) ``snapshot``; ``base_dirs`` and
``plugin_run`` make their data, ``common`` holds what several share, ``run`` runs them
(``python -m benchmarks.bench_board``)."""
