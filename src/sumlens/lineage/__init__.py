"""Lineage records: what a run was (hyper-parameters, data, model) and how it scored.

Builders for the four lineage plugins of ``SummaryRecord.add_value``: ``TrainLineage``
(plugin ``train_lineage``), ``EvaluationLineage`` (``eval_lineage``), ``UserDefinedInfo``
(``custom_lineage_data``) and ``DatasetGraph`` (``dataset_graph``), plus
:func:`from_config`, which turns an argparse Namespace, a dataclass or a nested dict into
custom lineage data with dotted keys. MindInsight compares runs by these records.
"""

from sumlens.lineage.builders import (
    DatasetGraph,
    EvaluationLineage,
    LineageBuilder,
    TrainLineage,
    UserDefinedInfo,
    from_config,
)

__all__ = [
    "DatasetGraph",
    "EvaluationLineage",
    "LineageBuilder",
    "TrainLineage",
    "UserDefinedInfo",
    "from_config",
]
