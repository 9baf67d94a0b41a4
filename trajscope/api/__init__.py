"""The notebook API: `trajscope.open(path)` reads a warehouse into polars DataFrames and typed results;
`trajscope.ingest(paths, db=...)` loads logs. The CLI commands call these same functions."""
from ._agreement import NoHumanLabels, agreement_tables, human_agreement_tables
from ._compare import compare_tables
from ._ingest import INGEST_TMP_PREFIX, import_options, ingest, ingest_files
from ._ingest_result import IngestResult
from ._limits import statistics_limits
from ._replay import Replay
from ._report import PaperReport, report_result, report_tables
from ._results import AgreementResult, CaptionedTable, CompareResult, FunnelResult, ReportResult, TableResult
from ._views import UnknownView, ViewDescription, describe, describe_view, listed_views
from ._warehouse import Warehouse, open

__all__ = [
    "INGEST_TMP_PREFIX", "AgreementResult", "CaptionedTable", "CompareResult", "FunnelResult", "IngestResult",
    "NoHumanLabels", "PaperReport", "Replay", "ReportResult", "TableResult", "UnknownView", "ViewDescription",
    "Warehouse", "agreement_tables", "compare_tables", "describe", "describe_view", "human_agreement_tables",
    "import_options", "ingest", "ingest_files", "listed_views", "open", "report_result", "report_tables",
    "statistics_limits",
]
