"""Language-model verdicts in the warehouse: rubric verdicts, step attributions, clusterings, people's labels."""
from ._load import (
    ATTRIBUTION_VERDICTS,
    LABELS,
    RUBRIC_VERDICTS,
    ClusterRow,
    MemberRow,
    StoreReport,
    VerdictRow,
    label_verdict,
    rubric_hash,
    store_clustering,
    store_verdicts,
    verdict_id,
)
from ._slice import SLICE_RELATION, slice_sql

__all__ = [
    "ATTRIBUTION_VERDICTS", "LABELS", "RUBRIC_VERDICTS", "SLICE_RELATION", "ClusterRow", "MemberRow", "StoreReport",
    "VerdictRow", "label_verdict", "rubric_hash", "slice_sql", "store_clustering", "store_verdicts", "verdict_id",
]
