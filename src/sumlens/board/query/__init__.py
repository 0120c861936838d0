"""What the dashboard's faces ask of the runs, below every route: selecting series, the
x axis, smoothing and sampling, groups and their statistics, lineage and hyper-parameter
tables, graph models, kept values of the sampled plugins. Both faces (``api``,
``mindinsight``) and the snapshot build on it; it imports no route module."""
