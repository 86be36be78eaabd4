"""Evaluations: a flow run over a dataset, each answer scored; stored per flow version
and compared (`nodeloom eval`, docs/testing.md#evaluations)."""

from nodeloom.evaluation.choose import make_scorers
from nodeloom.evaluation.dataset import Dataset, DatasetError, Row, read_dataset
from nodeloom.evaluation.runner import RowResult, evaluate, flow_version, summary
from nodeloom.evaluation.scorers import Score, ScorerError

__all__ = [
    "Dataset",
    "DatasetError",
    "Row",
    "RowResult",
    "Score",
    "ScorerError",
    "evaluate",
    "flow_version",
    "make_scorers",
    "read_dataset",
    "summary",
]
