"""Run orchestration: specs, the controller interface, durable resumable logs, matrices."""
from ._context import Controller, EpisodeResources
from ._inputs import RunInputs, prepare_inputs
from ._log import LogCorrupt, LogState, TrajectoryLog, recover_log
from ._matrix import MatrixError, execute_matrix, execute_matrix_async, load_matrix
from ._orchestrator import (
    RunSetupError,
    RunSummary,
    code_version,
    execute_run,
    execute_run_async,
    model_config_for,
)
from ._outcome import error_trajectory, utc_now, with_judgments
from ._selection import select_questions
from ._shard import Shard
from ._spec import RunSpec
from ._warehouse_sink import WarehouseSink

__all__ = [
    "Controller", "EpisodeResources", "LogCorrupt", "LogState", "MatrixError", "RunInputs", "RunSetupError",
    "RunSpec", "RunSummary", "Shard", "TrajectoryLog", "WarehouseSink", "code_version", "error_trajectory",
    "execute_matrix", "execute_matrix_async", "execute_run", "execute_run_async", "load_matrix",
    "model_config_for", "prepare_inputs", "recover_log", "select_questions", "utc_now", "with_judgments",
]
